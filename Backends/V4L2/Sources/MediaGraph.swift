import CV4L2
import Glibc

/// One media-controller graph (MEDIA_IOC_G_TOPOLOGY), enough to find a capture node's upstream
/// pipeline, its sensor's lens and flash sub-devices, and the device nodes of sub-devices.
struct MediaGraph: Sendable {
    struct Entity: Sendable { let id: UInt32; let name: String; let function: UInt32 }
    struct Interface: Sendable { let id: UInt32; let type: UInt32; let major: UInt32; let minor: UInt32 }
    struct Pad: Sendable { let id: UInt32; let entity: UInt32; let flags: UInt32; let index: UInt32 }
    struct Link: Sendable { let source: UInt32; let sink: UInt32; let flags: UInt32 }

    /// One step of a pipeline: a sub-device entity, its device node, and the pads data flows through.
    struct Stage: Sendable, CustomStringConvertible {
        let entity: Entity
        let node: String
        /// The pad fed by the previous stage (nil for the source, e.g. a sensor).
        let sinkPad: UInt32?
        let sourcePad: UInt32
        var description: String { entity.name }
    }

    let path: String
    // Arrays searched by ID, not dictionaries: a graph has a few dozen of each, and building a
    // [UInt32: Entity] and a [UInt32: Pad] cost a fresh process 265,000 instructions of metadata
    // and conformance lookups, on the way to the first frame of every camera with a media device.
    let entities: [Entity]
    let interfaces: [Interface]
    let pads: [Pad]
    let links: [Link]

    /// The entity with this ID (the first, should the kernel repeat one).
    func entity(_ id: UInt32) -> Entity? { entities.first { $0.id == id } }
    /// The pad with this ID.
    func pad(_ id: UInt32) -> Pad? { pads.first { $0.id == id } }

    /// Reads the topology of the media device at `path`.
    static func load(path: String) throws(V4L2Errno) -> MediaGraph {
        let fd = try DeviceFD(path: path)
        var topo = media_v2_topology()
        try fd.ioctl(UInt(CAMHAL_MEDIA_IOC_G_TOPOLOGY), &topo, "MEDIA_IOC_G_TOPOLOGY")
        // The graph can change between the two calls; retry a few times if counts grow.
        for _ in 0..<3 {
            var ents = [media_v2_entity](repeating: media_v2_entity(), count: Int(topo.num_entities))
            var intfs = [media_v2_interface](repeating: media_v2_interface(), count: Int(topo.num_interfaces))
            var pads = [media_v2_pad](repeating: media_v2_pad(), count: Int(topo.num_pads))
            var links = [media_v2_link](repeating: media_v2_link(), count: Int(topo.num_links))
            let version = topo.topology_version
            var t2 = topo
            var failure: V4L2Errno?
            ents.withUnsafeMutableBufferPointer { e in
                intfs.withUnsafeMutableBufferPointer { i in
                    pads.withUnsafeMutableBufferPointer { p in
                        links.withUnsafeMutableBufferPointer { l in
                            t2.ptr_entities = UInt64(UInt(bitPattern: e.baseAddress))
                            t2.ptr_interfaces = UInt64(UInt(bitPattern: i.baseAddress))
                            t2.ptr_pads = UInt64(UInt(bitPattern: p.baseAddress))
                            t2.ptr_links = UInt64(UInt(bitPattern: l.baseAddress))
                            do throws(V4L2Errno) { try fd.ioctl(UInt(CAMHAL_MEDIA_IOC_G_TOPOLOGY), &t2, "MEDIA_IOC_G_TOPOLOGY") } catch { failure = error }
                        }
                    }
                }
            }
            if let failure, failure.code != ENOSPC { throw failure }
            if failure != nil || t2.topology_version != version {
                topo = t2
                continue
            }
            return MediaGraph(
                path: path,
                entities: ents.prefix(Int(t2.num_entities)).map { Entity(id: $0.id, name: cString($0.name), function: $0.function) },
                interfaces: intfs.prefix(Int(t2.num_interfaces)).map { Interface(id: $0.id, type: $0.intf_type, major: $0.devnode.major, minor: $0.devnode.minor) },
                pads: pads.prefix(Int(t2.num_pads)).map { Pad(id: $0.id, entity: $0.entity_id, flags: $0.flags, index: $0.index) },
                links: links.prefix(Int(t2.num_links)).map { Link(source: $0.source_id, sink: $0.sink_id, flags: $0.flags) })
        }
        throw V4L2Errno(EAGAIN, "MEDIA_IOC_G_TOPOLOGY on \(path) (topology kept changing)")
    }

    /// Every media device node on the system.
    static func all(devDirectory: String = "/dev") -> [MediaGraph] {
        listDirectory(devDirectory).filter { $0.hasPrefix("media") && Int($0.dropFirst(5)) != nil }
            .sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }
            .compactMap { try? load(path: "\(devDirectory)/\($0)") }
    }

    /// The graphs that can hold the video node `name`: those registered beside it in sysfs (a
    /// UVC camera's interface, vivid's or vimc's platform device) when one of them has the
    /// node, else every graph (a driver whose media device sits elsewhere in sysfs). Opening one
    /// camera then reads its own graph, not every media device on the machine.
    static func holding(node name: String, sysfsClass: String = "/sys/class/video4linux", devDirectory: String = "/dev") -> [MediaGraph] {
        var st = stat()
        if let parent = V4L2Discovery.sysfsDevice(nodeName: name, sysfsClass: sysfsClass), stat("\(devDirectory)/\(name)", &st) == 0 {
            let major = camhal_major(UInt64(st.st_rdev)), minor = camhal_minor(UInt64(st.st_rdev))
            let siblings = listDirectory(parent).filter { $0.hasPrefix("media") && Int($0.dropFirst(5)) != nil }.sorted()
                .compactMap { try? load(path: "\(devDirectory)/\($0)") }
            if siblings.contains(where: { $0.interfaces.contains { $0.major == major && $0.minor == minor } }) { return siblings }
        }
        return all(devDirectory: devDirectory)
    }

    // MEDIA_LNK_FL_LINK_TYPE (0xf << 28) imports as a negative Int32: take its bits.
    private func linkType(_ l: Link) -> UInt32 { l.flags & UInt32(bitPattern: Int32(truncatingIfNeeded: MEDIA_LNK_FL_LINK_TYPE)) }

    /// The entity behind the device node `major:minor`.
    func entity(major: UInt32, minor: UInt32) -> Entity? {
        guard let intf = interfaces.first(where: { $0.major == major && $0.minor == minor }) else { return nil }
        guard let link = links.first(where: { linkType($0) == UInt32(bitPattern: Int32(truncatingIfNeeded: MEDIA_LNK_FL_INTERFACE_LINK)) && $0.source == intf.id }) else { return nil }
        return entity(link.sink)
    }

    /// The device node (`/dev/v4l-subdevN`) of an entity, if it has one.
    func node(of entity: Entity) -> String? {
        for l in links where linkType(l) == UInt32(bitPattern: Int32(truncatingIfNeeded: MEDIA_LNK_FL_INTERFACE_LINK)) && l.sink == entity.id {
            guard let intf = interfaces.first(where: { $0.id == l.source }) else { continue }
            if let name = devName(major: intf.major, minor: intf.minor) { return "/dev/\(name)" }
        }
        return nil
    }

    /// The chain of sub-devices feeding `capture`, source first, following enabled data links.
    func upstream(of capture: Entity) -> [Stage] {
        var chain: [Stage] = []
        var current = capture
        // An array, not a Set: a chain is a handful of entities, and a Set<UInt32>'s first use
        // costs a fresh process 250,000 instructions of metadata and Hashable lookup.
        var visited: [UInt32] = [capture.id]
        while true {
            let sinkPads = pads.filter { $0.entity == current.id && $0.flags & UInt32(MEDIA_PAD_FL_SINK) != 0 }
            guard let link = links.first(where: { l in
                linkType(l) == UInt32(bitPattern: Int32(truncatingIfNeeded: MEDIA_LNK_FL_DATA_LINK)) && l.flags & UInt32(MEDIA_LNK_FL_ENABLED) != 0
                    && sinkPads.contains { $0.id == l.sink }
            }), let srcPad = pad(link.source), let srcEntity = entity(srcPad.entity), !visited.contains(srcEntity.id),
                let node = node(of: srcEntity)
            else { break }
            visited.append(srcEntity.id)
            let ownSink = pads.filter { $0.entity == srcEntity.id && $0.flags & UInt32(MEDIA_PAD_FL_SINK) != 0 }
                .min { $0.index < $1.index }
            chain.insert(Stage(entity: srcEntity, node: node, sinkPad: ownSink?.index, sourcePad: srcPad.index), at: 0)
            current = srcEntity
        }
        return chain
    }

    /// The (entity, pad index) pairs fed by source pad `padIndex` of `entity` over enabled data links.
    func consumers(of entity: Entity, pad padIndex: UInt32) -> [(entity: Entity, pad: UInt32)] {
        guard let src = pads.first(where: { $0.entity == entity.id && $0.index == padIndex }) else { return [] }
        return links.compactMap { l in
            guard linkType(l) == UInt32(bitPattern: Int32(truncatingIfNeeded: MEDIA_LNK_FL_DATA_LINK)),
                  l.flags & UInt32(MEDIA_LNK_FL_ENABLED) != 0, l.source == src.id,
                  let sink = pad(l.sink), let e = self.entity(sink.entity) else { return nil }
            return (e, sink.index)
        }
    }

    /// Source pad indices of an entity.
    func sourcePads(of entity: Entity) -> [UInt32] {
        pads.filter { $0.entity == entity.id && $0.flags & UInt32(MEDIA_PAD_FL_SOURCE) != 0 }.map(\.index).sorted()
    }

    /// Whether an entity is a V4L2 I/O (video) node rather than a sub-device.
    func isVideoNode(_ entity: Entity) -> Bool { entity.function == UInt32(MEDIA_ENT_F_IO_V4L) }

    /// Entities joined to `entity` by ancillary links (lens, flash) with the given function.
    func ancillary(of entity: Entity, function: UInt32) -> [Entity] {
        let ids = links.filter { linkType($0) == UInt32(bitPattern: Int32(truncatingIfNeeded: MEDIA_LNK_FL_ANCILLARY_LINK)) && $0.source == entity.id }.map(\.sink)
        return ids.compactMap { self.entity($0) }.filter { $0.function == function }
    }

    /// Entities of a function anywhere in the graph.
    func entities(function: UInt32) -> [Entity] {
        entities.filter { $0.function == function }.sorted { $0.id < $1.id }
    }
}

/// The kernel name (`video0`, `v4l-subdev6`) of the character device `major:minor`.
func devName(major: UInt32, minor: UInt32) -> String? {
    guard let uevent = readTextFile("/sys/dev/char/\(major):\(minor)/uevent") else { return nil }
    for line in uevent.split(separator: "\n") where line.hasPrefix("DEVNAME=") {
        return String(line.dropFirst(8))
    }
    return nil
}

/// Names in a directory (empty when it cannot be read).
func listDirectory(_ path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// A small text file's contents (sysfs attributes), nil when unreadable.
func readTextFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var data: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return nil }  // a failed read is not an empty file
        if n == 0 { break }
        data.append(contentsOf: buf[0..<n])
    }
    return String(decoding: data, as: UTF8.self)
}

/// Where the symbolic link `path` leads, read once per link (`readlink`), its target taken
/// against the link's own directory: for links whose directory is itself no link (udev's
/// /dev/v4l/by-id and by-path, a sysfs class directory, a sysfs device directory), the answer of
/// `resolvedPath` without realpath's readlink of every component (a dozen calls for a sysfs
/// path, several times per camera opened). `path` itself when it is no link; nil when it does not exist.
/// `leadsToLink: false` for a link whose target is known to be no link (sysfs's links lead to
/// device directories): its target is not read again to find out.
func linkTarget(_ path: String, leadsToLink: Bool = true) -> String? {
    var current = path
    for hop in 0..<8 {
        if hop == 1 && !leadsToLink { return current }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            b.baseAddress.map { $0.withMemoryRebound(to: CChar.self, capacity: b.count) { readlink(current, $0, b.count - 1) } } ?? -1
        }
        if n < 0 { return errno == EINVAL ? current : nil }
        let target = String(decoding: buffer[0..<n], as: UTF8.self)
        let base = target.hasPrefix("/") ? "" : String(current[..<(current.lastIndex(of: "/") ?? current.startIndex)])
        current = lexicallyNormalized(base + "/" + target)
    }
    return nil
}

/// `path` with its `.` and `..` components and repeated slashes taken out, without looking at
/// the file system.
/// On UTF-8 bytes: splitting and joining `Substring`s cost about 90,000 instructions a call in a
/// fresh process (generic and Unicode paths), five calls on the way to a webcam's first frame.
func lexicallyNormalized(_ path: String) -> String {
    let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
    var parts: [ArraySlice<UInt8>] = []
    for part in Array(path.utf8).split(separator: slash) {
        if part.count == 1 && part.first == dot { continue }
        if part.count == 2 && part.allSatisfy({ $0 == dot }) { _ = parts.popLast(); continue }
        parts.append(part)
    }
    var out: [UInt8] = [slash]
    for (i, part) in parts.enumerated() {
        if i > 0 { out.append(slash) }
        out.append(contentsOf: part)
    }
    return String(decoding: out, as: UTF8.self)
}

/// The target of a symbolic link, resolved to an absolute path.
func resolvedPath(_ path: String) -> String? {
    guard let r = realpath(path, nil) else { return nil }
    defer { free(r) }
    return String(cString: r)
}
