import CamHALTestSupport
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing
@_spi(Testing) @_spi(Backend) @testable import CamHAL

/// The first snapshot of `camera`, the current one included, that satisfies `predicate`, awaited
/// on its `stateUpdates()`, within `timeout` seconds the cooperative pool could run (`within`, as
/// `waitFor`).
func waitForCurrent(_ camera: Camera, timeout: Double = 10, _ predicate: @escaping @Sendable (CameraState) -> Bool) async -> CameraState? {
    await firstSnapshot(of: camera, timeout: timeout, predicate)
}

/// A running session on the back camera of a fresh virtual backend, with its first frame.
func startedVirtualCamera() async throws -> Camera {
    let backend = VirtualBackend()
    let cam = Camera(backend: backend, device: try backend.device(id: "virtual-back"))
    cam.start()
    _ = try #require(await waitForCurrent(cam) { $0.isPreviewActive })
    return cam
}

/// Session defects, each pinned by a test that failed before its fix.
@Suite("Session defects")
struct SessionDefectTests {
    // S9: the README sample, with the first frame arriving before the app subscribes.
    @Test func stateUpdatesStartWithTheCurrentSnapshot() async throws {
        let cam = try await startedVirtualCamera()
        let first = await within(5) { () -> CameraState? in
            for await state in cam.stateUpdates() where state.isPreviewActive { return state }
            return nil
        }
        #expect(first??.isPreviewActive == true)
        #expect(first??.sequence == cam.currentState.sequence)
        await cam.stop()
    }

    // Q1: a setter flood is coalesced: at most one pending change per kind of control, whatever
    // the call rate, and the latest value wins.
    @Test func setterFloodCoalescesToBoundedDepth() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        // Two threads of their own, so the other tests running in parallel keep the shared pools.
        let flood: @Sendable () -> Void = {
            for i in 0..<2_000 {
                cam.setZoomRatio(1 + Double(i % 7) * 0.25)
                cam.setTorch(i % 2 == 0)
            }
        }
        async let a: Void = offPool(flood)
        async let b: Void = offPool(flood)
        _ = await (a, b)
        cam.setZoomRatio(3.5)
        _ = try #require(await waitFor(states) { $0.zoomRatio == 3.5 })
        #expect(cam.peakPendingChanges <= 7)
        #expect(cam.requestedSettingsGeneration >= 8_001)
        await cam.stop()
    }

    // Q1: toggling a pin faster than a bind still ends bound to the latest pin, with frames.
    @Test func pinTogglingEndsOnTheLatestPinWithFrames() async throws {
        let (cam, states, backend) = try makeSession()
        let lenses = try backend.device(id: "virtual-back").lenses.filter(\.isPinnable)
        try #require(lenses.count >= 2)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        for i in 0..<2_000 { cam.setLensSelection(.pinned(lenses[i % 2])) }
        cam.setLensSelection(.pinned(lenses[0]))
        let s = await waitForCurrent(cam) { $0.isPreviewActive && $0.activeLens == lenses[0] }
        #expect(s != nil)
        await cam.stop()
    }

    // S10: a warning is on the snapshot of its event only.
    @Test func warningDoesNotStick() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        cam.setZoomRatio(.nan)
        _ = try #require(await waitFor(states) { $0.warning != nil })
        cam.setZoomRatio(3)
        let s = try #require(await waitFor(states) { $0.zoomRatio == 3 })
        #expect(s.warning == nil)
        cam.setTorch(true)
        let t = try #require(await waitFor(states) { $0.isTorchEnabled })
        #expect(t.warning == nil)
        await cam.stop()
    }

    // B3: any Double is a duration: huge and infinite values are clamped, never a trap.
    @Test func hugeTimeoutsAreClampedNotFatal() async throws {
        #expect(Seconds.nanoseconds(1e300) == UInt64(Seconds.maximum * 1e9))
        #expect(Seconds.nanoseconds(.infinity) == UInt64(Seconds.maximum * 1e9))
        #expect(Seconds.nanoseconds(-.infinity) == 0)
        #expect(Seconds.clamped(Duration.seconds(-3)) == .zero)
        #expect(Seconds.clamped(Duration.seconds(Int64.max)) == .seconds(Int64(Seconds.maximum)))
        let backend = VirtualBackend()
        let cam = Camera(
            backend: backend, device: try backend.device(id: "virtual-back"),
            configuration: .init(interruptionTimeout: .seconds(Int.max), firstFrameTimeout: .seconds(Int.max), recoveryDelay: .seconds(Int.max)))
        let states = StateLog(cam)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let frames = cam.frames()
        let f = await frames.next(timeout: .seconds(Int.max))
        #expect(f != nil)
        await cam.stop()
    }

    // Z4: a ramp too slow to change the zoom emits nothing (the frames are the clock here).
    @Test func rampThatCannotMoveEmitsNothing() async throws {
        // The watchdog is held off: under a loaded full run a 2 s gap in the virtual camera's
        // frames made it emit an interruption and a recovery in the window, which this test, about
        // the ramp's snapshots alone, would count as the ramp's.
        let (cam, states, _) = try makeSession(
            configuration: .init(interruptionTimeout: .seconds(60), firstFrameTimeout: .seconds(60), recoveryDelay: .seconds(60)))
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let frames = cam.frames(policy: .block(capacity: 2))
        let mark = states.value.count
        cam.rampZoomRatio(5, duration: .seconds(Int.max))
        var seen = 0
        while seen < 12, await frames.next(timeout: .seconds(5)) != nil { seen += 1 }  // about 400 ms of ramp ticks
        #expect(seen == 12)
        #expect(states.value.count == mark, "ramp emitted \(states.value.dropFirst(mark).map(\.description))")
        await cam.stop()
    }

    // R6: a fatal error ends every frame stream at once, and the stream says why.
    @Test func framesEndAfterDisconnectWithTheReason() async throws {
        let (cam, states, backend) = try makeSession()
        let a = cam.frames(), b = cam.frames(policy: .block(capacity: 2))
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        // The loops an app writes: `for try await`, which a failing session ends by throwing its
        // typed error (a stop ends them normally). Fails if the loop ended without the error
        // (the reason only in `endReason`, where an inline loop cannot see it) or hung.
        let loops = [a, b].map { stream in
            Task { () -> (frames: Int, thrown: CameraError?) in
                var n = 0
                do throws(CameraError) {
                    for try await _ in stream { n += 1 }
                } catch {
                    return (n, error)
                }
                return (n, nil)
            }
        }
        backend.inject(.disconnect, deviceID: "virtual-back")
        for loop in loops {
            let ended = await within(5) { await loop.value }
            #expect(ended != nil, "a frame loop did not end after the disconnect")
            #expect(ended?.thrown == .disconnected(device: "virtual-back"), "\(String(describing: ended))")
        }
        #expect(a.endReason == .disconnected(device: "virtual-back"))
        #expect(b.endReason == .disconnected(device: "virtual-back"))
        // A stream asked for after the failure, with no start pending, ends at once too.
        let late = cam.frames()
        #expect(await within(5) { await late.next(timeout: .seconds(60)) == nil } == true)
        #expect(late.endReason == .disconnected(device: "virtual-back"))
        backend.inject(.clear, deviceID: "virtual-back")
        await cam.stop()
    }

    @Test func framesEndWhenTheDeviceIsBusy() async throws {
        let (cam, _, backend) = try makeSession()
        backend.inject(.busy, deviceID: "virtual-back")
        let stream = cam.frames()
        cam.start()
        let ended = await within(5) { () -> CameraError? in
            do throws(CameraError) {
                for try await _ in stream {}
            } catch {
                return error
            }
            return nil
        }
        guard case .busy?? = ended else { Issue.record("the loop ended with \(String(describing: ended))"); return }
        guard case .busy? = stream.endReason else { Issue.record("end reason \(String(describing: stream.endReason))"); return }
        await cam.stop()
    }

    // R6: two iterators of one stream share it; neither is left waiting.
    @Test func twoIteratorsOfOneStreamBothGetFrames() async throws {
        let (cam, states, _) = try makeSession()
        let stream = cam.frames(policy: .block(capacity: 4))
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let counts = await within(10) {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        var it = stream.makeAsyncIterator()
                        var n = 0
                        while n < 3, (try? await it.next()) != nil { n += 1 }
                        return n
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(counts == [3, 3])
        await cam.stop()
    }

    // R6: next(timeout:) honours task cancellation at once and leaves the stream open.
    @Test func nextWithTimeoutHonoursCancellation() async throws {
        let stream = FrameStream(policy: .keepOnlyLatest)
        let waiter = Task { await stream.next(timeout: .seconds(3600)) == nil }
        waiter.cancel()
        let result = await within(5) { await waiter.value }
        #expect(result == true, "next(timeout:) ignored cancellation")
        #expect(!stream.isFinished)
    }

    // R5: driver drops are counted and reported as a warning on a running snapshot.
    @Test func driverDropsAreReported() async throws {
        let (cam, states, backend) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        backend.inject(.dropFrames(count: 5), deviceID: "virtual-back")
        let s = try #require(await waitFor(states) { $0.warning?.code == "framesDropped" })
        #expect(s.status == .running)
        #expect(s.warning == .framesDropped(5))
        #expect(cam.frameStatistics.droppedByDriver == 5)
        await cam.stop()
        #expect(cam.frameStatistics.droppedByDriver == 0)
    }

    // R5: a driver timestamp wrap never goes backwards to the app.
    @Test func timestampsStayMonotonicAcrossAWrap() async throws {
        let (cam, states, backend) = try makeSession()
        let frames = cam.frames(policy: .block(capacity: 8))
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        var last = try #require(await frames.next(timeout: .seconds(5)))
        backend.inject(.timestampWrap(seconds: 1000), deviceID: "virtual-back")
        var sawWrap = false
        for _ in 0..<10 {
            let f = try #require(await frames.next(timeout: .seconds(5)))
            #expect(f.timestamp > last.timestamp, "timestamp went from \(last.timestamp) to \(f.timestamp)")
            if f.metadata.driverTimestamp < last.metadata.driverTimestamp { sawWrap = true }
            last = f
        }
        #expect(sawWrap)
        await cam.stop()
    }

    // M1, M2: frames carry their settings; awaiting a generation replaces a sleep.
    @Test func framesCarryTheirSettingsAndGeneration() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        cam.setTorch(true)
        cam.setZoomRatio(2)
        let generation = cam.requestedSettingsGeneration
        let f = try await cam.frame(atGeneration: generation, timeout: .seconds(10))
        #expect(f.metadata.generation >= generation)
        #expect(f.metadata.zoomRatio == 2)
        #expect(f.metadata.isTorchEnabled)
        #expect(f.metadata.lens?.kind == .wide)
        #expect(f.metadata.focusMode == .continuous)
        #expect(f.metadata.sequence == f.sequence)
        #expect(abs(f.fieldOfView.width - 0.5) < 0.01)
        let crop = f.metadata.deviceCrop.map(f.metadata.frameCrop)
        #expect(abs(crop.width - 0.5) < 0.01)
        await cam.stop()
        await #expect(throws: CameraError.self) { try await cam.frame(atGeneration: generation + 100, timeout: .seconds(0.05)) }
    }
}

/// A backend whose binding streams on its own thread and records the thread close() runs on.
final class ThreadCheckingBackend: CameraBackend, @unchecked Sendable {
    let identifier = "thread-check"
    let closedOnStreamingThread = Locked<Bool?>(nil)
    let device = DeviceDescriptor(
        id: "tc", name: "thread check", backend: "thread-check", facing: .back,
        lenses: [Lens(id: "tc-wide", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 1)],
        formats: [FormatDescription(pixelFormat: .yuyv, size: Size(width: 64, height: 48), frameRates: [100])])

    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [device] }
    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        Binding(sink: sink, format: StreamFormat(pixelFormat: .yuyv, width: 64, height: 48, frameRate: 100), report: closedOnStreamingThread)
    }

    final class Binding: DriverBinding, @unchecked Sendable {
        let format: StreamFormat
        let sink: DriverSink
        let report: Locked<Bool?>
        let stop = Locked(false)
        let done = DispatchSemaphore(value: 0)
        /// Weak: the thread's block holds this binding, so a strong reference back was a retain
        /// cycle that leaked every binding with its sink, thread and frame memory (LeakSanitizer,
        /// scripts/sanitize). A running Foundation thread keeps its own `Thread` alive.
        weak var thread: Thread?
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 64 * 48 * 2, alignment: 16)

        init(sink: DriverSink, format: StreamFormat, report: Locked<Bool?>) {
            self.sink = sink
            self.format = format
            self.report = report
            let t = Thread { [self] in
                var seq: UInt64 = 0
                while !stop.value {
                    seq += 1
                    let plane = FramePlane(baseAddress: UnsafeRawPointer(memory), length: 64 * 48 * 2, bytesPerRow: 128)
                    sink.deliver(Frame(format: .yuyv, width: 64, height: 48, planes: [plane], sequence: seq, timestamp: Double(seq) / 100))
                    Thread.sleep(forTimeInterval: 0.01)
                }
                done.signal()
            }
            thread = t
            t.start()
        }
        // Runs once close() stopped the thread and the camera dropped the binding: no frame of
        // this memory is delivered after close(), and this test's handler keeps none.
        deinit { memory.deallocate() }
        func applyZoom(lens: Lens, factor: Double) -> ZoomApplication { .none }
        func applyTorch(_ on: Bool) -> Bool { false }
        func applyFocusMode(_ mode: FocusMode) -> FocusMode { .fixed }
        func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }
        func close() {
            let onStreaming = Thread.current == thread
            report.set(onStreaming)
            stop.set(true)
            if !onStreaming { done.wait() }  // a real close joins its thread: deadlock if on it
        }
    }
}

@Suite("Camera release")
struct CameraReleaseTests {
    // The last reference dropped on the streaming thread must not close (join) from that thread.
    @Test func releasingTheLastReferenceOnTheStreamingThreadClosesOnTheQueue() async throws {
        let backend = ThreadCheckingBackend()
        let box = Locked<Camera?>(Camera(backend: backend, device: backend.device))
        let cam = try #require(box.value)
        cam.start()
        _ = try #require(await waitForCurrent(cam) { $0.isPreviewActive })
        // The frame handler runs on the streaming thread and drops the last strong reference there.
        cam.setFrameHandler { _ in box.set(nil) }
        _ = consume cam
        // The session is gone, so no snapshot will say when its binding closed: polled.
        let deadline = Date(timeIntervalSinceNow: 10)
        while backend.closedOnStreamingThread.value == nil, Date() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(backend.closedOnStreamingThread.value == false)
    }
}
