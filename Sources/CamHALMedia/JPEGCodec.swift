#if Media
import CTurboJPEG
import CamHAL
import FoundationEssentials

/// JPEG encoding and decoding through libjpeg-turbo's TurboJPEG API.
///
/// Creating a TurboJPEG handle costs about 2 ms, so handles (and their output buffers) are kept
/// in a small pool and reused; concurrent callers each take their own handle.
// @unchecked: a pool of TurboJPEG C handles under `Locked`; each handle is used by one caller at a time.
public final class JPEGCodec: @unchecked Sendable {
    /// The process-wide codec.
    public static let shared = JPEGCodec()

    /// A compressor with an output buffer it may reuse.
    final class Compressor {
        let handle: tjhandle
        var buffer: UnsafeMutablePointer<UInt8>?
        var capacity: UInt = 0
        init?() {
            guard let h = tjInitCompress() else { return nil }
            handle = h
        }
        deinit {
            if let buffer { tjFree(buffer) }
            tjDestroy(handle)
        }
        /// A buffer big enough for any JPEG of this size (TJFLAG_NOREALLOC keeps it ours).
        func reserve(width: Int, height: Int) -> Bool {
            let need = tjBufSize(Int32(width), Int32(height), Int32(TJSAMP_420.rawValue))
            if need == UInt(bitPattern: -1) { return false }
            if need > capacity {
                if let buffer { tjFree(buffer) }
                buffer = tjAlloc(Int32(need))
                capacity = buffer == nil ? 0 : need
            }
            return buffer != nil
        }
    }

    private let compressors = Locked<[Compressor]>([])
    private let decompressors = Locked<[tjhandle]>([])
    /// Handles kept for reuse; more concurrent callers than this create and drop extra handles.
    public let poolLimit: Int

    /// A codec keeping at most `poolLimit` TurboJPEG handles for reuse.
    public init(poolLimit: Int = 4) { self.poolLimit = poolLimit }

    deinit { for h in decompressors.value { tjDestroy(h) } }

    private func takeCompressor() throws(CameraError) -> Compressor {
        if let c = compressors.withLock({ $0.popLast() }) { return c }
        guard let c = Compressor() else { throw CameraError.unsupported("TurboJPEG: tjInitCompress failed") }
        return c
    }

    private func giveBack(_ c: Compressor) {
        compressors.withLock { if $0.count < poolLimit { $0.append(c) } }
    }

    static func lastError(_ handle: tjhandle?) -> String {
        guard let p = tjGetErrorStr2(handle) else { return "unknown TurboJPEG error" }
        return String(cString: p)
    }

    /// Encodes an I420 image as baseline 4:2:0 JPEG at `quality` (1...100). Returns the bytes.
    public func encode(_ image: I420Image, quality: Int, exifOrientation: Int? = nil) throws(CameraError) -> [UInt8] {
        try encodeI420(y: image.y, u: image.u, v: image.v, strideY: image.strideY, strideUV: image.strideUV,
                       width: image.width, height: image.height, quality: quality, exifOrientation: exifOrientation)
    }

    /// Encodes I420 planes in place (no copy of the pixels) as baseline 4:2:0 JPEG.
    public func encodeI420(
        y: UnsafePointer<UInt8>, u: UnsafePointer<UInt8>, v: UnsafePointer<UInt8>, strideY: Int, strideUV: Int,
        width: Int, height: Int, quality: Int, exifOrientation: Int? = nil
    ) throws(CameraError) -> [UInt8] {
        guard (1...100).contains(quality) else {
            throw CameraError.invalidArgument(name: "quality", value: "\(quality)", reason: "must be 1...100")
        }
        let c = try takeCompressor()
        defer { giveBack(c) }
        guard c.reserve(width: width, height: height), let out = c.buffer else {
            throw CameraError.unsupported("TurboJPEG: no buffer for \(width)x\(height)")
        }
        var planes: [UnsafePointer<UInt8>?] = [y, u, v]
        let strides: [Int32] = [Int32(strideY), Int32(strideUV), Int32(strideUV)]
        var jpeg: UnsafeMutablePointer<UInt8>? = out
        var size: UInt = c.capacity
        let status = planes.withUnsafeMutableBufferPointer { p in
            strides.withUnsafeBufferPointer { s in
                tjCompressFromYUVPlanes(c.handle, p.baseAddress, Int32(width), s.baseAddress, Int32(height),
                                        Int32(TJSAMP_420.rawValue), &jpeg, &size, Int32(quality), TJFLAG_NOREALLOC)
            }
        }
        guard status == 0, let jpeg else {
            throw CameraError.streamFailed("JPEG encode of \(width)x\(height) failed: \(Self.lastError(c.handle))")
        }
        let encoded = UnsafeBufferPointer(start: jpeg, count: Int(size))
        guard let orientation = exifOrientation, size > 20 else { return Array(encoded) }
        // One copy out of TurboJPEG's buffer, with the EXIF APP1 spliced in after SOI + JFIF APP0.
        let app1 = JPEGSegments.exifAPP1(orientation: orientation)
        var at = 2
        if encoded[2] == 0xFF, encoded[3] == 0xE0 { at = 4 + (Int(encoded[4]) << 8 | Int(encoded[5])) }
        var result = [UInt8]()
        result.reserveCapacity(encoded.count + app1.count)
        result.append(contentsOf: encoded[0..<at])
        result.append(contentsOf: app1)
        result.append(contentsOf: encoded[at...])
        return result
    }

    /// Reads the size of a JPEG without decoding it.
    public func dimensions(of jpeg: UnsafeRawBufferPointer) throws(CameraError) -> Size {
        let h = try takeDecompressor()
        defer { giveBack(h) }
        var w: Int32 = 0, ht: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
        guard let base = jpeg.baseAddress,
              tjDecompressHeader3(h, base.assumingMemoryBound(to: UInt8.self), UInt(jpeg.count), &w, &ht, &sub, &cs) == 0 else {
            throw CameraError.streamFailed("not a readable JPEG: \(Self.lastError(h))")
        }
        return Size(width: Int(w), height: Int(ht))
    }

    /// Decodes a JPEG/MJPEG frame whole, straight into `out` (an RGBA or BGRA image of the
    /// frame's size): from the frame's own buffer, with no copy of the input and no intermediate
    /// image, as calling TurboJPEG directly would (target: decode within 1.05x of it). A webcam
    /// frame without Huffman tables is copied once, with the standard tables inserted.
    public func decode(_ frame: Frame, into out: PackedImage) throws(CameraError) {
        guard let plane = frame.planes.first, plane.length > 0 else {
            throw CameraError.invalidArgument(name: "frame", value: frame.description, reason: "no data")
        }
        let pixel: TJPF
        switch out.format {
        case .rgba: pixel = TJPF_RGBA
        case .bgra: pixel = TJPF_BGRA
        default:
            throw CameraError.invalidArgument(name: "into", value: "\(out.format)", reason: "needs an RGBA or BGRA image")
        }
        let raw = UnsafeRawBufferPointer(start: plane.baseAddress, count: plane.length)
        let unreadable = "MJPEG frame \(frame.sequence) unreadable", failed = "MJPEG frame \(frame.sequence) decode failed"
        let into = { (w: Int, h: Int) throws(CameraError) -> PackedImage in
            guard w == out.width, h == out.height else {
                throw CameraError.invalidArgument(name: "into", value: "\(out.width)x\(out.height)", reason: "the JPEG is \(w)x\(h)")
            }
            return out
        }
        if JPEGSegments.offset(of: 0xC4, in: raw) != nil || !JPEGSegments.isJPEG(Array(raw.prefix(5))) {
            _ = try decompress(raw, pixelFormat: pixel, unreadable: unreadable, failed: failed, into: into)
            return
        }
        _ = try decode(JPEGSegments.withHuffmanTables(Array(raw)), pixelFormat: pixel, unreadable: unreadable, failed: failed, into: into)
    }

    /// Decodes a JPEG/MJPEG frame to B,G,R,A pixels (libyuv "ARGB"). Webcam MJPEG without
    /// Huffman tables gets the standard ones first.
    public func decodeBGRA(_ frame: Frame) throws(CameraError) -> PackedImage {
        guard let plane = frame.planes.first else {
            throw CameraError.invalidArgument(name: "frame", value: frame.description, reason: "no data")
        }
        let bytes = JPEGSegments.withHuffmanTables(Array(plane.bytes))
        return try decode(bytes, to: .bgra, pixelFormat: TJPF_BGRA,
                          unreadable: "MJPEG frame \(frame.sequence) unreadable", failed: "MJPEG frame \(frame.sequence) decode failed")
    }

    /// Decodes a JPEG to 8-bit gray (for checks that compare pictures).
    public func decodeGray(_ jpeg: [UInt8]) throws(CameraError) -> PackedImage {
        try decode(jpeg, to: .gray8, pixelFormat: TJPF_GRAY, unreadable: "not a readable JPEG", failed: "JPEG decode failed")
    }

    /// Decodes `jpeg` into a new packed image of `format` with a pooled decompressor; the two
    /// messages prefix TurboJPEG's own error.
    private func decode(_ jpeg: [UInt8], to format: PixelFormat, pixelFormat: TJPF, unreadable: String, failed: String)
        throws(CameraError) -> PackedImage
    {
        try decode(jpeg, pixelFormat: pixelFormat, unreadable: unreadable, failed: failed) { w, h in
            PackedImage(format: format, width: w, height: h)
        }
    }

    private func decode(
        _ jpeg: [UInt8], pixelFormat: TJPF, unreadable: String, failed: String, into: (Int, Int) throws(CameraError) -> PackedImage
    ) throws(CameraError) -> PackedImage {
        var result: Result<PackedImage, CameraError> = .failure(.streamFailed(unreadable))
        jpeg.withUnsafeBytes { b in
            do throws(CameraError) {
                result = .success(try decompress(b, pixelFormat: pixelFormat, unreadable: unreadable, failed: failed, into: into))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// The one TurboJPEG decode: reads the header, asks `into` for the image of that size (a new
    /// one, or the caller's, checked), decompresses into it with a pooled decompressor.
    private func decompress(
        _ jpeg: UnsafeRawBufferPointer, pixelFormat: TJPF, unreadable: String, failed: String,
        into: (Int, Int) throws(CameraError) -> PackedImage
    ) throws(CameraError) -> PackedImage {
        let h = try takeDecompressor()
        defer { giveBack(h) }
        let bytes = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var w: Int32 = 0, ht: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
        guard tjDecompressHeader3(h, bytes, UInt(jpeg.count), &w, &ht, &sub, &cs) == 0 else {
            throw CameraError.streamFailed("\(unreadable): \(Self.lastError(h))")
        }
        let out = try into(Int(w), Int(ht))
        guard tjDecompress2(h, bytes, UInt(jpeg.count), out.storage, w, Int32(out.bytesPerRow), ht, Int32(pixelFormat.rawValue), 0) == 0 else {
            throw CameraError.streamFailed("\(failed): \(Self.lastError(h))")
        }
        return out
    }

    private func takeDecompressor() throws(CameraError) -> tjhandle {
        if let h = decompressors.withLock({ $0.popLast() }) { return h }
        guard let h = tjInitDecompress() else { throw CameraError.unsupported("TurboJPEG: tjInitDecompress failed") }
        return h
    }

    private func giveBack(_ h: tjhandle) {
        let kept = decompressors.withLock { (list: inout [tjhandle]) -> Bool in
            guard list.count < poolLimit else { return false }
            list.append(h)
            return true
        }
        if !kept { tjDestroy(h) }
    }

    /// The standard (ITU T.81 Annex K) Huffman tables as one DHT segment, taken from a tiny JPEG
    /// TurboJPEG encodes without optimized tables.
    static let standardDHT: [UInt8] = {
        guard let c = Compressor() else { return [] }
        var pixels = [UInt8](repeating: 128, count: 16 * 16 * 3)
        var jpeg: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.withUnsafeMutableBufferPointer {
            tjCompress2(c.handle, $0.baseAddress, 16, 0, 16, Int32(TJPF_RGB.rawValue), &jpeg, &size,
                        Int32(TJSAMP_420.rawValue), 75, 0)
        }
        defer { if let jpeg { tjFree(jpeg) } }
        guard status == 0, let jpeg else { return [] }
        let bytes = Array(UnsafeBufferPointer(start: jpeg, count: Int(size)))
        return JPEGSegments.segments(of: bytes, marker: 0xC4).flatMap { $0 }
    }()
}
#endif
