import CamHAL
import CamHALBackends
import Foundation

/// `camhal controls`: a device's raw controls in `v4l2-ctl -L`'s layout, and `--set name=value`.
enum ControlsCommand {
    static let verb = Verb(
        name: "controls", summary: "list a device's raw controls (as v4l2-ctl -L) and set them",
        usage: """
            usage: camhal controls [--backend B] [--device ID] [--set NAME=VALUE ...] [--json] [--watch SECONDS]
              --backend B, --device ID   the device, as `camhal probe` lists it (default: the first)
              --set NAME=VALUE   set a control (repeatable), then list; NAME as listed (brightness),
                                 VALUE an integer (0x.. hex), true/false, a menu entry's index or name,
                                 or a string control's text. Values are clamped and stepped as the
                                 driver does; read-only and unknown controls are refused
              --json             the controls as one JSON document
              --watch SECONDS    then print every change (this or another process) for SECONDS (0...1e9)
            The listing matches `v4l2-ctl -L` on a V4L2 device: classes, names, IDs, types, ranges,
            defaults, values, flags and menus.
            """,
        run: run)

    static func run(_ args: [String]) async throws -> Int32 {
        // --set repeats, which the shared parser does not do: take those first.
        var rest: [String] = [], sets: [(String, String)] = []
        var i = 0
        while i < args.count {
            var a = args[i]
            if a == "--set" {
                i += 1
                guard i < args.count else { throw UsageError("option --set needs NAME=VALUE") }
                a = "--set=" + args[i]
            }
            if a.hasPrefix("--set=") {
                let pair = a.dropFirst(6)
                guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                    throw UsageError("option --set: '\(pair)' is not NAME=VALUE")
                }
                sets.append((String(pair[..<eq]), String(pair[pair.index(after: eq)...])))
            } else {
                rest.append(a)
            }
            i += 1
        }
        let a = try Arguments(rest, options: ["backend", "device", "watch"], booleans: ["json"])
        let watchSeconds = try a.number("watch", in: .seconds())
        let camera = try CLI.registry().open(backend: a["backend"], device: a["device"])
        let controls = try camera.backend.deviceControls(for: camera.device)
        for (name, text) in sets {
            let applied = try controls.set(name, text: text)
            printError("\(name) = \(applied)")
        }
        let list = try controls.list()
        if a.has("json") {
            print(try CLI.json(list, pretty: true))
        } else {
            FileHandle.standardOutput.write(Data(DeviceControls.listing(list).utf8))
        }
        if let seconds = watchSeconds {
            let stream = controls.changes()
            let task = Task {
                for await change in stream { printNow("changed \(change)") }
            }
            try? await Seconds.sleep(seconds)
            task.cancel()
        }
        return 0
    }
}
