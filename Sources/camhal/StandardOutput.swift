import CamHAL
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Standard output's faults reach the user: output lost to a full disk behind `>` (or
/// /dev/full, or a closed descriptor) fails the verb with a line naming the cause, as coreutils'
/// tools do, instead of exiting 0 with the listing, the events or the JPEG gone.
enum StandardOutput {
    /// A write to standard output that failed: its errno, not yet reported.
    private static let failure = Locked<Int32?>(nil)

    /// A failed write to standard output, as a verb throws it.
    struct WriteError: Error, CustomStringConvertible {
        /// 0 when the cause is not known (a write `print` buffered failed earlier).
        let code: Int32
        var description: String { "writing standard output" + (code == 0 ? " failed" : ": \(String(cString: strerror(code)))") }
    }

    /// Writes `bytes` at once (after whatever `print` buffered, so lines keep their order); false
    /// when standard output refused them, which `exitStatus` then reports.
    @discardableResult
    static func write(_ bytes: some Collection<UInt8>) -> Bool {
        if fflush(nil) != 0 { record(errno) }
        guard writeAll(1, bytes) else {
            record(errno)
            return false
        }
        return true
    }

    /// Like `write`, for output that is the verb's result (a JPEG on standard output): throws
    /// the failure, which the verb then reports itself.
    static func writeResult(_ bytes: some Collection<UInt8>) throws(WriteError) {
        guard !write(bytes) else { return }
        let code = failure.withLock { f in defer { f = nil }; return f ?? 0 }
        throw WriteError(code: code)
    }

    /// The status to exit with: `status`, or 1 with a line naming the fault when anything written
    /// to standard output was lost (`print`'s buffer is flushed here first).
    static func exitStatus(_ status: Int32) -> Int32 {
        if fflush(nil) != 0 {
            record(errno)
        } else if stdio.map({ ferror($0) != 0 }) == true {
            // A write of `print`'s buffer failed before; its errno is gone. A closed descriptor
            // can still be told.
            record(fcntl(1, F_GETFD) == -1 ? EBADF : 0)
        }
        guard let code = failure.value else { return status }
        printError("camhal: \(WriteError(code: code))")
        return status == 0 ? 1 : status
    }

    /// C's `stdout` stream, which `print` writes through. Read through the loader: Swift 6 refuses
    /// a reference to the C global itself (shared mutable state).
    private static var stdio: UnsafeMutablePointer<FILE>? {
        dlsym(nil, "stdout").flatMap { $0.load(as: UnsafeMutablePointer<FILE>?.self) }
    }

    private static func record(_ code: Int32) {
        failure.withLock { f in if f == nil { f = code } }
    }
}
