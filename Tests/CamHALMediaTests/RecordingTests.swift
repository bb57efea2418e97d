#if Media
import CamHAL
import CamHALTestSupport
@testable import CamHALMedia
import CamHALVirtual
import CGStreamer
import Foundation
import Testing

/// Decodes `url` fully (demux, parse, H.264 decode) and counts the video frames; nil when the
/// pipeline fails. Uses avdec_h264 (gstreamer1.0-libav), else openh264dec.
func decodedFrameCount(_ url: URL) async -> Int? {
    let demux = url.pathExtension == "mp4" ? "qtdemux" : "matroskademux"
    let decoder = await shell("gst-inspect-1.0 avdec_h264 >/dev/null 2>&1").0 == 0 ? "avdec_h264" : "openh264dec"
    let (status, out) = await shell("gst-launch-1.0 -v filesrc location='\(url.path)' ! \(demux) ! h264parse ! \(decoder) ! fakesink silent=false 2>&1")
    guard status == 0 else { return nil }
    return out.components(separatedBy: "\n").filter { $0.contains("fakesink0") && $0.contains("chain") }.count
}

@Suite("Video recording (C2)", .serialized)
struct RecordingTests {
    @Test("I420 buffers have GStreamer's own layout at every width (libcamera's vimc streams 636 wide)",
          arguments: [640, 636, 318, 642, 641, 1278])
    func i420LayoutMatchesGStreamer(width: Int) {
        var info = GstVideoInfo()
        gst_video_info_init(&info)
        #expect(gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, guint(width), 481) != 0)
        let image = I420Image(width: width, height: 481)
        #expect(image.byteCount == Int(info.size))
        #expect(image.strideY == Int(info.stride.0) && image.strideUV == Int(info.stride.1))
        #expect(image.u - image.y == Int(info.offset.1) && image.v - image.y == Int(info.offset.2))
    }

    /// Would catch: a file that stops 22.7 s short of a 25 s recording reported as a success
    /// (seen at vivid's timestamp wrap), or a loaded machine's second of frame latency reported
    /// as truncation.
    @Test("a file that ends long before the recording did is truncated; frame latency is not")
    func truncation() {
        #expect(Recording.truncation(reached: 2.3, span: 25) != nil)
        #expect(Recording.truncation(reached: 15, span: 30) != nil)
        #expect(Recording.truncation(reached: 0, span: 2.5) != nil)
        #expect(Recording.truncation(reached: 24, span: 25) == nil)
        #expect(Recording.truncation(reached: 20, span: 25) == nil)  // 5 s lag: within a quarter
        #expect(Recording.truncation(reached: 0.2, span: 2.1) == nil)  // 1.9 s: within 2 s
        #expect(Recording.truncation(reached: 26, span: 25) == nil)
        #expect(Recording.truncation(reached: 2.3, span: 25)?.contains("2.3 s of the 25.0 s") == true)
    }

    @Test("quality selector picks the requested class or falls back like CameraX")
    func selector() {
        let sizes = [Size(width: 640, height: 480), Size(width: 1280, height: 720), Size(width: 320, height: 240)]
        #expect(QualitySelector.from(.hd).resolve(sizes: sizes)?.size == Size(width: 1280, height: 720))
        #expect(QualitySelector.from(.fhd).resolve(sizes: sizes) == nil)
        #expect(QualitySelector.from(.fhd, fallback: .higherQualityOrLowerThan(.fhd)).resolve(sizes: sizes)?.quality == .hd)
        #expect(QualitySelector.from(.sd, fallback: .higherQualityOrLowerThan(.sd)).resolve(sizes: sizes)?.quality == .sd)
        #expect(QualitySelector.from(.uhd, fallback: .lowerQualityThan(.uhd)).resolve(sizes: sizes)?.quality == .hd)
        #expect(QualitySelector.from(.uhd, fallback: .higherQualityThan(.uhd)).resolve(sizes: sizes) == nil)
        #expect(QualitySelector([.uhd, .fhd, .sd]).resolve(sizes: sizes)?.quality == .sd)
        let d = VirtualBackend.descriptors()[0]
        #expect(QualitySelector.default.streamRequest(for: d)?.size == Size(width: 1280, height: 720))
    }

    @Test("records the virtual camera: started, status every second, finalized; the file decodes")
    func record() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0],
                            configuration: .init(stream: StreamRequest(pixelFormat: .nv12, size: Size(width: 640, height: 480))))
        camera.start()
        let url = dir.appendingPathComponent("clip.mkv")
        let rec = try await camera.startRecording(to: url)
        var started: RecordingInfo?
        var statuses: [RecordingStats] = []
        var final: (RecordingStats, CameraError?)?
        // Runs until two status events and 50 frames (about 2 s at 30 fps), not for a fixed time:
        // a sanitizer's slowdown made a 2.2 s recording hold 17 frames. The guard only ends a
        // recording that stalls; the frame count below then fails.
        let stopper = Task {
            try? await Task.sleep(nanoseconds: 60_000_000_000)
            rec.stop()
        }
        for await e in rec.events {
            switch e {
            case .started(let info): started = info
            case .status(let s):
                statuses.append(s)
                if statuses.count >= 2 && s.frames >= 50 { rec.stop() }
            case .finalized(_, let s, let err): final = (s, err)
            }
        }
        stopper.cancel()
        await camera.stop()
        #expect(started?.size == Size(width: 640, height: 480))
        #expect(statuses.count >= 2, "status at least once a second")
        #expect(statuses.last.map { $0.bytes > 0 && $0.duration > .seconds(1) } == true)
        let (stats, error) = try #require(final)
        #expect(error == nil)
        #expect(stats.frames >= 50, "\(stats)")
        let decoded = try #require(await decodedFrameCount(url), "file decodes")
        #expect(decoded >= stats.frames - 2 && decoded <= stats.frames, "decoded \(decoded) of \(stats.frames)")
    }

    @Test("a session stop ends the recording with an error and a playable file; bad inputs are refused up front")
    func sourceStopsAndRefusals() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[1])
        await #expect(throws: CameraError.self) { _ = try await camera.startRecording(to: dir.appendingPathComponent("a.mkv")) }
        camera.start()
        do {
            _ = try await camera.startRecording(to: URL(fileURLWithPath: "/nonexistent-dir/a.mkv"))
            Issue.record("accepted an unwritable path")
        } catch {
            guard case .invalidArgument(_, let v, _) = error else { Issue.record("\(error)"); return }
            #expect(v == "/nonexistent-dir/a.mkv")
        }
        await #expect(throws: CameraError.self) {
            _ = try await camera.startRecording(to: dir.appendingPathComponent("b.mkv"), options: RecordingOptions(audio: true))
        }
        let url = dir.appendingPathComponent("cut.mp4")
        let rec = try await camera.startRecording(to: url)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        await camera.stop()
        let (stats, error) = await rec.stopAndWait()
        #expect(error != nil, "the source went away")
        #expect(stats.frames > 20)
        let decoded = try #require(await decodedFrameCount(url), "fragmented MP4 decodes")
        #expect(decoded >= 20, "decoded \(decoded) of \(stats.frames)")
    }

    @Test("a recording process killed with SIGKILL leaves a file that decodes up to its last second")
    func sigkill() async throws {
        // The camhal built with this test bundle (same folder: .build/debug, or a sanitizer's
        // scratch path such as .build-tsan/debug), else the package's own build.
        let root = packageRoot
        let bundleDir = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]).deletingLastPathComponent()
        let binary = [bundleDir.appendingPathComponent("camhal")] + [".build/debug/camhal", ".build/release/camhal"].map { root.appendingPathComponent($0) }
        let camhal = try #require(binary.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "camhal binary not built next to the test bundle (\(bundleDir.path)) or under \(root.path)/.build")
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("killed.mkv")
        let log = dir.appendingPathComponent("record.out").path
        let child = try SpawnedChild(
            camhal.path, ["record", "-o", url.path, "--duration", "60", "--backend", "virtual"],
            environment: nil, stdout: log, stderr: "/dev/null")
        // Wait for the "recording ..." line: frames flow from then on.
        var seen = ""
        let deadline = Date(timeIntervalSinceNow: 10)
        while !seen.contains("recording "), child.exited == nil, Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
            seen = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        }
        #expect(seen.contains("recording "), "child output: \(seen)")
        let startedAt = Date()
        try await Task.sleep(nanoseconds: 3_000_000_000)
        child.signal(SIGKILL)
        let elapsed = Date().timeIntervalSince(startedAt)
        _ = await child.exitStatus()
        #expect(child.terminatingSignal == SIGKILL, "the child ended by itself (status \(child.exited ?? -1)), not by the signal")
        let decoded = try #require(await decodedFrameCount(url), "killed file decodes")
        // 30 fps virtual camera: every frame up to the last second must be there.
        let expected = Int((elapsed - 1) * 30)
        #expect(decoded >= expected, "decoded \(decoded), expected at least \(expected) after \(elapsed) s")
        let discover = await shell("gst-discoverer-1.0 '\(url.path)'")
        #expect(discover.1.contains("H.264"), "\(discover.1)")
    }

    @Test("wrong recording options are refused naming the option, before any file is written",
          arguments: [
            ("clip.webm", RecordingOptions(), "recording file", "'.webm'"),
            ("clip.avi", RecordingOptions(), "recording file", "'.avi'"),
            ("clip", RecordingOptions(), "recording file", "no extension"),
            ("clip.mp4", RecordingOptions(container: .matroska), "recording file", "does not match"),
            ("clip.mkv", RecordingOptions(bitrateKbps: Int.max), "bitrateKbps", "2048000"),
            ("clip.mkv", RecordingOptions(bitrateKbps: 0), "bitrateKbps", "kbit/s"),
            ("clip.mkv", RecordingOptions(firstFrameTimeout: .seconds(-1)), "firstFrameTimeout", "positive"),
            ("clip.mkv", RecordingOptions(firstFrameTimeout: .seconds(0)), "firstFrameTimeout", "positive"),
            ("clip.mkv", RecordingOptions(maxDuration: .seconds(-1)), "maxDuration", "positive"),
            ("clip.mkv", RecordingOptions(maxDuration: .seconds(0)), "maxDuration", "positive"),
            // The longest Duration is accepted and clamped (B3, docs/CONTRACT.md): HugeTimeoutTests covers it.
          ])
    func wrongOptionsAreRefused(file: String, options: RecordingOptions, name: String, reasonPart: String) async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[1])
        camera.start()
        let url = dir.appendingPathComponent(file)
        do {
            let rec = try await camera.startRecording(to: url, options: options)
            await rec.stopAndWait()
            Issue.record("\(file) with \(options) was accepted")
        } catch {
            guard case .invalidArgument(let n, _, let reason) = error else { Issue.record("\(error)"); return }
            #expect(n == name && reason.contains(reasonPart), "\(n): \(reason)")
        }
        await camera.stop()
        #expect(!FileManager.default.fileExists(atPath: url.path), "nothing written")
    }

    @Test("an explicit container accepts a file without extension; .m4v and .mov are fragmented MP4")
    func containerFromOptionsOrExtension() throws {
        #expect(try RecordingOptions(container: .matroska).validated(for: URL(fileURLWithPath: "/tmp/clip")) == .matroska)
        #expect(try RecordingOptions().validated(for: URL(fileURLWithPath: "/tmp/a.MOV")) == .fragmentedMP4)
        #expect(try RecordingOptions().validated(for: URL(fileURLWithPath: "/tmp/a.m4v")) == .fragmentedMP4)
        #expect(try RecordingOptions(container: .fragmentedMP4).validated(for: URL(fileURLWithPath: "/tmp/a.mp4")) == .fragmentedMP4)
    }

    /// maxDuration ends the recording by itself, with no error, at that much media time, so a
    /// `stop()` that comes late (a timer on a loaded machine: `camhal record --duration 22` wrote
    /// 23.2 s in the VM) cannot make the file longer. Would catch: the limit ignored (the backstop
    /// stop at 10 s makes a 10 s file), or the frame that passes it written.
    @Test("maxDuration stops the recording by itself at that much media time, with no error")
    func maxDurationEndsTheRecording() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[1])
        camera.start()
        let url = dir.appendingPathComponent("capped.mkv")
        let rec = try await camera.startRecording(to: url, options: RecordingOptions(maxDuration: .seconds(1.5)))
        let backstop = Task {
            try? await Task.sleep(nanoseconds: 10_000_000_000)
            rec.stop()
        }
        var finalized: (RecordingStats, CameraError?)?
        for await e in rec.events {
            if case .finalized(_, let stats, let error) = e { finalized = (stats, error) }
        }
        backstop.cancel()
        await camera.stop()
        let (stats, error) = try #require(finalized)
        #expect(error == nil, "\(String(describing: error))")
        #expect(stats.duration <= .milliseconds(1501) && stats.duration >= .seconds(1), "\(stats)")
        if let discovered = await Self.discoveredDuration(url) {
            #expect(discovered <= 1.5 + 0.02, "file \(discovered) s")
        }
    }

    /// The duration gst-discoverer-1.0 reads from a file, seconds.
    static func discoveredDuration(_ url: URL) async -> Double? {
        let (status, out) = await shell("gst-discoverer-1.0 '\(url.path)'")
        guard status == 0, let line = out.split(separator: "\n").first(where: { $0.contains("Duration:") }) else { return nil }
        let parts = line.split(separator: " ").last?.split(separator: ":").compactMap { Double($0) } ?? []
        guard parts.count == 3 else { return nil }
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }

    /// Matroska was written in streamable mode, without a Duration: gst-discoverer-1.0 then
    /// estimated it from the last cluster's start, up to ~1 s short of what `record` reported.
    /// Would catch: the two disagreeing by more than a millisecond rounding (Matroska's timecode
    /// scale) plus part of a frame.
    @Test("the recorded duration is the duration players read from the file", arguments: ["mkv", "mp4"])
    func durationMatchesTheFile(ext: String) async throws {
        try #require(toolOnPath("gst-discoverer-1.0"), "gst-discoverer-1.0 (gstreamer1.0-plugins-base-apps)")
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[1])
        camera.start()
        let url = dir.appendingPathComponent("duration.\(ext)")
        let rec = try await camera.startRecording(to: url)
        // Enough frames for two keyframe intervals (key-int-max is one second of frames).
        for await e in rec.events {
            if case .status(let s) = e, s.frames >= 75 { break }
        }
        let (stats, error) = await rec.stopAndWait()
        await camera.stop()
        #expect(error == nil)
        let discovered = try #require(await Self.discoveredDuration(url), "gst-discoverer-1.0 reads a duration")
        #expect(abs(discovered - Seconds.of(stats.duration)) < 0.02, "file \(discovered) s, recording reported \(stats.duration) s")
    }
}
#endif
