import CV4L2
import Glibc

/// An owned file descriptor of a V4L2 or media-controller node. Not thread-safe by itself; the
/// owner serialises close against other calls.
// @unchecked: a C file descriptor whose owner serialises close() against other calls (see above).
package final class DeviceFD: @unchecked Sendable {
    public let path: String
    public private(set) var raw: Int32

    /// Opens `path` read-write, non-blocking and close-on-exec.
    public init(path: String) throws(V4L2Errno) {
        self.path = path
        var fd: Int32
        repeat { fd = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw V4L2Errno(errno, "open \(path)") }
        raw = fd
    }

    /// Issues `request` with `arg`, retrying on EINTR. `name` names the request in errors.
    @discardableResult
    public func ioctl<T>(_ request: UInt, _ arg: inout T, _ name: @autoclosure () -> String) throws(V4L2Errno) -> Int32 {
        guard raw >= 0 else { throw V4L2Errno(EBADF, "\(name()) on closed \(path)") }
        var r: Int32
        repeat {
            r = withUnsafeMutablePointer(to: &arg) { Glibc.ioctl(raw, request, UnsafeMutableRawPointer($0)) }
        } while r < 0 && errno == EINTR
        guard r >= 0 else { throw V4L2Errno(errno, "\(name()) on \(path)") }
        return r
    }

    /// Whether the descriptor is still open.
    public var isOpen: Bool { raw >= 0 }

    /// Closes the descriptor (idempotent).
    public func close() {
        if raw >= 0 { _ = Glibc.close(raw) }
        raw = -1
    }

    deinit { close() }
}

/// Copies a fixed-size C char array (imported as a tuple) into a String.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
