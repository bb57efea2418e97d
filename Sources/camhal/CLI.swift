import CamHAL
import CamHALBackends
import FoundationEssentials

/// One `camhal` verb: its name, one-line summary, usage text and entry point.
struct Verb: Sendable {
    let name: String
    let summary: String
    let usage: String
    /// Runs the verb with its own arguments; returns the process exit status.
    let run: @Sendable ([String]) async throws -> Int32
}

/// A usage error: printed as one line naming the bad flag or value, then the usage; exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The one option parser every verb uses: `--flag value`, `--flag=value`, boolean `--flag`, and
/// typed readers (`number`, `integer`, `size` in NumericOptions.swift, `fourCC`) whose errors are
/// `UsageError`s naming the option and the bad value. No verb takes positional arguments.
struct Arguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []

    /// Parses `args` accepting only the named options; anything else is a `UsageError` naming it.
    init(_ args: [String], options: Set<String>, booleans: Set<String>) throws {
        var i = 0
        while i < args.count {
            let a = args[i]
            if a.hasPrefix("--") {
                var name = String(a.dropFirst(2))
                var inline: String?
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                if booleans.contains(name) {
                    guard inline == nil else { throw UsageError("flag --\(name) takes no value") }
                    flags.insert(name)
                } else if options.contains(name) {
                    if let inline {
                        try set(name, inline)
                    } else {
                        i += 1
                        guard i < args.count else { throw UsageError("option --\(name) needs a value") }
                        try set(name, args[i])
                    }
                } else {
                    throw UsageError("unknown option '\(a)'")
                }
            } else if a.hasPrefix("-") && a.count > 1 && Double(a) == nil {
                if a == "-o", options.contains("output") {
                    i += 1
                    guard i < args.count else { throw UsageError("option -o needs a value") }
                    try set("output", args[i])
                } else if a == "-y", booleans.contains("overwrite") {
                    flags.insert("overwrite")
                } else {
                    throw UsageError("unknown option '\(a)'")
                }
            } else {
                throw UsageError("unexpected argument '\(a)'")
            }
            i += 1
        }
    }

    /// Records option `name`'s value; a second one is refused: "last one wins" dropped the first
    /// unchecked (`--seconds abc --seconds 1` ran), and which one was meant is the user's to say.
    private mutating func set(_ name: String, _ value: String) throws {
        if let first = values[name] {
            throw UsageError("option --\(name) given twice ('\(first)' and '\(value)'); give it once")
        }
        values[name] = value
    }

    subscript(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// A pixel format FourCC option, or a `UsageError` naming the bad value. Codes as `camhal probe`
    /// prints them: shorter ones are padded with spaces (`Y16` means `Y16 `), and `XR15-BE` is the
    /// big-endian variant.
    func fourCC(_ name: String) throws -> PixelFormat? {
        guard let v = values[name] else { return nil }
        guard let p = Self.parseFourCC(v) else {
            throw UsageError("option --\(name): '\(v)' is not a FourCC (1 to 4 ASCII characters, optionally -BE, e.g. YUYV, NV12, MJPG, Y16, XR15-BE)")
        }
        return p
    }

    /// The CLI's one FourCC parser: `PixelFormat(fourCC:)` (1 to 4 printable ASCII characters,
    /// padded with spaces, optionally `-BE`).
    static func parseFourCC(_ text: String) -> PixelFormat? { PixelFormat(fourCC: text) }
}

extension CameraError {
    /// Errors that mean the command line (or `CAMHAL_BACKENDS`) named something that cannot exist
    /// in any run: an unknown backend, or a `CAMHAL_BACKENDS` that names none. Exit status 2.
    var isUsageError: Bool {
        switch self {
        case .unknownBackend: return true
        case .invalidArgument(let name, _, _): return name == "CAMHAL_BACKENDS"
        default: return false
        }
    }
}

enum CLI {
    static let overview = """
        camhal \(version): one camera API for Linux, over V4L2, libcamera, PipeWire, GStreamer and a
        virtual camera.

        usage: camhal <verb> [options]    (camhal <verb> --help for the verb's options)
               camhal --version
        exit status: 0 success, 1 the camera work failed, 2 bad usage (unknown verb, option,
                     backend or value)
        """

    /// When set, a verb stops where it would first reach for a camera (the registry, a source, an
    /// image): `CLI.main` then runs the command line's parsing and checks alone. The fuzz target
    /// over every verb's arguments (Fuzz/Sources/FuzzCLI) sets it.
    @TaskLocal static var parseOnly = false

    /// What a verb throws under `parseOnly` where it would open a device.
    struct ParseOnlyStop: Error {}

    /// Throws `ParseOnlyStop` under `parseOnly`: called before any device, source or file is opened.
    static func stopIfParsingOnly() throws {
        if parseOnly { throw ParseOnlyStop() }
    }

    /// The registry of every backend, or a usage error when `CAMHAL_BACKENDS` names no registered
    /// backend (so a typo there is reported, not mistaken for "no camera").
    static func registry() throws -> BackendRegistry {
        try stopIfParsingOnly()
        let registry = Backends.registry()
        if let problem = registry.preferenceProblem { throw problem }
        return registry
    }

    /// JSON as the CLI prints it: sorted keys, paths unescaped (`/dev/video0`, not `\/dev\/video0`).
    static func json<T: Encodable>(_ value: T, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func main(arguments: [String], verbs: [Verb]) async -> Int32 {
        if arguments == ["--version"] {
            print("camhal \(version)")
            return 0
        }
        guard let first = arguments.first, first != "--help", first != "-h", first != "help" else {
            print(overview)
            print("\nverbs:")
            let width = verbs.map(\.name.count).max() ?? 0
            for v in verbs { print("  \(padded(v.name, to: width))  \(v.summary)") }
            return arguments.isEmpty ? 2 : 0
        }
        guard let verb = verbs.first(where: { $0.name == first }) else {
            printError("camhal: unknown verb '\(first)'")
            printError("usage: camhal <verb> [options]; verbs: \(verbs.map(\.name).joined(separator: ", "))")
            return 2
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(verb.usage)
            return 0
        }
        do {
            return try await verb.run(rest)
        } catch let e as UsageError {
            printError("camhal \(verb.name): \(e.message)")
            printError(verb.usage)
            return 2
        } catch let e as CameraError where e.isUsageError {
            printError("camhal \(verb.name): \(e)")
            return 2
        } catch let e as CameraError {
            printError("camhal \(verb.name): \(e)")
            return 1
        } catch {
            printError("camhal \(verb.name): \(error)")
            return 1
        }
    }
}

/// An unknown device ID, with the devices a backend lists but this user cannot open: the ID
/// asked for may be one of them (a V4L2 node the user may not open cannot say its bus or input,
/// so it is listed under its node name). Exit status 1: the remedy is access, not the command.
struct UnknownDeviceError: Error, CustomStringConvertible {
    let error: CameraError
    let unusable: [String]
    var description: String {
        "\(error); listed but not usable by this user: " + unusable.joined(separator: "; ")
    }
}

extension CLI {
    /// `error` with the unusable devices of `backend` (every available backend when nil) when it
    /// is an unknown device and some device carries an access error (`details["error"]`, set by
    /// the V4L2 backend on a node it cannot open); else `error` itself.
    static func withUnusableDevices(_ error: CameraError, registry: BackendRegistry, backend: String?) -> any Error {
        guard case .unknownDevice = error else { return error }
        let backends: [any CameraBackend]
        if let backend {
            backends = (try? registry.backend(backend)).map { [$0] } ?? []
        } else {
            backends = registry.ordered.compactMap(\.backend).filter { $0.availability().isAvailable }
        }
        let unusable = backends.flatMap { b in
            ((try? b.devices()) ?? []).compactMap { d in d.details["error"].map { "\(b.identifier):\(d.id) (\($0))" } }
        }
        return unusable.isEmpty ? error : UnknownDeviceError(error: error, unusable: unusable)
    }
}

/// Writes a line to standard output at once (unbuffered), for progress and event lines.
func printNow(_ s: String) {
    StandardOutput.write(Array((s + "\n").utf8))
}
