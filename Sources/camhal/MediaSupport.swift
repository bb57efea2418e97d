import CamHAL
import CamHALBackends
#if GStreamer
import CamHALGStreamer
#endif
#if Media
import CamHALMedia
#endif
import CamHALVirtual
import FoundationEssentials

/// Shared by `capture`, `record`, `scan` and `hold`: opening the source the flags name.
enum MediaSupport {
    /// The options `open` reads, for the verbs' `Arguments`.
    static let sourceOptions: Set<String> = ["backend", "device", "source", "format", "size"]

    /// The usage lines for `sourceOptions`.
    static let sourceUsage = """
          --backend B        backend (default: the first camera in CAMHAL_BACKENDS order; a test
                             source, such as virtual or videotestsrc, only when named)
          --device ID        device id as `camhal probe` lists it (default: the backend's first)
          --source S         a GStreamer URI (rtsp://, file://) or source description
                             ('videotestsrc pattern=ball', 'v4l2src device=/dev/video2 ! videoflip
                             method=horizontal'), opened through the GStreamer backend
          --format FOURCC    pixel format to stream (YUYV, NV12, MJPG, Y16...; see camhal probe)
          --size WxH         stream size to ask the device for
        """

    /// Opens `--source` through the GStreamer backend, or `--backend`/`--device` (default: the first
    /// camera, never a test source), or a virtual camera showing `image` when given; streaming
    /// `--format` and `--size` unless `stream` (which wins) says otherwise.
    static func open(_ a: Arguments, stream: StreamRequest? = nil, image: String? = nil) throws -> Camera {
        try CLI.stopIfParsingOnly()
        var request = stream ?? StreamRequest()
        if request.pixelFormat == nil { request.pixelFormat = try a.fourCC("format") }
        if request.size == nil { request.size = try a.size("size") }
        let config = Camera.Configuration(stream: request)
        let camera: Camera
        if let image {
            if let b = a["backend"], b != "virtual" { throw UsageError("--image shows a still image through the virtual camera; drop --backend \(b)") }
            if a["source"] != nil { throw UsageError("--image and --source both name what to show; give one") }
            guard !image.isEmpty else { throw UsageError("option --image: '' is not a file path") }
            #if Media
            let g = try ImageLoader.loadGray(URL(fileURLWithPath: image))
            guard let gray = VirtualScene.GrayImage(width: g.width, height: g.height, pixels: g.pixels) else {
                throw UsageError("--image \(image): empty image")
            }
            let backend = VirtualBackend(scene: .image(gray))
            camera = try BackendRegistry([backend], environment: [:]).open(backend: "virtual", device: a["device"], configuration: config)
            #else
            throw CameraError.unsupported("--image \(image): loading images needs the Media package trait, off in this build")
            #endif
        } else if let source = a["source"] {
            #if GStreamer
            camera = Camera(backend: GStreamerBackend.shared, device: try gstreamerSource(source, a), configuration: config)
            #else
            throw CameraError.unsupported("--source \(source): opened through the GStreamer backend, not in this build (package trait GStreamer off)")
            #endif
        } else {
            let registry = try CLI.registry()
            do {
                camera = try registry.open(backend: a["backend"], device: a["device"], configuration: config)
            } catch {
                throw CLI.withUnusableDevices(error, registry: registry, backend: a["backend"])
            }
        }
        // A device that lists its formats and lacks the one asked for: say so rather than let the
        // core pick another one silently.
        if let want = request.pixelFormat, !camera.device.formats.isEmpty,
           !camera.device.formats.contains(where: { $0.pixelFormat == want }) {
            let offered = Set(camera.device.formats.map(\.pixelFormat.fourCC)).sorted().joined(separator: ", ")
            throw CameraError.unsupported("\(camera.device.backend):\(camera.device.id) does not stream '\(want.fourCC)'; it offers \(offered)")
        }
        return camera
    }

    #if GStreamer
    /// The GStreamer device for `--source`: a URI when it has a scheme, else a source description.
    static func gstreamerSource(_ source: String, _ a: Arguments) throws -> DeviceDescriptor {
        if let b = a["backend"], b.lowercased() != GStreamerBackend.shared.identifier {
            throw UsageError("--source is opened through the gstreamer backend; drop --backend \(b)")
        }
        if a["device"] != nil { throw UsageError("--source and --device both name what to open; give one") }
        if case .unavailable(let reason) = GStreamerBackend.shared.availability() {
            throw CameraError.backendUnavailable(backend: GStreamerBackend.shared.identifier, reason: reason)
        }
        do {
            return source.contains("://") ? try GStreamerBackend.shared.source(uri: source) : try GStreamerBackend.shared.source(description: source)
        } catch CameraError.invalidArgument(_, let value, let reason) {
            throw UsageError("option --source: '\(value)' \(reason)")
        }
    }
    #endif

    /// Waits up to `timeout` s for the first frame (isPreviewActive) or an error, on the session's
    /// snapshots (never polled).
    static func waitUntilStreaming(_ camera: Camera, timeout: Double = 10) async throws {
        let s = await camera.firstState(within: .seconds(timeout)) { ($0.status == .error && $0.error != nil) || $0.isPreviewActive }
        try Task.checkCancellation()
        if let s, s.status == .error, let e = s.error { throw e }
        if s?.isPreviewActive == true { return }
        throw CameraError.timeout("\(camera.device) did not deliver a frame within \(timeout) s")
    }

    #if Media
    /// Refuses, before the device streams, a `--format` the verb could not turn into pictures
    /// (`capture`, `record`, `scan` convert every frame), naming the device's formats that would work.
    static func requireConvertible(_ camera: Camera, _ a: Arguments) throws {
        guard let want = try a.fourCC("format"), !isConvertible(want) else { return }
        // A device that does not list its formats (a GStreamer source): every format camhal converts.
        let offered = camera.device.formats.isEmpty ? PixelConverter.convertibleFormats : camera.device.formats.map(\.pixelFormat)
        let usable = Set(offered.filter(isConvertible).map(\.fourCC)).sorted()
        let offer = usable.isEmpty ? "this device streams no format camhal converts" : "use one of \(usable.joined(separator: ", "))"
        throw UsageError("option --format: '\(a["format"] ?? want.fourCC)' cannot be converted to pictures; \(offer)")
    }

    static func isConvertible(_ format: PixelFormat) -> Bool {
        // JPEG and MJPEG frames are decoded (or passed through), not converted.
        format.isJPEGFamily || PixelConverter.convertibleFormats.contains(format)
    }

    static func parseMirror(_ s: String?) throws -> PhotoSettings.Mirror {
        guard let s else { return .auto }
        guard let m = PhotoSettings.Mirror(rawValue: s) else { throw UsageError("option --mirror: '\(s)' is not auto, on or off") }
        return m
    }
    #endif

    static func human(_ bytes: Int64) -> String {
        bytes >= 1 << 20 ? decimal(Double(bytes) / 1048576, places: 1) + " MB" : decimal(Double(bytes) / 1024, places: 1) + " kB"
    }
}
