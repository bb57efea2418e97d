import CamHAL
import Foundation

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

/// Minimal flag parsing shared by every verb: `--flag value`, `--flag=value`, and boolean `--flag`.
struct Arguments {
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positional: [String] = []

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
                        values[name] = inline
                    } else {
                        i += 1
                        guard i < args.count else { throw UsageError("option --\(name) needs a value") }
                        values[name] = args[i]
                    }
                } else {
                    throw UsageError("unknown option '\(a)'")
                }
            } else if a.hasPrefix("-") && a.count > 1 && Double(a) == nil {
                if a == "-o", options.contains("output") {
                    i += 1
                    guard i < args.count else { throw UsageError("option -o needs a value") }
                    values["output"] = args[i]
                } else {
                    throw UsageError("unknown option '\(a)'")
                }
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    subscript(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// A number option, or a `UsageError` naming the bad value.
    func double(_ name: String) throws -> Double? {
        guard let v = values[name] else { return nil }
        guard let d = Double(v), d.isFinite else { throw UsageError("option --\(name): '\(v)' is not a number") }
        return d
    }

    func int(_ name: String) throws -> Int? {
        guard let v = values[name] else { return nil }
        guard let d = Int(v) else { throw UsageError("option --\(name): '\(v)' is not an integer") }
        return d
    }
}

enum CLI {
    static let overview = """
        camhal: one camera API for Linux, over V4L2, libcamera, GStreamer and a virtual camera.

        usage: camhal <verb> [options]    (camhal <verb> --help for the verb's options)
        """

    static func main(arguments: [String], verbs: [Verb]) async -> Int32 {
        guard let first = arguments.first, first != "--help", first != "-h", first != "help" else {
            print(overview)
            print("\nverbs:")
            for v in verbs { print("  \(v.name.padding(toLength: 12, withPad: " ", startingAt: 0)) \(v.summary)") }
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
        } catch let e as CameraError {
            printError("camhal \(verb.name): \(e)")
            return 1
        } catch {
            printError("camhal \(verb.name): \(error)")
            return 1
        }
    }
}

/// Writes a line to standard error.
func printError(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// Writes a line to standard output at once (unbuffered), for progress and event lines.
func printNow(_ s: String) {
    FileHandle.standardOutput.write(Data((s + "\n").utf8))
}
