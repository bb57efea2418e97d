import CamHALTestSupport
import Foundation
import Glibc
import Testing

/// webcam-emu speaking USB/IP to the test instead of to vhci_hcd (`run --usbip-fd`), so orderings
/// that the kernel produces only by a race can be played on any machine, one message at a time.
@Suite("Webcam emulator: USB/IP message ordering")
struct WebcamEmulatorProtocolTests {
    /// An emulator on one end of a socketpair; the test holds the other end.
    private final class Peer {
        let fd: Int32
        let child: SpawnedChild
        let log: String
        let dir: String

        init() async throws {
            let root = packageRoot.path
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-emu-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let build = try await runChild("\(root)/Tests/Webcam/build", [dir])
            guard build.status == 0 else { throw SpawnError(message: "Tests/Webcam/build failed (needs cc and libturbojpeg0-dev, from scripts/bootstrap): \(build)") }
            let emulator = build.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            var sv: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sv) == 0 else { throw SpawnError(message: "socketpair: errno \(errno)") }
            log = "\(dir)/emu.log"
            defer { close(sv[1]) }
            child = try SpawnedChild(
                emulator, ["run", "--profile", "\(root)/Tests/Webcam/profiles/c920.profile", "--port", "0", "--socket-dir", dir, "--usbip-fd", "0"],
                environment: nil, stdin: sv[1], stdout: log, stderr: log)
            fd = sv[0]
        }

        deinit {
            close(fd)
            try? FileManager.default.removeItem(atPath: dir)
        }

        var emulatorLog: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// Sends one USB/IP command header (48 bytes, big-endian fields).
        func send(command: UInt32, seq: UInt32, direction: UInt32 = 1, endpoint: UInt32 = 0, word20: UInt32 = 0, length: UInt32 = 0, packets: UInt32 = 0xffff_ffff, setup: [UInt8] = []) {
            var h = [UInt8](repeating: 0, count: 48)
            func put(_ v: UInt32, at i: Int) { for b in 0..<4 { h[i + b] = UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32(b))) } }
            put(command, at: 0)
            put(seq, at: 4)
            put(direction, at: 12)
            put(endpoint, at: 16)
            put(word20, at: 20)
            put(length, at: 24)
            put(packets, at: 32)
            for (i, b) in setup.prefix(8).enumerated() { h[40 + i] = b }
            let n = h.withUnsafeBytes { write(fd, $0.baseAddress, 48) }
            #expect(n == 48, "write to the emulator failed")
        }

        /// Submits an IN transfer on the video endpoint (2), which the emulator holds until it streams.
        func submitVideo(seq: UInt32) { send(command: 1, seq: seq, endpoint: 2, length: 3072) }
        /// Asks to unlink `victim`.
        func unlink(seq: UInt32, victim: UInt32) { send(command: 2, seq: seq, word20: victim) }
        /// A GET_STATUS control transfer, answered at once.
        func getStatus(seq: UInt32) { send(command: 1, seq: seq, length: 2, setup: [0x80, 0x00, 0, 0, 0, 0, 2, 0]) }

        /// The next reply: its command (3 RET_SUBMIT, 4 RET_UNLINK), seqnum and status; nil when
        /// nothing comes within 5 s. Read on a thread of its own, not a cooperative one.
        func reply() async -> (command: UInt32, seq: UInt32, status: Int32)? {
            await offPool { [fd] in Self.readReply(fd) }
        }

        private static func readReply(_ fd: Int32) -> (command: UInt32, seq: UInt32, status: Int32)? {
            var h = [UInt8](repeating: 0, count: 48)
            guard readFully(fd, &h) else { return nil }
            func get(_ i: Int) -> UInt32 { (0..<4).reduce(0) { $0 << 8 | UInt32(h[i + $1]) } }
            let command = get(0)
            if command == 3 {
                var rest = [UInt8](repeating: 0, count: Int(get(24)) + (get(32) == 0xffff_ffff ? 0 : Int(get(32)) * 16))
                guard readFully(fd, &rest) else { return nil }
            }
            return (command, get(4), Int32(bitPattern: get(20)))
        }

        private static func readFully(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
            var got = 0
            while got < buffer.count {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 5000) == 1 else { return false }
                let n = buffer.withUnsafeMutableBytes { b in b.baseAddress.map { read(fd, $0 + got, b.count - got) } ?? -1 }
                guard n > 0 else { return false }
                got += n
            }
            return true
        }
    }

    /// vhci_hcd's transmit thread sends pending submits, then pending unlinks, so an URB
    /// submitted and unlinked between the two (uvcvideo kills its URBs at stream off) has its
    /// CMD_UNLINK arrive before its CMD_SUBMIT. The emulator must hold that unlink and answer it
    /// (-ECONNRESET) once the submit arrives, and never send a RET_SUBMIT for the URB. Catches the
    /// emulator answering "already completed" at once, which made vhci either give the URB back
    /// and then drop the whole device at its RET_SUBMIT ("cannot find a urb of seqnum N"), or
    /// wait for it forever in usb_kill_urb.
    @Test func anUnlinkThatArrivesBeforeItsSubmitIsAnsweredWhenTheSubmitArrives() async throws {
        let peer = try await Peer()
        peer.submitVideo(seq: 100)  // held: the camera is not streaming
        peer.unlink(seq: 102, victim: 101)  // 101 not submitted yet
        peer.unlink(seq: 103, victim: 100)
        let first = await peer.reply()
        #expect(first?.command == 4 && first?.seq == 103 && first?.status == -104, "first reply \(String(describing: first)); the unlink of a held URB comes first, the early one waits\n\(peer.emulatorLog)")
        peer.submitVideo(seq: 101)
        let second = await peer.reply()
        #expect(second?.command == 4 && second?.seq == 102 && second?.status == -104, "reply to the early unlink once its submit came: \(String(describing: second))\n\(peer.emulatorLog)")
        peer.getStatus(seq: 104)
        let third = await peer.reply()
        #expect(third?.command == 3 && third?.seq == 104 && third?.status == 0, "the next reply must be the control transfer's, not a RET_SUBMIT for 101: \(String(describing: third))\n\(peer.emulatorLog)")
        // An unlink that names a URB already answered is "already completed" (status 0), at once.
        peer.unlink(seq: 105, victim: 104)
        let fourth = await peer.reply()
        #expect(fourth?.command == 4 && fourth?.seq == 105 && fourth?.status == 0, "unlink after completion: \(String(describing: fourth))\n\(peer.emulatorLog)")
        shutdown(peer.fd, Int32(SHUT_RDWR))
        let child = peer.child
        let status = await within(10) { await child.exitStatus() }
        #expect(status == 0, "the emulator ends with its connection: \(String(describing: status))\n\(peer.emulatorLog)")
    }
}
