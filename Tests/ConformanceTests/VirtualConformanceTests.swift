import CamHAL
import CamHALConformance
import CamHALVirtual
import Testing

/// The whole conformance suite against both virtual devices, each on its own backend instance so
/// the two runs cannot see each other's sessions. Every check must pass (OK or OK (not supported));
/// the virtual camera injects every fault, so nothing may be skipped either. The two runs take
/// turns: R3a counts the whole process's descriptors, and one run's recording (C2b) open during
/// the other's R3a was seen as a leak. The checks of several cameras at once (J) stream the other
/// virtual device of the same backend instance beside the one under test.
///
/// Then family J again with three virtual cameras streaming at once (`ThreeVirtualCameras`), each
/// as the device under test: every check passes and the run says three streamed. Would catch J
/// quietly pairing the device under test with one device only, or a stop or unplug of one
/// session that stalls a third. Those runs come last, in the same serialized test: run at the
/// start of `swift test`, while every suite starts at once, J1 saw gaps of 1.4-2.9 s on the
/// device under test on a loaded 2-core machine, with two devices as with three.
@Suite("Conformance: virtual backend")
struct VirtualConformanceTests {
    enum Run: Sendable, CustomTestStringConvertible {
        /// The whole suite on `device`, J beside `second`.
        case suite(device: String, second: String)
        /// Family J on `device` of three virtual cameras, beside the other two.
        case threeCameras(device: String)

        var testDescription: String {
            switch self {
            case .suite(let d, let s): "every check on \(d), J beside \(s)"
            case .threeCameras(let d): "J on \(d) with three cameras at once"
            }
        }
    }

    @Test(.serialized, arguments: [
        Run.suite(device: "virtual-back", second: "virtual-front"), .suite(device: "virtual-front", second: "virtual-back"),
        .threeCameras(device: "virtual-back"), .threeCameras(device: "virtual-front"), .threeCameras(device: ThreeVirtualCameras.renamed),
    ])
    func suitePasses(_ run: Run) async throws {
        switch run {
        case .suite(let deviceID, let secondID):
            let backend = VirtualBackend()
            let device = try backend.device(id: deviceID)
            let second = try backend.device(id: secondID)
            let lines = Locked([String]())
            let summary = await ConformanceSuite.run(backend: backend, device: device, timeScale: 2, log: { line in
                lines.withLock { $0.append(line) }
            }, secondDevice: second)
            for line in lines.value where line.contains("FAIL") || line.contains("SKIP") { Issue.record("\(deviceID): \(line)") }
            #expect(summary.failed == 0 && summary.skipped == 0)
            #expect(summary.passed == ConformanceSuite.checks.count)
            #expect(summary.passed >= 40)
        case .threeCameras(let deviceID):
            let backend = ThreeVirtualCameras()
            let devices = try backend.devices()
            let device = try #require(devices.first { $0.id == deviceID })
            let others = ConformanceSuite.otherDevices(for: device, among: devices)
            #expect(others.count == 2)
            let lines = Locked([String]())
            let summary = await ConformanceSuite.run(backend: backend, device: device, only: ["J"], timeScale: 2, log: { line in
                lines.withLock { $0.append(line) }
            }, otherDevices: others)
            #expect(lines.value.contains { $0.contains("3 streaming") }, "\(lines.value)")
            #expect(summary.failed == 0 && summary.skipped == 0, "\(lines.value.joined(separator: "\n"))")
            #expect(summary.passed == ConformanceSuite.checks.filter { $0.clause.hasPrefix("J") }.count)
        }
    }
}
