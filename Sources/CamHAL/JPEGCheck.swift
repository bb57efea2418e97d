/// Whether a JPEG/MJPEG frame arrived whole (R5): it starts with SOI, has a frame header (SOF)
/// before its scan with the stream's size, and ends with EOI (padding after it allowed, as some
/// webcams pad their buffers). A frame cut short or overwritten in transit fails and is
/// discarded as a broken payload instead of becoming a photo or a recording frame.
/// Reads only the markers before the scan and the buffer's tail: no decode.
package enum JPEGCheck {
    /// Whether `frame` (of a JPEG family format) is whole; a frame of another format always is.
    package static func isWhole(_ frame: Frame) -> Bool {
        guard frame.format.isJPEGFamily, let plane = frame.planes.first else { return true }
        return problem(in: plane.bytes, width: frame.width, height: frame.height) == nil
    }

    /// What is wrong with `jpeg` as a `width` x `height` frame (0 for either: any size), or nil
    /// when it is whole.
    package static func problem(in jpeg: UnsafeRawBufferPointer, width: Int, height: Int) -> String? {
        let n = jpeg.count
        guard n >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return "no start of image (SOI)" }
        // The tail: EOI within its last 64 bytes (webcams pad their buffers after it). Entropy-
        // coded data never holds FF D9, so a frame cut short has none there.
        var end = n
        while end > max(4, n - 64), !(jpeg[end - 2] == 0xFF && jpeg[end - 1] == 0xD9) { end -= 1 }
        guard jpeg[end - 2] == 0xFF, jpeg[end - 1] == 0xD9 else { return "no end of image (EOI): cut short" }
        // The header segments up to the scan; a frame header must come first.
        var i = 2
        while i + 4 <= end {
            guard jpeg[i] == 0xFF else { return "a header segment at byte \(i) is broken" }
            let marker = jpeg[i + 1]
            if marker == 0xFF {
                i += 1  // fill byte
                continue
            }
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            guard length >= 2, i + 2 + length <= end else { return "a header segment at byte \(i) runs past the data" }
            if isFrameHeader(marker) {
                guard length >= 7 else { return "a frame header (SOF) too short" }
                let h = Int(jpeg[i + 5]) << 8 | Int(jpeg[i + 6])
                let w = Int(jpeg[i + 7]) << 8 | Int(jpeg[i + 8])
                if width > 0, height > 0, (w != width || h != height) {
                    return "a frame header (SOF) of \(w)x\(h) in a \(width)x\(height) stream"
                }
                return nil
            }
            if marker == 0xDA || marker == 0xD9 { break }
            i += 2 + length
        }
        return "no frame header (SOF)"
    }

    /// SOF0...SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}

extension PixelFormat {
    /// MJPEG or JPEG: frames that are whole JPEG images (decoded or passed through, not converted
    /// pixel by pixel). H.264, also compressed, is not: see `isCompressed`.
    public var isJPEGFamily: Bool { self == .mjpeg || self == .jpeg }
}
