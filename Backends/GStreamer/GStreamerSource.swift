#if GStreamer
import CGStreamer
import CamHAL
import Foundation

/// A video source that is not a device GStreamer's device monitor lists: a network camera, a
/// video file, or a gst-launch style source description.
///
/// Build one with `uri(_:)` or `description(_:allowPipeline:)`; both check their input and
/// throw `CameraError.invalidArgument` naming the bad value or element (B2).
public struct GStreamerSource: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case uri(String)
        case description(String, allowPipeline: Bool)
    }
    let kind: Kind

    /// A network camera (`rtsp://`, `rtsps://`) or a video file (`file:///path`) used as a camera.
    public static func uri(_ uri: String) throws(CameraError) -> GStreamerSource {
        let trimmed = uri.trimmingCharacters(in: .whitespacesAndNewlines)
        let lower = trimmed.lowercased()
        guard let scheme = lower.split(separator: ":", maxSplits: 1).first.map(String.init),
              ["rtsp", "rtsps", "rtspt", "file"].contains(scheme), lower.hasPrefix(scheme + "://") else {
            throw .invalidArgument(name: "source URI", value: uri, reason: "only rtsp://, rtsps:// and file:// URIs are accepted")
        }
        guard !trimmed.contains(where: { $0 == "\"" || $0.isNewline }) else {
            throw .invalidArgument(name: "source URI", value: uri, reason: "contains a quote or a line break")
        }
        if scheme == "file" {
            guard let url = URL(string: trimmed), url.isFileURL else {
                throw .invalidArgument(name: "source URI", value: uri, reason: "not a valid file URI")
            }
            guard FileManager.default.isReadableFile(atPath: url.path) else {
                throw .invalidArgument(name: "source URI", value: uri, reason: "no readable file at \(url.path)")
            }
        }
        return GStreamerSource(kind: .uri(trimmed))
    }

    /// A gst-launch style source fragment, such as `videotestsrc pattern=ball is-live=true` or
    /// `v4l2src device=/dev/video2 ! videoflip method=horizontal`. CamHAL appends its own
    /// conversion, crop and appsink stages.
    ///
    /// Security: unless `allowPipeline` is true, only source elements that read local devices or
    /// files, plus filters, converters, decoders, parsers and caps filters are accepted. A sink
    /// (filesink, udpsink, multifilesink...), a network element (rtspsrc, souphttpsrc, udpsrc...)
    /// or a URI-handling bin is refused with `CameraError.invalidArgument` naming the element.
    public static func description(_ description: String, allowPipeline: Bool = false) throws(CameraError) -> GStreamerSource {
        let trimmed = description.trimmingCharacters(in: .whitespacesAndNewlines)
        try SourceValidator.validate(trimmed, original: description, allowPipeline: allowPipeline)
        return GStreamerSource(kind: .description(trimmed, allowPipeline: allowPipeline))
    }

    public var description: String {
        switch kind {
        case .uri(let u): return Self.redacted(u)
        case .description(let d, _): return d
        }
    }

    /// The device ID the source is listed under.
    var deviceID: String {
        switch kind {
        case .uri(let u): return "uri:" + Self.redacted(u)
        case .description(let d, _): return "launch:" + d
        }
    }

    /// A URI with its user information (credentials) hidden.
    static func redacted(_ uri: String) -> String {
        guard let scheme = uri.range(of: "://") else { return uri }
        let rest = uri[scheme.upperBound...]
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<hostEnd].lastIndex(of: "@") else { return uri }
        return String(uri[..<scheme.upperBound]) + "***" + String(rest[at...])
    }

    /// The descriptor CamHAL lists for this source. Formats are nominal: the source is decoded,
    /// converted and scaled to whichever one the session asks for.
    var descriptor: DeviceDescriptor {
        let sizes = [Size(width: 640, height: 480), Size(width: 1280, height: 720), Size(width: 1920, height: 1080), Size(width: 320, height: 240)]
        let formats = [PixelFormat.nv12, .yuyv, .i420, .rgb24].flatMap { p in
            sizes.map { FormatDescription(pixelFormat: p, size: $0, frameRates: []) }
        }
        let (name, kindDetail): (String, String) = {
            switch kind {
            case .uri(let u): return (u.lowercased().hasPrefix("file") ? "Video file \(Self.redacted(u))" : "Network camera \(Self.redacted(u))", "uri")
            case .description(let d, _): return ("GStreamer source '\(d)'", "description")
            }
        }()
        var details = ["gst.source": kindDetail, "gst.launch": description]
        if case .description(_, let allow) = kind, allow { details["gst.allowPipeline"] = "true" }
        return DeviceDescriptor(
            id: deviceID, name: name, backend: GStreamerBackend.backendIdentifier, facing: .external,
            lenses: DeviceDescriptor.singleLens(kind: .external, facing: .external),
            formats: formats, zoomMethod: .sensorCrop, isExclusive: false, details: details)
    }
}

/// Checks a user's source description before anything is linked or started (B2).
enum SourceValidator {
    /// Klass words of elements a source description may hold without the opt-in.
    static let allowedKlassWords: Set<String> = [
        "Source", "Filter", "Converter", "Decoder", "Demuxer", "Parser", "Depayloader", "Effect",
        "Scaler", "Colorspace",
    ]
    /// Generic elements that neither write nor reach out.
    static let allowedGeneric: Set<String> = ["capsfilter", "queue", "identity", "videorate"]
    /// Elements that take URIs (they can reach the network or write) and need the opt-in.
    static let uriHandlers: Set<String> = ["uridecodebin", "uridecodebin3", "urisourcebin", "playbin", "playbin3", "queue2"]

    static func validate(_ description: String, original: String, allowPipeline: Bool) throws(CameraError) {
        let name = "source description"
        guard !description.isEmpty else {
            throw .invalidArgument(name: name, value: original, reason: "it is empty")
        }
        if let why = GStreamerRuntime.start() {
            throw .backendUnavailable(backend: GStreamerBackend.backendIdentifier, reason: why)
        }
        var error: UnsafeMutablePointer<CChar>?
        // Parsed as it will be linked: followed by CamHAL's stages (a trailing caps filter such as
        // `v4l2src ! video/x-raw,width=640` only parses with an element after it).
        guard let bin = camhal_gst_parse_bin(description + " ! identity name=camhal_validate", 0, &error) else {
            let why = takeGString(error) ?? "unknown parse error"
            throw .invalidArgument(name: name, value: original, reason: "malformed: \(why)")
        }
        let binRef = GstObjectRef(adopting: UnsafeMutableRawPointer(bin))
        let list = camhal_gst_bin_elements(camhal_gst_bin(binRef.raw))
        defer { g_list_free_full(list, { gst_object_unref($0) }) }
        var elements: [(factory: String, name: String, klass: String)] = []
        var node = list
        while let n = node {
            if let e = n.pointee.data?.assumingMemoryBound(to: GstElement.self) {
                let factory = camhal_gst_element_factory_name(e).map { String(cString: $0) } ?? "?"
                let klass = camhal_gst_element_klass(e).map { String(cString: $0) } ?? ""
                let ename = camhal_gst_object_name(e).map { String(cString: $0) } ?? factory
                elements.append((factory, ename, klass))
            }
            node = n.pointee.next
        }
        elements.reverse()
        guard elements.contains(where: { $0.klass.contains("Source") }) else {
            throw .invalidArgument(name: name, value: original, reason: "it has no source element (e.g. videotestsrc, v4l2src, filesrc)")
        }
        if allowPipeline { return }
        for e in elements {
            let words = Set(e.klass.split(separator: "/").map(String.init))
            let label = "element '\(e.factory)'" + (e.name != e.factory && !e.name.hasPrefix(e.factory) ? " (named \(e.name))" : "")
            let optIn = "only source and filter elements are accepted without allowPipeline"
            if words.contains("Sink") {
                throw .invalidArgument(name: name, value: original, reason: "\(label) is a sink (\(e.klass)); \(optIn)")
            }
            if words.contains("Network") {
                throw .invalidArgument(name: name, value: original, reason: "\(label) reaches the network (\(e.klass)); use a rtsp:// source or \(optIn)")
            }
            if uriHandlers.contains(e.factory) {
                throw .invalidArgument(name: name, value: original, reason: "\(label) can open URIs or write files; \(optIn)")
            }
            if words.isDisjoint(with: allowedKlassWords) && !allowedGeneric.contains(e.factory) {
                throw .invalidArgument(name: name, value: original, reason: "\(label) is not a source or filter (\(e.klass)); \(optIn)")
            }
        }
    }
}
#endif
