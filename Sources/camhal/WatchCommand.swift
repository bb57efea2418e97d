import CamHAL
import CamHALBackends
import Foundation

/// `camhal watch`: prints devices as they appear and disappear (D3).
enum WatchCommand {
    static let verb = Verb(
        name: "watch", summary: "print devices appearing and disappearing (hot-plug)",
        usage: """
            usage: camhal watch [--seconds N]
              --seconds N   stop after N seconds (default: run until interrupted)
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["seconds"], booleans: [])
        let seconds = try a.double("seconds")
        if let seconds, seconds < 0 { throw UsageError("option --seconds: '\(seconds)' must not be negative") }
        let registry = try CLI.registry()
        let watches = registry.watchDevices { backend, event in
            switch event {
            case .added(let d): printNow("added   \(backend):\(d.id) '\(d.name)'")
            case .removed(let id): printNow("removed \(backend):\(id)")
            }
        }
        if watches.isEmpty {
            printError("camhal watch: no available backend can watch for devices")
            return 1
        }
        printNow("watching \(watches.count) backend(s); Ctrl-C to stop")
        try await Task.sleep(nanoseconds: UInt64((seconds ?? 1e9) * 1e9))
        for w in watches { w.cancel() }
        return 0
    }
}
