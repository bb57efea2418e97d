#if Media
/// Byte-level JPEG surgery: EXIF APP1 insertion and Huffman-table repair for MJPEG pass-through
/// (no re-encoding). The photo path's own codec internals, not for apps (a `Photo` carries its
/// EXIF already): `@_spi(Backend) import CamHALMedia` sees it.
@_spi(Backend)
public enum JPEGSegments {
    /// Every marker segment (marker included) with `marker` before the first SOS.
    static func segments(of jpeg: [UInt8], marker: UInt8) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let m = jpeg[i + 1]
            if m == 0xDA || m == 0xD9 { break }
            let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            guard i + 2 + len <= jpeg.count else { break }
            if m == marker { out.append(Array(jpeg[i..<(i + 2 + len)])) }
            i += 2 + len
        }
        return out
    }

    /// Offset of the first marker with code `marker` before SOS, or nil.
    static func offset<Bytes: RandomAccessCollection>(of marker: UInt8, in jpeg: Bytes) -> Int?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let m = jpeg[i + 1]
            if m == marker { return i }
            if m == 0xDA || m == 0xD9 { return nil }
            let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            i += 2 + len
        }
        return nil
    }

    /// Whether `bytes` start like a JPEG (SOI then a marker).
    public static func isJPEG(_ bytes: [UInt8]) -> Bool {
        bytes.count > 4 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF
    }

    /// Many webcams send MJPEG frames without a DHT segment (the AVI1 convention); a file needs
    /// one. Inserts the standard tables before the first SOF/SOS when none is present.
    public static func withHuffmanTables(_ jpeg: [UInt8]) -> [UInt8] {
        guard isJPEG(jpeg), offset(of: 0xC4, in: jpeg) == nil else { return jpeg }
        let dht = JPEGCodec.standardDHT
        guard !dht.isEmpty, let at = offset(of: 0xC0, in: jpeg) ?? offset(of: 0xDA, in: jpeg) else { return jpeg }
        var out = jpeg
        out.insert(contentsOf: dht, at: at)
        return out
    }

    /// An EXIF APP1 segment with the TIFF Orientation tag (1...8) and the Software tag.
    public static func exifAPP1(orientation: Int, software: String = "CamHAL") -> [UInt8] {
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00]  // "II*\0", IFD0 at 8
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8((v >> 8) & 0xff)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xffff) + u16((v >> 16) & 0xffff) }
        var sw = Array(software.utf8) + [0]
        let entries = 2
        let dataOffset = 8 + 2 + entries * 12 + 4
        tiff += u16(entries)
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(min(max(orientation, 1), 8)) + u16(0)  // Orientation SHORT
        if sw.count <= 4 { sw += [UInt8](repeating: 0, count: 4 - sw.count) }
        tiff += u16(0x0131) + u16(2) + u32(sw.count) + u32(dataOffset)  // Software ASCII
        tiff += u32(0)  // no next IFD
        tiff += sw
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let len = payload.count + 2
        return [0xFF, 0xE1, UInt8(len >> 8), UInt8(len & 0xff)] + payload
    }

    /// Inserts (or replaces) the EXIF APP1 segment: after JFIF APP0 when present, else after SOI.
    public static func insertingEXIF(_ jpeg: [UInt8], orientation: Int) -> [UInt8] {
        guard isJPEG(jpeg) else { return jpeg }
        var out = jpeg
        // Drop an existing EXIF APP1 so there is exactly one.
        // A segment length running past the end of the data (a truncated or hostile frame) is
        // left alone rather than trusted (found by Fuzz/FuzzJPEGSegments).
        if let at = offset(of: 0xE1, in: out), at + 10 <= out.count, Array(out[(at + 4)..<(at + 8)]) == Array("Exif".utf8) {
            let len = Int(out[at + 2]) << 8 | Int(out[at + 3])
            if at + 2 + len <= out.count { out.removeSubrange(at..<(at + 2 + len)) }
        }
        var at = 2
        if out.count > 6, out[2] == 0xFF, out[3] == 0xE0 {
            at = min(out.count, 4 + (Int(out[4]) << 8 | Int(out[5])))
        }
        out.insert(contentsOf: exifAPP1(orientation: orientation), at: at)
        return out
    }

    /// The EXIF orientation tag of a JPEG, nil when absent.
    public static func exifOrientation(of jpeg: [UInt8]) -> Int? {
        guard let at = offset(of: 0xE1, in: jpeg), at + 18 < jpeg.count,
              Array(jpeg[(at + 4)..<(at + 8)]) == Array("Exif".utf8) else { return nil }
        let tiff = at + 10
        let little = jpeg[tiff] == 0x49
        func u16(_ o: Int) -> Int {
            guard o + 1 < jpeg.count else { return 0 }
            return little ? Int(jpeg[o]) | Int(jpeg[o + 1]) << 8 : Int(jpeg[o]) << 8 | Int(jpeg[o + 1])
        }
        func u32(_ o: Int) -> Int { little ? u16(o) | u16(o + 2) << 16 : u16(o) << 16 | u16(o + 2) }
        let ifd = tiff + u32(tiff + 4)
        let count = u16(ifd)
        for e in 0..<count {
            let entry = ifd + 2 + e * 12
            if u16(entry) == 0x0112 { return u16(entry + 8) }
        }
        return nil
    }
}
#endif
