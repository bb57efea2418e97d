import FoundationEssentials
import Glibc

/// A process that has a device node open, found the way `fuser` finds it: through the links in
/// `/proc/<pid>/fd`.
public struct DeviceHolder: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The process ID.
    public var pid: Int32
    /// The process name (`/proc/<pid>/comm`), e.g. `firefox`; empty when it could not be read.
    public var name: String
    /// Whether the holder is the calling process itself (a second session on the same device).
    public var isCurrentProcess: Bool

    /// A holder as the scan found it.
    public init(pid: Int32, name: String, isCurrentProcess: Bool) {
        self.pid = pid
        self.name = name
        self.isCurrentProcess = isCurrentProcess
    }

    /// `1234 (firefox)`, or `1234 (camhal, this process)`.
    public var description: String {
        let label = name.isEmpty ? "?" : name
        return isCurrentProcess ? "\(pid) (\(label), this process)" : "\(pid) (\(label))"
    }
}

/// Who has a device node open: every process whose open file descriptors this user may read,
/// and how many processes could not be looked at (other users' processes: `/proc` hides their
/// descriptors unless the caller is root).
public struct DeviceHolders: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The processes found holding the node, by PID.
    public var holders: [DeviceHolder]
    /// Processes whose descriptors `/proc` did not show (another user's; processes that exited
    /// during the scan are not counted): when the node is busy and `holders` is empty, one of
    /// these holds it.
    public var unreadableProcesses: Int

    /// A scan result.
    public init(holders: [DeviceHolder], unreadableProcesses: Int) {
        self.holders = holders
        self.unreadableProcesses = unreadableProcesses
    }

    /// `in use by 1234 (firefox), 99 (obs)`; `in use by another user's process` when no
    /// readable process holds it but some processes could not be read; `not open in any
    /// process` otherwise.
    public var description: String {
        if !holders.isEmpty {
            return "in use by " + holders.map(\.description).joined(separator: ", ")
        }
        if unreadableProcesses > 0 {
            return "in use by another user's process (no process of this user has it open; /proc hides the descriptors of \(unreadableProcesses) other processes)"
        }
        return "not open in any process"
    }

    /// Every process with `path` open (a device node compares by device number, any other file
    /// by inode), as `fuser path` lists them. `ignoring` is one descriptor of the calling process
    /// left out: the caller's own, just-opened descriptor of the node that came back busy.
    /// Processes whose descriptors cannot be read are counted, not listed. An unreadable `path`
    /// gives an empty result.
    public static func scan(path: String, ignoring: Int32? = nil, proc: String = "/proc") -> DeviceHolders {
        var target = stat()
        guard stat(path, &target) == 0 else { return DeviceHolders(holders: [], unreadableProcesses: 0) }
        let isDevice = (target.st_mode & S_IFMT) == S_IFCHR || (target.st_mode & S_IFMT) == S_IFBLK
        func matches(_ s: stat) -> Bool {
            guard (s.st_mode & S_IFMT) == (target.st_mode & S_IFMT) else { return false }
            return isDevice ? s.st_rdev == target.st_rdev : (s.st_dev == target.st_dev && s.st_ino == target.st_ino)
        }
        let me = getpid()
        var holders: [DeviceHolder] = []
        var unreadable = 0
        for pidName in directory(proc) {
            guard let pid = Int32(pidName), pid > 0 else { continue }
            let fdDir = "\(proc)/\(pidName)/fd"
            guard let dir = opendir(fdDir) else {
                // EACCES: another user's process; ENOENT: it exited during the scan.
                if errno == EACCES || errno == EPERM { unreadable += 1 }
                continue
            }
            var holds = false
            while let entry = readdir(dir) {
                let fdName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard let fd = Int32(fdName) else { continue }
                if pid == me, fd == ignoring { continue }
                var s = stat()
                if stat("\(fdDir)/\(fdName)", &s) == 0, matches(s) {
                    holds = true
                    break
                }
            }
            closedir(dir)
            if holds {
                holders.append(DeviceHolder(pid: pid, name: processName(pid, proc: proc), isCurrentProcess: pid == me))
            }
        }
        holders.sort { $0.pid < $1.pid }
        return DeviceHolders(holders: holders, unreadableProcesses: unreadable)
    }

    /// `/proc/<pid>/comm` without its newline; empty when unreadable.
    static func processName(_ pid: Int32, proc: String) -> String {
        let fd = open("\(proc)/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return "" }
        var bytes = buffer[..<n]
        while let last = bytes.last, last == 10 || last == 0 { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func directory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            })
        }
        return names
    }
}
