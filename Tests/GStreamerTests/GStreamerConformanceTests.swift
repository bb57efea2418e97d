#if GStreamer
import CamHAL
import CamHALConformance
import CamHALGStreamer
import Testing

/// The shared conformance suite against the GStreamer test camera (videotestsrc), no VM needed.
/// Every check must pass or be honestly unsupported; skips are only the fault injections a real
/// GStreamer source cannot offer (interruption, disconnect).
@Suite("Conformance: gstreamer videotestsrc")
struct GStreamerConformanceTests {
    @Test func suitePassesOnVideotestsrc() async throws {
        let backend = GStreamerBackend()
        let device = try backend.device(id: "videotestsrc")
        let lines = Locked([String]())
        let summary = await ConformanceSuite.run(backend: backend, device: device, timeScale: 2) { line in
            lines.withLock { $0.append(line) }
        }
        for line in lines.value where line.contains("FAIL") { Issue.record("videotestsrc: \(line)") }
        #expect(summary.failed == 0, "\(summary.line)")
        #expect(summary.passed >= 35, "\(summary.line)")
    }
}
#endif
