@testable import CamHALV4L2

/// libFuzzer entry: a media-controller topology built from bytes (entities, pads, links, as a
/// broken driver could report them, cycles and repeated IDs included), then every graph walk
/// CamHAL runs on it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var reader = ByteReader(bytes: UnsafeBufferPointer(start: data, count: size))
    var entities: [MediaGraph.Entity] = []
    var pads: [MediaGraph.Pad] = []
    var links: [MediaGraph.Link] = []
    var interfaces: [MediaGraph.Interface] = []
    while let kind = reader.byte() {
        switch kind % 4 {
        case 0:
            let id = reader.small()
            entities.append(MediaGraph.Entity(id: id, name: "e\(id)", function: reader.function()))
        case 1:
            let id = reader.small()
            pads.append(MediaGraph.Pad(id: id, entity: reader.small(), flags: reader.small() & 3, index: reader.small() & 7))
        case 2:
            links.append(MediaGraph.Link(source: reader.small(), sink: reader.small(), flags: reader.linkFlags()))
        default:
            interfaces.append(MediaGraph.Interface(id: reader.small(), type: reader.small(), major: 81, minor: reader.small()))
        }
    }
    let graph = MediaGraph(path: "/dev/media-fuzz", entities: entities, interfaces: interfaces, pads: pads, links: links)
    for e in entities {
        _ = graph.upstream(of: e)
        _ = graph.sourcePads(of: e)
        _ = graph.ancillary(of: e, function: e.function)
        _ = graph.isVideoNode(e)
        for p in 0..<4 { _ = graph.consumers(of: e, pad: UInt32(p)) }
    }
    _ = graph.entities(function: 0x10001)
    return 0
}

struct ByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    mutating func byte() -> UInt8? {
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return bytes[at]
    }
    /// IDs and indices from a small range, so references between records often resolve.
    mutating func small() -> UInt32 { UInt32(byte() ?? 0) & 0x1f }
    /// A few real entity functions (sensor, V4L2 I/O, lens, flash, scaler) or anything.
    mutating func function() -> UInt32 {
        let known: [UInt32] = [0x20001, 0x10001, 0x20003, 0x20002, 0x4004]
        let b = byte() ?? 0
        return Int(b) < known.count * 40 ? known[Int(b) % known.count] : UInt32(b)
    }
    /// Enabled data links mostly, ancillary links sometimes.
    mutating func linkFlags() -> UInt32 {
        let b = byte() ?? 0
        return UInt32(b & 1) | (b & 2 != 0 ? 0x2000_0000 : 0)
    }
}
