import CamHAL
import FoundationEssentials
import Glibc

/// Where a frame's capture or send time comes from, for its delivery latency.
package enum LatencySource: String, Sendable {
    /// No usable stamp (GStreamer's test source stamps stream time, not a clock).
    case none
    /// The frame's timestamp: the driver's, on CLOCK_MONOTONIC (V4L2, libcamera).
    case driver
    /// The emulated webcam's send time inside the image (Tests/Webcam, WEBCAM-PROTOCOL):
    /// YUYV bytes 8..<16 of the first row, or MJPEG's `CAMHAL <counter> <send_ns>` COM segment.
    case webcam

    /// The stamp of `frame` in seconds on CLOCK_MONOTONIC, or nil when it carries none.
    package func stamp(of frame: Frame) -> Double? {
        switch self {
        case .none: return nil
        case .driver: return frame.timestamp
        case .webcam:
            guard let plane = frame.planes.first else { return nil }
            let bytes = plane.bytes
            if frame.format == .mjpeg {
                // SOI, then FF FE, a 2-byte length, then the text.
                guard bytes.count > 6, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF, bytes[3] == 0xFE else { return nil }
                let length = Int(bytes[4]) << 8 | Int(bytes[5])
                guard length > 2, 4 + length <= bytes.count else { return nil }
                return Self.sendTime(inComment: UnsafeRawBufferPointer(rebasing: bytes[6..<(4 + length)]))
            }
            guard bytes.count >= 16 else { return nil }
            return Double(bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian) / 1e9
        }
    }
}

extension LatencySource {
    /// The send time in an MJPEG frame's `CAMHAL <counter> <send_ns>` comment, in seconds, read
    /// off the bytes without building strings: the measured consumer's own work per frame stays
    /// a few dozen instructions, as v4l2-ctl's is (a String and its split cost about 10k).
    package static func sendTime(inComment text: UnsafeRawBufferPointer) -> Double? {
        let prefix = "CAMHAL ".utf8  // a view of a literal: no array built per frame
        guard text.count > prefix.count, text.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        var i = prefix.count
        func number() -> UInt64? {
            var v: UInt64 = 0, digits = 0
            while i < text.count, text[i] >= 0x30, text[i] <= 0x39, digits < 20 {
                v = v &* 10 &+ UInt64(text[i] - 0x30)
                digits += 1
                i += 1
            }
            return digits > 0 ? v : nil
        }
        guard number() != nil, i < text.count, text[i] == 0x20 else { return nil }
        i += 1
        guard let ns = number(), i == text.count else { return nil }
        return Double(ns) / 1e9
    }
}

/// A take of N frames in the measured child: the one thing every path (stream, handler, raw)
/// records per frame, kept small so the consumer's own cost stays in the noise.
package struct FrameTake {
    /// Frames wanted; `record` ignores any beyond it.
    package let limit: Int
    package let latencySource: LatencySource
    package var frames = 0
    /// CLOCK_MONOTONIC of the first frame's arrival.
    package var firstArrival: Double?
    /// The first and last frames' timestamps (the device's clock).
    package var firstTimestamp = 0.0
    package var lastTimestamp = 0.0
    /// The first frame's format, `NV12 640x480`.
    package var format = ""
    package var pixelFormat: PixelFormat?
    package var size: Size?
    /// Frames whose sequence is not the previous one's + 1, and those not above it at all.
    package var sequenceGaps = 0
    package var sequenceRegressions = 0
    /// Distinct first-plane addresses: how many buffers the frames pointed into (few = no copies).
    /// An array, not a Set: a stream has a handful of buffers, and a Set<UInt>'s first insert
    /// cost the measured process 250,000 instructions of metadata and Hashable lookup.
    package var buffers: [UInt] = []
    /// Delivery latencies in seconds (arrival - stamp), when the frames carry a stamp.
    package var latencies: [Double] = []
    private var lastSequence: UInt64?

    package init(limit: Int, latency: LatencySource = .none) {
        self.limit = limit
        latencySource = latency
        latencies.reserveCapacity(latency == .none ? 0 : limit)
    }

    package var isComplete: Bool { frames >= limit }
    /// Frames per second on the device's clock (first to last timestamp).
    package var deviceFPS: Double { frames > 1 && lastTimestamp > firstTimestamp ? Double(frames - 1) / (lastTimestamp - firstTimestamp) : 0 }

    /// Counts `frame` (reading one byte of it in place, so the consumer really sees the data);
    /// returns true once `limit` frames were counted.
    @discardableResult
    package mutating func record(_ frame: Frame, arrivedAt now: Double = Seconds.monotonic()) -> Bool {
        guard frames < limit else { return true }
        if let stamp = latencySource.stamp(of: frame) { latencies.append(now - stamp) }
        if firstArrival == nil {
            firstArrival = now
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
            let address = UInt(bitPattern: plane.baseAddress)
            if !buffers.contains(address) { buffers.append(address) }
            if plane.length > 0 { _ = plane.bytes[plane.length / 2] }
        }
        frames += 1
        return frames >= limit
    }

    /// The `q` quantile (0...1) of the latencies in milliseconds, nil without any.
    package func latencyMs(_ q: Double) -> Double? {
        guard !latencies.isEmpty else { return nil }
        let s = latencies.sorted()
        return s[min(s.count - 1, Int((Double(s.count - 1) * q).rounded()))] * 1000
    }

    /// Starts `camera` and takes `count` frames from its `FrameStream` (`.block(capacity:)`).
    /// Fewer frames when the stream ends first.
    package static func take(_ count: Int, from camera: Camera, capacity: Int, latency: LatencySource) async -> FrameTake {
        let stream = camera.frames(policy: .block(capacity: capacity))
        var take = FrameTake(limit: count, latency: latency)
        camera.start()
        do {
            for try await frame in stream where take.record(frame) { break }
        } catch {
            printError("camhal-bench: the session failed after \(take.frames) frames: \(error)")
        }
        return take
    }
}
