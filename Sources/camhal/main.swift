import Foundation

// camhal: the command-line tool. Each verb lives in its own file as a `Verb`; this table is the
// only place that lists them.
extension CLI {
    static let verbs: [Verb] = [
        ProbeCommand.verb,
        ConformanceCommand.verb,
        WatchCommand.verb,
        HoldCommand.verb,
        CaptureCommand.verb,
        RecordCommand.verb,
        ScanCommand.verb,
    ]
}

exit(await CLI.main(arguments: Array(CommandLine.arguments.dropFirst()), verbs: CLI.verbs))
