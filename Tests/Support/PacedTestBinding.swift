@_spi(Backend) import CamHAL
import Foundation

/// The binding of the core's test doubles: 64x48 YUYV frames, 10 ms apart, on a thread of its
/// own. The first comes `firstFrameDelay` seconds after binding (nil: none ever comes, a source
/// that opens and stays silent); after `frames` of them (nil: no limit) it is silent until
/// `close()`, which cuts any wait short and returns once the thread has ended.
package final class PacedTestBinding: DriverBinding, Sendable {
    package let format = StreamFormat(pixelFormat: .yuyv, width: 64, height: 48, frameRate: 100)
    private let closing = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let closed = Locked(false)
    /// Frame memory for every binding, never freed: a frame may outlive its binding.
    nonisolated(unsafe) private static let memory = UnsafeMutableRawPointer.allocate(byteCount: 64 * 48 * 2, alignment: 16)

    package init(sink: DriverSink, firstFrameDelay: Double? = 0, frames: Int? = nil) {
        let closing = self.closing, done = self.done
        Thread {
            defer { done.signal() }
            // Waiting on `closing` is the device's own pace; close() cuts it short.
            guard let delay = firstFrameDelay else { return closing.wait() }
            guard closing.wait(timeout: .now() + delay) == .timedOut else { return }
            var seq: UInt64 = 0
            while frames.map({ seq < UInt64(max(1, $0)) }) ?? true {
                seq += 1
                let plane = FramePlane(baseAddress: UnsafeRawPointer(Self.memory), length: 64 * 48 * 2, bytesPerRow: 128)
                sink.deliver(Frame(format: .yuyv, width: 64, height: 48, planes: [plane], sequence: seq, timestamp: Double(seq) / 100))
                guard closing.wait(timeout: .now() + 0.01) == .timedOut else { return }
            }
            closing.wait()
        }.start()
    }

    package func applyZoom(lens: Lens, factor: Double) -> ZoomApplication { .none }
    package func applyTorch(_ on: Bool) -> Bool { false }
    package func applyFocusMode(_ mode: FocusMode) -> FocusMode { .fixed }
    package func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }
    package func close() {
        guard closed.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        closing.signal()
        done.wait()
    }
}
