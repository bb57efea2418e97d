#if GStreamer
import CGStreamer
import CamHAL
import CamHALV4L2
import FoundationEssentials

/// A device a GStreamer device provider listed that CamHAL does not offer through this backend,
/// and why (see `GStreamerBackend.skippedDevices`).
public struct GStreamerSkippedDevice: Sendable, Hashable {
    /// The ID it would have had (`v4l2:/dev/video4`).
    public let id: String
    /// Why it is not listed, and what to use instead.
    public let reason: String
}

/// A device one of GStreamer's device providers lists, with the GstDevice kept to create its source.
struct ProbedDevice: Sendable {
    let descriptor: DeviceDescriptor
    let device: GstObjectRef
}

/// Enumerates capture devices through GStreamer's device providers (D2), without streaming.
enum GStreamerDevices {
    /// Providers asked one by one: a GstDeviceMonitor hides the v4l2 provider behind the libcamera
    /// one (and both behind PipeWire), so asking each lists every route to each camera.
    ///
    /// libcamera's provider is not asked by default: it (and libcamerasrc) creates a libcamera
    /// CameraManager, and libcamera 0.0.3 aborts the whole process when a second one exists, which
    /// CamHAL's own libcamera backend owns. Cameras behind libcamera are reached through that backend.
    /// `CAMHAL_GST_PROVIDERS=v4l2deviceprovider,libcameraprovider` overrides the list (`none` for no
    /// device providers) in a process that does not use the libcamera backend.
    static var providerNames: [String] {
        if let env = ProcessInfo.processInfo.environment["CAMHAL_GST_PROVIDERS"] {
            return env.split(separator: ",").map { trimmingSpaces($0) }.filter { !$0.isEmpty && $0 != "none" }
        }
        return ["v4l2deviceprovider", "pipewiredeviceprovider"]
    }

    /// Short prefix used in device IDs for a provider.
    static func prefix(provider: String) -> String {
        switch provider {
        case "v4l2deviceprovider": return "v4l2"
        case "libcameraprovider": return "libcamera"
        case "pipewiredeviceprovider": return "pipewire"
        default: return provider.replacing("deviceprovider", with: "").replacing("provider", with: "")
        }
    }

    /// `V4L2_CAP_IO_MC`: the node's format is driven by its media-controller pipeline.
    static let capIOMC: UInt32 = 0x2000_0000

    /// Why a V4L2 node with these device capabilities cannot stream through `v4l2src`, or nil.
    ///
    /// Media-controller-centric nodes (`V4L2_CAP_IO_MC`, e.g. vimc's capture nodes, ISP and CSI
    /// receiver nodes) stream only after their media pipeline's links and pad formats are set;
    /// v4l2src does not do that and fails with "Failed to allocate required memory" (EPIPE at
    /// STREAMON). CamHAL's V4L2 backend configures the pipeline, so they are left to it.
    static func skipReason(deviceCaps: UInt32) -> String? {
        guard deviceCaps & capIOMC != 0 else { return nil }
        return "media-controller node (V4L2_CAP_IO_MC): v4l2src cannot configure its media pipeline; use the v4l2 backend"
    }

    /// Lists what each of `providers` (by default every provider CamHAL asks) has now. A provider
    /// that is not started probes afresh; a started one answers from its cache.
    static func probe(providers: [String] = providerNames) -> (devices: [ProbedDevice], skipped: [GStreamerSkippedDevice]) {
        var out: [ProbedDevice] = []
        var skipped: [GStreamerSkippedDevice] = []
        var seen: Set<String> = []
        for provider in providers {
            guard let p = gst_device_provider_factory_get_by_name(provider) else { continue }
            defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
            let list = gst_device_provider_get_devices(p)
            defer { g_list_free_full(list, { gst_object_unref($0) }) }
            var node = list
            while let n = node {
                node = n.pointee.next
                guard let raw = n.pointee.data else { continue }
                let dev = camhal_gst_device(raw)
                guard gst_device_has_classes(dev, "Video/Source") != 0 else { continue }
                if let skip = skipRecord(dev, provider: provider) {
                    skipped.append(skip)
                    continue
                }
                guard var d = descriptor(dev, provider: provider) else { continue }
                var id = d.id
                var k = 2
                while seen.contains(id) { id = "\(d.id)#\(k)"; k += 1 }
                d.id = id
                seen.insert(id)
                out.append(ProbedDevice(descriptor: d, device: GstObjectRef(retaining: raw)))
            }
        }
        return (out, skipped)
    }

    /// The skip record of a device CamHAL does not list through this provider, or nil.
    static func skipRecord(_ dev: UnsafeMutablePointer<GstDevice>?, provider: String) -> GStreamerSkippedDevice? {
        guard provider == "v4l2deviceprovider", let props = gst_device_get_properties(dev) else { return nil }
        defer { gst_structure_free(props) }
        var caps: guint = 0
        guard gst_structure_get_uint(props, "v4l2.device.device_caps", &caps) != 0,
              let reason = skipReason(deviceCaps: UInt32(caps)) else { return nil }
        let path = gst_structure_get_string(props, "device.path").map { String(cString: $0) }
            ?? takeGString(gst_device_get_display_name(dev)) ?? "unnamed"
        return GStreamerSkippedDevice(id: prefix(provider: provider) + ":" + path, reason: reason)
    }

    /// The descriptor of one provider device: formats from its caps, facing from its properties.
    static func descriptor(_ dev: UnsafeMutablePointer<GstDevice>?, provider: String) -> DeviceDescriptor? {
        var name = takeGString(gst_device_get_display_name(dev)) ?? "unnamed"
        var details: [String: String] = ["gst.provider": provider, "gst.source": "device"]
        var facing = Facing.external
        var path: String?
        if let props = gst_device_get_properties(dev) {
            defer { gst_structure_free(props) }
            for key in ["device.path", "api.v4l2.path", "object.path", "api.libcamera.id", "device.bus", "v4l2.device.driver", "v4l2.device.card", "v4l2.device.bus_info"] {
                if let v = gst_structure_get_string(props, key) { details[key] = String(cString: v) }
            }
            path = details["device.path"] ?? details["api.v4l2.path"]
            for key in ["api.libcamera.location", "camera.location", "location", "facing"] {
                if let v = gst_structure_get_string(props, key) {
                    switch String(cString: v).lowercased() {
                    case "front", "0": facing = .front
                    case "back", "1": facing = .back
                    default: break
                    }
                } else {
                    var i: gint = 0
                    if gst_structure_get_int(props, key, &i) != 0 {
                        facing = i == 0 ? .front : i == 1 ? .back : .external
                    }
                }
            }
        }
        var formats: [FormatDescription] = []
        if let caps = gst_device_get_caps(dev) {
            formats = GStreamerFormats.formats(from: caps)
            gst_caps_unref(caps)
        }
        guard !formats.isEmpty else { return nil }  // no raw video format we can deliver
        if let path, path.hasPrefix("/dev/video") {
            // The provider names a V4L2 node by its 31-byte card: the USB product string when that cut it.
            name = V4L2Discovery.displayName(card: name, nodeName: String(path.dropFirst("/dev/".count)))
        }
        let id = prefix(provider: provider) + ":" + (path ?? name)
        return DeviceDescriptor(
            id: id, name: name, backend: GStreamerBackend.backendIdentifier, facing: facing,
            lenses: DeviceDescriptor.singleLens(kind: .external, facing: facing),
            formats: formats, zoomMethod: .sensorCrop, isExclusive: true, details: details)
    }

    /// The always-present test camera: `videotestsrc is-live=true`, paced at its frame rate.
    static let testSourceID = "videotestsrc"

    static var testDescriptor: DeviceDescriptor {
        let sizes = [Size(width: 640, height: 480), Size(width: 320, height: 240), Size(width: 1280, height: 720), Size(width: 1920, height: 1080)]
        let formats = [PixelFormat.nv12, .yuyv, .i420, .rgb24].flatMap { p in
            sizes.map { FormatDescription(pixelFormat: p, size: $0, frameRates: [30]) }
        }
        return DeviceDescriptor(
            id: testSourceID, name: "GStreamer test source (videotestsrc, SMPTE bars)",
            backend: GStreamerBackend.backendIdentifier, facing: .external,
            lenses: DeviceDescriptor.singleLens(kind: .external, facing: .external, maxZoom: 8),
            formats: formats, zoomMethod: .sensorCrop, isExclusive: false,
            details: ["gst.source": "test", "gst.launch": "videotestsrc is-live=true", "kind": "virtual test camera"],
            isTestSource: true)
    }
}
#endif
