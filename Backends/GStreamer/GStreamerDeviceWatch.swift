#if GStreamer
import CGStreamer
import CamHAL
import CamHALV4L2
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Hot-plug events (D3) from GStreamer's device providers, each asked on its own (a monitor
/// would hide the v4l2 provider behind libcamera's). Devices present when the watch starts are
/// not reported as added. Two ways, by provider:
///
/// - `v4l2deviceprovider` is never started. Started, it learns of hot-plug only from udevd's
///   uevents (GUdev), which a machine without udevd (containers, minimal images, CamHAL's test VM)
///   never sends, and it answers every later probe in the process from its cached list, so a
///   replugged webcam stayed "removed" for the whole process. Instead `/dev` is watched with
///   inotify (devtmpfs adds and removes `/dev/video*` with or without udevd) and, after each
///   change, the provider probes afresh and the difference to the devices known is reported.
///   A new node may not open at once (the driver still registering it), so the probe is repeated
///   for `settleSeconds` after the last change.
/// - Every other provider (`pipewiredeviceprovider`, ...), and the v4l2 one where `/dev` cannot
///   be watched, is started, and one thread polls the buses.
final class GStreamerDeviceWatch: DeviceWatch, Sendable {
    private static let nodeProvider = "v4l2deviceprovider"
    private let stopping = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private let cancelled = Mutex(false)

    init(backend: GStreamerBackend, settleSeconds: Double = 2, handler: @escaping @Sendable (DeviceEvent) -> Void) {
        let names = GStreamerDevices.providerNames
        // Until when to probe the v4l2 provider again (a change under /dev sets it).
        let rescanUntil = Locked<ContinuousClock.Instant?>(nil)
        // Watched before the first probe, so a node appearing in between is probed again too.
        let nodeWatch: DirectoryWatch? =
            names.contains(Self.nodeProvider)
            ? try? DirectoryWatch(directory: "/dev") { change in
                switch change {
                case .created(let name), .deleted(let name):
                    guard name.hasPrefix("video") else { return }
                }
                rescanUntil.set(ContinuousClock.now + .seconds(settleSeconds))
            } : nil
        // Without inotify (no /dev to watch) the v4l2 provider is started like the others: udevd's
        // events, where there are any, are better than no hot-plug at all.
        let polled = nodeWatch != nil
        let started = polled ? names.filter { $0 != Self.nodeProvider } : names
        let known = Set(GStreamerDevices.probe(providers: started).devices.map(\.descriptor.id))
        let initialNodes = Set(polled ? GStreamerDevices.probe(providers: [Self.nodeProvider]).devices.map(\.descriptor.id) : [])
        let stopping = self.stopping
        let finished = self.finished
        startThread(name: "camhal.gstreamer.devicewatch") { [weak backend] in
            defer { finished.signal() }
            var providers: [(name: String, provider: UnsafeMutablePointer<GstDeviceProvider>, bus: UnsafeMutablePointer<GstBus>)] = []
            for name in started {
                guard let p = gst_device_provider_factory_get_by_name(name) else { continue }
                guard gst_device_provider_start(p) != 0, let bus = gst_device_provider_get_bus(p) else {
                    gst_object_unref(UnsafeMutableRawPointer(p))
                    continue
                }
                providers.append((name, p, bus))
            }
            var present = known
            var nodes = initialNodes
            while !stopping.value {
                if let until = rescanUntil.value {
                    if ContinuousClock.now >= until { rescanUntil.withLock { if $0 == until { $0 = nil } } }
                    let listed = GStreamerDevices.probe(providers: [Self.nodeProvider]).devices
                    let ids = Set(listed.map(\.descriptor.id))
                    for id in nodes.subtracting(ids).sorted() {
                        backend?.forget(id: id)
                        handler(.removed(id: id))
                    }
                    for d in listed where !nodes.contains(d.descriptor.id) {
                        backend?.remember(d)
                        handler(.added(d.descriptor))
                    }
                    nodes = ids
                }
                // No provider bus to block on: the rescan above runs at the same 200 ms pace.
                if providers.isEmpty { usleep(200_000); continue }
                let slice = GstClockTime(200_000_000 / providers.count)
                for (name, _, bus) in providers {
                    guard let m = camhal_gst_bus_pop(bus, slice, camhal_gst_message_types_devices()) else { continue }
                    defer { gst_message_unref(m) }
                    var dev: UnsafeMutablePointer<GstDevice>?
                    let added = camhal_gst_message_type(m) == GST_MESSAGE_DEVICE_ADDED
                    if added { gst_message_parse_device_added(m, &dev) } else { gst_message_parse_device_removed(m, &dev) }
                    guard let dev else { continue }
                    defer { gst_object_unref(UnsafeMutableRawPointer(dev)) }
                    guard gst_device_has_classes(dev, "Video/Source") != 0,
                          GStreamerDevices.skipRecord(dev, provider: name) == nil,
                          let d = GStreamerDevices.descriptor(dev, provider: name) else { continue }
                    if added {
                        guard !present.contains(d.id) else { continue }
                        present.insert(d.id)
                        backend?.remember(ProbedDevice(descriptor: d, device: GstObjectRef(retaining: UnsafeMutableRawPointer(dev))))
                        handler(.added(d))
                    } else {
                        present.remove(d.id)
                        backend?.forget(id: d.id)
                        handler(.removed(id: d.id))
                    }
                }
            }
            nodeWatch?.cancel()
            for (_, p, bus) in providers {
                gst_device_provider_stop(p)
                gst_object_unref(UnsafeMutableRawPointer(bus))
                gst_object_unref(UnsafeMutableRawPointer(p))
            }
        }
    }

    func cancel() {
        guard cancelled.locked({ c -> Bool in defer { c = true }; return !c }) else { return }
        stopping.set(true)
        finished.wait()
    }

    deinit { cancel() }
}
#endif
