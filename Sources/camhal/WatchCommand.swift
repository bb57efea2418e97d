import CamHAL
import CamHALBackends
import FoundationEssentials

/// `camhal watch`: prints devices as they appear and disappear (D3).
enum WatchCommand {
    static let verb = Verb(
        name: "watch", summary: "print devices appearing and disappearing (hot-plug)",
        usage: """
            usage: camhal watch [--seconds N]
              --seconds N   stop after N seconds, 0...1e9 (default: run until interrupted)
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["seconds"], booleans: [])
        let seconds = try a.number("seconds", in: .seconds())
        let registry = try CLI.registry()
        // Every backend that can watch, available or not: a backend with no device yet (V4L2
        // before the first webcam is plugged) is exactly what a hot-plug watch is for.
        // Each backend not watched is named with why (not in this build or CAMHAL_BACKENDS, no
        // hot-plug watch, or one that could not start: an inotify limit), so a plug that prints
        // nothing is never a mystery.
        var watches: [any DeviceWatch] = [], watched: [String] = [], notWatched: [String] = []
        for entry in registry.ordered {
            guard let backend = entry.backend else {
                notWatched.append("\(entry.identifier) (not available in this process)")
                continue
            }
            let name = backend.identifier
            let watch = backend.watchDevices { event in
                switch event {
                case .added(let d): printNow("added   \(name):\(d.id) '\(d.name)'")
                case .removed(let id): printNow("removed \(name):\(id)")
                }
            }
            if let watch {
                watches.append(watch)
                watched.append(name)
            } else if case .unavailable(let reason) = backend.availability() {
                notWatched.append("\(name) (unavailable: \(reason))")
            } else {
                notWatched.append("\(name) (it reports no hot-plug, or its watch could not start)")
            }
        }
        if !notWatched.isEmpty { printError("camhal watch: not watching \(notWatched.joined(separator: "; "))") }
        if watches.isEmpty {
            printError("camhal watch: no available backend can watch for devices")
            return 1
        }
        printNow("watching \(watched.joined(separator: ", ")); Ctrl-C to stop")
        try await Seconds.sleep(seconds ?? Seconds.maximum)
        for w in watches { w.cancel() }
        return 0
    }
}
