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
@Suite("Conformance: virtual backend")
struct VirtualConformanceTests {
    @Test(.serialized, arguments: [("virtual-back", "virtual-front"), ("virtual-front", "virtual-back")])
    func suitePasses(deviceID: String, secondID: String) async throws {
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
    }
}
