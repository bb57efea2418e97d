#if Media
import CamHAL
import Dispatch
import FoundationEssentials

/// Runs CPU-heavy work (encoding, scanning) on a Dispatch queue instead of a Swift-concurrency
/// cooperative thread, so a slow encode never starves other tasks (there may be only 2 of those threads).
enum Offload {
    static let queue = DispatchQueue(label: "camhal.media.work", qos: .userInitiated, attributes: .concurrent)

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws(CameraError) -> T) async throws(CameraError) -> T {
        let result: Result<T, CameraError> = await withCheckedContinuation { c in
            queue.async {
                do throws(CameraError) { c.resume(returning: .success(try body())) } catch { c.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}

extension CameraDevice {
    /// `backend:device` for messages.
    var mediaName: String { "\(device.backend):\(device.id)" }

    /// Returns once the session is past `idle`. A `Camera` whose `start()` was called is, with no
    /// wait: the caller goes on to its frames without a suspension in between, so a task that
    /// resumes late (a busy cooperative pool) still gets the first frames after its call. Another
    /// `CameraDevice` is given up to `grace` (a `start()` just issued hops to its session queue),
    /// awaiting its snapshots, never polling. Throws when it never starts or is in error; a
    /// cancelled task stops waiting at once.
    func requireStarted(for purpose: String, grace: Duration = .milliseconds(500)) async throws(CameraError) {
        var s = currentState
        if s.status == .idle, let camera = self as? Camera {
            if camera.isStartRequested { return }
        } else if s.status == .idle, let next = await firstState(within: grace, where: { $0.status != .idle }) {
            s = next
        }
        switch s.status {
        case .starting, .running, .interrupted: return
        case .error:
            throw s.error ?? CameraError.streamFailed("camera \(mediaName) is in error")
        case .idle:
            throw CameraError.configurationFailed(
                "camera \(mediaName) is not running: call start() before \(purpose) "
                    + "(AVCapturePhotoOutput and CameraX ImageCapture also refuse a session that is not running)")
        }
    }

    /// The next frame from a fresh keep-only-latest stream (so: the newest one), or a
    /// `timeout` / `streamFailed` error; never waits longer than `timeout`.
    public func nextFrame(timeout: Duration, purpose: String = "taking a frame") async throws(CameraError) -> Frame {
        try await requireStarted(for: purpose)
        let stream = frames(policy: .keepOnlyLatest)
        defer { stream.cancel() }
        // Any duration: next(timeout:) clamps huge values (B3) and returns at once when cancelled.
        guard let frame = await stream.next(timeout: max(.milliseconds(1), timeout)) else {
            if let reason = stream.endReason { throw reason }
            if stream.isFinished || Task.isCancelled {
                throw CameraError.streamFailed("camera \(mediaName) stopped before a frame arrived for \(purpose)")
            }
            throw CameraError.timeout("no frame from \(mediaName) within \(timeout) for \(purpose) (status \(currentState.status))")
        }
        return frame
    }
}
#endif
