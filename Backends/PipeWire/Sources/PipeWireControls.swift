#if PipeWire
import CamHAL
import CamHALPipeWireShim
import CamHALV4L2
import CV4L2
import FoundationEssentials
import Synchronization

/// A node's controls as its PropInfo and Props params give them (`camhal_pw_conn_enum_props`).
///
/// SPA's v4l2 plugin (PipeWire 0.3.65, `spa/plugins/v4l2/v4l2-utils.c`) lists a device's integer,
/// boolean and menu V4L2 controls (not integer menus, bitmasks, buttons, 64-bit or string
/// controls) as PropInfo entries: id `SPA_PROP_brightness`...`SPA_PROP_sharpness` for eight image
/// controls, `SPA_PROP_START_CUSTOM` + the V4L2 control ID for the rest, the V4L2 name as
/// description, the range, step and default, menu entries as labels. A Props param set on the
/// node writes them (VIDIOC_S_CTRL). It reports no current values (its Props param holds only
/// the device path, name and fd) and no flags, and it sends no Props change. SPA's libcamera
/// plugin lists libcamera controls by ControlId (0.3.65 applies booleans and floats; its integer
/// writes are dropped). A camera producer may publish both params itself, with values (the
/// project's test camera does).
struct PipeWireControls: Sendable {
    /// How the node numbers its controls.
    enum Scheme: Sendable, Hashable {
        /// V4L2 control IDs (SPA's v4l2 plugin, and any other producer).
        case v4l2
        /// libcamera ControlIds (SPA's libcamera plugin: `device.api` libcamera).
        case libcamera
    }

    /// One control.
    struct Entry: Sendable, Hashable {
        let propID: UInt32
        let kind: UInt32
        let displayName: String
        let minimum: Int64, maximum: Int64, step: Int64, defaultValue: Int64
        let floatRange: ClosedRange<Double>?
        let floatDefault: Double
        let labels: [DeviceControlMenuEntry]
        /// The value the node's Props param holds; nil when it reports none.
        var value: DeviceControlValue?

        init(_ p: camhal_pw_prop) {
            propID = p.id
            kind = p.kind
            displayName = withUnsafeBytes(of: p.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            minimum = p.minimum
            maximum = p.maximum
            step = max(p.step, 1)
            defaultValue = p.def
            floatRange = p.kind == UInt32(CAMHAL_PW_PROP_FLOAT) && p.fminimum <= p.fmaximum ? p.fminimum...p.fmaximum : nil
            floatDefault = p.fdef
            var labels: [DeviceControlMenuEntry] = []
            withUnsafeBytes(of: p.label) { text in
                withUnsafeBytes(of: p.label_value) { values in
                    let v = values.bindMemory(to: Int32.self)
                    for i in 0..<min(Int(p.n_labels), v.count) {
                        let bytes = text[(i * 32)..<(i * 32 + 32)]
                        labels.append(DeviceControlMenuEntry(index: Int64(v[i]), name: String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)))
                    }
                }
            }
            self.labels = labels
            value = p.has_value != 0 ? Self.value(kind: p.kind, p.value, p.fvalue) : nil
        }

        /// A reported value as a raw control value.
        static func value(kind: UInt32, _ v: Int64, _ f: Double) -> DeviceControlValue {
            switch kind {
            case UInt32(CAMHAL_PW_PROP_FLOAT): return .float(f)
            case UInt32(CAMHAL_PW_PROP_BOOL): return .integer(v != 0 ? 1 : 0)
            default: return .integer(v)
            }
        }
    }

    let scheme: Scheme
    let entries: [Entry]

    /// The scheme of `node`'s control IDs.
    static func scheme(of node: PipeWireNode) -> Scheme {
        node.properties["device.api"] == "libcamera" ? .libcamera : .v4l2
    }

    init(scheme: Scheme, entries: [Entry]) {
        self.scheme = scheme
        self.entries = entries
    }

    /// The controls of node `globalID` on `connection`; none when it has none or cannot be asked.
    init(connection: PipeWireConnection, node: PipeWireNode, timeoutMilliseconds: Int32) {
        var raw = [camhal_pw_prop](repeating: camhal_pw_prop(), count: 96)
        let n = camhal_pw_conn_enum_props(connection.handle, node.globalID, &raw, Int32(raw.count), timeoutMilliseconds)
        self.init(scheme: Self.scheme(of: node), entries: n > 0 ? raw.prefix(Int(n)).map(Entry.init) : [])
    }

    // MARK: IDs

    /// SPA's own ids for eight V4L2 user controls (v4l2-utils.c control_map), by V4L2 control ID.
    static let standardIDs: [(spa: UInt32, v4l2: UInt32)] = [
        (0x20001, UInt32(V4L2_CID_BRIGHTNESS)), (0x20002, UInt32(V4L2_CID_CONTRAST)), (0x20003, UInt32(V4L2_CID_SATURATION)),
        (0x20004, UInt32(V4L2_CID_HUE)), (0x20005, UInt32(V4L2_CID_GAMMA)), (0x20006, UInt32(V4L2_CID_EXPOSURE)),
        (0x20007, UInt32(V4L2_CID_GAIN)), (0x20008, UInt32(V4L2_CID_SHARPNESS)),
    ]
    /// SPA_PROP_START_CUSTOM: custom ids are this plus the V4L2 control ID.
    static let startCustom: UInt32 = 0x0100_0000

    /// The V4L2 control ID of a PropInfo id (the v4l2 scheme), nil for an id that carries none.
    static func v4l2ID(propID: UInt32) -> UInt32? {
        if let s = standardIDs.first(where: { $0.spa == propID }) { return s.v4l2 }
        return propID >= startCustom ? propID - startCustom : nil
    }

    /// The id a control descriptor carries: the V4L2 control ID (v4l2 scheme) or the ControlId.
    func controlID(_ e: Entry) -> UInt32 { scheme == .v4l2 ? Self.v4l2ID(propID: e.propID) ?? e.propID : e.propID }

    /// The entry of V4L2 control `id` (the v4l2 scheme only).
    func entry(v4l2ID id: UInt32) -> Entry? {
        guard scheme == .v4l2 else { return nil }
        return entries.first { Self.v4l2ID(propID: $0.propID) == id }
    }

    /// The entry a descriptor from `descriptors` describes.
    func entry(controlID id: UInt32) -> Entry? { entries.first { controlID($0) == id } }

    /// The names the V4L2 core gives its control classes (`v4l2-ctl -L` groups), by class.
    static let v4l2Groups: [UInt32: String] = [
        0x0098_0000: "User Controls", 0x0099_0000: "Codec Controls", 0x009a_0000: "Camera Controls",
        0x009c_0000: "Flash Controls", 0x009d_0000: "JPEG Compression Controls", 0x009e_0000: "Image Source Controls",
        0x009f_0000: "Image Processing Controls", 0x00a0_0000: "Digital Video Controls", 0x00a2_0000: "Detection Controls",
        0x00a5_0000: "Colorimetry Controls",
    ]

    // MARK: Descriptors

    /// The raw controls (X1): V4L2 names, IDs, types, ranges, defaults and menus as `v4l2-ctl -L`
    /// shows them for what the node lists (the v4l2 scheme; libcamera names and ControlIds
    /// otherwise). A value the node does not report is `.none`, flagged write-only (PipeWire gives
    /// no way to read it), unless this process wrote one (`written`). `owners`: controls a CamHAL
    /// setter drives (X6), by descriptor id.
    func descriptors(owners: [UInt32: String], written: [UInt32: DeviceControlValue] = [:]) -> [DeviceControl] {
        entries.map { e in
            let id = controlID(e)
            let type: DeviceControlType
            switch e.kind {
            case UInt32(CAMHAL_PW_PROP_BOOL): type = .boolean
            case UInt32(CAMHAL_PW_PROP_FLOAT): type = .float
            case UInt32(CAMHAL_PW_PROP_MENU): type = .menu
            default: type = .integer
            }
            let group = scheme == .v4l2 ? Self.v4l2Groups[id & 0x0fff_0000] ?? "" : "libcamera Controls"
            let typeCode: UInt32 = type == .boolean ? 2 : type == .menu ? 3 : type == .float ? 0 : 1
            var c = DeviceControl(
                id: id, displayName: e.displayName, type: type, typeCode: typeCode,
                minimum: type == .float ? 0 : e.minimum, maximum: type == .float ? 0 : e.maximum,
                step: type == .float || type == .menu ? 0 : UInt64(e.step), defaultValue: type == .float ? 0 : e.defaultValue,
                menu: type == .menu ? e.labels : [], group: group, ownedBy: owners[id])
            if type == .menu { c.step = 1 }
            if type == .float {
                c.floatRange = e.floatRange
                c.floatDefault = e.floatDefault
            }
            if let v = e.value ?? written[e.propID] {
                c.value = v
            } else {
                c.flags.insert(.writeOnly)
            }
            return c
        }
    }
}

/// The v4l2 scheme's controls as V4L2 controls (`V4L2ControlAccess`), so the V4L2 backend's
/// semantics (zoom_absolute, focus modes, torch, exposure, white balance, anti-flicker) apply to
/// them unchanged. Values come from the node's Props param where it reports them, else from this
/// object's own writes; a control never read nor written has no value here (PipeWire 0.3.65's
/// v4l2 nodes report none), so what a setter returns is what it wrote.
final class PipeWireV4L2Controls: V4L2ControlAccess, Sendable {
    let controls: PipeWireControls
    /// Writes `value` (an integer, or 0/1) to the entry; nil on success, else the daemon's refusal.
    private let writer: @Sendable (PipeWireControls.Entry, Int64) -> String?
    /// Known values by PropInfo id: reported by the node or written here.
    private let values: Mutex<[UInt32: Int64]>
    /// Values written here whose echo (the node's Props param announcing them) has not come yet,
    /// oldest first, by PipeWire id: an echo is not another client's change. Seen: a zoom flood
    /// (Q1a) read the echo of an earlier write, arriving after a later one, as an external zoom.
    private let unechoed = Mutex([UInt32: [Int64]]())

    init(_ controls: PipeWireControls, writer: @escaping @Sendable (PipeWireControls.Entry, Int64) -> String?) {
        self.controls = controls
        self.writer = writer
        var known: [UInt32: Int64] = [:]
        for e in controls.entries { if let v = e.value?.integer { known[e.propID] = v } }
        values = Mutex(known)
    }

    /// Records the node's first Props param after the subscription (its values then): no change
    /// to report, and older than any write of this session still waiting for its echo. Seen: a
    /// session's first zoom write, then this param with the zoom a previous session had left,
    /// reported as another client's zoom (the conformance run on the test camera, under load).
    func baseline(_ reported: [(propID: UInt32, value: Int64)]) {
        let pending = unechoed.locked { p in Set(p.filter { !$0.value.isEmpty }.keys) }
        values.locked { known in
            for r in reported where !pending.contains(r.propID) { known[r.propID] = r.value }
        }
    }

    /// Records values the node reported (a Props param); returns the V4L2 IDs whose value changed.
    func update(reported: [(propID: UInt32, value: Int64)]) -> [(v4l2ID: UInt32, value: Int64)] {
        let echoes = unechoed.locked { pending -> Set<UInt32> in
            var echoes: Set<UInt32> = []
            for r in reported {
                guard let i = pending[r.propID]?.firstIndex(of: r.value) else { continue }
                pending[r.propID]?.removeFirst(i + 1)
                echoes.insert(r.propID)
            }
            return echoes
        }
        return values.locked { known in
            var changed: [(UInt32, Int64)] = []
            for r in reported where !echoes.contains(r.propID) && known[r.propID] != r.value {
                known[r.propID] = r.value
                if controls.entries.contains(where: { $0.propID == r.propID }), let id = PipeWireControls.v4l2ID(propID: r.propID) {
                    changed.append((id, r.value))
                }
            }
            return changed
        }
    }

    /// Whether V4L2 control `id` has a known value (reported by the node or written here).
    func reportsValue(_ id: UInt32) -> Bool {
        guard let e = controls.entry(v4l2ID: id) else { return false }
        return values.locked { $0[e.propID] != nil }
    }

    func queryControl(_ id: UInt32) -> ControlInfo? {
        guard let e = controls.entry(v4l2ID: id), e.kind != UInt32(CAMHAL_PW_PROP_FLOAT) else { return nil }
        let type: UInt32 = e.kind == UInt32(CAMHAL_PW_PROP_BOOL) ? 2 : e.kind == UInt32(CAMHAL_PW_PROP_MENU) ? 3 : 1
        return ControlInfo(
            id: id, name: e.displayName, type: type, minimum: e.minimum, maximum: e.maximum, step: UInt64(e.step),
            defaultValue: e.defaultValue, flags: 0)
    }

    func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool {
        controls.entry(v4l2ID: id)?.labels.contains { $0.index == Int64(index) } ?? false
    }

    func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 {
        guard let e = controls.entry(v4l2ID: id) else { throw V4L2Errno(EINVAL, "PipeWire node control 0x\(String(id, radix: 16))") }
        guard let v = values.locked({ $0[e.propID] }) else {
            throw V4L2Errno(ENODATA, "PipeWire node control \(e.displayName): the node reports no value")
        }
        return Int32(clamping: v)
    }

    @discardableResult
    func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
        guard let e = controls.entry(v4l2ID: id), let info = queryControl(id) else {
            throw V4L2Errno(EINVAL, "PipeWire node control 0x\(String(id, radix: 16))")
        }
        // Stored as the V4L2 core stores it (clamped, on the step), which is what the device holds.
        let stored = info.type == 2 ? (value != 0 ? 1 : 0)
            : info.type == 3 ? Int64(value) : DeviceControl.roundToRange(Int64(value), minimum: info.minimum, maximum: info.maximum, step: info.step)
        if info.type == 3, !hasMenuEntry(id, UInt32(truncatingIfNeeded: stored)) {
            throw V4L2Errno(EINVAL, "PipeWire node control \(e.displayName): no menu entry \(stored)")
        }
        // Known before the write: the node's Props param announcing it may arrive while it runs.
        let before = values.locked { known -> Int64? in defer { known[e.propID] = stored }; return known[e.propID] }
        unechoed.locked { $0[e.propID, default: []] = Array(($0[e.propID] ?? []).suffix(7)) + [stored] }
        if let refusal = writer(e, stored) {
            values.locked { $0[e.propID] = before }
            unechoed.locked { _ = $0[e.propID]?.popLast() }
            throw V4L2Errno(EIO, "PipeWire set_param(Props) \(e.displayName): \(refusal)")
        }
        return Int32(clamping: stored)
    }
}
#endif
