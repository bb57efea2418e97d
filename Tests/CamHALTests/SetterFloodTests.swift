import CamHALTestSupport
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing
@_spi(Testing) @testable import CamHAL

/// Resident set size of this process in bytes (Linux /proc; `VmHWM:` for its peak so far), 0
/// when unreadable.
func residentBytes(_ field: String = "VmRSS:") -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
          let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kb * 1024
}

/// Q1: a setter flood on a running session. The assertions are on bounded queue depth and the
/// latest value winning, never on time; the stop latency and RSS growth are printed as figures.
/// 10,000 calls by default (the test runs beside every other test); the reference figures
/// are from one million: `CAMHAL_FLOOD_CALLS=1000000 swift test --filter SetterFlood`.
@Suite("Setter flood (Q1)")
struct SetterFloodTests {
    @Test func millionCallFloodKeepsThePendingQueueBounded() async throws {
        let cam = try await startedVirtualCamera()
        let calls = ProcessInfo.processInfo.environment["CAMHAL_FLOOD_CALLS"].flatMap(Int.init) ?? 10_000
        let rssBefore = residentBytes(), peakBefore = residentBytes("VmHWM:")
        let t0 = Date()
        await offPool {
            for i in 0..<calls { cam.setZoomRatio(1 + Double(i % 100) / 50) }
            cam.setZoomRatio(2.5)
        }
        let floodEnd = Date()
        await cam.stop()
        let stopped = Date()
        let rssAfter = residentBytes(), peakAfter = residentBytes("VmHWM:")
        let snapshots = cam.currentState.sequence
        print("""
            setter flood: \(calls + 1) setZoomRatio calls in \(String(format: "%.3f", floodEnd.timeIntervalSince(t0))) s; \
            stop() returned \(String(format: "%.1f", stopped.timeIntervalSince(floodEnd) * 1000)) ms after the flood ended; \
            RSS growth \(String(format: "%.1f", Double(rssAfter - rssBefore) / 1e6)) MB \
            (peak RSS rose \(String(format: "%.1f", Double(peakAfter - peakBefore) / 1e6)) MB); \
            \(snapshots) snapshots; peak pending changes \(cam.peakPendingChanges)
            """)
        #expect(cam.peakPendingChanges <= 7)
        #expect(cam.requestedSettingsGeneration == UInt64(calls + 1))
        cam.start()
        let s = try #require(await waitForCurrent(cam) { $0.status == .running })
        #expect(s.zoomRatio == 2.5)  // the latest call won and survived stop (P1)
        await cam.stop()
    }
}
