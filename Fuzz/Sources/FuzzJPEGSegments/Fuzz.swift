@_spi(Backend) @testable import CamHALMedia

/// libFuzzer entry: JPEG/EXIF segment parsing of an MJPEG frame.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = JPEGSegments.segments(of: bytes, marker: 0xE1)
    _ = JPEGSegments.exifOrientation(of: bytes)
    _ = JPEGSegments.insertingEXIF(bytes, orientation: 6)
    _ = JPEGSegments.withHuffmanTables(bytes)
    return 0
}
