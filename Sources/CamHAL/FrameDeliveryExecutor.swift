import Glibc

/// A task executor that lets a `frames()` loop run on the thread that delivers its frames, with
/// no thread hop per frame: the async path at the cost of the frame handler's.
///
/// A frame handed to a waiting `FrameStream` consumer normally resumes it on the cooperative
/// pool: the backend's thread wakes a pool thread, which later parks again (two system calls and
/// two context switches per frame, most of what `frames()` costs over a frame handler). Prefer
/// this executor around the loop and that resumption runs the loop body on the delivery thread
/// instead, until it waits for the next frame:
///
/// ```swift
/// try await withTaskExecutorPreference(FrameDeliveryExecutor.shared) {
///     for try await frame in camera.frames(policy: .keepOnlyLatest) {
///         analyze(frame)          // on the backend's delivery thread, as a frame handler runs
///     }
/// }
/// ```
///
/// Only a frame's hand-off runs inline. Every other job of the task (its start, its return from
/// an actor, a timed `next(timeout:)` giving up, the stream's end) goes to the global concurrent
/// executor as usual, so no app code runs on a thread that did not deliver a frame. As with a
/// frame handler, a slow body holds the delivery thread: the device drops frames meanwhile (the
/// stream's policy never sees them), and work that blocks belongs elsewhere.
public final class FrameDeliveryExecutor: TaskExecutor, Sendable {
    /// The one instance; it has no state of its own.
    public static let shared = FrameDeliveryExecutor()

    private init() {}

    /// Runs `job` here when it is a frame's hand-off (on the delivery thread), else enqueues it
    /// on the global concurrent executor.
    public func enqueue(_ job: consuming ExecutorJob) {
        if FrameHandOff.isInProgress {
            job.runSynchronously(on: asUnownedTaskExecutor())
        } else {
            globalConcurrentExecutor.enqueue(job)
        }
    }
}

/// Marks the thread that is handing a frame to a waiting consumer (`FrameQueue`), for
/// `FrameDeliveryExecutor`: a thread-specific flag, set only around the consumer's resumption.
enum FrameHandOff {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // pthread_key_create fails only when the process has used up its keys (1024).
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Whether the calling thread is inside `handingOver`.
    static var isInProgress: Bool { pthread_getspecific(key) != nil }

    /// Runs `resume` (a consumer's continuation resumed with a frame) with the flag set.
    static func handingOver(_ resume: () -> Void) {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        resume()
        pthread_setspecific(key, outer)
    }
}
