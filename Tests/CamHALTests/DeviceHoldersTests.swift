import Foundation
import Glibc
import Testing
@testable import CamHAL

/// "Who holds my camera": the /proc scan behind a busy error's holders and `camhal probe`'s
/// "in use by". The host has no camera, so a regular file stands in for the device node (the scan
/// compares device numbers for nodes and inodes for files, through the same /proc links).
@Suite("Device holders")
struct DeviceHoldersTests {
    private func temporaryFile(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-holders-\(getpid())-\(name)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        return path
    }

    // A second process holding the node is found by PID and name, as fuser finds it.
    @Test func childProcessHoldingTheFileIsNamed() async throws {
        let path = try temporaryFile("child")
        defer { unlink(path) }
        let handle = try #require(FileHandle(forReadingAtPath: path))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        child.standardInput = handle
        try child.run()
        try handle.close()
        defer {
            // SIGKILL: the test runner's children may have SIGTERM blocked.
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            child.waitUntilExit()
        }
        let pid = child.processIdentifier
        // Await the state: the child has exec'd sleep (its name) with the file on stdin.
        let deadline = ContinuousClock.now + .seconds(10)
        var scan = DeviceHolders.scan(path: path)
        while !scan.holders.contains(where: { $0.pid == pid && $0.name == "sleep" }), ContinuousClock.now < deadline {
            await Task.yield()
            scan = DeviceHolders.scan(path: path)
        }
        let holder = try #require(scan.holders.first { $0.pid == pid })
        #expect(holder.name == "sleep")
        #expect(!holder.isCurrentProcess)
        #expect(!scan.holders.contains { $0.pid == getpid() }, "this process closed its descriptor")
        #expect(scan.description.contains("\(pid) (sleep)"))
        kill(pid, SIGKILL)
        child.waitUntilExit()
        #expect(!DeviceHolders.scan(path: path).holders.contains { $0.pid == pid }, "a process that exited holds nothing")
    }

    // The calling process is listed as "this process", except for the descriptor it names
    // (its own just-opened descriptor that came back busy).
    @Test func currentProcessIsMarkedAndItsOwnDescriptorCanBeLeftOut() throws {
        let path = try temporaryFile("self")
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        let me = try #require(DeviceHolders.scan(path: path).holders.first { $0.pid == getpid() })
        #expect(me.isCurrentProcess)
        #expect(me.description.hasSuffix(", this process)"))
        #expect(!DeviceHolders.scan(path: path, ignoring: fd).holders.contains { $0.pid == getpid() })
        let second = open(path, O_RDONLY | O_CLOEXEC)
        try #require(second >= 0)
        defer { close(second) }
        #expect(DeviceHolders.scan(path: path, ignoring: fd).holders.contains { $0.pid == getpid() },
                "a second descriptor of this process still holds it")
    }

    // A /proc tree read from another root (a fake one here): links are followed, names read
    // from comm, entries that are not processes skipped.
    @Test func scansTheGivenProcTree() throws {
        let path = try temporaryFile("fake")
        defer { unlink(path) }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-fakeproc-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(root)/4242/fd", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(root)/77/fd", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(root)/self/fd", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(root)/4242/fd/5", withDestinationPath: path)
        try fm.createSymbolicLink(atPath: "\(root)/77/fd/1", withDestinationPath: "/dev/null")
        try fm.createSymbolicLink(atPath: "\(root)/self/fd/5", withDestinationPath: path)
        try Data("firefox\n".utf8).write(to: URL(fileURLWithPath: "\(root)/4242/comm"))
        let scan = DeviceHolders.scan(path: path, proc: root)
        #expect(scan.holders == [DeviceHolder(pid: 4242, name: "firefox", isCurrentProcess: false)])
        #expect(scan.description == "in use by 4242 (firefox)")
        #expect(DeviceHolders.scan(path: "\(root)/missing", proc: root).holders.isEmpty)
    }

    // What a busy error says when /proc shows nobody (another user's process) or nothing.
    @Test func descriptionsWithoutReadableHolders() {
        #expect(DeviceHolders(holders: [], unreadableProcesses: 3).description.hasPrefix("in use by another user's process"))
        #expect(DeviceHolders(holders: [], unreadableProcesses: 0).description == "not open in any process")
    }
}
