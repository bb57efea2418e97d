#if Media
import CGStreamer
import CamHAL
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The file format of a recording. Both survive a cut (killed process, power loss, disconnect):
/// the file plays up to the last written cluster/fragment.
public enum RecordingContainer: String, Sendable, Hashable, CaseIterable {
    /// Matroska (`.mkv`). Not in matroskamux's streamable mode: that mode never writes the
    /// segment's Duration, and readers (gst-discoverer-1.0) then estimate it from the last
    /// cluster's start, up to a keyframe interval (~1 s) short of what was recorded. A clean stop
    /// writes the Duration and the sizes at the end; a cut file has none and still plays
    /// (readers treat the sizes as unknown).
    case matroska
    /// Fragmented MP4 (`.mp4`), one fragment a second.
    case fragmentedMP4

    /// `.mp4`/`.m4v`/`.mov` → fragmented MP4; anything else → Matroska.
    public static func forExtension(_ ext: String) -> RecordingContainer {
        matching(extension: ext) ?? .matroska
    }

    /// The container a file extension names: `mkv` → Matroska, `mp4`/`m4v`/`mov` → fragmented
    /// MP4; nil for any other extension (`.webm`, `.avi`: containers CamHAL does not write H.264 to).
    public static func matching(extension ext: String) -> RecordingContainer? {
        switch ext.lowercased() {
        case "mkv": return .matroska
        case "mp4", "m4v", "mov": return .fragmentedMP4
        default: return nil
        }
    }

    /// The extensions this container is written under.
    public var fileExtensions: [String] {
        switch self {
        case .matroska: return ["mkv"]
        case .fragmentedMP4: return ["mp4", "m4v", "mov"]
        }
    }
}

/// How to record (CameraX `Recorder` + `PendingRecording` options).
public struct RecordingOptions: Sendable, Hashable {
    /// The quality to record; nil records the visible frames at their own size. With a selector,
    /// the chosen class caps the height (never upscaling); open the camera with
    /// `QualitySelector.streamRequest(for:)` to stream that size in the first place.
    public var quality: QualitySelector?
    /// nil picks from the file extension (`.mkv`; `.mp4`, `.m4v`, `.mov`); any other extension,
    /// or none, is refused. When set, the file's extension (if any) must match it.
    public var container: RecordingContainer?
    /// Mirror front-camera video (AVCaptureMovieFileOutput does by default).
    public var mirror: PhotoSettings.Mirror
    /// H.264 bit rate in kbit/s (`bitrateRange`); nil picks from the size.
    public var bitrateKbps: Int?
    /// Record audio. This build has no audio capture path (and this machine no audio source), so
    /// true is refused with `CameraError.unsupported`.
    public var audio: Bool
    /// How long to wait for the first frame (positive; huge values are clamped).
    public var firstFrameTimeout: Duration
    /// The longest file to write, in media time (AVCaptureFileOutput's
    /// `maxRecordedDuration`): the recording stops by itself, with no error, before the frame
    /// that would pass it, so the file never runs longer however late a timer calling `stop()`
    /// fires on a loaded machine. nil: until `stop()`. Not positive is refused.
    public var maxDuration: Duration?

    /// The bit rates x264enc accepts, kbit/s.
    public static let bitrateRange = 1...2_048_000

    /// The container these options write `url` in, or `CameraError.invalidArgument` naming the
    /// bad option: an extension that names no container CamHAL writes (`.webm`, `.avi`, none)
    /// unless `container` is set, an extension that contradicts `container`, a bit rate outside
    /// `bitrateRange`, a `firstFrameTimeout` that is not positive (a huge one is clamped, B3),
    /// a `maxDuration` that is not positive.
    public func validated(for url: URL) throws(CameraError) -> RecordingContainer {
        if let b = bitrateKbps, !Self.bitrateRange.contains(b) {
            throw .invalidArgument(name: "bitrateKbps", value: "\(b)", reason: "must be \(Self.bitrateRange.lowerBound)...\(Self.bitrateRange.upperBound) kbit/s (x264enc's range)")
        }
        // Non-positive values are refused; a huge one waits "forever" (clamped, B3).
        guard firstFrameTimeout > .zero else {
            throw .invalidArgument(name: "firstFrameTimeout", value: "\(firstFrameTimeout)", reason: "must be positive")
        }
        if let m = maxDuration, m <= .zero {
            throw .invalidArgument(name: "maxDuration", value: "\(m)", reason: "must be positive, or nil for no limit")
        }
        let ext = url.pathExtension
        let named = RecordingContainer.matching(extension: ext)
        switch (container, named) {
        case (nil, let c?):
            return c
        case (nil, nil):
            let what = ext.isEmpty ? "has no extension" : "has the extension '.\(ext)'"
            throw .invalidArgument(name: "recording file", value: url.path, reason: "\(what), which names no container CamHAL writes: use .mkv (Matroska) or .mp4/.m4v/.mov (fragmented MP4), or set RecordingOptions.container")
        case (let c?, nil) where ext.isEmpty:
            return c
        case (let c?, let n):
            guard n == c else {
                throw .invalidArgument(name: "recording file", value: url.path, reason: "the extension '.\(ext)' does not match the container \(c) (use .\(c.fileExtensions.joined(separator: ", .")))")
            }
            return c
        }
    }

    /// Recording options; each value is checked when the recording starts (`CameraError.invalidArgument` naming it).
    public init(quality: QualitySelector? = nil, container: RecordingContainer? = nil, mirror: PhotoSettings.Mirror = .auto,
                bitrateKbps: Int? = nil, audio: Bool = false, firstFrameTimeout: Duration = .seconds(5), maxDuration: Duration? = nil) {
        self.maxDuration = maxDuration
        self.quality = quality
        self.container = container
        self.mirror = mirror
        self.bitrateKbps = bitrateKbps
        self.audio = audio
        self.firstFrameTimeout = firstFrameTimeout
    }
}

/// Progress of a recording (CameraX `RecordingStats`).
public struct RecordingStats: Sendable, Hashable, CustomStringConvertible {
    /// Media time recorded.
    public var duration: Duration
    /// Bytes in the file so far.
    public var bytes: Int64
    /// Frames that reached the encoder (and so the file).
    public var frames: Int
    /// Frames the recorder skipped because it was behind (keep-only-latest) or they went backwards in time.
    public var droppedFrames: Int
    public var description: String {
        "\(decimal(Seconds.of(duration), places: 1)) s, \(bytes) bytes, \(frames) frames, \(droppedFrames) dropped"
    }
}

/// What a recording is, once it started.
public struct RecordingInfo: Sendable, Hashable {
    /// The file being written.
    public var url: URL
    /// The recorded picture size.
    public var size: Size
    /// The quality it was recorded at, when one was asked for.
    public var quality: Quality?
    /// Frames a second, as the camera streams.
    public var frameRate: Double
    /// The container format.
    public var container: RecordingContainer
    /// The GStreamer pipeline that encodes, for diagnostics.
    public var pipeline: String
}

/// Events of one recording, in order (CameraX `VideoRecordEvent`): one `started`, `status` at
/// least once a second, exactly one `finalized` (then the stream ends).
public enum RecordEvent: Sendable {
    /// The first frame reached the encoder.
    case started(RecordingInfo)
    /// Progress, at least once a second.
    case status(RecordingStats)
    /// The file is complete. `error` is nil on a clean stop; otherwise it says why the recording
    /// ended early (the file still plays up to that point).
    case finalized(url: URL, stats: RecordingStats, error: CameraError?)
}

extension CameraDevice {
    /// Starts recording H.264 video of this session's frames to `url` (CameraX
    /// `Recorder.prepareRecording(...).start()`, AVFoundation `AVCaptureMovieFileOutput`).
    ///
    /// Throws before touching the file when the path is unwritable, the options are invalid, the
    /// session is not running, or no frame arrives within `options.firstFrameTimeout`.
    public func startRecording(to url: URL, options: RecordingOptions = RecordingOptions()) async throws(CameraError) -> Recording {
        if options.audio {
            throw CameraError.unsupported("audio recording: CamHALMedia has no audio capture path yet (record video only)")
        }
        let container = try options.validated(for: url)
        try AtomicFile.checkWritable(url)
        try GStreamerRuntime.require()
        guard GStreamerRuntime.hasElement("x264enc") else {
            throw CameraError.unsupported("recording needs x264enc (Debian gstreamer1.0-plugins-ugly)")
        }
        try await requireStarted(for: "startRecording")
        // Subscribed before the first frame, so a failure from then on ends the recording at once.
        let states = stateUpdates()
        let stream = frames(policy: .keepOnlyLatest)
        let first: Frame
        do throws(CameraError) {
            first = try await Recording.firstFrame(of: stream, timeout: Seconds.of(options.firstFrameTimeout), camera: mediaName)
        } catch {
            stream.cancel()
            throw error
        }
        let device = self.device
        let quality = options.quality.flatMap { $0.resolve(sizes: device.formats.map(\.size)) }
        if options.quality != nil, quality == nil {
            stream.cancel()
            throw CameraError.unsupported("no quality of \(options.quality!.qualities) (or its fallback) among \(mediaName)'s sizes")
        }
        let rate = device.formats.first { $0.pixelFormat == first.format && $0.size == Size(width: first.width, height: first.height) }?
            .frameRates.first ?? 30
        do throws(CameraError) {
            let alive: @Sendable () -> Bool = { [weak self] in
                guard let s = self?.currentState.status else { return false }
                return s == .running || s == .starting || s == .interrupted
            }
            let failure: @Sendable () -> CameraError? = { [weak self] in
                guard let s = self?.currentState, s.status == .error else { return nil }
                return s.error
            }
            var options = options
            options.container = container
            return try Recording(url: url, options: options, device: device, stream: stream, first: first,
                                 quality: quality?.quality, frameRate: rate, sourceAlive: alive,
                                 sessionFailure: failure, sessionStates: states)
        } catch {
            stream.cancel()
            throw error
        }
    }
}

/// A recording in progress (CameraX `Recording`). Stop it with `stop()`; watch `events`.
// @unchecked: holds GStreamer C handles (thread-safe, refcounted) and counters encoder probes write, read through C atomics.
public final class Recording: @unchecked Sendable {
    /// The file being written.
    public let url: URL
    /// What is recorded: size, rate, container.
    public let info: RecordingInfo
    /// The event stream: `started`, `status`..., `finalized`.
    public let events: AsyncStream<RecordEvent>

    private let continuation: AsyncStream<RecordEvent>.Continuation
    private let frames: FrameStream
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let appsrc: UnsafeMutablePointer<GstElement>
    private let bus: UnsafeMutablePointer<GstBus>
    /// Buffers that entered the encoder, counted by a pad probe (outlives the pipeline).
    private let encodedFrames = UnsafeMutablePointer<gint>.allocate(capacity: 1)
    /// End time (PTS + duration, ns) of the last buffer that entered the encoder: the file's
    /// duration. Frames appsrc dropped when the encoder fell behind never count.
    private let encodedEnd = UnsafeMutablePointer<guint64>.allocate(capacity: 1)
    private let mirror: Bool
    private let pushQueue: DispatchQueue
    private let t0: Double
    private let frameDuration: UInt64
    /// `RecordingOptions.maxDuration` in nanoseconds of media time (nil: no limit).
    private let maxEnd: UInt64?
    /// When the first frame was pushed (monotonic seconds): the start of the span the file must cover.
    private let startedAt: Double
    private let sourceAlive: @Sendable () -> Bool
    /// The session's error when it failed (busy, disconnected...), else nil.
    private let sessionFailure: @Sendable () -> CameraError?
    /// Watches the session's states and ends the recording when it fails.
    private let sessionWatch = Locked<Task<Void, Never>?>(nil)

    struct State {
        var frames = 0
        var dropped = 0
        /// The most frames the encoder's input queue was seen to drop: counts never go down.
        var leaked = 0
        var lastPTS: UInt64 = 0
        var ended = false  // EOS sent; no more pushes
        var busError: String?
        var eos = false
        var stopRequested = false
        /// When `stop()` was first called (monotonic seconds): the end of the span the file must cover.
        var stopAt: Double?
        var result: (stats: RecordingStats, error: CameraError?)?
        var waiters: [CheckedContinuation<(stats: RecordingStats, error: CameraError?), Never>] = []
    }
    private let state = Locked(State())
    private let finalizeOnce = Locked(false)
    /// Signalled by the bus thread for each EOS or error it records: what `finalizeNow` awaits.
    private let busEnded = DispatchSemaphore(value: 0)

    static func firstFrame(of stream: FrameStream, timeout: Double, camera: String) async throws(CameraError) -> Frame {
        let timedOut = Locked(false)
        let timer = Task {
            try? await Seconds.sleep(max(0.001, timeout))
            if !Task.isCancelled {
                timedOut.set(true)
                stream.cancel()
            }
        }
        var it = stream.makeAsyncIterator()
        let f = try await it.next()  // the session's failure is the recording's error
        timer.cancel()
        guard let f else {
            throw timedOut.value
                ? CameraError.timeout("no frame from \(camera) within \(timeout) s to start recording")
                : CameraError.streamFailed("camera \(camera) stopped before recording started")
        }
        return f
    }

    /// The encoded size for a visible size under a quality cap: aspect kept, even sides, no upscaling.
    static func outputSize(visible: PixelRect, quality: Quality?) -> Size {
        guard let q = quality, visible.height > q.height else { return Size(width: visible.width & ~1, height: visible.height & ~1) }
        let w = Double(visible.width) * Double(q.height) / Double(visible.height)
        return Size(width: max(2, Int(w / 2) * 2), height: q.height)
    }

    init(url: URL, options: RecordingOptions, device: DeviceDescriptor, stream: FrameStream, first: Frame,
         quality: Quality?, frameRate: Double, sourceAlive: @escaping @Sendable () -> Bool = { true },
         sessionFailure: @escaping @Sendable () -> CameraError? = { nil }, sessionStates: AsyncStream<CameraState>? = nil) throws(CameraError) {
        self.url = url
        self.sourceAlive = sourceAlive
        self.sessionFailure = sessionFailure
        self.frames = stream
        let facing = first.lens?.facing ?? device.facing
        mirror = options.mirror == .on || (options.mirror == .auto && facing == .front)
        let size = Self.outputSize(visible: first.visibleRect, quality: quality)
        let container = options.container ?? .forExtension(url.pathExtension)
        let fps = max(1, Int(frameRate.rounded()))
        let kbps = options.bitrateKbps ?? (quality ?? Quality.allCases.first { size.height <= $0.height } ?? .uhd).bitrateKbps
        let mux = container == .matroska
            ? "matroskamux name=mux streamable=false"
            : "mp4mux name=mux fragment-duration=1000 streamable=true"
        let description = """
            appsrc name=src is-live=true format=time do-timestamp=false block=false leaky-type=upstream max-buffers=8 \
            caps=video/x-raw,format=I420,width=\(size.width),height=\(size.height),framerate=\(fps)/1,pixel-aspect-ratio=1/1 \
            ! x264enc name=enc tune=zerolatency speed-preset=ultrafast key-int-max=\(fps) bitrate=\(kbps) \
            ! video/x-h264,profile=constrained-baseline ! h264parse ! \(mux) ! filesink name=sink buffer-mode=unbuffered
            """
        let pipeline = try GStreamerRuntime.parse(description)
        guard let src = gst_bin_get_by_name(camhal_gst_bin(pipeline), "src"),
              let sink = gst_bin_get_by_name(camhal_gst_bin(pipeline), "sink") else {
            gst_object_unref(pipeline)
            throw CameraError.configurationFailed("recording pipeline lacks its appsrc/filesink")
        }
        camhal_gst_set(sink, "location", url.path)
        gst_object_unref(sink)
        encodedFrames.initialize(to: 0)
        encodedEnd.initialize(to: 0)
        if let enc = gst_bin_get_by_name(camhal_gst_bin(pipeline), "enc") {
            _ = camhal_gst_count_buffers(enc, "sink", encodedFrames)
            _ = camhal_gst_track_end_time(enc, "sink", encodedEnd)
            gst_object_unref(enc)
        }
        self.pipeline = pipeline
        self.appsrc = src
        self.bus = gst_element_get_bus(pipeline)
        self.t0 = first.timestamp
        self.startedAt = Seconds.monotonic()
        self.frameDuration = UInt64(1e9 / Double(fps))
        // Infinity (or anything past UInt64's nanoseconds) is no limit: validated() refused NaN and <= 0.
        self.maxEnd = options.maxDuration.map(Seconds.of).flatMap { $0 * 1e9 < Double(UInt64.max / 2) ? UInt64($0 * 1e9) : nil }
        self.pushQueue = DispatchQueue(label: "camhal.recording.push")
        self.info = RecordingInfo(url: url, size: size, quality: quality, frameRate: Double(fps), container: container,
                                  pipeline: description)
        (events, continuation) = AsyncStream<RecordEvent>.makeStream(bufferingPolicy: .unbounded)

        if gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            let why = pollError() ?? "state change to PLAYING failed"
            teardownPipeline()
            throw CameraError.configurationFailed("recording to \(url.path): \(why)")
        }
        push(first)
        continuation.yield(.started(info))
        startBusThread()
        Task.detached { [self] in await feed() }
        if let sessionStates {
            // A failed session (disconnected, busy, a stream error) ends the recording with that
            // error at once, whether or not its frame stream ends too (before, `record` kept
            // going to the end of --duration after a disconnect, then said "the camera stopped").
            sessionWatch.set(Task.detached { [weak self] in
                for await state in sessionStates where state.status == .error {
                    self?.finalize(error: state.error ?? .streamFailed("the camera failed during the recording; file kept"))
                    return
                }
            })
            if finalizeOnce.value { sessionWatch.value?.cancel() }  // finalized before the watch was stored
        }
    }

    deinit {
        gst_object_unref(bus)
        gst_object_unref(appsrc)
        gst_object_unref(pipeline)
        encodedFrames.deallocate()  // after the pipeline (and its probes) is gone
        encodedEnd.deallocate()
    }

    /// Stops recording; returns at once. `finalized` follows on `events` once the file is complete.
    public func stop() {
        let now = Seconds.monotonic()
        state.withLock { s in
            s.stopRequested = true
            if s.stopAt == nil { s.stopAt = now }
        }
        frames.cancel()
    }

    /// Stops (if not already) and waits for the file to be complete.
    @discardableResult
    public func stopAndWait() async -> (stats: RecordingStats, error: CameraError?) {
        stop()
        return await withCheckedContinuation { c in
            let done: (stats: RecordingStats, error: CameraError?)? = state.withLock { s in
                if let r = s.result { return r }
                s.waiters.append(c)
                return nil
            }
            if let done { c.resume(returning: done) }
        }
    }

    /// The current statistics.
    public var stats: RecordingStats {
        // appsrc is leaky: when the encoder falls behind (a slow machine) it drops the newest
        // frames, which never reach the file. Count what reached the encoder instead. It drops
        // the newest, not the oldest: x264enc starts slowly, and dropping the oldest lost the
        // first frames, so Matroska files started late (0.8 s seen) and were that much shorter
        // than the recorded duration.
        //
        // A frame pushed but still queued in appsrc is no drop (counting it as one made the count
        // go down, 39 then 37, as the queue drained). Read pushed, then queued, then encoded:
        // frames only move forward, so this order never counts a frame twice as lost. One frame
        // can be between the queue and the encoder's pad (appsrc's thread holds it) until the
        // end of the stream, when every frame is either encoded or lost.
        let (pushed, inHand) = state.withLock { ($0.frames, $0.eos ? 0 : 1) }
        let frameBytes = max(1, info.size.width * info.size.height * 3 / 2)
        let queued = Int(gst_app_src_get_current_level_bytes(UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self))) / frameBytes
        let encoded = Int(camhal_atomic_int_get(encodedFrames))
        let s = state.withLock { s -> State in
            s.leaked = max(s.leaked, pushed - queued - encoded - inHand)
            return s
        }
        // The duration is what reached the encoder, as the file will say (it used to be the last
        // frame handed to appsrc, which can be dropped when the encoder lags). The first frame
        // (PTS 0) always reaches it: the queue is empty then.
        return RecordingStats(duration: .nanoseconds(Int64(clamping: camhal_atomic_u64_get(encodedEnd))),
                              bytes: Self.fileSize(url), frames: encoded,
                              droppedFrames: s.dropped + frames.droppedFrames + s.leaked)
    }

    static func fileSize(_ url: URL) -> Int64 {
        var st = stat()
        return stat(url.path, &st) == 0 ? Int64(st.st_size) : 0
    }

    // MARK: Frames

    private func feed() async {
        var it = frames.makeAsyncIterator()
        // A failing session ends the loop by throwing; its reason is `frames.endReason` below.
        while let frame = try? await it.next() {
            if state.value.stopRequested { break }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                pushQueue.async { [self] in
                    push(frame)
                    c.resume()
                }
            }
        }
        // The session ending the stream is an error even when stop() raced in right after it.
        let s = state.value
        let sourceGone = !sourceAlive() || !s.stopRequested
        finalize(error: sourceGone ? frames.endReason ?? sessionFailure() ?? CameraError.streamFailed("the camera stopped during the recording; file kept") : nil)
    }

    /// Converts one frame (visible rect, scale, mirror) into a new I420 buffer the GstBuffer owns.
    private func push(_ frame: Frame) {
        let pts = frame.timestamp >= t0 ? UInt64((frame.timestamp - t0) * 1e9) : 0
        if let maxEnd, pts > 0, pts + frameDuration > maxEnd {
            // maxDuration reached: this frame would end past it. The first frame (PTS 0) always goes in.
            return stop()
        }
        let accept = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            if s.frames > 0 && pts <= s.lastPTS {
                s.dropped += 1
                return false
            }
            return true
        }
        guard accept else { return }
        let image: I420Image
        do {
            image = try PixelConverter.i420(frame, rect: frame.visibleRect, size: info.size, mirror: mirror)
        } catch {
            state.withLock { $0.dropped += 1 }
            return
        }
        guard let buffer = image.wrappedInGstBuffer() else {
            return
        }
        camhal_gst_buffer_set_pts(buffer, GstClockTime(pts))
        camhal_gst_buffer_set_duration(buffer, GstClockTime(frameDuration))
        let src = UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self)
        let stillOpen = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            s.frames += 1
            s.lastPTS = pts
            return true
        }
        if stillOpen { _ = gst_app_src_push_buffer(src, buffer) } else { gst_buffer_unref(buffer) }
    }

    // MARK: Bus, status and finalization

    private func pollError() -> String? {
        guard let m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return nil }
        defer { gst_message_unref(m) }
        return GStreamerRuntime.errorText(m)
    }

    private func startBusThread() {
        startThread(name: "camhal.recording.bus") { [self] in
            var lastStatus: ContinuousClock.Instant?
            let types = GstMessageType(rawValue: GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_EOS.rawValue)
            while true {
                if let m = gst_bus_timed_pop_filtered(bus, 100_000_000, types) {
                    if camhal_gst_message_type(m) == GST_MESSAGE_ERROR {
                        let text = GStreamerRuntime.errorText(m)
                        state.withLock { $0.busError = text }
                        busEnded.signal()
                        gst_message_unref(m)
                        finalize(error: .streamFailed("recording to \(url.path): \(text)"))
                    } else {
                        state.withLock { $0.eos = true }
                        busEnded.signal()
                        gst_message_unref(m)
                    }
                }
                let s = state.value
                if s.result != nil { return }
                if s.eos && s.ended { return }
                if lastStatus.map({ ContinuousClock.now - $0 >= .milliseconds(500) }) ?? true, !s.ended {
                    lastStatus = ContinuousClock.now
                    continuation.yield(.status(stats))
                }
            }
        }
    }

    /// Ends the stream (EOS through the muxer so the file is closed properly), waits up to 5 s
    /// for it to reach the file, releases the pipeline and emits `finalized` exactly once.
    private func finalize(error: CameraError?) {
        guard finalizeOnce.withLock({ f -> Bool in defer { f = true }; return !f }) else { return }
        // Waiting for EOS blocks: keep it off Swift-concurrency's few cooperative threads.
        DispatchQueue.global(qos: .userInitiated).async { [self] in finalizeNow(error: error) }
    }

    private func finalizeNow(error: CameraError?) {
        sessionWatch.value?.cancel()
        frames.cancel()
        pushQueue.sync {}  // the last push has landed
        state.withLock { $0.ended = true }
        let src = UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self)
        _ = gst_app_src_end_of_stream(src)
        // The bus thread signals each EOS or error it records (an earlier error counts too).
        let timedOut = busEnded.wait(timeout: .now() + 5) == .timedOut
        let stats = self.stats  // before NULL: appsrc's counters do not survive the state change
        gst_element_set_state(pipeline, GST_STATE_NULL)
        var finalError = error
        if finalError == nil, let e = state.value.busError { finalError = .streamFailed("recording to \(url.path): \(e)") }
        if finalError == nil, timedOut { finalError = .timeout("recording to \(url.path): end of stream not written within 5 s") }
        if finalError == nil {
            // A file that ends long before the recording did is an error, never a success (seen:
            // after vivid's timestamp wrap every frame was 1 µs after the last, the file
            // stopped at 2.3 s of 25, and `record` said "wrote").
            let s = state.value
            let reached = s.frames > 0 ? Double(s.lastPTS + frameDuration) / 1e9 : 0
            let span = (s.stopAt ?? Seconds.monotonic()) - startedAt
            if let why = Self.truncation(reached: reached, span: span) {
                finalError = .streamFailed("recording to \(url.path) truncated: \(why); file kept")
            }
        }
        let waiters = state.withLock { s -> [CheckedContinuation<(stats: RecordingStats, error: CameraError?), Never>] in
            s.result = (stats, finalError)
            defer { s.waiters = [] }
            return s.waiters
        }
        continuation.yield(.finalized(url: url, stats: stats, error: finalError))
        continuation.finish()
        for w in waiters { w.resume(returning: (stats, finalError)) }
    }

    /// Why a recording whose frames reach `reached` seconds of media time over a wall-clock
    /// `span` of seconds is truncated, or nil when it is not. Frames lag the wall clock by their
    /// delivery and conversion (more on a loaded machine), so a shortfall counts only beyond 2 s,
    /// or a quarter of the span when that is longer.
    static func truncation(reached: Double, span: Double) -> String? {
        let missing = span - reached
        guard missing > max(2, span / 4) else { return nil }
        return "its frames reach \(decimal(reached, places: 1)) s of the \(decimal(span, places: 1)) s recorded (frames stopped reaching it)"
    }

    private func teardownPipeline() {
        gst_element_set_state(pipeline, GST_STATE_NULL)
    }
}
#endif
