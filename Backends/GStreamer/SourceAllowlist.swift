#if GStreamer
import CGStreamer
import CamHAL

extension GStreamerBackend {
    /// What a gst-launch style source description may reach beyond CamHAL's allowlist.
    ///
    /// By default a description may not read local files or file descriptors: `filesrc`,
    /// `multifilesrc`, `fdsrc` and an overlay's image `location` are refused (a description can come
    /// from a config file or a user, and `filesrc location=/etc/shadow ! rawvideoparse` would
    /// stream any file the process can read). An app that shows its own files sets
    /// `allowsLocalFiles`.
    public struct SourcePolicy: Sendable, Hashable {
        /// Whether descriptions may read local files and file descriptors (`filesrc`,
        /// `multifilesrc`, `fdsrc`, `gdkpixbufoverlay location=`). Never URIs: those are refused
        /// whatever the policy.
        public var allowsLocalFiles: Bool

        /// - Parameter allowsLocalFiles: see `allowsLocalFiles` (false by default).
        public init(allowsLocalFiles: Bool = false) {
            self.allowsLocalFiles = allowsLocalFiles
        }

        /// Only test sources, cameras (`v4l2src`) and the allowlisted filters.
        public static let `default` = SourcePolicy()
        /// The default plus local files and file descriptors.
        public static let allowingLocalFiles = SourcePolicy(allowsLocalFiles: true)
    }
}

/// Character sequences that crash GStreamer 1.22's gst-launch parser (in-process: SIGSEGV),
/// found by fuzzing; descriptions containing one are refused before parsing.
enum GStreamerParserCrashers {
    static let sequences = [".:"]

    /// The first element name given twice (`name=t` ... `name=t`), or nil. With a duplicate name
    /// GStreamer 1.22's parser can resolve a reference (`t.`) to the other element and link the
    /// pipeline into a loop; the caps query that linking runs then recurses until the stack
    /// overflows (`videotestsrc ! (tee name=t t. ! queue) ! tee name=t`: SIGSEGV in
    /// gst_pad_proxy_query_caps; found by Fuzz/FuzzSourceDescription in CI).
    static func duplicateName(in description: String) -> String? {
        var seen: Set<String> = []
        for name in elementNames(in: description) {
            if !seen.insert(name).inserted { return name }
        }
        return nil
    }

    /// The first element reference (`t.`, `t.src_0`) to a name no `name=` in the description
    /// gives, or nil. GStreamer 1.22's parser dereferences NULL linking two references that
    /// resolve to nothing (`x a. ! b.`: SIGSEGV in the parser; found by Fuzz/FuzzSourceDescription
    /// in CI), and a reference to a generated name (`videotestsrc0.`) is fragile anyway.
    static func unresolvedReference(in description: String) -> String? {
        let named = Set(elementNames(in: description))
        return referencedNames(in: description).first { !named.contains($0) }
    }

    /// The element names that words of a description refer to (`t.` and `t.src_0` refer to
    /// `t`), outside quoted values; property assignments, caps and URIs (words with `=` or `/`)
    /// and pad references of the current element (`.src_0`) are not references.
    static func referencedNames(in description: String) -> [String] {
        let separators: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r", "!", "(", ")"]
        let identifier: Set<Unicode.Scalar> = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-%:".unicodeScalars)
        var names: [String] = []
        var word = String.UnicodeScalarView()
        var quoted = false
        func finish() {
            defer { word.removeAll() }
            guard !quoted, !word.contains("="), !word.contains("/"), let dot = word.firstIndex(of: ".") else { return }
            let name = word[..<dot]
            guard !name.isEmpty, name.allSatisfy(identifier.contains) else { return }
            names.append(String(String.UnicodeScalarView(name)))
        }
        var quote: Unicode.Scalar?
        var escaped = false
        for ch in description.unicodeScalars {
            if escaped { escaped = false; word.append(ch); continue }
            if ch == "\\" { escaped = true; word.append(ch); continue }
            if let q = quote {
                if ch == q { quote = nil }
                word.append(ch)
                continue
            }
            if ch == "\"" || ch == "'" { quote = ch; quoted = true; word.append(ch); continue }
            if separators.contains(ch) { finish(); quoted = false; continue }
            word.append(ch)
        }
        finish()
        return names
    }

    /// The values of every `name=` property in a description, as gst-launch's lexer reads them:
    /// outside quoted values, at the start of a word, spaces allowed around `=`, the value quoted
    /// ('...' or "..." with backslash escapes) or running to a space, `!`, `(` or `)`.
    static func elementNames(in description: String) -> [String] {
        let c = Array(description.unicodeScalars)
        let separators: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r", "!", "(", ")"]
        var names: [String] = []
        var i = 0
        var quote: Unicode.Scalar?
        while i < c.count {
            let ch = c[i]
            if let q = quote {
                if ch == "\\" { i += 2; continue }
                if ch == q { quote = nil }
                i += 1
                continue
            }
            if ch == "\"" || ch == "'" { quote = ch; i += 1; continue }
            let atWordStart = i == 0 || separators.contains(c[i - 1])
            guard atWordStart, i + 4 <= c.count, String(String.UnicodeScalarView(c[i..<i + 4])) == "name" else {
                i += 1
                continue
            }
            var j = i + 4
            while j < c.count, c[j] == " " || c[j] == "\t" { j += 1 }
            guard j < c.count, c[j] == "=" else { i += 1; continue }
            j += 1
            while j < c.count, c[j] == " " || c[j] == "\t" { j += 1 }
            var value = String.UnicodeScalarView()
            if j < c.count, c[j] == "\"" || c[j] == "'" {
                let q = c[j]
                j += 1
                while j < c.count, c[j] != q {
                    if c[j] == "\\", j + 1 < c.count { j += 1 }
                    value.append(c[j])
                    j += 1
                }
                j += 1
            } else {
                while j < c.count, !separators.contains(c[j]) {
                    if c[j] == "\\", j + 1 < c.count { j += 1 }
                    value.append(c[j])
                    j += 1
                }
            }
            names.append(String(value))
            i = j
        }
        return names
    }
}

/// Checks a user's source description before anything is linked or started (B2): an ALLOWLIST of
/// element factories, each with its properties checked. Anything not listed is refused with
/// `CameraError.invalidArgument` naming the element and the rule.
///
/// Network cameras never come through descriptions: only through `GStreamerSource.uri`
/// (`rtsp://`). Nothing here starts a pipeline: the description is parsed into a bin (which
/// creates the elements without opening anything) and the bin's elements are inspected.
enum SourceAllowlist {
    /// Longest description accepted (characters). GStreamer's parser takes tens of seconds on a
    /// few kilobytes of linked elements (300 `identity` stages: 35 s), blocking the caller.
    static let maxLength = 2048
    /// Most elements a description may hold (CamHAL adds its own six after them).
    static let maxElements = 24

    /// Sources a description may start with. `v4l2src` only on a V4L2 node path.
    static let sources: Set<String> = ["videotestsrc", "v4l2src", "filesrc", "multifilesrc", "fdsrc"]
    /// Parsers, decoders and demuxers of local media. None fetches anything: adaptive demuxers
    /// (hlsdemux, dashdemux), decodebin (which plugs them) and URI bins are not listed.
    static let decoders: Set<String> = [
        "rawvideoparse", "videoparse", "pngdec", "jpegdec", "jpegparse", "y4mdec", "gdkpixbufdec",
        "h264parse", "h265parse", "avdec_h264", "avdec_h265", "openh264dec", "vp8dec", "vp9dec", "theoradec",
        "matroskademux", "qtdemux", "avidemux", "oggdemux",
    ]
    /// Converters and filters that only transform video.
    static let filters: Set<String> = [
        "capsfilter", "queue", "identity", "videoconvert", "videoscale", "videorate", "videocrop", "videoflip",
        "videobox", "videobalance", "imagefreeze", "deinterlace", "textoverlay", "timeoverlay", "clockoverlay",
        "gdkpixbufoverlay",
    ]
    /// Elements that read local files or descriptors, and the property that names what they read.
    /// `gdkpixbufoverlay` only when its `location` is set.
    static let localFileReaders: [String: String] = [
        "filesrc": "location", "multifilesrc": "location", "fdsrc": "fd", "gdkpixbufoverlay": "location",
    ]
    /// String properties whose value is free text, never something opened.
    static let textProperties: Set<String> = ["name", "text", "font-desc"]

    static let argumentName = "source description"

    /// Throws `CameraError.invalidArgument` naming the first refused element and the rule; with
    /// `allowPipeline` (the app's own trusted pipeline) only the size limits and the parse apply.
    static func validate(_ description: String, original: String, policy: GStreamerBackend.SourcePolicy, allowPipeline: Bool) throws(CameraError) {
        func refuse(_ reason: String) -> CameraError {
            let shown = original.count > 160 ? String(original.prefix(160)) + "… (\(original.count) characters)" : original
            return .invalidArgument(name: argumentName, value: shown, reason: reason)
        }
        guard !description.isEmpty else { throw refuse("it is empty") }
        guard description.utf8.count <= maxLength else {
            throw refuse("it is \(description.utf8.count) bytes long; at most \(maxLength) are accepted")
        }
        guard !description.contains("\0") else { throw refuse("it contains a NUL character") }
        // GStreamer 1.22's parser dereferences a bad pointer on an element reference followed by
        // ':' (`x.:y.` crashes gst-launch-1.0 too; found by Fuzz/FuzzSourceDescription). No
        // description needs that sequence; it is refused before the parser sees it.
        for crasher in GStreamerParserCrashers.sequences where description.contains(crasher) {
            throw refuse("it contains '\(crasher)', which crashes GStreamer's parser")
        }
        if let name = GStreamerParserCrashers.duplicateName(in: description) {
            throw refuse("it names two elements '\(name)': element names must be unique (with a duplicate name GStreamer's parser can link a reference into a loop, which crashes GStreamer's parser)")
        }
        // Element references crash GStreamer 1.22's parser in several forms found by fuzzing
        // (links between unknown names, `x a. ! b.`; references inside a bin holding an unknown
        // element), each a NULL dereference that kills the process. No allowlisted element needs
        // one; a branching pipeline (tee, a muxer) is built in code instead.
        if let name = GStreamerParserCrashers.referencedNames(in: description).first {
            throw refuse("it refers to an element by name ('\(name).'): element references are not accepted, because several forms crash GStreamer 1.22's parser; link a branching pipeline in code")
        }
        // Everything outside a linear chain of elements and caps is refused before the parser
        // sees it (DescriptionSyntax: the screens above keep their more specific messages).
        if let why = DescriptionSyntax.problem(in: description) { throw refuse(why) }
        // Counted before parsing too: linking is what makes the parser slow.
        let links = description.reduce(0) { $0 + ($1 == "!" ? 1 : 0) }
        guard links < maxElements else {
            throw refuse("it links \(links + 1) elements; at most \(maxElements) are accepted")
        }
        if let why = GStreamerRuntime.start() {
            throw .backendUnavailable(backend: GStreamerBackend.backendIdentifier, reason: why)
        }
        // Parsed as it will be linked: followed by CamHAL's stages (a trailing caps filter such as
        // `v4l2src ! video/x-raw,width=640` only parses with an element after it). Link errors are
        // not fatal here, so a refused element is named by the allowlist rather than by a link
        // failure ("could not link filesink0 to ...").
        var parseError: UnsafeMutablePointer<CChar>?
        let parsed = camhal_gst_parse_bin_lenient(description + " ! identity name=camhal_validate", &parseError)
        let parseMessage = takeGString(parseError)
        guard let bin = parsed else {
            throw refuse("malformed: \(parseMessage ?? "unknown parse error")")
        }
        let binRef = GstObjectRef(adopting: UnsafeMutableRawPointer(bin))
        let elements = children(of: binRef).filter { $0.name != "camhal_validate" }
        guard elements.count <= maxElements else {
            throw refuse("it holds \(elements.count) elements; at most \(maxElements) are accepted")
        }
        if !allowPipeline {
            // Every refused element is named, not only the first (`tee ! filesink` names both).
            let refused = elements.compactMap { check($0, policy: policy) }
            if !refused.isEmpty { throw refuse(refused.joined(separator: "; ")) }
        }
        if let parseMessage { throw refuse("malformed: \(parseMessage)") }
        guard elements.contains(where: { sources.contains($0.factory) || (allowPipeline && $0.klass.contains("Source")) }) else {
            throw refuse("it has no source element (e.g. videotestsrc, v4l2src, filesrc)")
        }
    }

    /// One element of a parsed description.
    struct Element {
        let factory: String
        let name: String
        let klass: String
        /// Readable string properties that hold a value.
        let strings: [String: String]
        var label: String {
            "element '\(factory)'" + (name != factory && !name.hasPrefix(factory) ? " (named \(name))" : "")
        }
    }

    /// The direct children of the parsed bin, in description order. A nested bin (`( ... )`,
    /// decodebin) is one element, and not on the allowlist.
    static func children(of bin: GstObjectRef) -> [Element] {
        let list = camhal_gst_bin_children(bin.raw.assumingMemoryBound(to: GstElement.self))
        defer { g_list_free_full(list, { gst_object_unref($0) }) }
        var out: [Element] = []
        var node = list
        while let n = node {
            if let e = n.pointee.data?.assumingMemoryBound(to: GstElement.self) {
                let factory = camhal_gst_element_factory_name(e).map { String(cString: $0) } ?? "bin"
                let klass = camhal_gst_element_klass(e).map { String(cString: $0) } ?? ""
                let name = camhal_gst_object_name(e).map { String(cString: $0) } ?? factory
                out.append(Element(factory: factory, name: name, klass: klass, strings: stringProperties(e)))
            }
            node = n.pointee.next
        }
        return out
    }

    static func stringProperties(_ element: UnsafeMutablePointer<GstElement>) -> [String: String] {
        guard let vector = camhal_gst_string_properties(element) else { return [:] }
        defer { g_strfreev(vector) }
        var out: [String: String] = [:]
        var i = 0
        while let key = vector[i], let value = vector[i + 1] {
            out[String(cString: key)] = String(cString: value)
            i += 2
        }
        return out
    }

    /// Why `e` is refused under `policy`, or nil when it is allowed.
    static func check(_ e: Element, policy: GStreamerBackend.SourcePolicy) -> String? {
        let rerouteNetwork = "network cameras come only through GStreamerSource.uri (rtsp://)"
        guard sources.contains(e.factory) || decoders.contains(e.factory) || filters.contains(e.factory) else {
            let what = e.klass.isEmpty ? "" : " (\(e.klass))"
            return "\(e.label)\(what) is not on the source-description allowlist (test sources, v4l2src, local files with SourcePolicy.allowsLocalFiles, their parsers and decoders, video filters); \(rerouteNetwork), and an app's own trusted pipeline needs allowPipeline"
        }
        for (property, value) in e.strings.sorted(by: { $0.key < $1.key }) where !textProperties.contains(property) {
            if value.contains("://") {
                return "property '\(property)' of \(e.label) holds a URI (\(GStreamerSource.redacted(value))): descriptions never fetch URIs; \(rerouteNetwork)"
            }
        }
        if let property = localFileReaders[e.factory], !policy.allowsLocalFiles {
            let value = e.strings[property]
            if e.factory == "gdkpixbufoverlay", value == nil { return nil }
            let shown = value.map { "\(property)=\($0)" } ?? property
            return "\(e.label) reads local files or file descriptors (\(shown)); an app allows that with GStreamerBackend.SourcePolicy(allowsLocalFiles: true)"
        }
        if e.factory == "v4l2src" {
            let device = e.strings["device"] ?? "/dev/video0"
            guard device.hasPrefix("/dev/video") || device.hasPrefix("/dev/v4l/"), !device.contains("..") else {
                return "property 'device' of \(e.label) is \(device): only V4L2 nodes (/dev/video*, /dev/v4l/...) are accepted"
            }
        }
        return nil
    }
}
#endif
