#if GStreamer
import CGStreamer
import CamHAL
import FoundationEssentials

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
        let trimmed = trimmingWhitespace(uri)
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
    /// Security: unless `allowPipeline` is true, a description may only use CamHAL's ALLOWLIST of
    /// elements (`SourceAllowlist`): `videotestsrc`, `v4l2src` on a `/dev/video*` node, parsers and
    /// decoders of local media (`rawvideoparse`, `pngdec`, `jpegdec`, `h264parse`, `matroskademux`...)
    /// and video filters (`videoconvert`, `videoscale`, `videorate`, `videocrop`, `capsfilter`,
    /// `imagefreeze`, `queue`, `identity`...). Every other element (sinks, network sources such as
    /// `rtmpsrc` or `rfbsrc`, `decodebin`, adaptive demuxers such as `hlsdemux`, bins) is refused,
    /// and so is any property holding a URI. Network cameras come only through `uri(_:)`.
    ///
    /// Local files and file descriptors (`filesrc`, `multifilesrc`, `fdsrc`, an overlay image's
    /// `location`) are refused unless `policy.allowsLocalFiles` is set.
    ///
    /// A description is at most `SourceAllowlist.maxLength` (2048) bytes and
    /// `SourceAllowlist.maxElements` (24) elements, and in every mode a linear chain:
    /// `element property=value ... ! caps ! element ...`, quotes only around a whole value. Groups
    /// (`( ... )`) and element references (`t.`) are refused because several malformed forms of
    /// them crash GStreamer 1.22's parser; link a branching pipeline in code. Refusals throw
    /// `CameraError.invalidArgument` naming the element and the rule.
    ///
    /// - Parameters:
    ///   - description: the source, as `gst-launch-1.0` takes it (`videotestsrc pattern=ball`).
    ///   - policy: what the description may reach beyond the allowlist (nothing by default).
    ///   - allowPipeline: the app's own trusted pipeline: any element (the size limits and the
    ///     linear-chain syntax still apply).
    public static func description(_ description: String, policy: GStreamerBackend.SourcePolicy = .default, allowPipeline: Bool = false) throws(CameraError) -> GStreamerSource {
        let trimmed = trimmingWhitespace(description)
        try SourceAllowlist.validate(trimmed, original: description, policy: policy, allowPipeline: allowPipeline)
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
        guard let scheme = uri.firstRange(of: "://") else { return uri }
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
#endif
