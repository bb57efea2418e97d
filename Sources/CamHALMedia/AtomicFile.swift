import CamHAL
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Writes files so the final path never holds a partial file: a temporary file in the same
/// directory, write, fsync, rename, fsync the directory.
///
/// The output policy (the same for `capturePhoto(to:)`, `startRecording(to:)` and every `camhal`
/// verb that writes a file):
/// - a new path, or an existing regular file, is written; an existing file is replaced only when
///   `existing` is `.replace`, keeping its permissions (and owner, when the writer may set it);
/// - a symbolic link is followed: its final target is written (atomically, in the target's
///   directory) and the link stays; a dangling link is refused (writing would create a file
///   wherever it points);
/// - anything else at the path (a directory, character or block device, FIFO, socket) is refused
///   with an error naming what it is: writing a device or a pipe is not "saving a file";
/// - a missing or unwritable directory, and a write that fails (a full file system, a file size
///   limit), are errors that leave nothing behind: the temporary file is removed.
public enum AtomicFile {
    /// What to do when the path already holds a regular file.
    public enum Existing: Sendable, Hashable {
        /// Replace it (atomically), keeping its permissions.
        case replace
        /// Refuse with `CameraError.invalidArgument` (`already exists`), as ffmpeg does without `-y`.
        case refuse
    }

    /// Where a write to a path lands: the path itself or a symbolic link's final target, and the
    /// file there now (nil: none yet). `named` is the path as given, made absolute: what errors name.
    struct Target {
        var named: String
        var path: String
        var existing: stat?
    }

    /// The kind of a non-regular file, as an error names it.
    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    static func failure(_ path: String, _ reason: String) -> CameraError {
        .invalidArgument(name: "path", value: path, reason: reason)
    }

    /// The path a file URL names, or `invalidArgument` for any other URL.
    static func filePath(_ url: URL) throws(CameraError) -> String {
        let path = url.path
        guard url.isFileURL, !path.isEmpty else { throw failure(url.absoluteString, "not a file path") }
        return path
    }

    /// Resolves `path` (made absolute, as a file URL is) under the policy above: the path to
    /// write and the file there, or the error.
    static func target(_ given: String, existing policy: Existing) throws(CameraError) -> Target {
        guard !given.isEmpty else { throw failure(given, "not a file path") }
        let path = PathText.absolute(given)
        var st = stat()
        // "name/" names a directory: an existing one is refused below as a directory; a new one
        // would be written as the file "name", which is not what was asked.
        if given.hasSuffix("/"), stat(path, &st) != 0 {
            throw failure(given, "ends with '/', which names a directory; name the file to write")
        }
        var target = path
        if lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            guard let resolved = realpath(path, nil) else {
                let link = linkTarget(path) ?? "?"
                if errno == ELOOP { throw failure(path, "is a symbolic link to \(link) in a loop of links (refused: name the file to create)") }
                throw failure(path, "is a symbolic link to \(link), which does not exist (refused: name the file to create)")
            }
            target = String(cString: resolved)
            free(resolved)
        }
        var found: stat?
        if stat(target, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFREG else {
                throw failure(path, "is \(kind(st.st_mode))\(target == path ? "" : " (\(target))"); only a regular file is written")
            }
            if policy == .refuse { throw failure(path, "already exists") }
            found = st
        } else if errno != ENOENT {
            throw failure(path, String(cString: strerror(errno)))
        }
        let dir = PathText.directory(of: target)
        var dirStat = stat()
        guard stat(dir, &dirStat) == 0, dirStat.st_mode & S_IFMT == S_IFDIR else {
            throw failure(path, "directory \(dir) does not exist")
        }
        guard access(dir, W_OK | X_OK) == 0 else {
            throw failure(path, "directory \(dir) is not writable (\(String(cString: strerror(errno))))")
        }
        if found != nil, access(target, W_OK) != 0 {
            // rename() would still replace it, but the caller asked for a file it cannot write.
            throw failure(path, "existing file is not writable")
        }
        return Target(named: path, path: target, existing: found)
    }

    /// Fails with `invalidArgument` naming the path when a file could not be written there under
    /// the policy above (missing directory, no permission, a device, FIFO, socket or directory at
    /// the path, a dangling symbolic link, an existing file with `existing: .refuse`). Touches nothing.
    public static func checkWritable(_ url: URL, existing: Existing = .replace) throws(CameraError) {
        _ = try target(filePath(url), existing: existing)
    }

    /// `checkWritable(_:existing:)` of a path (relative to the working directory, or absolute).
    package static func checkWritable(path: String, existing: Existing = .replace) throws(CameraError) {
        _ = try target(path, existing: existing)
    }

    /// The process's umask, read without changing it (umask(2) only sets it, which would race
    /// with other threads creating files): the "Umask:" line of /proc/self/status (Linux 4.7 and
    /// later), else the usual 022.
    static func creationMask() -> mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
              let value = line.split(separator: "\t").last.flatMap({ mode_t(trimmingSpaces($0), radix: 8) })
        else { return 0o022 }
        return value & 0o777
    }

    /// What a symbolic link holds, nil when it cannot be read.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes `bytes` to `url` atomically under the policy above (checked again here, so a device
    /// node at the path is refused, never replaced). A new file gets mode 0666 less the umask
    /// (0644 under the usual umask 022), as a file any program creates.
    public static func write(_ bytes: [UInt8], to url: URL, existing: Existing = .replace) throws(CameraError) {
        try write(bytes, toPath: filePath(url), existing: existing)
    }

    /// `write(_:to:existing:)` to a path (relative to the working directory, or absolute).
    package static func write(_ bytes: [UInt8], toPath given: String, existing: Existing = .replace) throws(CameraError) {
        let target = try target(given, existing: existing)
        let path = target.named
        let dir = PathText.directory(of: target.path)
        var template = Array((dir + "/." + PathText.lastComponent(of: target.path) + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw failure(path, "cannot create a temporary file in \(dir): \(String(cString: strerror(errno)))")
        }
        let tmp = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        var failure: String?
        bytes.withUnsafeBytes { buf in
            var done = 0
            while done < buf.count {
                let n = Glibc.write(fd, buf.baseAddress! + done, buf.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = "write: \(String(cString: strerror(errno)))"
                    return
                }
                done += n
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = "fsync: \(String(cString: strerror(errno)))" }
        if let old = target.existing {
            // Owner first (only root may give a file away; otherwise it stays the writer's): a
            // chown after the chmod would clear set-user-ID bits.
            _ = fchown(fd, old.st_uid, old.st_gid)
            fchmod(fd, old.st_mode & 0o7777)
        } else {
            // What open(O_CREAT, 0666) would give: rw for all, less the process's umask (mkstemp
            // made the file 0600).
            fchmod(fd, 0o666 & ~creationMask())
        }
        close(fd)
        if failure == nil { failure = publish(tmp, at: target.path, replacing: existing == .replace) }
        if let failure {
            unlink(tmp)
            throw Self.failure(path, failure)
        }
        let dfd = open(dir, O_RDONLY | O_DIRECTORY)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }

    /// Puts the written temporary file `tmp` at `path`: nil when done, else why not. Without
    /// `replacing`, a file that appeared at the path since the check (another program's, written
    /// meanwhile) is refused, not replaced: a hard link fails on an existing name where rename()
    /// would replace it silently. A file system without hard links (EPERM, as FAT answers) gets
    /// the rename, and keeps that window.
    static func publish(_ tmp: String, at path: String, replacing: Bool) -> String? {
        if !replacing {
            if link(tmp, path) == 0 {
                unlink(tmp)
                return nil
            }
            let e = errno
            if e == EEXIST { return "already exists" }
            guard e == EPERM || e == EOPNOTSUPP else { return "link: \(String(cString: strerror(e)))" }
        }
        return rename(tmp, path) == 0 ? nil : "rename: \(String(cString: strerror(errno)))"
    }
}
