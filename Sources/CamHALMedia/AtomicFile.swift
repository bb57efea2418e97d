import CamHAL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes files so the final path never holds a partial file: a temporary file in the same
/// directory, write, fsync, rename, fsync the directory.
public enum AtomicFile {
    /// Fails with `invalidArgument` naming the path when a file could not be created there
    /// (missing directory, no permission, a directory at the path). Touches nothing.
    public static func checkWritable(_ url: URL) throws(CameraError) {
        let path = url.path
        guard url.isFileURL, !path.isEmpty else {
            throw CameraError.invalidArgument(name: "path", value: url.absoluteString, reason: "not a file path")
        }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            throw CameraError.invalidArgument(name: "path", value: path, reason: "is a directory")
        }
        let dir = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw CameraError.invalidArgument(name: "path", value: path, reason: "directory \(dir) does not exist")
        }
        guard access(dir, W_OK | X_OK) == 0 else {
            throw CameraError.invalidArgument(name: "path", value: path, reason: "directory \(dir) is not writable (\(String(cString: strerror(errno))))")
        }
        if FileManager.default.fileExists(atPath: path), access(path, W_OK) != 0 {
            // rename() would still replace it, but the caller asked for a file it cannot write.
            throw CameraError.invalidArgument(name: "path", value: path, reason: "existing file is not writable")
        }
    }

    /// Writes `bytes` to `url` atomically.
    public static func write(_ bytes: [UInt8], to url: URL) throws(CameraError) {
        let path = url.path
        let dir = url.deletingLastPathComponent().path
        var template = Array((dir + "/." + url.lastPathComponent + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw CameraError.invalidArgument(name: "path", value: path, reason: "cannot create a temporary file in \(dir): \(String(cString: strerror(errno)))")
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
        fchmod(fd, 0o644)
        close(fd)
        if failure == nil, rename(tmp, path) != 0 { failure = "rename: \(String(cString: strerror(errno)))" }
        if let failure {
            unlink(tmp)
            throw CameraError.invalidArgument(name: "path", value: path, reason: failure)
        }
        let dfd = open(dir, O_RDONLY | O_DIRECTORY)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }
}
