import CamHAL
import CamHALBackends
import FoundationEssentials

/// `camhal controls`: a device's raw controls in `v4l2-ctl -L`'s layout, and `--set name=value`.
enum ControlsCommand {
    static let verb = Verb(
        name: "controls", summary: "list a device's raw controls (as v4l2-ctl -L) and set them",
        usage: """
            usage: camhal controls [--backend B] [--device ID] [--set NAME=VALUE ...] [--json] [--watch SECONDS]
              --backend B, --device ID   the device, as `camhal probe` lists it (default: the first)
              --set NAME=VALUE   set a control (repeatable), then list; NAME as listed (brightness),
                                 VALUE an integer (decimal, or 0x.. hex as v4l2-ctl takes), true/false,
                                 a menu entry's index or name, or a string control's text.
                                 Every --set is checked before any is written (a bad one writes none).
                                 An integer outside the control's min...max is clamped to it and
                                 rounded to its step (the V4L2 core's rule, applied by CamHAL: a UVC
                                 control below its minimum becomes the minimum), and the clamping is
                                 reported; a value past 64 bits is out of range. A bitmask may set
                                 only the bits of its mask (others are refused, not dropped); a menu
                                 value must be an entry. Refused with exit 2: unknown, read-only and
                                 session-owned controls (marked [owned by ...] in the listing: set
                                 them through that API) and bad values, each error naming the value
                                 as typed. Exit 1: a control that is inactive (under automatic
                                 control, e.g. gain while gain_automatic=1; the error names what
                                 drives it) or that the device refuses; the --set before it stay set
              --json             the controls as one JSON document
              --watch SECONDS    then print every change (this or another process) for SECONDS (0...1e9);
                                 exit 1 when the device stops reporting changes before then (unplugged)
            The listing matches `v4l2-ctl -L` on a V4L2 device: classes, names, IDs, types, ranges,
            defaults, values, flags and menus; CamHAL adds [owned by SETTER] after a control that
            a session setter drives.
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
        try ControlAssignments.apply(sets, to: controls) { printError($0) }
        let list = try controls.list()
        if a.has("json") {
            print(try CLI.json(list, pretty: true))
        } else {
            StandardOutput.write(Array(listing(list).utf8))
        }
        if let seconds = watchSeconds {
            guard !list.isEmpty else {
                printError("camhal controls: \(camera.device.id) has no controls: nothing to watch")
                return 0
            }
            if !controls.reportsExternalChanges {
                printError("camhal controls: note: \(camera.device.id) (\(camera.backend.identifier)) reports no changes made by other "
                    + "processes; only this process's own would show")
            }
            let stream = controls.changes()
            // The watch window, or the end of the changes first: a device that cannot report them
            // (or stopped) ends the stream at once, which is a failure to say, not a quiet window.
            let endedEarly = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try? await Seconds.sleep(seconds)
                    return false
                }
                group.addTask {
                    for await change in stream { printNow("changed \(change)") }
                    return !Task.isCancelled
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if endedEarly {
                throw CameraError.streamFailed("\(camera.device.id): its controls stopped reporting changes before the \(decimal(seconds, places: 1)) s watch ended (the device cannot report them, or is gone)")
            }
        }
        return 0
    }

    /// `DeviceControls.listing` (v4l2-ctl's layout) with `[owned by SETTER]` after each control a
    /// session setter drives, so the listing says which controls `--set` refuses and why.
    static func listing(_ controls: [DeviceControl]) -> String {
        let owners = Dictionary(controls.compactMap { c in c.ownedBy.map { (c.name, $0) } }, uniquingKeysWith: { a, _ in a })
        guard !owners.isEmpty else { return DeviceControls.listing(controls) }
        return DeviceControls.listing(controls).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            // A control's line starts with its name, right-aligned (menu entries start with a tab).
            guard !line.hasPrefix("\t"), let name = line.split(separator: " ").first, let owner = owners[String(name)] else { return String(line) }
            return "\(line) [owned by \(owner)]"
        }.joined(separator: "\n")
    }
}
