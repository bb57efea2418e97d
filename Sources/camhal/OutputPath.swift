import CamHAL
import CamHALMedia
import FoundationEssentials

/// The output policy of every verb that writes a file (`capture -o`, `record -o`,
/// `conformance --junit`): `AtomicFile`'s (a new path or a regular file is written, a symbolic link
/// writes its target, devices, FIFOs, sockets, directories and dangling links are refused), plus
/// ffmpeg's convention for an existing file: refused unless `--overwrite` (`-y`) is given.
enum OutputPath {
    /// The boolean flag (with its short form `-y`) that lets a verb replace an existing file.
    static let overwriteFlag = "overwrite"

    /// The usage lines every writing verb prints for its output path.
    static let usage = """
          --overwrite, -y    replace an existing file (atomically, keeping its permissions); without
                             it an existing file is refused. A symbolic link writes its target; a
                             device, FIFO, socket, directory or dangling link is refused
        """

    /// `usage` for a recording, which is written in place as it goes (so one cut short is a
    /// playable file at its path): an existing file is truncated and rewritten, not swapped.
    static let recordingUsage = """
          --overwrite, -y    replace an existing file (rewritten in place from the first frame);
                             without it an existing file is refused. A symbolic link writes its
                             target; a device, FIFO, socket, directory or dangling link is refused
        """

    /// Checks `path` for writing before any camera work. Errors name the path (absolute) and
    /// what is there, and say how to replace an existing file. Paths stay text here, not `URL`:
    /// `PathText` says what a first `URL` costs a one-shot command.
    static func check(_ path: String, _ a: Arguments) throws {
        try reworded { () throws(CameraError) in try AtomicFile.checkWritable(path: path, existing: existing(a)) }
    }

    /// Writes `bytes` to `path` atomically under the policy `a` asks for.
    static func write(_ bytes: [UInt8], to path: String, _ a: Arguments) throws {
        try reworded { () throws(CameraError) in try AtomicFile.write(bytes, toPath: path, existing: existing(a)) }
    }

    /// `body`'s "already exists" error saying how to replace the file.
    private static func reworded(_ body: () throws(CameraError) -> Void) throws {
        do {
            try body()
        } catch .invalidArgument(_, let value, let reason) where reason == "already exists" {
            throw CameraError.invalidArgument(name: "path", value: value, reason: "already exists; pass --overwrite (-y) to replace it")
        }
    }

    /// The existing-file policy `a` asks for.
    static func existing(_ a: Arguments) -> AtomicFile.Existing {
        a.has(overwriteFlag) ? .replace : .refuse
    }
}
