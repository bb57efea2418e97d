#if GStreamer
import CamHAL
import CamHALGStreamer
import CamHALTestSupport
import Foundation
import Testing

/// Sources whose pipeline cannot start: the camera must end in a typed error snapshot
/// and `stop` must complete, instead of staying `starting` for ever with a pipeline freed twice.
@Suite(.serialized)
struct GStreamerFailedStartTests {
    /// Starts a camera on `device`, waits for the error state and for `stop`'s completion.
    /// Would catch: the state stuck at `starting` (GStreamerBinding's failure path released the
    /// pipeline, then deinit's close() waited for a pulling thread that never started).
    func expectFailedStart(_ backend: GStreamerBackend, _ device: DeviceDescriptor, _ label: String) async {
        let camera = Camera(backend: backend, device: device, configuration: .init(recoveryDelay: .seconds(30)))
        camera.start()
        let errored = await firstSnapshot(of: camera) { $0.status == .error } != nil
        #expect(errored, "\(label): state \(camera.currentState.status), expected error")
        let error = camera.currentState.error
        #expect(error != nil, "\(label): the error snapshot carries a typed error")
        let completed = await within(10) {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in camera.stop { c.resume() } }
        } != nil
        #expect(completed, "\(label): stop's completion ran")
    }

    /// Descriptions whose start fails: a missing file, an unreadable overlay image, and (through
    /// an app's trusted pipeline, since descriptions refuse rtmpsrc) an unreachable RTMP server.
    @Test(arguments: [
        ("filesrc location=/nonexistent ! rawvideoparse width=64 height=64 format=gray8", false),
        ("videotestsrc is-live=true ! videoconvert ! gdkpixbufoverlay location=/nonexistent/overlay.png", false),
        ("rtmpsrc location=rtmp://127.0.0.1:9/live/none timeout=2 ! flvdemux ! decodebin", true),
    ])
    func failingDescriptionEndsInAnErrorAndStopCompletes(description: String, trusted: Bool) async throws {
        let backend = GStreamerBackend(includeTestSource: false)
        let d = try backend.source(description: description, policy: .allowingLocalFiles, allowPipeline: trusted)
        await expectFailedStart(backend, d, description)
    }

    @Test func fileURIDeletedBeforeStartFails() async throws {
        let backend = GStreamerBackend(includeTestSource: false)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-deleted-\(getpid()).mkv").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("not a video".utf8)))
        let d = try backend.source(uri: "file://" + path)
        try FileManager.default.removeItem(atPath: path)
        await expectFailedStart(backend, d, "deleted file URI")
    }

    /// A local `file://` HLS playlist used to make uridecodebin's hlsdemux send an HTTP GET to the
    /// address it names. Would catch: any decoder in the URI route fetching a playlist's URIs.
    @Test func fileURIPlaylistNeverReachesTheNetwork() async throws {
        let listener = try #require(LocalListener())
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-list-\(getpid()).m3u8").path
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nhttp://127.0.0.1:\(listener.port)/segment.ts\n#EXT-X-ENDLIST\n"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(playlist.utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let backend = GStreamerBackend(includeTestSource: false)
        let d = try backend.source(uri: "file://" + path)
        await expectFailedStart(backend, d, "file:// playlist")
        #expect(!listener.wasContacted(), "the playlist's segment URI was fetched")
    }
}

/// A TCP listener on 127.0.0.1 (an ephemeral port) that only records whether anyone connected.
final class LocalListener: Sendable {
    let fd: Int32
    let port: Int
    init?() {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard s >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(s, sa, len) == 0 && listen(s, 4) == 0 && getsockname(s, sa, &len) == 0
            }
        }
        guard ok else { close(s); return nil }
        fd = s
        port = Int(UInt16(bigEndian: addr.sin_port))
    }
    func wasContacted() -> Bool {
        let c = accept(fd, nil, nil)
        if c >= 0 { close(c) }
        return c >= 0
    }
    deinit { close(fd) }
}
#endif
