import CamHAL
import CamHALMedia
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

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

    /// What an existing file is refused with: how to replace it.
    private static let alreadyExists = "already exists; pass --overwrite (-y) to replace it"

    /// `body`'s "already exists" error saying how to replace the file.
    private static func reworded(_ body: () throws(CameraError) -> Void) throws {
        do {
            try body()
        } catch .invalidArgument(_, let value, let reason) where reason == "already exists" {
            throw CameraError.invalidArgument(name: "path", value: value, reason: alreadyExists)
        }
    }

    /// A new path a recording claimed (`claim`): the empty file made there, held open so its
    /// inode cannot be reused by another file while the claim lasts.
    struct Claim {
        let path: String
        let fd: Int32

        /// Ends the claim, removing the file while it is still the empty file `claim` made: a
        /// recording that failed before its first byte leaves nothing behind; a file with bytes,
        /// or another file put at the path since, stays.
        func release() {
            defer { close(fd) }
            var at = stat(), mine = stat()
            guard lstat(path, &at) == 0, fstat(fd, &mine) == 0, at.st_dev == mine.st_dev, at.st_ino == mine.st_ino,
                  mine.st_size == 0 else { return }
            unlink(path)
        }
    }

    /// Without --overwrite, claims `path` for a recording at once: an empty file, created only
    /// while nothing is there (O_EXCL). A recording is written in place by its muxer, which opens
    /// the path (truncating it) only when the camera runs, seconds after `check`; a file another
    /// program saved there meanwhile would be lost. With --overwrite, nil: replacing is asked for.
    static func claim(_ path: String, _ a: Arguments) throws -> Claim? {
        guard existing(a) == .refuse else { return nil }
        let fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else {
            let e = errno
            let reason = e == EEXIST ? alreadyExists : String(cString: strerror(e))
            throw CameraError.invalidArgument(name: "path", value: PathText.absolute(path), reason: reason)
        }
        return Claim(path: path, fd: fd)
    }

    /// The existing-file policy `a` asks for.
    static func existing(_ a: Arguments) -> AtomicFile.Existing {
        a.has(overwriteFlag) ? .replace : .refuse
    }
}
