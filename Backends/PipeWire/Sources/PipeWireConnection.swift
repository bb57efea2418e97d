#if PipeWire
import CamHAL
import CamHALPipeWireShim
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a PipeWire connection could not be made or was lost.
struct PipeWireFailure: Error {
    let reason: String
    /// The camera portal denied access.
    var denied = false

    /// The CamHAL error for it: permission denied (the portal said no), else backend unavailable.
    func cameraError(backend: String) -> CameraError {
        denied ? .permissionDenied(device: backend, remedy: reason) : .backendUnavailable(backend: backend, reason: reason)
    }
}

/// One `Video/Source` node of the graph, as the registry announced it.
struct PipeWireNode: Sendable {
    let globalID: UInt32
    let serial: UInt64
    let properties: [String: String]

    /// `node.name`, or `node-<serial>` when the node has none.
    var name: String { properties["node.name"] ?? "node-\(serial)" }
    var humanName: String { properties["node.description"] ?? properties["node.nick"] ?? name }
    /// A camera: `media.role` Camera, or no role (device nodes of the session manager have none).
    /// Screen casts and other roles are not cameras.
    var isCamera: Bool {
        guard properties["media.class"] == "Video/Source" else { return false }
        guard let role = properties["media.role"] else { return true }
        return role == "Camera"
    }

    init(globalID: UInt32, serial: UInt64, props: OpaquePointer?) {
        self.globalID = globalID
        self.serial = serial
        var d: [String: String] = [:]
        if let props {
            for i in 0..<camhal_pw_props_count(props) {
                var k: UnsafePointer<CChar>?
                var v: UnsafePointer<CChar>?
                camhal_pw_props_item(props, i, &k, &v)
                if let k, let v { d[String(cString: k)] = String(cString: v) }
            }
        }
        properties = d
    }
}

/// A connection to the PipeWire daemon with its registry (listing, formats, hot-plug events).
/// Closed when deallocated.
// @unchecked: a C handle to the shim's connection, which runs its own loop thread and is thread-safe.
final class PipeWireConnection: @unchecked Sendable {
    let handle: OpaquePointer

    /// Connects through `fd` (a portal remote, owned by the connection from here on) when >= 0,
    /// else to `remote`.
    init(fd: Int32 = -1, remote: String?, timeoutMilliseconds: Int32) throws(PipeWireFailure) {
        var error: UnsafeMutablePointer<CChar>?
        guard let h = camhal_pw_conn_new(fd, remote, timeoutMilliseconds, &error) else {
            throw PipeWireFailure(reason: takeCString(error) ?? "cannot connect to the PipeWire daemon")
        }
        handle = h
    }

    deinit { camhal_pw_conn_free(handle) }

    /// The reason the daemon went away, nil while connected.
    var lostReason: String? {
        var reason: UnsafePointer<CChar>?
        guard camhal_pw_conn_lost(handle, &reason) != 0 else { return nil }
        return reason.map { String(cString: $0) } ?? "the PipeWire daemon went away"
    }

    /// Every Video/Source node (cameras or not) known now.
    func nodes() -> [PipeWireNode] {
        var ids: UnsafeMutablePointer<UInt32>?
        var serials: UnsafeMutablePointer<UInt64>?
        var props: UnsafeMutablePointer<OpaquePointer?>?
        let n = camhal_pw_conn_nodes(handle, &ids, &serials, &props)
        defer {
            for i in 0..<n { camhal_pw_props_free(props?[i]) }
            free(ids); free(serials); free(props)
        }
        guard let ids, let serials, let props else { return [] }
        return (0..<n).map { PipeWireNode(globalID: ids[$0], serial: serials[$0], props: props[$0]) }
    }

    /// The formats a node offers (its EnumFormat params), merged per pixel format and size.
    func formats(of globalID: UInt32, timeoutMilliseconds: Int32) -> [FormatDescription] {
        var raw = [camhal_pw_format](repeating: camhal_pw_format(), count: 256)
        let n = camhal_pw_conn_enum_formats(handle, globalID, &raw, Int32(raw.count), timeoutMilliseconds)
        guard n > 0 else { return [] }
        var out: [FormatDescription] = []
        for f in raw.prefix(Int(n)) {
            guard let pixel = PipeWireFormats.pixelFormat(subtype: f.subtype, videoFormat: f.video_format) else { continue }
            let size = Size(width: Int(f.width), height: Int(f.height))
            let rates = PipeWireFormats.rates(f)
            if let i = out.firstIndex(where: { $0.pixelFormat == pixel && $0.size == size }) {
                out[i] = FormatDescription(pixelFormat: pixel, size: size, frameRates: Array(Set(out[i].frameRates + rates)))
            } else {
                out.append(FormatDescription(pixelFormat: pixel, size: size, frameRates: rates))
            }
        }
        return out
    }
}

/// Mapping between PipeWire's formats and CamHAL's.
enum PipeWireFormats {
    static func pixelFormat(subtype: UInt32, videoFormat: UInt32) -> PixelFormat? {
        let code = camhal_pw_fourcc(subtype, videoFormat)
        return code == 0 ? nil : PixelFormat(rawValue: code)
    }

    /// The frame rates of one format entry, in frames per second.
    static func rates(_ f: camhal_pw_format) -> [Double] {
        withUnsafeBytes(of: f.rate_num) { nums in
            withUnsafeBytes(of: f.rate_den) { dens in
                let n = nums.bindMemory(to: UInt32.self), d = dens.bindMemory(to: UInt32.self)
                return (0..<min(Int(f.n_rates), n.count)).compactMap { i in d[i] == 0 ? nil : Double(n[i]) / Double(d[i]) }
            }
        }
    }

    /// The C request for a CamHAL format: one size and, when known, one rate (as a fraction).
    static func request(pixel: PixelFormat, size: Size, frameRate: Double) -> camhal_pw_format? {
        var f = camhal_pw_format()
        var videoFormat: UInt32 = 0
        f.subtype = camhal_pw_from_fourcc(pixel.rawValue, &videoFormat)
        guard f.subtype != 0 else { return nil }
        f.video_format = videoFormat
        f.width = UInt32(size.width)
        f.height = UInt32(size.height)
        if frameRate > 0 {
            // 30 → 30/1, 29.97 → 30000/1001, 7.5 → 15/2.
            let candidates: [UInt32] = [1, 2, 1001, 1000]
            let den = candidates.first { abs((frameRate * Double($0)).rounded() - frameRate * Double($0)) < 1e-3 } ?? 1000
            f.n_rates = 1
            f.rate_num.0 = UInt32((frameRate * Double(den)).rounded())
            f.rate_den.0 = den
        }
        return f
    }
}

/// A malloc'ed C string as a Swift string, freeing it.
func takeCString(_ p: UnsafeMutablePointer<CChar>?) -> String? {
    guard let p else { return nil }
    defer { free(p) }
    return String(cString: p)
}
#endif
