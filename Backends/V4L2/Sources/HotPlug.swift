import CamHAL
import Dispatch
import FoundationEssentials
import CV4L2
import Glibc

/// Entries appearing in and disappearing from one directory, through inotify (no udevd needed:
/// devtmpfs creates and removes `/dev/video*` itself). Reports on its own thread until cancelled.
package final class DirectoryWatch: Sendable {
    package enum Change: Sendable, Hashable {
        case created(String)
        case deleted(String)
    }

    private let inotifyFD: Int32
    private let wakeFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let cancelled = Locked(false)

    /// Starts watching `directory`; throws when inotify or the directory is unavailable.
    package init(directory: String, handler: @escaping @Sendable (Change) -> Void) throws(V4L2Errno) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw V4L2Errno(errno, "inotify_init1") }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            let e = errno
            Glibc.close(fd)
            throw V4L2Errno(e, "inotify_add_watch \(directory)")
        }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            let e = errno
            Glibc.close(fd)
            throw V4L2Errno(e, "eventfd")
        }
        inotifyFD = fd
        wakeFD = wake
        startThread(name: "camhal.hotplug") { [fd, wake, finished] in
            defer { finished.signal() }
            Self.run(inotifyFD: fd, wakeFD: wake, handler: handler)
        }
    }

    private static func run(inotifyFD: Int32, wakeFD: Int32, handler: @Sendable (Change) -> Void) {
        var pfd = [pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let r = poll(&pfd, 2, -1)
            if r < 0 && errno == EINTR { continue }
            if r < 0 || pfd[1].revents != 0 { return }
            let n = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress, $0.count) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard n > 0 else { return }
            for change in parse(buffer[..<n]) { handler(change) }
        }
    }

    /// The changes in a buffer of `struct inotify_event` records (16-byte header, then `len`
    /// bytes of NUL-padded name).
    static func parse(_ bytes: ArraySlice<UInt8>) -> [Change] {
        var changes: [Change] = []
        var i = bytes.startIndex
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        while i + 16 <= bytes.endIndex {
            let mask = u32(i + 4), len = Int(u32(i + 12))
            guard i + 16 + len <= bytes.endIndex else { break }
            let name = String(decoding: bytes[(i + 16)..<(i + 16 + len)].prefix { $0 != 0 }, as: UTF8.self)
            if !name.isEmpty {
                if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { changes.append(.created(name)) }
                if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { changes.append(.deleted(name)) }
            }
            i += 16 + len
        }
        return changes
    }

    /// Stops the watch and waits for its thread (idempotent).
    package func cancel() {
        guard cancelled.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        finished.wait()
        Glibc.close(inotifyFD)
        Glibc.close(wakeFD)
    }

    deinit { cancel() }
}

/// V4L2 hot-plug (D3) without udevd: `/dev/video*` nodes appearing and disappearing.
///
/// A node that appears is described as `devices()` would (one device per camera input; metadata
/// and output nodes give none). A fresh node may not open yet (udev still fixing its mode, the
/// driver still registering), so it is retried for `settleSeconds`. A node that disappears can no
/// longer be read: the IDs it had are remembered from the listing at start and from `added`.
final class V4L2DeviceWatch: DeviceWatch, Sendable {
    typealias Describe = @Sendable (_ nodeName: String) -> [DeviceDescriptor]

    private let queue = DispatchQueue(label: "camhal.v4l2.hotplug.describe")
    private let known: Locked<[String: [String]]>
    private let generation = Locked<[String: Int]>([:])
    private let watch: DirectoryWatch
    private let cancelled = Locked(false)

    /// - Parameters:
    ///   - directory: where nodes appear (`/dev`).
    ///   - initial: the devices listed now, by node name (so their removal names their IDs).
    ///   - settleSeconds: how long a new node that does not open yet is retried.
    ///   - describe: the devices of one node, empty when it is no camera or cannot be opened yet.
    init(
        directory: String, initial: [String: [String]], settleSeconds: Double = 2,
        describe: @escaping Describe, handler: @escaping @Sendable (DeviceEvent) -> Void
    ) throws(V4L2Errno) {
        known = Locked(initial)
        let queue = self.queue, known = self.known, generation = self.generation, cancelled = self.cancelled
        watch = try DirectoryWatch(directory: directory) { change in
            switch change {
            case .created(let name):
                guard Self.isVideoNode(name) else { return }
                let gen = generation.withLock { g -> Int in g[name, default: 0] += 1; return g[name]! }
                let deadline = ContinuousClock.now + .seconds(settleSeconds)
                @Sendable func attempt() {
                    // A newer event for the same name (deleted, created again) supersedes this one.
                    guard !cancelled.value, generation.value[name] == gen,
                          access("\(directory)/\(name)", F_OK) == 0 else { return }
                    let devices = describe(name)
                    if devices.isEmpty {
                        if ContinuousClock.now < deadline { queue.asyncAfter(deadline: .now() + 0.05) { attempt() } }
                        return
                    }
                    known.withLock { $0[name] = devices.map(\.id) }
                    for d in devices { handler(.added(d)) }
                }
                queue.async { attempt() }
            case .deleted(let name):
                guard Self.isVideoNode(name) else { return }
                queue.async {
                    generation.withLock { $0[name, default: 0] += 1 }
                    guard !cancelled.value else { return }
                    let ids = known.withLock { k -> [String] in defer { k[name] = nil }; return k[name] ?? [] }
                    for id in ids { handler(.removed(id: id)) }
                }
            }
        }
    }

    /// `video` followed by digits: a V4L2 video node's kernel name.
    static func isVideoNode(_ name: String) -> Bool {
        name.hasPrefix("video") && name.count > 5 && name.dropFirst(5).allSatisfy(\.isASCIIDigit)
    }

    func cancel() {
        guard cancelled.withLock({ c -> Bool in defer { c = true }; return !c }) else { return }
        watch.cancel()
        queue.sync {}
    }

    deinit { cancel() }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
