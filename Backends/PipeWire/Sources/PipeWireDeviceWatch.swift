#if PipeWire
@_spi(Backend) import CamHAL
import CamHALPipeWireShim
import Dispatch
import FoundationEssentials
import Synchronization

/// Hot-plug from the registry: a camera node's global added or removed (D3), on a connection of
/// its own. When the daemon goes away every listed camera is reported removed, and the watch
/// reconnects (polling twice a second) so cameras reappear with the daemon.
enum PipeWireDeviceWatch {
    static func start(backend: PipeWireBackend, handler: @escaping @Sendable (DeviceEvent) -> Void) -> ThreadDeviceWatch {
        // The devices present now are not events; only changes after this call are.
        let initial = Set(((try? backend.devices()) ?? []).map(\.id))
        let waits = Waits()
        return ThreadDeviceWatch(name: "camhal.pipewire.devicewatch", wake: waits.wake) { isCancelled in
            var present = initial
            var connection: PipeWireConnection?
            var nodes: [UInt32: PipeWireNode] = [:]
            func id(of node: PipeWireNode) -> String { PipeWireBackend.deviceID(of: node, among: Array(nodes.values)) }
            while !isCancelled() {
                guard let c = connection else {
                    guard let c = try? backend.connect() else {
                        // No daemon: none of its cameras is there any more.
                        for gone in present { handler(.removed(id: gone)) }
                        present = []
                        // Retry: no daemon to hear from yet; connect again every 0.5 s.
                        _ = waits.retry.wait(timeout: .now() + 0.5)
                        continue
                    }
                    camhal_pw_conn_watch(c.handle)
                    connection = c
                    waits.connection.locked { $0 = c }
                    nodes = Dictionary(c.nodes().filter(\.isCamera).map { ($0.globalID, $0) }, uniquingKeysWith: { a, _ in a })
                    // What appeared or vanished while there was no connection.
                    let now = Set(nodes.values.map(id(of:)))
                    for gone in present.subtracting(now) { handler(.removed(id: gone)) }
                    for node in nodes.values where !present.contains(id(of: node)) {
                        handler(.added(backend.describe(node, id: id(of: node), on: c)))
                    }
                    present = now
                    continue
                }
                var ev = camhal_pw_event()
                let type = camhal_pw_conn_next_event(c.handle, 200, &ev)
                defer { camhal_pw_props_free(ev.props) }
                switch Int(type) {
                case Int(CAMHAL_PW_EV_ADDED):
                    let node = PipeWireNode(globalID: ev.id, serial: ev.serial, props: ev.props)
                    guard node.isCamera else { continue }
                    nodes[node.globalID] = node
                    let d = backend.describe(node, id: id(of: node), on: c)
                    present.insert(d.id)
                    handler(.added(d))
                case Int(CAMHAL_PW_EV_REMOVED):
                    guard let node = nodes[ev.id] else { continue }
                    let gone = id(of: node)
                    nodes[ev.id] = nil
                    present.remove(gone)
                    handler(.removed(id: gone))
                case Int(CAMHAL_PW_EV_LOST):
                    for gone in present { handler(.removed(id: gone)) }
                    present = []
                    nodes = [:]
                    connection = nil
                default:
                    continue
                }
            }
        }
    }

    /// What a cancel wakes: the retry pause while there is no daemon, and the connection's event wait.
    private final class Waits: Sendable {
        let retry = DispatchSemaphore(value: 0)
        let connection = Mutex<PipeWireConnection?>(nil)
        var wake: @Sendable () -> Void {
            { [self] in
                retry.signal()
                if let c = connection.locked({ $0 }) { camhal_pw_conn_wake(c.handle) }
            }
        }
    }
}
#endif
