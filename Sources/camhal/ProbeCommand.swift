import CamHAL
import CamHALBackends
import Foundation

/// `camhal probe`: every registered backend, its availability, devices and capabilities.
enum ProbeCommand {
    static let verb = Verb(
        name: "probe", summary: "list backends, devices and their capabilities",
        usage: """
            usage: camhal probe [--backend B] [--json]
              --backend B   only this backend (virtual, v4l2, gstreamer, libcamera)
              --json        one JSON document instead of the table
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend"], booleans: ["json"])
        guard a.positional.isEmpty else { throw UsageError("unexpected argument '\(a.positional[0])'") }
        print("probe: (table output lands with the conformance runner)")
        _ = Backends.registry()
        return 0
    }
}
