import CamHAL
import FoundationEssentials

// camhal: the command-line tool. Each verb lives in its own file as a `Verb`; this table is the
// only place that lists them.
extension CLI {
    static let verbs: [Verb] = [
        ProbeCommand.verb,
        ConformanceCommand.verb,
        WatchCommand.verb,
        HoldCommand.verb,
        ControlsCommand.verb,
    ] + mediaVerbs

    /// The verbs that need CamHALMedia (the `Media` package trait).
    #if Media
    static let mediaVerbs = [CaptureCommand.verb, RecordCommand.verb, ScanCommand.verb, PreviewCommand.verb]
    #else
    static let mediaVerbs = [
        Verb.notBuilt("capture", "take a photo and write it as JPEG", trait: "Media"),
        Verb.notBuilt("record", "record video to .mkv (or fragmented .mp4)", trait: "Media"),
        Verb.notBuilt("scan", "print barcodes seen by the camera", trait: "Media"),
        Verb.notBuilt("preview", "show the live picture in a window; keys for zoom, lens, torch, focus", trait: "Media"),
    ]
    #endif
}

extension Verb {
    /// A verb this build left out with its package trait: listed in the help, and running it says
    /// how to get it (exit status 1).
    static func notBuilt(_ name: String, _ summary: String, trait: String) -> Verb {
        let why = "not in this build: it needs the \(trait) package trait (on by default; this camhal was "
            + "built with it off, e.g. swift build --disable-default-traits)"
        return Verb(
            name: name, summary: "\(summary) [\(trait) trait: not in this build]",
            usage: "usage: camhal \(name) ...\n  \(why)",
            run: { _ in
                printError("camhal \(name): \(why)")
                return 1
            })
    }
}
