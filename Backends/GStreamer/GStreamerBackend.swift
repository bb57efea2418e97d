#if GStreamer
import CGStreamer
@_spi(Backend) import CamHAL
import FoundationEssentials
import Synchronization

/// CamHAL over GStreamer 1.x: the backend that works on any Linux machine, camera or not.
///
/// Devices:
/// - `videotestsrc`: always present, a virtual test camera (SMPTE bars, live at 30 fps).
/// - every `Video/Source` device of the v4l2 and PipeWire device providers (libcamera's on request:
///   see `GStreamerDevices.providerNames`), each
///   provider asked separately so none hides another (`v4l2:/dev/video0`, `libcamera:<id>`).
/// - sources that are not devices, added by the app: `rtsp://`/`file://` URIs and gst-launch
///   style source descriptions (`GStreamerSource`), listed as `uri:...` and `launch:...`.
///
/// Zoom is real on every source: a live `videocrop` + `videoscale` stage in the pipeline
/// (`ZoomMethod.sensorCrop`, `ZoomApplication.device`). No torch; fixed focus.
public final class GStreamerBackend: CameraBackend, Sendable {
    static let backendIdentifier = "gstreamer"
    /// The process-wide instance the CLI and the default registry use.
    public static let shared = GStreamerBackend()

    public let identifier = GStreamerBackend.backendIdentifier
    /// How many samples the appsink queues before dropping the oldest.
    public let maxBuffers: Int

    private let extra = Mutex([GStreamerSource]())
    private let probed = Mutex([String: ProbedDevice]())
    private let skipped = Mutex([GStreamerSkippedDevice]())
    /// libcamera cameras a binding of this process holds, until its pipeline is really at NULL.
    private let acquired = Locked(Set<String>())

    /// Devices the last `devices()` call saw but did not list, each with the reason (e.g. V4L2
    /// media-controller nodes, which only the v4l2 backend can configure). Also shown in the test
    /// source's details as `gst.skipped <id>`.
    public var skippedDevices: [GStreamerSkippedDevice] { skipped.locked({ $0 }) }
    private let includeTestSource: Bool

    /// - Parameters:
    ///   - extraSources: URIs and source descriptions to list next to the devices.
    ///   - includeTestSource: whether `videotestsrc` is listed (true by default).
    ///   - maxBuffers: appsink queue bound (2–4 is sensible).
    public init(extraSources: [GStreamerSource] = [], includeTestSource: Bool = true, maxBuffers: Int = 3) {
        self.includeTestSource = includeTestSource
        self.maxBuffers = max(1, maxBuffers)
        extra.locked { $0 = extraSources }
    }

    /// Adds a source (a URI or a description) and returns its descriptor.
    @discardableResult
    public func add(_ source: GStreamerSource) -> DeviceDescriptor {
        extra.locked { list in if !list.contains(source) { list.append(source) } }
        return source.descriptor
    }

    /// Checks a gst-launch style source description against the allowlist (see
    /// `GStreamerSource.description`), adds it and returns its descriptor. Throws
    /// `CameraError.invalidArgument` naming a refused element and the rule, or the parse error.
    /// - Parameters:
    ///   - description: the source, as `gst-launch-1.0` takes it (`videotestsrc pattern=ball`).
    ///   - policy: set `allowsLocalFiles` to let the description read local files (`filesrc`).
    ///   - allowPipeline: the app's own trusted pipeline, exempt from the allowlist.
    @discardableResult
    public func source(description: String, policy: SourcePolicy = .default, allowPipeline: Bool = false) throws(CameraError) -> DeviceDescriptor {
        add(try GStreamerSource.description(description, policy: policy, allowPipeline: allowPipeline))
    }

    /// Adds an `rtsp://` or `file://` source and returns its descriptor.
    @discardableResult
    public func source(uri: String) throws(CameraError) -> DeviceDescriptor {
        add(try GStreamerSource.uri(uri))
    }

    public func availability() -> BackendAvailability {
        if let why = GStreamerRuntime.start() { return .unavailable(reason: why) }
        return .available
    }

    public func devices() throws(CameraError) -> [DeviceDescriptor] {
        if let why = GStreamerRuntime.start() { throw .backendUnavailable(backend: identifier, reason: why) }
        var out: [DeviceDescriptor] = []
        let (found, skipped) = GStreamerDevices.probe()
        self.skipped.locked { $0 = skipped }
        if includeTestSource, GStreamerRuntime.hasElement("videotestsrc") {
            var test = GStreamerDevices.testDescriptor
            // Said where `camhal probe` shows it: the test source is always listed.
            for s in skipped { test.details["gst.skipped " + s.id] = s.reason }
            out.append(test)
        }
        probed.locked { $0 = Dictionary(found.map { ($0.descriptor.id, $0) }, uniquingKeysWith: { a, _ in a }) }
        out += found.map(\.descriptor)
        out += extra.locked({ $0 }).map(\.descriptor)
        return out
    }

    /// The device with this ID. The test source and the sources added to this backend are
    /// described without running GStreamer's device monitor (which starts every device provider:
    /// V4L2, PipeWire, libcamera, the udev scan), so opening them costs only what their own
    /// pipeline needs; any other ID is looked up among `devices()`.
    public func device(id: String) throws(CameraError) -> DeviceDescriptor {
        if let why = GStreamerRuntime.start() { throw .backendUnavailable(backend: identifier, reason: why) }
        if id == GStreamerDevices.testSourceID, includeTestSource, GStreamerRuntime.hasElement("videotestsrc") {
            return GStreamerDevices.testDescriptor
        }
        if let s = extra.locked({ $0 }).first(where: { $0.deviceID == id }) { return s.descriptor }
        guard let d = try devices().first(where: { $0.id == id }) else { throw .unknownDevice(id: id, backend: identifier) }
        return d
    }

    @_spi(Backend)
    public func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        if let why = GStreamerRuntime.start() { throw .backendUnavailable(backend: identifier, reason: why) }
        let id = request.device.id
        // The source comes from what this backend listed, never from the descriptor's details:
        // a forged descriptor cannot smuggle a pipeline in.
        let origin: Origin
        if id == GStreamerDevices.testSourceID, includeTestSource {
            origin = .test
        } else if let s = extra.locked({ $0 }).first(where: { $0.deviceID == id }) {
            origin = .source(s)
        } else if let d = probed.locked({ $0 })[id] ?? { _ = try? devices(); return probed.locked({ $0 })[id] }() {
            origin = .device(d)
        } else {
            throw .unknownDevice(id: id, backend: identifier)
        }
        let listed: [FormatDescription] = origin.isDevice ? request.device.formats : (request.device.formats.isEmpty ? GStreamerDevices.testDescriptor.formats : request.device.formats)
        guard let chosen = request.stream.choose(from: listed) else {
            throw .configurationFailed("no format of \(id) matches \(request.stream)")
        }
        let rate = request.stream.frameRate(in: chosen)
        let format = StreamFormat(pixelFormat: chosen.pixelFormat, width: chosen.size.width, height: chosen.size.height, frameRate: rate)
        // libcamera lets a camera be acquired once; a second libcamerasrc on a camera this process
        // already streams hangs in its state change instead of failing (seen with 0.0.3), so the
        // backend refuses it at once (R4). Other sources report busy through their own errors.
        var released: @Sendable () -> Void = {}
        if case .device(let d) = origin, d.descriptor.details["gst.provider"] == "libcameraprovider" {
            let claimed = acquired.withLock { $0.insert(id).inserted }
            guard claimed else {
                throw .busy(device: id, detail: "libcamera allows one session per camera and this process is already streaming it")
            }
            let acquired = self.acquired
            released = { _ = acquired.withLock { $0.remove(id) } }
        }
        let pipeline: UnsafeMutablePointer<GstElement>
        do {
            pipeline = try buildPipeline(origin, deviceID: id, format: format)
        } catch {
            released()
            throw error
        }
        // Device sources bring their own bounded pools (V4L2 and libcamera buffers); the test source,
        // decoders and descriptions get one from the appsink so held frames cannot grow memory (R2).
        return try GStreamerBinding(
            pipeline: pipeline, deviceID: id, format: format, sink: sink,
            poolLimit: origin.isDevice ? nil : maxBuffers + 5, maxOutstanding: maxBuffers + 5,
            nodePath: { if case .device(let d) = origin { return d.descriptor.details["device.path"] ?? d.descriptor.details["api.v4l2.path"] }; return nil }(),
            onReleased: released)
    }

    enum Origin {
        case test
        case device(ProbedDevice)
        case source(GStreamerSource)
        var isDevice: Bool { if case .device = self { return true } else { return false } }
    }

    /// CamHAL's stages after the source: [convert,] crop, scale back, pin the caps, appsink.
    ///
    /// One `videoconvert` at most, and only where the source's format is not pinned: with
    /// `sourceCaps` naming a format (devices, the test source) the source already delivers it, and
    /// `videocrop`/`videoscale` keep it, so a converter would only negotiate (measured under
    /// callgrind on 1280x720 NV12: each `videoconvert` costs start-up instructions, nothing per
    /// frame). Otherwise (descriptions, URIs) one converter in front of the crop brings any
    /// decoded format to the requested one. `videocrop` and `videoscale` stay: they are
    /// passthrough until a zoom crops, and a zoom must not relink a running pipeline.
    func tail(format: StreamFormat, sourceCaps: String?, sync: Bool) -> [TailElement] {
        let final = GStreamerFormats.capsString(pixel: format.pixelFormat, size: format.size, frameRate: nil)
        let formatPinned = GStreamerFormats.gstName(format.pixelFormat) != nil
        var elements: [TailElement] = []
        if let sourceCaps { elements.append(TailElement("capsfilter", name: "camhal_srccaps", ["caps": sourceCaps])) }
        if sourceCaps == nil || !formatPinned {
            elements.append(TailElement("videoconvert"))
            // The pixel format right after the converter: the first negotiation queries caps
            // through every stage below, and with videoconvert's every-format output still open
            // videocrop and videoscale multiply it out.
            if formatPinned {
                let pixel = GStreamerFormats.capsString(pixel: format.pixelFormat, size: nil, frameRate: nil)
                elements.append(TailElement("capsfilter", ["caps": pixel]))
            }
        }
        elements.append(TailElement("videocrop", name: "camhal_crop"))
        elements.append(TailElement("videoscale", ["add-borders": "false"]))
        elements.append(TailElement("capsfilter", name: "camhal_caps", ["caps": final + ",pixel-aspect-ratio=1/1"]))
        elements.append(TailElement("appsink", name: "camhal_sink", [
            "sync": "\(sync)", "max-buffers": "\(maxBuffers)", "drop": "false", "enable-last-sample": "false",
        ]))
        return elements
    }

    /// One stage of the tail: an element factory, its name, and its properties in gst-launch's
    /// text form (caps as caps strings).
    struct TailElement {
        let factory: String
        let name: String?
        let properties: KeyValuePairs<String, String>
        init(_ factory: String, name: String? = nil, _ properties: KeyValuePairs<String, String> = [:]) {
            self.factory = factory
            self.name = name
            self.properties = properties
        }
        /// The stage in gst-launch syntax, for the one parsed together with the source.
        var launchText: String {
            ([factory] + (name.map { ["name=\($0)"] } ?? []) + properties.map { "\($0.key)=\"\($0.value)\"" }).joined(separator: " ")
        }
    }

    /// Builds the pipeline: the source and the tail's first stage through gst-launch syntax (which
    /// links what a description leaves to link later, a demuxer's pads), the rest of the tail
    /// element by element.
    ///
    /// The rest is linked without the caps check that gst-launch syntax makes at every link: it
    /// is CamHAL's own chain of raw-video stages, compatible by construction, and the checks
    /// queried caps through every stage already linked upstream of each new link: 13.7M of the
    /// 17.7M instructions of building a one-photo videotestsrc pipeline (callgrind). The stream's
    /// caps are still negotiated through every stage when it starts, and a source whose output
    /// no stage accepts still fails with GStreamer's not-negotiated error, named by the binding.
    func buildPipeline(_ origin: Origin, deviceID: String, format: StreamFormat) throws(CameraError) -> UnsafeMutablePointer<GstElement> {
        let sourceCaps = GStreamerFormats.capsString(pixel: format.pixelFormat, size: format.size, frameRate: format.frameRate)
        func parse(_ text: String) throws(CameraError) -> UnsafeMutablePointer<GstElement> {
            var error: UnsafeMutablePointer<CChar>?
            guard let p = camhal_gst_parse_launch(text, &error) else {
                throw .configurationFailed("GStreamer could not build the pipeline of \(deviceID): \(takeGString(error) ?? "unknown error")")
            }
            if g_object_is_floating(p) != 0 { _ = gst_object_ref_sink(p) }
            return p
        }
        /// The pipeline of `source` (gst-launch syntax) followed by `stages`.
        func parse(source: String, _ stages: [TailElement]) throws(CameraError) -> UnsafeMutablePointer<GstElement> {
            let head = TailElement(stages[0].factory, name: "camhal_head", stages[0].properties)
            let pipeline = try parse(source + " ! " + head.launchText)
            do throws(CameraError) {
                try append(stages.dropFirst(), after: "camhal_head", in: pipeline, deviceID: deviceID)
            } catch {
                gst_object_unref(UnsafeMutableRawPointer(pipeline))
                throw error
            }
            return pipeline
        }
        switch origin {
        case .test:
            return try parse(source: "videotestsrc name=camhal_src is-live=true", tail(format: format, sourceCaps: sourceCaps, sync: false))
        case .source(let s):
            switch s.kind {
            case .description(let d, _):
                return try parse(source: d, tail(format: format, sourceCaps: nil, sync: false))
            case .uri(let uri):
                // A file plays at its own rate (sync=true); a network camera is live already.
                let isFile = uri.lowercased().hasPrefix("file:")
                let p = try parse(source: "uridecodebin name=camhal_src", tail(format: format, sourceCaps: nil, sync: isFile))
                if let src = gst_bin_get_by_name(camhal_gst_bin(p), "camhal_src") {
                    camhal_gst_set(src, "uri", uri)
                    // A file:// playlist (.m3u8, .mpd) must not make the decoder fetch its URIs.
                    _ = camhal_gst_refuse_adaptive_demuxers(src)
                    gst_object_unref(UnsafeMutableRawPointer(src))
                }
                return p
            }
        case .device(let d):
            var sourceCaps = sourceCaps
            if d.descriptor.details["gst.provider"] == "libcameraprovider" {
                // libcamera adjusts sizes to its pipeline's alignment (vimc: 640x480 → 636x480)
                // and libcamerasrc then fails with not-negotiated on an exact size: offer a small
                // range below the size; videoscale brings the result back to it.
                let w = format.width, h = format.height
                sourceCaps = GStreamerFormats.capsString(pixel: format.pixelFormat, size: nil, frameRate: format.frameRate)
                    + ",width=(int)[ \(max(1, w - 16)), \(w) ],height=(int)[ \(max(1, h - 16)), \(h) ]"
            }
            guard let element = gst_device_create_element(camhal_gst_device(d.device.raw), "camhal_src") else {
                throw .configurationFailed("GStreamer could not create a source element for \(deviceID)")
            }
            guard let pipeline = gst_pipeline_new(nil) else {
                gst_object_unref(UnsafeMutableRawPointer(element))
                throw .configurationFailed("GStreamer could not make a pipeline for \(deviceID)")
            }
            _ = gst_object_ref_sink(UnsafeMutableRawPointer(pipeline))
            _ = gst_bin_add(camhal_gst_bin(pipeline), element)
            do throws(CameraError) {
                try append(tail(format: format, sourceCaps: sourceCaps, sync: false)[...], after: "camhal_src", in: pipeline, deviceID: deviceID)
            } catch {
                gst_object_unref(UnsafeMutableRawPointer(pipeline))
                throw error
            }
            return pipeline
        }
    }

    /// Makes `stages` in `pipeline` and links them in a chain after the element named `previous`:
    /// the first link with GStreamer's checks (it joins a source, whose output may not be raw
    /// video), the others without (see `buildPipeline`).
    private func append(_ stages: ArraySlice<TailElement>, after previous: String, in pipeline: UnsafeMutablePointer<GstElement>,
                        deviceID: String) throws(CameraError) {
        let bin = camhal_gst_bin(pipeline)
        // The pipeline holds every element in it until it is dropped: plain pointers do here.
        guard let named = gst_bin_get_by_name(bin, previous) else {
            throw .configurationFailed("the pipeline of \(deviceID) lacks its \(previous) stage")
        }
        gst_object_unref(UnsafeMutableRawPointer(named))
        var upstream = named
        for (index, stage) in stages.enumerated() {
            guard let element = gst_element_factory_make(stage.factory, stage.name) else {
                throw .configurationFailed("GStreamer has no \(stage.factory) element (gst-plugins-base or -good missing?)")
            }
            for (key, value) in stage.properties { camhal_gst_set(element, key, value) }
            _ = gst_bin_add(bin, element)  // takes the floating reference
            let checked = index == 0 && previous == "camhal_src"
            let linked = gst_element_link_pads_full(upstream, "src", element, "sink", checked ? GST_PAD_LINK_CHECK_DEFAULT : GST_PAD_LINK_CHECK_NOTHING)
            guard linked != 0 else {
                let from = camhal_gst_object_name(upstream).map { String(cString: $0) } ?? previous
                throw .configurationFailed("could not link the source of \(deviceID) (\(from)) to \(stage.factory)")
            }
            upstream = element
        }
    }

    public func watchDevices(_ handler: @escaping @Sendable (DeviceEvent) -> Void) -> (any DeviceWatch)? {
        guard GStreamerRuntime.start() == nil else { return nil }
        return GStreamerDeviceWatch(backend: self, handler: handler)
    }

    /// Records a device a watch saw appear, so it can be bound without a new listing.
    func remember(_ device: ProbedDevice) { probed.locked { $0[device.descriptor.id] = device } }
    func forget(id: String) { _ = probed.locked { $0.removeValue(forKey: id) } }
}
#endif
