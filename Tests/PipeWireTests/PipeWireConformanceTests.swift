import CamHAL
import CamHALConformance
import CamHALPipeWire
import Testing

/// The shared conformance suite against a PipeWire camera node (the test camera in a private
/// pipewire + wireplumber session), no VM needed. Every check must pass or be honestly
/// unsupported; skips are only the fault injections a real PipeWire node cannot offer.
extension PipeWireTests {
@Suite("Conformance: pipewire test camera")
struct ConformanceTests {
    @Test func suitePassesOnTheTestCameraNode() async throws {
        let session = try PipeWireSession()
        try session.addCamera("camhal-conformance")
        let backend = PipeWireBackend(remote: session.remote)
        let device = try backend.device(id: "camhal-conformance")
        let lines = Locked([String]())
        let summary = await ConformanceSuite.run(backend: backend, device: device, timeScale: 2) { line in
            lines.withLock { $0.append(line) }
        }
        for line in lines.value where line.contains("FAIL") { Issue.record("pipewire: \(line)") }
        for line in lines.value where line.contains("SKIP") || line.contains("passed,") { print("pipewire conformance: \(line)") }
        #expect(summary.failed == 0, "\(summary.line)")
        #expect(summary.passed >= 35, "\(summary.line)")
    }
}
}
