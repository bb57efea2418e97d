#if Media
import CamHAL
import FoundationEssentials

extension CameraDevice {
    /// Takes a photo from the first frame that is ready (CameraX `ImageCapture.takePicture`,
    /// AVFoundation `capturePhoto`): the visible rectangle (zoom crop included), scaled to
    /// `maxSize`, mirrored per `settings.mirror`, JPEG-encoded with EXIF orientation. Frames are
    /// passed over only while the device reports its auto exposure or autofocus converging
    /// (`CameraState.convergence`), at most `maxConvergenceFrames`; the photo's metadata says how
    /// many and why (`framesSkipped`, `skipReason`). A source that reports no loop (a test
    /// source, most V4L2 webcams) gives its first frame.
    ///
    /// The session must be running (or starting): like AVCapturePhotoOutput and CameraX, a session
    /// that was never started is an error (`configurationFailed`; a `Camera` says so at once, another
    /// `CameraDevice` after a 0.5 s grace for a `start()` just issued), not an implicit start. Called
    /// right after a `Camera`'s `start()`, it takes the session's first frame: it waits for frames
    /// from the call on, so a task that resumes late still gets the first frame after its call.
    /// It never hangs: no frame within `settings.timeout` is `CameraError.timeout`.
    public func capturePhoto(_ settings: PhotoSettings = PhotoSettings()) async throws(CameraError) -> Photo {
        try settings.validate()
        // Subscribed before anything is awaited, so a frame arriving meanwhile is not missed.
        let stream = frames(policy: .keepOnlyLatest)
        defer { stream.cancel() }
        try await requireStarted(for: "capturePhoto")
        // Spans on the monotonic clock: a wall-clock step must not shorten or stretch the wait.
        let deadline = Seconds.monotonicCoarse() + min(max(0.001, Seconds.of(settings.timeout)), 1e9)
        var skipped = 0
        var reasons: [String] = []
        while true {
            let left = max(0.001, deadline - Seconds.monotonicCoarse())
            guard let frame = await stream.next(timeout: .seconds(left)) else {
                if let reason = stream.endReason { throw reason }
                if stream.isFinished || Task.isCancelled {
                    throw CameraError.streamFailed("camera \(mediaName) stopped before a frame arrived for capturePhoto")
                }
                throw CameraError.timeout("no frame from \(mediaName) within \(settings.timeout) for capturePhoto (status \(currentState.status))"
                    + (skipped > 0 ? "; \(skipped) frame(s) skipped while \(reasons.joined(separator: " and "))" : ""))
            }
            let converging = Self.convergingLoops(currentState.convergence)
            let last = skipped >= Self.maxConvergenceFrames || deadline - Seconds.monotonicCoarse() <= 0
            if converging.isEmpty || last {
                for r in converging where !reasons.contains(r) { reasons.append(r) }
                var why = reasons.isEmpty ? nil : reasons.joined(separator: " and ")
                if !converging.isEmpty, let w = why { why = "\(w); taken still converging after \(skipped) frame(s)" }
                let device = self.device
                var photo = try await Offload.run { () throws(CameraError) -> Photo in
                    try PhotoEncoder.photo(from: frame, settings: settings, device: device)
                }
                photo.metadata.framesSkipped = skipped
                photo.metadata.skipReason = why
                return photo
            }
            skipped += 1
            for r in converging where !reasons.contains(r) { reasons.append(r) }
        }
    }

    /// The most frames `capturePhoto` passes over waiting for an auto loop to converge (about
    /// 2 s at 30 fps); a loop still converging then does not hold the photo back further.
    static var maxConvergenceFrames: Int { 60 }

    /// The loops the device reports converging, as a photo's `skipReason` names them.
    static func convergingLoops(_ c: Convergence) -> [String] {
        (c.exposure == .adjusting ? ["auto exposure converging"] : [])
            + (c.focus == .adjusting ? ["autofocus converging"] : [])
    }

    /// Takes a photo and writes it atomically to `url` (temporary file in the same directory,
    /// fsync, rename): the final path never holds a partial file. An unwritable path is
    /// `CameraError.invalidArgument` naming it, before anything is captured.
    @discardableResult
    public func capturePhoto(to url: URL, settings: PhotoSettings = PhotoSettings()) async throws(CameraError) -> Photo {
        try settings.validate()
        try AtomicFile.checkWritable(url)
        let photo = try await capturePhoto(settings)
        try AtomicFile.write(photo.data, to: url)
        return photo
    }
}

/// Turns one frame into a photo. Public so apps (and benchmarks) can encode frames they hold.
public enum PhotoEncoder {
    /// Reused I420 buffers (a fresh multi-megabyte allocation per photo costs page faults).
    static let scratch = Locked<[I420Image]>([])

    static func takeScratch(_ w: Int, _ h: Int) -> I420Image {
        scratch.withLock { list in
            if let i = list.firstIndex(where: { $0.width == w && $0.height == h }) { return list.remove(at: i) }
            return nil
        } ?? I420Image(width: w, height: h)
    }

    static func giveScratch(_ images: [I420Image]) {
        scratch.withLock { list in
            list.append(contentsOf: images)
            if list.count > 4 { list.removeFirst(list.count - 4) }
        }
    }

    /// The stored size for a visible size under `maxSize` (aspect kept, even sides, never upscaled).
    public static func outputSize(visible: Size, maxSize: Size?) -> Size {
        guard let m = maxSize, visible.width > m.width || visible.height > m.height else { return visible }
        let scale = min(Double(m.width) / Double(visible.width), Double(m.height) / Double(visible.height))
        return Size(width: Int(even: Double(visible.width) * scale, rounding: .towardZero, minimum: 2),
                    height: Int(even: Double(visible.height) * scale, rounding: .towardZero, minimum: 2))
    }

    /// Encodes `frame` as a photo under `settings`; `device` supplies facing and name.
    public static func photo(from frame: Frame, settings: PhotoSettings, device: DeviceDescriptor) throws(CameraError) -> Photo {
        try settings.validate()
        let facing = frame.lens?.facing ?? device.facing
        let mirrored = settings.mirror == .on || (settings.mirror == .auto && facing == .front)
        let visible = frame.visibleRect
        let whole = visible == PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
        let out = outputSize(visible: Size(width: visible.width, height: visible.height), maxSize: settings.maxSize)
        let scaled = out != Size(width: visible.width, height: visible.height)
        let orientation = settings.exifOrientation
        func meta(quality: Int?, passed: Bool) -> PhotoMetadata {
            PhotoMetadata(device: "\(device.backend):\(device.id)", lensID: frame.lens?.id, sequence: frame.sequence,
                          timestamp: frame.timestamp, fieldOfView: frame.fieldOfView, mirrored: mirrored,
                          exifOrientation: orientation, quality: quality, passedThrough: passed, sourceFormat: frame.format)
        }

        if frame.format.isJPEGFamily, whole, !scaled, !mirrored, let plane = frame.planes.first {
            // Pass-through: the camera's JPEG, with the standard Huffman tables if it lacks them, plus EXIF.
            // Only a whole one: a frame cut short would be written as a file no viewer opens.
            if let problem = JPEGCheck.problem(in: plane.bytes, width: frame.width, height: frame.height) {
                throw CameraError.streamFailed("frame #\(frame.sequence) is a broken \(frame.format) payload: \(problem)")
            }
            let bytes = JPEGSegments.insertingEXIF(JPEGSegments.withHuffmanTables(Array(plane.bytes)), orientation: orientation)
            let size = try bytes.withUnsafeBytes { b in Result { () throws(CameraError) in try JPEGCodec.shared.dimensions(of: b) } }.get()
            return Photo(data: bytes, width: size.width, height: size.height, metadata: meta(quality: nil, passed: true))
        }

        let jpeg: [UInt8]
        if frame.format == .i420, !scaled, !mirrored, visible.x % 2 == 0, visible.y % 2 == 0 {
            // Zero-copy: encode the visible rectangle straight from the frame's planes.
            let s = try PixelConverter.source(frame, visible)
            guard let u = s.p1, let v = s.p2 else { throw CameraError.streamFailed("I420 frame without chroma planes") }
            jpeg = try JPEGCodec.shared.encodeI420(y: s.p0, u: u, v: v, strideY: Int(s.s0), strideUV: Int(s.s1),
                                                   width: visible.width, height: visible.height, quality: settings.quality,
                                                   exifOrientation: orientation)
        } else {
            let used = Locked<[I420Image]>([])
            defer { giveScratch(used.value) }
            let image = try PixelConverter.i420(frame, rect: visible, size: scaled ? out : nil, mirror: mirrored) { w, h in
                let i = takeScratch(w, h)
                used.withLock { $0.append(i) }
                return i
            }
            jpeg = try JPEGCodec.shared.encode(image, quality: settings.quality, exifOrientation: orientation)
        }
        return Photo(data: jpeg, width: out.width, height: out.height,
                     metadata: meta(quality: settings.quality, passed: false))
    }
}
#endif
