import CamHAL
import Foundation

/// CPU time (user + system) for the benchmark verbs, from getrusage.
enum CPUTime {
    /// Seconds of CPU this process has used.
    static func ofSelf() -> Double { seconds(RUSAGE_SELF.rawValue) }
    /// Seconds of CPU used by waited-for child processes (the reference tool run beside CamHAL).
    static func ofChildren() -> Double { seconds(RUSAGE_CHILDREN.rawValue) }

    private static func seconds(_ who: Int32) -> Double {
        var u = rusage()
        getrusage(__rusage_who_t(who), &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }
}

/// A timed run of N frames: the one measurement every bench verb makes, on CamHAL's side
/// (`FrameTake.take`, or `record` from a frame callback) and on a reference tool's (`reference`).
struct FrameTake {
    /// Frames wanted; `record` ignores any beyond it.
    let limit: Int
    let started = Date()
    let cpuAtStart = CPUTime.ofSelf()
    var frames = 0
    /// Seconds from the start to the last frame, and the CPU used over the same span.
    var wall = 0.0
    var cpu = 0.0
    /// Seconds from the start to the first frame.
    var firstFrame: Double?
    /// The first and last frames' timestamps (the device's monotonic clock).
    var firstTimestamp = 0.0
    var lastTimestamp = 0.0
    /// The first frame's format, `NV12 640x480`.
    var format = ""
    var pixelFormat: PixelFormat?
    var size: Size?
    /// Frames whose sequence is not the previous one's + 1, and those not above it at all.
    var sequenceGaps = 0
    var sequenceRegressions = 0
    /// Distinct first-plane addresses: how many driver buffers the frames pointed into.
    var buffers = Set<UInt>()
    private var lastSequence: UInt64?

    init(limit: Int) { self.limit = limit }

    var isComplete: Bool { frames >= limit }
    var fps: Double { wall > 0 ? Double(frames) / wall : 0 }
    var cpuPerFrameMs: Double { frames > 0 ? cpu / Double(frames) * 1000 : 0 }
    /// Frames per second on the device's clock (first to last timestamp).
    var deviceFPS: Double { frames > 1 && lastTimestamp > firstTimestamp ? Double(frames - 1) / (lastTimestamp - firstTimestamp) : 0 }

    /// Counts `frame` (reading one byte of it in place, so the consumer really sees the data);
    /// returns true once `limit` frames were counted.
    @discardableResult
    mutating func record(_ frame: Frame) -> Bool {
        guard frames < limit else { return true }
        if firstFrame == nil {
            firstFrame = Date().timeIntervalSince(started)
            firstTimestamp = frame.timestamp
            format = "\(frame.format) \(frame.width)x\(frame.height)"
            pixelFormat = frame.format
            size = Size(width: frame.width, height: frame.height)
        }
        if let l = lastSequence {
            if frame.sequence != l + 1 { sequenceGaps += 1 }
            if frame.sequence <= l { sequenceRegressions += 1 }
        }
        lastSequence = frame.sequence
        lastTimestamp = frame.timestamp
        if let plane = frame.planes.first {
            buffers.insert(UInt(bitPattern: plane.baseAddress))
            if plane.length > 0 { _ = plane.bytes[plane.length / 2] }
        }
        frames += 1
        if frames >= limit { finish() }
        return frames >= limit
    }

    /// Stops the clocks (called by `record` at the limit; call it when the frames stopped early).
    mutating func finish() {
        guard wall == 0 else { return }
        wall = Date().timeIntervalSince(started)
        cpu = CPUTime.ofSelf() - cpuAtStart
    }

    /// Starts `camera` and takes `count` frames from its `FrameStream` (`.block(capacity:)`),
    /// timing from just before `start()`. Fewer frames when the stream ends first.
    static func take(_ count: Int, from camera: Camera, capacity: Int) async -> FrameTake {
        let stream = camera.frames(policy: .block(capacity: capacity))
        var take = FrameTake(limit: count)
        camera.start()
        for await frame in stream where take.record(frame) { break }
        take.finish()
        return take
    }

    /// Runs a reference tool (`v4l2-ctl`, `gst-launch-1.0`) that handles `frames` frames, timing
    /// its wall clock and the CPU it used (start-up included); throws when it fails.
    static func reference(_ executable: String, _ arguments: [String], frames: Int) throws -> FrameTake {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        var take = FrameTake(limit: frames)
        let c0 = CPUTime.ofChildren()
        try p.run()
        p.waitUntilExit()
        take.wall = Date().timeIntervalSince(take.started)
        take.cpu = CPUTime.ofChildren() - c0
        take.frames = frames
        guard p.terminationStatus == 0 else {
            throw CameraError.streamFailed("\(executable) \(arguments.joined(separator: " ")) exited with \(p.terminationStatus)")
        }
        return take
    }
}
