#if Media
import CamHAL
import Dispatch
import FoundationEssentials
import Synchronization

/// Something that looks at frames (CameraX `ImageAnalysis.Analyzer`, AVFoundation
/// `AVCaptureVideoDataOutputSampleBufferDelegate`). Called on the analysis queue, one frame at a
/// time; return promptly and do not keep the frame (a held frame is a buffer the device cannot refill).
public protocol FrameAnalyzer: AnyObject, Sendable {
    /// Looks at one frame; called off the frame path, with the newest frame whenever the analyzer is free.
    func analyze(_ frame: Frame)
}

/// Counters of an analysis run.
public struct AnalysisStats: Sendable, Hashable, CustomStringConvertible {
    /// Frames the analyzer ran on.
    public var analyzed: Int
    /// Frames replaced by newer ones while the analyzer was busy (keep-only-latest back-pressure).
    public var dropped: Int
    /// Frames the device itself skipped (gaps in sequence numbers seen by the analyzer), including `dropped`.
    public var sequenceGaps: Int
    /// Age of the last analyzed frame when the analyzer got it (backend clock permitting).
    public var lastQueueDelay: Duration
    public var description: String { "analyzed \(analyzed), dropped \(dropped), sequence gaps \(sequenceGaps)" }
}

/// Runs an analyzer on a session's frames with keep-only-latest back-pressure
/// (STRATEGY_KEEP_ONLY_LATEST, alwaysDiscardsLateVideoFrames): the analyzer always gets the newest
/// frame, late frames are dropped and counted, and the camera stream never waits for it.
/// It keeps running across stop/start of the session until `stop()`.
public final class ImageAnalysis: Sendable {
    private let camera: any CameraDevice
    private let queue: DispatchQueue
    private let body: @Sendable (Frame) -> Void
    private let counters = Mutex(AnalysisStats(analyzed: 0, dropped: 0, sequenceGaps: 0, lastQueueDelay: .zero))
    private let current = Mutex<(stream: FrameStream?, stopped: Bool, baseDropped: Int)>((nil, false, 0))
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Runs `analyzer` on `camera`'s frames, keep-only-latest: it sees the newest frame whenever it
    /// is free and never stalls the stream.
    /// - Parameters:
    ///   - camera: the camera whose frames are analysed.
    ///   - analyzer: called with each frame analysed.
    ///   - queue: where the analyzer runs (a private serial queue by default), like
    ///     `setAnalyzer(executor, ...)` / `setSampleBufferDelegate(_, queue:)`.
    public init(camera: any CameraDevice, queue: DispatchQueue? = nil, analyzer: @escaping @Sendable (Frame) -> Void) {
        self.camera = camera
        self.queue = queue ?? DispatchQueue(label: "camhal.analysis")
        self.body = analyzer
    }

    /// Runs `analyzer` on `camera`'s frames on `queue`, keep-only-latest.
    public convenience init(camera: any CameraDevice, queue: DispatchQueue? = nil, analyzer: some FrameAnalyzer) {
        self.init(camera: camera, queue: queue, analyzer: { [analyzer] in analyzer.analyze($0) })
    }

    deinit { current.locked { $0.stream?.cancel() } }

    /// Starts analysing (idempotent).
    public func start() {
        task.locked { t in
            guard t == nil else { return }
            t = Task.detached { [self] in await run() }
        }
    }

    /// Stops; the analyzer is not called after this returns.
    public func stop() async {
        let s = current.locked { c -> FrameStream? in
            c.stopped = true
            return c.stream
        }
        s?.cancel()
        // Also ends a wait for the session's next snapshot (`run`).
        let t = task.locked({ $0 })
        t?.cancel()
        await t?.value
        queue.sync {}
    }

    /// Frames analysed and skipped so far.
    public var stats: AnalysisStats {
        var s = counters.locked({ $0 })
        let c = current.locked({ $0 })
        s.dropped += c.stream?.droppedFrames ?? 0
        return s
    }

    private func run() async {
        var lastSequence: UInt64?
        while true {
            let seen = camera.currentState.sequence
            let stream = camera.frames(policy: .keepOnlyLatest)
            let stopped = current.locked { c -> Bool in
                if let old = c.stream { counters.locked { $0.dropped += old.droppedFrames } }
                c.stream = stream
                return c.stopped
            }
            if stopped {
                stream.cancel()
                return
            }
            var iterator = stream.makeAsyncIterator()
            var delivered = false
            // A failure ends the loop like a stop (its error is on the session's snapshot, which the
            // analysis reports); then wait for the session to stream again.
            while let frame = try? await iterator.next() {
                delivered = true
                if let last = lastSequence, frame.sequence > last + 1 {
                    let gap = Int(frame.sequence - last - 1)
                    counters.locked { $0.sequenceGaps += gap }
                }
                lastSequence = frame.sequence
                let delay = Seconds.monotonic() - frame.timestamp
                let body = self.body
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    queue.async {
                        body(frame)
                        c.resume()
                    }
                }
                counters.locked {
                    $0.analyzed += 1
                    $0.lastQueueDelay = .seconds(delay)
                }
            }
            // The session stopped (or we were cancelled): a new stream waits for it to stream again.
            lastSequence = nil
            if current.locked({ $0 }).stopped { return }
            // A stream that ended before any frame (the session failed: a new one would end at once
            // until `start()`) is made again only after the session's next transition, awaited.
            if !delivered, await camera.firstState(within: nil, where: { $0.sequence > seen }) == nil, !Task.isCancelled {
                // The snapshots ended (the session is gone) with no event left to await: a slow retry.
                try? await Task.sleep(nanoseconds: 50_000_000)
            }
        }
    }
}

extension CameraDevice {
    /// Runs `analyzer` on the newest frames (keep-only-latest) until the returned analysis is stopped.
    public func analyze(queue: DispatchQueue? = nil, _ analyzer: @escaping @Sendable (Frame) -> Void) -> ImageAnalysis {
        let a = ImageAnalysis(camera: self, queue: queue, analyzer: analyzer)
        a.start()
        return a
    }
}
#endif
