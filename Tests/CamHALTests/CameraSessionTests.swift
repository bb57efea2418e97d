import CamHALVirtual
import Foundation
import Testing
@testable import CamHAL

/// Waits until `camera` has a snapshot satisfying `predicate` (checked over `recorded` snapshots).
func waitFor(_ states: Locked<[CameraState]>, after index: Int = 0, timeout: Double = 10, _ predicate: (CameraState) -> Bool) async -> CameraState? {
    let deadline = Date(timeIntervalSinceNow: timeout)
    repeat {
        let all = states.value
        if all.count > index, let s = all[index...].first(where: predicate) { return s }
        try? await Task.sleep(nanoseconds: 5_000_000)
    } while Date() < deadline
    return nil
}

/// A session on a fresh virtual backend (isolated from other tests) that records its snapshots.
func makeSession(_ deviceID: String = "virtual-back") throws -> (Camera, Locked<[CameraState]>, VirtualBackend) {
    let backend = VirtualBackend()
    let camera = Camera(backend: backend, device: try backend.device(id: deviceID))
    let states = Locked([CameraState]())
    let stream = camera.stateUpdates()
    Task { for await s in stream { states.withLock { $0.append(s) } } }
    return (camera, states, backend)
}

@Suite("Camera session semantics")
struct CameraSessionTests {
    @Test func startSequenceIsIdleStartingRunningThenPreview() async throws {
        let (cam, states, _) = try makeSession()
        #expect(cam.currentState == .initial)
        cam.start()
        let active = try #require(await waitFor(states) { $0.isPreviewActive })
        let statuses = states.value.prefix { $0.sequence <= active.sequence }.map(\.status)
        // The stream opens with the current snapshot (S9), here the initial one, then transitions.
        #expect(states.value.first == .initial)
        #expect(statuses.dropFirst().first == .starting)
        #expect(statuses.contains(.running))
        #expect(states.value.map(\.sequence) == Array(0..<UInt64(states.value.count)))
        await cam.stop()
    }

    @Test func zoomSetBeforeStartLandsAndSurvivesRestart() async throws {
        let (cam, states, _) = try makeSession()
        cam.setZoomRatio(2.5)
        cam.start()
        let s = try #require(await waitFor(states) { $0.status == .running })
        #expect(s.zoomRatio == 2.5 && s.activeLens?.kind == .wide)
        await cam.stop()
        let mark = states.value.count
        cam.start()
        let again = try #require(await waitFor(states, after: mark) { $0.status == .running })
        #expect(again.zoomRatio == 2.5)
        await cam.stop()
    }

    @Test func zoomCrossingALensFloorSwitchesLensWithoutARebind() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let mark = states.value.count
        cam.setZoomRatio(4)
        let s = try #require(await waitFor(states, after: mark) { $0.zoomRatio == 4 })
        #expect(s.activeLens?.kind == .telephoto)
        #expect(s.isPreviewActive)  // a lens switch inside automatic is not a rebind
        #expect(!states.value[mark...].contains { $0.status == .starting })
        await cam.stop()
    }

    @Test func stopCompletesOnceAndOnlyTheReleaseSnapshotSaysReleased() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let count = Locked(0)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            cam.stop {
                count.withLock { $0 += 1 }
                c.resume()
            }
        }
        #expect(cam.currentState.isReleased)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive && $0.sequence > 4 })
        await cam.stop()
        #expect(count.value == 1)
        #expect(states.value.filter(\.isReleased).count == 2)  // one per stop that released something
        let afterFirst = states.value.drop { !$0.isReleased }.dropFirst()
        #expect(afterFirst.first.map { !$0.isReleased } == true)
    }

    @Test func stopOnANeverStartedSessionCompletesWithoutASnapshot() async throws {
        let (cam, states, _) = try makeSession()
        await cam.stop()
        try await Task.sleep(nanoseconds: 50_000_000)
        // Only the replayed current snapshot (S9); stop itself is no transition here.
        #expect(states.value == [.initial])
        #expect(cam.currentState == .initial)
    }

    @Test func liveFacingSwitchResetsControlsAndDropsThePin() async throws {
        let (cam, states, backend) = try makeSession()
        let tele = try #require(try backend.device(id: "virtual-back").lenses.first { $0.kind == .telephoto })
        cam.setLensSelection(try .pin(tele))
        cam.setTorch(true)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive && $0.activeLens == tele })
        cam.setZoomRatio(2)
        let mark = states.value.count
        cam.setFacing(.front)
        let s = try #require(await waitFor(states, after: mark) { $0.status == .running && $0.activeLens?.facing == .front })
        #expect(s.zoomRatio == 1 && !s.isTorchEnabled && s.minZoomRatio == 1 && s.maxZoomRatio == 4)
        #expect(cam.device.id == "virtual-front")
        await cam.stop()
    }

    @Test func stoppedFacingSwitchResetsNothing() async throws {
        let (cam, states, _) = try makeSession()
        cam.setZoomRatio(2)
        cam.setFacing(.front)
        cam.start()
        let s = try #require(await waitFor(states) { $0.status == .running })
        #expect(s.activeLens?.facing == .front && s.zoomRatio == 2)
        await cam.stop()
    }

    @Test func pinnedTelephotoIsRebasedAndReportsItsOwnScale() async throws {
        let (cam, states, backend) = try makeSession()
        let tele = try #require(try backend.device(id: "virtual-back").lenses.first { $0.kind == .telephoto })
        cam.setLensSelection(try .pin(tele))
        cam.setZoomRatio(2)
        cam.start()
        let s = try #require(await waitFor(states) { $0.status == .running })
        #expect(s.minZoomRatio == 1 && s.maxZoomRatio == 8 && s.zoomRatio == 2)
        #expect(s.activeLens?.minZoomRatio == 3)  // the lens keeps reporting wide-normalized terms
        await cam.stop()
    }

    @Test func nanIsRejectedWithAWarningAndChangesNothing() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        cam.setZoomRatio(.nan)
        let s = try #require(await waitFor(states) { $0.warning != nil })
        #expect(s.warning == .invalidArgument(name: "zoomRatio", value: "nan"))
        #expect(s.zoomRatio == 1 && s.status == .running)
        await cam.stop()
    }

    @Test func silentStallIsCaughtByTheWatchdogAndRecoveredWithControls() async throws {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"),
                         configuration: .init(interruptionTimeout: 0.3, recoveryDelay: 5))
        let states = Locked([CameraState]())
        let stream = cam.stateUpdates()
        Task { for await s in stream { states.withLock { $0.append(s) } } }
        cam.setZoomRatio(3.5)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        backend.inject(.silentStall(seconds: 1), deviceID: "virtual-back")
        let stalled = try #require(await waitFor(states, timeout: 3) { $0.status == .interrupted })
        #expect(!stalled.isPreviewActive)
        let back = try #require(await waitFor(states, timeout: 5) { $0.sequence > stalled.sequence && $0.isPreviewActive })
        #expect(back.status == .running && back.zoomRatio == 3.5 && back.activeLens?.kind == .telephoto)
        // Frames resumed by themselves before recoveryDelay: no rebind happened.
        #expect(!states.value.contains { $0.sequence > stalled.sequence && $0.status == .starting })
        await cam.stop()
    }

    @Test func stallLongerThanTheRecoveryDelayRestartsTheStream() async throws {
        let backend = VirtualBackend()
        let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"),
                         configuration: .init(interruptionTimeout: 0.2, recoveryDelay: 0.3))
        let states = Locked([CameraState]())
        let stream = cam.stateUpdates()
        Task { for await s in stream { states.withLock { $0.append(s) } } }
        cam.setTorch(true)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        backend.inject(.silentStall(seconds: 30), deviceID: "virtual-back")
        let stalled = try #require(await waitFor(states, timeout: 3) { $0.status == .interrupted })
        // The restart binds a new stream (the stalled one is closed), and the torch comes back.
        let back = try #require(await waitFor(states, timeout: 5) { $0.sequence > stalled.sequence && $0.isPreviewActive })
        #expect(states.value.contains { $0.sequence > stalled.sequence && $0.status == .starting })
        #expect(back.isTorchEnabled)
        await cam.stop()
    }

    @Test func busyDeviceIsATypedErrorAlsoGivenToTheDelegate() async throws {
        let (first, firstStates, backend) = try makeSession()
        first.start()
        _ = try #require(await waitFor(firstStates) { $0.isPreviewActive })
        let second = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
        final class Failures: CameraStateDelegate, @unchecked Sendable {
            let errors = Locked([CameraError]())
            func camera(_ camera: any CameraDevice, didChangeState state: CameraState) {}
            func camera(_ camera: any CameraDevice, didFail error: CameraError) { errors.withLock { $0.append(error) } }
        }
        let delegate = Failures()
        second.delegate = delegate
        second.start()
        try await Task.sleep(nanoseconds: 200_000_000)
        guard case .busy(let device, _)? = second.currentState.error else {
            Issue.record("expected busy, got \(second.currentState)")
            return
        }
        #expect(device == "virtual-back" && second.currentState.status == .error)
        #expect(delegate.errors.value.count == 1)
        await second.stop()
        await first.stop()
    }
}

@Suite("Frame streams (R2)")
struct FrameStreamTests {
    func frame(_ n: UInt64) -> Frame {
        Frame(format: .gray8, width: 1, height: 1, planes: [], sequence: n, timestamp: Double(n))
    }

    @Test func keepOnlyLatestHandsOverTheNewestAndCountsDrops() async {
        let stream = FrameStream(policy: .keepOnlyLatest)
        for n in UInt64(1)...5 { stream.queue.push(frame(n)) }
        let f = await stream.next(timeout: 1)
        #expect(f?.sequence == 5)
        #expect(stream.droppedFrames == 4)
    }

    @Test func blockPolicyKeepsOrderAndDropsNothing() async {
        let stream = FrameStream(policy: .block(capacity: 3))
        for n in UInt64(1)...3 { stream.queue.push(frame(n)) }
        var seen: [UInt64] = []
        for _ in 1...3 { if let f = await stream.next(timeout: 1) { seen.append(f.sequence) } }
        #expect(seen == [1, 2, 3])
        #expect(stream.droppedFrames == 0)
    }

    @Test func aFullBlockingQueueGivesUpWhenTheSessionStops() {
        let stream = FrameStream(policy: .block(capacity: 1))
        stream.queue.push(frame(1))
        let t0 = Date()
        stream.queue.push(frame(2)) { Date().timeIntervalSince(t0) < 0.2 }
        #expect(Date().timeIntervalSince(t0) < 1)
        #expect(stream.droppedFrames == 1)
    }

    @Test func timeoutLeavesTheStreamOpenAndCancelEndsIt() async {
        let stream = FrameStream(policy: .keepOnlyLatest)
        #expect(await stream.next(timeout: 0.05) == nil)
        stream.queue.push(frame(7))
        #expect(await stream.next(timeout: 1)?.sequence == 7)
        stream.cancel()
        #expect(await stream.next(timeout: 1) == nil)
        #expect(!stream.queue.push(frame(8)))
    }

    @Test func releasingTheLastReferenceRunsOnReleaseOnce() {
        let count = Locked(0)
        do {
            let f = Frame(format: .gray8, width: 1, height: 1, planes: [], sequence: 1, timestamp: 0, onRelease: { count.withLock { $0 += 1 } })
            let stream = FrameStream(policy: .keepOnlyLatest)
            stream.queue.push(f)
            stream.cancel()
        }
        #expect(count.value == 1)
    }
}
