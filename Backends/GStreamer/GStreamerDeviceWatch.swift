#if GStreamer
import CGStreamer
import CamHAL
import Foundation

/// Hot-plug events (D3) from GStreamer's device providers, each started on its own (a monitor
/// would hide the v4l2 provider behind libcamera's). One thread polls their buses; devices present
/// when the watch starts are not reported as added.
final class GStreamerDeviceWatch: DeviceWatch, @unchecked Sendable {
    private let stopping = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private let cancelled = Locked(false)

    init(backend: GStreamerBackend, handler: @escaping @Sendable (DeviceEvent) -> Void) {
        let known = Set(GStreamerDevices.probe().devices.map(\.descriptor.id))
        let stopping = self.stopping
        let finished = self.finished
        let thread = Thread { [weak backend] in
            defer { finished.signal() }
            var providers: [(name: String, provider: UnsafeMutablePointer<GstDeviceProvider>, bus: UnsafeMutablePointer<GstBus>)] = []
            for name in GStreamerDevices.providerNames {
                guard let p = gst_device_provider_factory_get_by_name(name) else { continue }
                guard gst_device_provider_start(p) != 0, let bus = gst_device_provider_get_bus(p) else {
                    gst_object_unref(UnsafeMutableRawPointer(p))
                    continue
                }
                providers.append((name, p, bus))
            }
            var present = known
            while !stopping.value {
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
            for (_, p, bus) in providers {
                gst_device_provider_stop(p)
                gst_object_unref(UnsafeMutableRawPointer(bus))
                gst_object_unref(UnsafeMutableRawPointer(p))
            }
        }
        thread.name = "camhal.gstreamer.devicewatch"
        thread.start()
    }

    func cancel() {
        guard cancelled.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        stopping.set(true)
        finished.wait()
    }

    deinit { cancel() }
}
#endif
