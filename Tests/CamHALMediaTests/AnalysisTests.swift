#if Media && GStreamer
import CamHAL
import CamHALTestSupport
import CamHALGStreamer
import CamHALMedia
import CamHALVirtual
import Foundation
import Testing

@Suite("Frame analysis and barcodes (C3)", .serialized)
struct AnalysisTests {
    /// A frame the scanner cannot read (a broken JPEG payload here) reaches `onResult` with no
    /// barcodes, as a frame showing none does, and is counted in `failures` with its reason; a
    /// frame it reads is not counted. Would catch: `camhal scan` or an app reporting "no barcode"
    /// for frames it never looked at, with nothing to tell the two apart.
    @Test func framesThatCannotBeScannedAreCountedWithTheirReason() throws {
        let handed = Locked(0)
        let scanner = BarcodeScanner { codes, _ in
            #expect(codes.isEmpty)
            handed.withLock { $0 += 1 }
        }
        try scanner.checkAvailability()
        let junk = Array("not a JPEG".utf8)
        junk.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            scanner.analyze(Frame(format: .mjpeg, width: 64, height: 48,
                                  planes: [FramePlane(baseAddress: base, length: raw.count, bytesPerRow: raw.count)],
                                  sequence: 1, timestamp: 0))
        }
        #expect(scanner.failures.frames == 1)
        #expect(scanner.failures.lastError != nil, "\(scanner.failures)")
        let blank = PackedImage(format: .gray8, width: 64, height: 48)
        scanner.analyze(blank.asFrame(sequence: 2))
        #expect(scanner.failures.frames == 1, "a readable frame without a barcode was counted as a failure")
        #expect(handed.value == 2)
    }

    @Test("keep-only-latest: a slow analyzer sees the newest frames, drops are counted, the stream never stalls")
    func backPressure() async throws {
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        camera.start()
        #expect(await waitStreaming(camera))
        let analyzed = Locked([UInt64]())
        // How far behind the newest delivered frame each handed frame is, counted in device
        // frames (the frame handler is the zero-hop path): seconds since capture would count the
        // frame path's own latency too, which a sanitizer's slowdown stretches (0.39 s under TSan).
        let newest = Locked<UInt64>(0)
        camera.setFrameHandler { f in newest.withLock { $0 = max($0, f.sequence) } }
        defer { camera.setFrameHandler(nil) }
        let behind = Locked([Int]())
        let analysis = camera.analyze { frame in
            analyzed.withLock { $0.append(frame.sequence) }
            behind.withLock { $0.append(Int(newest.value) - Int(frame.sequence)) }
            Thread.sleep(forTimeInterval: 0.15)
        }
        // A second consumer must keep getting every frame meanwhile. The test runs for a number of
        // frames, not a time: a loaded CI machine slows the camera, and the checks below are
        // relations between counts that hold at any speed.
        let other = camera.frames(policy: .block(capacity: 2))
        let counter = Task { () -> [UInt64] in
            var seen: [UInt64] = []
            do {
                for try await f in other {
                    seen.append(f.sequence)
                    if seen.count >= 48 { break }
                }
            } catch {
                Issue.record("the session failed: \(error)")
            }
            return seen
        }
        // A guard, not a timing assertion: a stalled stream ends the wait and fails below.
        let deadline = Task { try? await Task.sleep(nanoseconds: 30_000_000_000); other.cancel() }
        let otherSequences = await counter.value
        deadline.cancel()
        other.cancel()
        let otherFrames = otherSequences.count
        await analysis.stop()
        let stats = analysis.stats
        let state = camera.currentState
        await camera.stop()
        #expect(state.status == .running && state.isPreviewActive, "\(state)")
        // The other consumer kept getting frames: 48 arrived (the whole run waits for them).
        #expect(otherFrames == 48, "other consumer got \(otherFrames) frames")
        // The slow analyzer ran, but could not take every frame: each 0.15 s analysis spans
        // several 30 fps frames, so it saw at most half of what the other consumer saw.
        #expect(stats.analyzed >= 3 && stats.analyzed <= otherFrames / 2, "\(stats)")
        // Drops are counted: the analyzer took at most half of the frames, so at least half of
        // those the other consumer saw went by it, each counted as dropped.
        #expect(stats.dropped >= otherFrames / 2 - 2, "\(stats) for \(otherFrames) frames")
        // R1: in order. Would catch what this check found under load: 25, 27, 26, 28, a frame
        // queued by a producer that had waited for room while the consumer had already parked.
        // (Sequence gaps are legal here: the virtual camera skips a frame when every pool buffer
        // is held, which is back-pressure reaching the device.)
        let backwards = zip(otherSequences, otherSequences.dropFirst()).filter { $1 <= $0 }
        #expect(backwards.isEmpty, "frames out of order: \(backwards.prefix(5))")
        // Newest frame, never a backlog: a queue would hand the 0.15 s analyzer consecutive frames
        // (step 1); keep-only-latest skips the ~4 frames that arrived during each analysis.
        let seqs = analyzed.value
        let steps = zip(seqs, seqs.dropFirst()).map { $1 - $0 }.sorted()
        let medianStep = steps.isEmpty ? 0 : steps[steps.count / 2]
        #expect(medianStep >= 3, "analyzed sequence steps \(steps): a backlog, not the newest frame")
        // And no frame waited behind the analyzer: at hand-over the median analyzed frame is at
        // most two device frames behind the newest delivered, and none is as far behind as two
        // analyses span (twice the median step). A queue-fed analyzer falls another median step
        // behind with every analysis, so it fails both.
        let lags = behind.value.sorted()
        let medianLag = lags.isEmpty ? 0 : lags[lags.count / 2]
        #expect(medianLag <= 2, "analyzer handed frames \(medianLag) frames behind the newest (all: \(lags))")
        #expect((lags.last ?? 0) < 2 * max(2, Int(medianStep)), "a frame waited behind two analyses: lags \(lags), steps \(steps)")
    }

    static let cases: [(name: String, command: String, format: BarcodeFormat, value: String)] = [
        ("qr", "qrencode -s 4 -o {} 'CamHAL analysis: ✓ QR'", .qrCode, "CamHAL analysis: ✓ QR"),
        ("ean13", "zint -b 13 -d 590123412345 -o {}", .ean13, "5901234123457"),
        ("code128", "zint -b 20 -d 'CAMHAL-128/x' -o {}", .code128, "CAMHAL-128/x"),
    ]

    static func make(_ c: (name: String, command: String, format: BarcodeFormat, value: String), in dir: URL) async throws -> VirtualScene.GrayImage {
        let png = dir.appendingPathComponent("\(c.name).png")
        let (status, out) = await shell(c.command.replacingOccurrences(of: "{}", with: "'\(png.path)'"))
        guard status == 0 else { throw CameraError.unsupported("\(c.command): \(out)") }
        let g = try ImageLoader.loadGray(png)
        guard let image = VirtualScene.GrayImage(width: g.width, height: g.height, pixels: g.pixels) else {
            throw CameraError.unsupported("empty \(png.path)")
        }
        return image
    }

    @Test("zbar decodes qrencode/zint images exactly, with pixel and view-normalized bounds",
          .enabled(if: tool("qrencode") && tool("zint"), "needs qrencode and zint (scripts/bootstrap)"),
          arguments: [0, 1, 2])
    func stillImages(_ index: Int) async throws {
        let c = Self.cases[index]
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = try await Self.make(c, in: dir)
        let gray = PackedImage(format: .gray8, width: image.width, height: image.height)
        image.pixels.withUnsafeBufferPointer { gray.storage.update(from: $0.baseAddress!, count: image.pixels.count) }
        let codes = try BarcodeScanner().scan(gray.asFrame())
        #expect(codes.count == 1)
        let code = try #require(codes.first)
        #expect(code.value == c.value)
        #expect(code.format == c.format)
        #expect(code.bounds.x >= 0 && code.bounds.x + code.bounds.width <= image.width)
        #expect(code.normalizedBounds.x >= 0 && code.normalizedBounds.x + code.normalizedBounds.width <= 1.0001)
        #expect(abs(code.normalizedBounds.x - Double(code.bounds.x) / Double(image.width)) < 1e-9)
        if c.format == .qrCode {
            // qrencode -s 4 draws a 4-module (16 px) quiet zone: the symbol starts there.
            #expect(abs(code.bounds.x - 16) <= 2 && abs(code.bounds.y - 16) <= 2, "\(code.bounds)")
            #expect(abs(code.bounds.width - (image.width - 32)) <= 3, "\(code.bounds)")
        }
    }

    @Test("barcodes shown through the virtual camera decode exactly; bounds follow zoom and front mirroring",
          .enabled(if: tool("qrencode") && tool("zint"), "needs qrencode and zint (scripts/bootstrap)"))
    func throughVirtualCamera() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in Self.cases {
            let backend = VirtualBackend(scene: .image(try await Self.make(c, in: dir)))
            for pf in [PixelFormat.nv12, .yuyv] {
                let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[0],
                                    configuration: .init(stream: StreamRequest(pixelFormat: pf, size: Size(width: 640, height: 480))))
                camera.start()
                let frame = try await camera.nextFrame(timeout: .seconds(5))
                let codes = try BarcodeScanner().scan(frame)
                #expect(codes.map(\.value) == [c.value], "\(c.name) \(pf)")
                #expect(codes.first?.format == c.format)
                if let b = codes.first?.normalizedBounds {
                    // The image is centered: so is the symbol.
                    #expect(abs(b.x + b.width / 2 - 0.5) < 0.06, "\(c.name) \(b)")
                }
                await camera.stop()
            }
        }
        // Zoom 2x into a QR on the back camera: bounds grow in view coordinates; the front camera mirrors x.
        let qr = try await Self.make(("qr2", "qrencode -s 3 -m 12 -o {} 'zoom'", .qrCode, "zoom"), in: dir)
        let backend = VirtualBackend(scene: .image(qr))
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[0])
        camera.start()
        let wide = try BarcodeScanner().scan(try await camera.nextFrame(timeout: .seconds(5))).first
        camera.setZoomRatio(2)
        try await Task.sleep(nanoseconds: 200_000_000)
        let zoomed = try BarcodeScanner().scan(try await camera.nextFrame(timeout: .seconds(5))).first
        await camera.stop()
        let w = try #require(wide), z = try #require(zoomed)
        #expect(z.value == "zoom")
        #expect(abs(z.normalizedBounds.width / w.normalizedBounds.width - 2) < 0.2, "\(w.normalizedBounds) -> \(z.normalizedBounds)")

        let off = try await Self.make(("qrl", "qrencode -s 3 -o {} 'left'", .qrCode, "left"), in: dir)
        // Pad the image on the right so the symbol sits in the left part of the scene.
        var padded = [UInt8](repeating: 255, count: off.width * 3 * off.height)
        for y in 0..<off.height { for x in 0..<off.width { padded[y * off.width * 3 + x] = off.pixels[y * off.width + x] } }
        let leftScene = try #require(VirtualScene.GrayImage(width: off.width * 3, height: off.height, pixels: padded))
        let fb = VirtualBackend(scene: .image(leftScene))
        for (device, mirrorExpected) in [(VirtualBackend.descriptors()[0], false), (VirtualBackend.descriptors()[1], true)] {
            let cam = Camera(backend: fb, device: device)
            cam.start()
            let code = try #require(try BarcodeScanner().scan(try await cam.nextFrame(timeout: .seconds(5))).first, "\(device.id)")
            await cam.stop()
            let centerX = code.normalizedBounds.x + code.normalizedBounds.width / 2
            #expect(code.value == "left")
            #expect(mirrorExpected ? centerX > 0.7 : centerX < 0.3, "\(device.id) center x \(centerX)")
            #expect(code.bounds.x < 640 / 3, "pixel bounds stay unmirrored (buffer coordinates)")
        }
    }

    @Test("the barcode analyzer runs on the live stream via ImageAnalysis",
          .enabled(if: tool("qrencode"), "needs qrencode (scripts/bootstrap)"))
    func analyzer() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let backend = VirtualBackend(scene: .image(try await Self.make(Self.cases[0], in: dir)))
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[0])
        camera.start()
        let found = Locked([String]())
        let analysis = ImageAnalysis(camera: camera, analyzer: BarcodeScanner { codes, _ in
            found.withLock { $0 += codes.map(\.value) }
        })
        analysis.start()
        try await Task.sleep(nanoseconds: 1_000_000_000)
        await analysis.stop()
        await camera.stop()
        #expect(found.value.count >= 3)
        #expect(Set(found.value) == [Self.cases[0].value])
    }

    @Test("barcodes shown through a GStreamer source (filesrc ! pngdec ! imagefreeze) decode exactly",
          .enabled(if: tool("qrencode") && tool("zint"), "needs qrencode and zint (scripts/bootstrap)"),
          arguments: [0, 1, 2])
    func throughGStreamer(_ index: Int) async throws {
        let c = Self.cases[index]
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("\(c.name).png")
        let (status, out) = await shell(c.command.replacingOccurrences(of: "{}", with: "'\(png.path)'"))
        try #require(status == 0, "\(c.command): \(out)")
        // A still image as a camera: a source description (sources and filters only, no sink).
        let backend = GStreamerBackend(includeTestSource: false)
        let device = try backend.source(description: "filesrc location=\(png.path) ! pngdec ! imagefreeze is-live=true", policy: .allowingLocalFiles)
        let camera = Camera(backend: backend, device: device)
        let found = Locked([Barcode]())
        let analysis = ImageAnalysis(camera: camera, analyzer: BarcodeScanner { codes, _ in
            found.withLock { $0 += codes }
        })
        analysis.start()
        camera.start()
        let deadline = Date(timeIntervalSinceNow: 10)
        while found.value.isEmpty && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        await analysis.stop()
        await camera.stop()
        let first = try #require(found.value.first, "nothing decoded; camera state \(camera.currentState)")
        #expect(first.value == c.value && first.format == c.format)
        #expect(Set(found.value.map(\.value)) == [c.value])
    }
}
#endif
