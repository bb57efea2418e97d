#if PipeWire
import CamHAL
import Foundation
import Testing

extension PipeWireTests {
/// The shared conformance suite against a PipeWire camera node (the test camera in a private
/// pipewire + wireplumber session), no VM needed, through `camhal conformance --backend pipewire`
/// as CI runs it. In a process of its own: its sessions, connections and buffers would otherwise
/// show in the file-descriptor counts of other suites' leak checks running alongside. Every check
/// must pass or be honestly unsupported; skips are only the fault injections a real PipeWire node
/// cannot offer (unplug, stall, interruption).
@Suite("Conformance: pipewire test camera")
struct ConformanceTests {
    @Test func suitePassesOnTheTestCameraNode() async throws {
        let session = try await PipeWireSession()
        try await session.addCamera("camhal-conformance", controls: true)
        let (status, text) = try await PipeWireSession.spawnAndWait(
            PipeWireSession.builtTool("camhal"),
            ["conformance", "--backend", "pipewire", "--device", "camhal-conformance", "--time-scale", "2"],
            environment: ["PIPEWIRE_REMOTE": session.remote])
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines where line.contains("FAIL") { Issue.record("pipewire: \(line)") }
        let summary = try #require(lines.last { $0.contains(" passed, ") }, "no summary in: \(text.suffix(2000))")
        print("pipewire conformance: \(summary)")
        let counts = summary.split(separator: " ").compactMap { Int($0) }
        try #require(counts.count == 3, "\(summary)")
        #expect(counts[1] == 0, "\(summary)")
        #expect(counts[0] >= 35, "\(summary)")
        #expect(status == 0, "camhal conformance exit status \(status)")
    }
}
}
#endif
