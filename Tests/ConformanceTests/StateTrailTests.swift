import CamHAL
import CamHALTestSupport
import CamHALVirtual
import Foundation
import Testing

@testable import CamHALConformance

/// A check that waits for a snapshot and gives up reports the snapshots it saw, with their
/// arrival times: a session left running in silence and one the watchdog interrupted and rebound
/// (S8) end on the same last snapshot, and only the trail tells them apart.
@Suite("Conformance: state trail")
struct StateTrailTests {
    @Test func theTrailListsEverySnapshotSinceTheMarkWithItsStatusAndTime() async throws {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        let rec = StateRecorder(cam)
        #expect(await rec.wait(timeout: .seconds(10)) { $0.sequence == 0 } != nil)
        let mark = rec.all.count
        cam.start()
        #expect(await rec.wait(timeout: .seconds(10)) { $0.isPreviewActive } != nil)
        let trail = rec.trail(from: mark)
        #expect(trail.hasPrefix("#1 starting +0.0 s, #2 running +"), "\(trail)")
        #expect(trail.contains("#3 running preview +"), "\(trail)")
        #expect(rec.trail(from: rec.all.count) == "none")
        await cam.stop()
    }
}
