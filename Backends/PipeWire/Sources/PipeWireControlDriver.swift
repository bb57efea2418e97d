#if PipeWire
@_spi(Backend) import CamHAL
import CamHALPipeWireShim
import CamHALV4L2
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A PipeWire node's raw controls (X1–X7): its PropInfo params, listed and written (set_param
/// with a Props param) on a connection of the call's own, so it works with or without a session.
/// Values are the node's Props values where it reports them; a node that reports none (PipeWire
/// 0.3.65's v4l2 nodes) shows each control write-only with no value, or the value this process
/// last wrote to it. `changes()` follows the node's Props param, so it reports other clients'
/// changes only on nodes that publish their values (`reportsExternalChanges`).
final class PipeWireControlDriver: DeviceControlDriver {
    let backend: PipeWireBackend
    let device: DeviceDescriptor
    /// Controls a CamHAL setter drives (X6), by descriptor id (V4L2 control ID).
    let owners: [UInt32: String]
    let reportsExternalChanges: Bool

    /// Values this process wrote to controls the node does not report, by node serial and PropInfo id.
    private static let written = Mutex([UInt64: [UInt32: DeviceControlValue]]())

    init(backend: PipeWireBackend, device: DeviceDescriptor) throws(CameraError) {
        self.backend = backend
        self.device = device
        let (_, _, controls) = try Self.query(backend, device)
        owners = controls.scheme == .v4l2 ? V4L2ControlSemantics.owners(of: device) : [:]
        reportsExternalChanges = controls.entries.contains { $0.value != nil }
    }

    /// A connection, the device's node on it, and the node's controls now.
    private static func query(_ backend: PipeWireBackend, _ device: DeviceDescriptor) throws(CameraError) -> (PipeWireConnection, PipeWireNode, PipeWireControls) {
        let serial = try backend.serial(of: device.id)
        let connection: PipeWireConnection
        do {
            connection = try backend.connect()
        } catch {
            throw error.cameraError(backend: backend.identifier)
        }
        guard let node = connection.nodes().first(where: { $0.serial == serial }) else { throw .disconnected(device: device.id) }
        return (connection, node, PipeWireControls(connection: connection, node: node, timeoutMilliseconds: backend.timeoutMilliseconds))
    }

    private func descriptors(_ controls: PipeWireControls, serial: UInt64) -> [DeviceControl] {
        controls.descriptors(owners: owners, written: Self.written.locked { $0[serial] ?? [:] })
    }

    func controls() throws(CameraError) -> [DeviceControl] {
        let (_, node, controls) = try Self.query(backend, device)
        return descriptors(controls, serial: node.serial)
    }

    func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl {
        guard let fresh = try controls().first(where: { $0.id == control.id }) else {
            throw .invalidArgument(name: "control", value: control.name, reason: "\(device.id) no longer lists it")
        }
        return fresh
    }

    func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        let (connection, node, controls) = try Self.query(backend, device)
        guard let entry = controls.entry(controlID: control.id) else {
            throw .invalidArgument(name: control.name, value: value.description, reason: "\(device.id) no longer lists it")
        }
        let integer: Int64, number: Double
        switch value {
        case .integer(let v): (integer, number) = (v, Double(v))
        case .float(let f): (integer, number) = (Int64(f.rounded()), f)
        default: throw .invalidArgument(name: control.name, value: value.description, reason: "PipeWire controls take numbers")
        }
        var error: UnsafeMutablePointer<CChar>?
        let r = camhal_pw_conn_set_prop(connection.handle, node.globalID, entry.propID, entry.kind, integer, number, backend.timeoutMilliseconds, &error)
        if r != 0 {
            let reason = takeCString(error) ?? "error \(r)"
            if r == -EACCES || r == -EPERM {
                throw .permissionDenied(device: device.id, remedy: "the PipeWire daemon refused writing the node's Props (\(reason)): ask for camera access")
            }
            throw .invalidArgument(name: control.name, value: value.description, reason: "PipeWire refused it: \(reason)")
        }
        // What the node now reports, where it reports values; else what was written.
        let after = PipeWireControls(connection: connection, node: node, timeoutMilliseconds: backend.timeoutMilliseconds)
        if let reported = after.entry(controlID: control.id)?.value { return reported }
        Self.written.locked { $0[node.serial, default: [:]][entry.propID] = value }
        return value
    }

    func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)? {
        guard reportsExternalChanges, let (connection, node, current) = try? Self.query(backend, device),
              camhal_pw_conn_watch_props(connection.handle, node.globalID) == 0
        else { return nil }
        let initial = Dictionary(descriptors(current, serial: node.serial).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let scheme = current
        let wake: @Sendable () -> Void = { camhal_pw_conn_wake(connection.handle) }
        // The daemon's connection lost (-EPIPE) ends the body: `ended` says so.
        return ThreadDeviceWatch(name: "camhal.pipewire.controls.\(device.id)", wake: wake, ended: ended) { isCancelled in
            var known = initial
            var raw = [camhal_pw_prop](repeating: camhal_pw_prop(), count: 96)
            while !isCancelled() {
                let n = camhal_pw_conn_next_props(connection.handle, 200, &raw, Int32(raw.count))
                if n == -EPIPE { return }
                guard n > 0 else { continue }
                for p in raw.prefix(Int(n)) {
                    guard let e = scheme.entries.first(where: { $0.propID == p.id }), var c = known[scheme.controlID(e)] else { continue }
                    let value = PipeWireControls.Entry.value(kind: e.kind, p.value, p.fvalue)
                    guard c.value != value else { continue }
                    c.value = value
                    c.flags.remove(.writeOnly)
                    known[c.id] = c
                    handler(DeviceControlChange(control: c, kind: .value))
                }
            }
        }
    }
}

@_spi(Backend)
extension PipeWireBackend: DeviceControlBackend {
    /// The raw controls of a PipeWire camera node (X1): its PropInfo params, set through its Props
    /// param; the controls a CamHAL setter drives are owned (X6). A node without controls has none.
    @_spi(Backend)
    public func controlDriver(for device: DeviceDescriptor) throws(CameraError) -> any DeviceControlDriver {
        guard device.backend == identifier else { throw .unknownDevice(id: device.id, backend: identifier) }
        return try PipeWireControlDriver(backend: self, device: device)
    }
}
#endif
