@_spi(Testing) import CamHAL
@_spi(Testing) import CamHALConformance
@_spi(Testing) import CamHALVirtual
import Foundation
import Glibc
import Testing

/// A stand-in for the emulated webcam's control socket (WEBCAM-PROTOCOL.md): answers each line
/// with `answer(command)` and records the commands.
private final class FakeWebcamSocket: @unchecked Sendable {
    let path: String
    let commands = Locked([String]())
    private let listener: Int32
    private let answer: @Sendable (String) -> String

    init(path: String, answer: @escaping @Sendable (String) -> String) throws {
        self.path = path
        self.answer = answer
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard ok == 0, listen(listener, 4) == 0 else { throw FaultInjectionError("fake socket \(path): \(String(cString: strerror(errno)))") }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    private func serve() {
        while true {
            let c = accept(listener, nil, nil)
            guard c >= 0 else { return }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while recv(c, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
            let command = String(decoding: line, as: UTF8.self)
            commands.withLock { $0.append(command) }
            let reply = Array((answer(command) + "\n").utf8)
            _ = reply.withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(c)
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }
}

private func tempDirectory() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-faults-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

@Suite("Fault injectors: emulated webcam socket, virtual camera hooks")
struct FaultInjectorTests {
    @Test func webcamCommandsFollowTheControlProtocol() async throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plugged = Locked(true)
        let server = try FakeWebcamSocket(path: "\(dir)/CAMHAL-c920-p0.sock") { command in
            switch command {
            case "unplug": plugged.set(false); return "ok"
            case "replug": plugged.set(true); return "ok"
            case "status": return "ok \(plugged.value ? "plugged" : "unplugged") frames=12 format=YUYV 640x360"
            case let c where c.hasPrefix("stall "): return "ok"
            default: return "error unknown command '\(command)'"
            }
        }
        defer { server.stop() }
        let injector = WebcamFaultInjector(serial: "CAMHAL-c920-p0", socketDirectory: dir)
        #expect(injector.supports(.unplug) && injector.supports(.stall) && !injector.supports(.interruption))
        #expect(try await injector.isPlugged())
        try await injector.inject(.unplug)
        #expect(try await injector.isPlugged() == false)
        // Cleaning up after a check replugs an unplugged webcam, and says so.
        #expect(await injector.restore())
        #expect(await injector.restore() == false, "a plugged webcam needs no replug")
        try await injector.inject(.stall(seconds: 1.25))
        #expect(server.commands.value == ["status", "unplug", "status", "status", "replug", "status", "stall 1250"])
    }

    @Test func webcamRefusalsAndMissingSocketsAreErrorsThatSayWhy() async throws {
        let dir = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try FakeWebcamSocket(path: "\(dir)/CAMHAL-x-p1.sock") { _ in "error not plugged" }
        defer { server.stop() }
        let injector = WebcamFaultInjector(serial: "CAMHAL-x-p1", socketDirectory: dir)
        await #expect { try await injector.inject(.corrupt(frames: 3)) } throws: { error in
            "\(error)".contains("'corrupt 3' refused: not plugged")
        }
        await #expect { try await injector.inject(.interruption(seconds: 1)) } throws: { error in
            "\(error)".contains("cannot report an interruption")
        }
        let absent = WebcamFaultInjector(serial: "CAMHAL-none-p9", socketDirectory: dir)
        await #expect { try await absent.inject(.unplug) } throws: { error in
            "\(error)".contains("CAMHAL-none-p9.sock")
        }
    }

    @Test func theSerialComesFromTheNearestUSBDeviceAboveTheNode() throws {
        let root = try tempDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let usb = "\(root)/devices/platform/vhci_hcd.0/usb1/1-1"
        let node = "\(usb)/1-1:1.0/video4linux/video0"
        try FileManager.default.createDirectory(atPath: node, withIntermediateDirectories: true)
        try "1e4e\n".write(toFile: "\(usb)/idVendor", atomically: false, encoding: .utf8)
        try "CAMHAL-c920-p0\n".write(toFile: "\(usb)/serial", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(root)/dev/char", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(root)/dev/char/81:0", withDestinationPath: node)
        #expect(WebcamFaultInjector.usbSerial(sysfsDevice: "\(root)/dev/char/81:0") == "CAMHAL-c920-p0")
        // A platform device (vivid) has no USB ancestor, so no webcam socket.
        let vivid = "\(root)/devices/platform/vivid.0/video4linux/video3"
        try FileManager.default.createDirectory(atPath: vivid, withIntermediateDirectories: true)
        #expect(WebcamFaultInjector.usbSerial(sysfsDevice: vivid) == nil)
        // A device without a node path in its details gets no injector.
        let d = DeviceDescriptor(id: "x", name: "x", backend: "v4l2", facing: .external, lenses: DeviceDescriptor.singleLens(facing: .external), formats: [])
        #expect(WebcamFaultInjector.forDevice(d, socketDirectory: root, sysfsRoot: root) == nil)
    }

    @Test func theVirtualCameraInjectsThroughItsHooks() throws {
        let backend = VirtualBackend()
        let device = try backend.device(id: "virtual-back")
        let injector = try #require(FaultInjectors.forDevice(device, of: backend))
        #expect(injector.supports(.interruption) && injector.supports(.unplug) && injector.supports(.replug))
        #expect(!injector.supports(.corrupt))
    }
}
