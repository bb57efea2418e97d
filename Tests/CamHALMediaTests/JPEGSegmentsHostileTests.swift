#if Media
@_spi(Backend) import CamHALMedia
import Testing

/// JPEG segment surgery on truncated or hostile MJPEG frames (cases found by
/// Fuzz/FuzzJPEGSegments): lengths that run past the data are never trusted.
@Suite struct JPEGSegmentsHostileTests {
    /// An EXIF APP1 whose length field claims more bytes than the frame has: inserting EXIF
    /// trapped ("Array replace: subrange extends past the end"). Would catch: the bound removed.
    @Test func truncatedEXIFSegmentDoesNotTrap() {
        let frame: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x40, 0x00] + Array("Exif".utf8) + [0, 0, 0x49, 0x49]
        let out = JPEGSegments.insertingEXIF(frame, orientation: 6)
        #expect(JPEGSegments.exifOrientation(of: out) == 6)
    }

    /// A JFIF APP0 whose length points past the end: EXIF was inserted out of range.
    @Test func app0LengthPastTheEndDoesNotTrap() {
        let frame: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x7F, 0xFF, 0x4A, 0x46]
        let out = JPEGSegments.insertingEXIF(frame, orientation: 3)
        #expect(out.count > frame.count)
        #expect(Array(out.prefix(frame.count)) == frame, "appended after the truncated APP0")
    }
}
#endif
