#if Media
@_spi(Testing) import CamHAL
@_spi(Backend) import CamHALMedia
import CamHALTestSupport
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing

@Suite("Photo capture (C1)")
struct PhotoTests {
    @Test("every virtual pixel format gives a decodable JPEG of the stream size with EXIF", arguments: [PixelFormat.nv12, .yuyv, .rgb24])
    func formats(_ pf: PixelFormat) async throws {
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0],
                            configuration: .init(stream: StreamRequest(pixelFormat: pf, size: Size(width: 640, height: 480))))
        camera.start()
        defer { camera.stop {} }
        let photo = try await camera.capturePhoto(PhotoSettings(quality: 80))
        #expect(photo.width == 640 && photo.height == 480)
        #expect(photo.metadata.sourceFormat == pf)
        let gray = try #require(decodeGray(photo.data))
        #expect(gray.width == 640 && gray.height == 480)
        // The virtual scene's luma rises with x: the photo's must too.
        let left = Int(gray.pixels[240 * 640 + 20]), right = Int(gray.pixels[240 * 640 + 620])
        #expect(right > left + 20, "left \(left) right \(right)")
        #expect(JPEGSegments.exifOrientation(of: photo.data) == 1)
        await camera.stop()
    }

    @Test("frame-path zoom: the photo is the visible rectangle, scaled to maxSize, mirrored for front cameras")
    func visibleRectMirrorScale() async throws {
        let back = rampBackend(facing: .back)
        let camera = Camera(backend: back, device: back.descriptor)
        camera.setZoomRatio(2)
        camera.start()
        // Frames delivered between bind and the re-application of the desired zoom still carry
        // crop 1 (core behaviour): wait for the snapshot that says 2x.
        _ = await firstSnapshot(of: camera, timeout: 3) { $0.zoomRatio == 2 && $0.isPreviewActive }
        let photo = try await camera.capturePhoto(PhotoSettings(quality: 95, rotationDegrees: 90))
        await camera.stop()
        #expect(photo.width == 320 && photo.height == 240, "2x frame crop of 640x480")
        let g = try #require(decodeGray(photo.data))
        // Visible columns are 160..<480 of the ramp: luma 160*255/639 ≈ 64 at the left edge, ≈ 191 at the right.
        let left = Int(g.pixels[120 * 320 + 2]), right = Int(g.pixels[120 * 320 + 317])
        #expect(abs(left - 64) <= 6 && abs(right - 190) <= 6, "left \(left) right \(right)")
        #expect(JPEGSegments.exifOrientation(of: photo.data) == 6)

        let front = rampBackend(facing: .front)
        let fcam = Camera(backend: front, device: front.descriptor)
        fcam.start()
        let mirrored = try await fcam.capturePhoto(PhotoSettings(maxSize: Size(width: 160, height: 160)))
        let plain = try await fcam.capturePhoto(PhotoSettings(maxSize: Size(width: 160, height: 160), mirror: .off))
        await fcam.stop()
        #expect(mirrored.width == 160 && mirrored.height == 120)
        #expect(mirrored.metadata.mirrored && !plain.metadata.mirrored)
        let m = try #require(decodeGray(mirrored.data)), p = try #require(decodeGray(plain.data))
        #expect(Int(m.pixels[60 * 160 + 5]) > 200 && Int(m.pixels[60 * 160 + 154]) < 50, "mirrored: bright left")
        #expect(Int(p.pixels[60 * 160 + 5]) < 50 && Int(p.pixels[60 * 160 + 154]) > 200, "plain: dark left")
    }

    @Test("MJPEG frames pass through (Huffman tables restored, EXIF added) when no transform is needed")
    func mjpegPassThrough() throws {
        let image = I420Image(width: 64, height: 48)
        image.storage.update(repeating: 100, count: image.byteCount)
        let encoded = try JPEGCodec.shared.encode(image, quality: 70)
        // Strip the DHT segment, as many webcams do.
        let stripped = withoutHuffmanTables(encoded)
        #expect(stripped.count < encoded.count)
        let buffer = stripped
        let frame = buffer.withUnsafeBytes { b in
            Frame(format: .mjpeg, width: 64, height: 48, planes: [FramePlane(baseAddress: b.baseAddress!, length: b.count, bytesPerRow: 0)],
                  sequence: 7, timestamp: 0)
        }
        let device = DeviceDescriptor(id: "mj", name: "mj", backend: "test", facing: .back,
                                      lenses: DeviceDescriptor.singleLens(facing: .back), formats: [])
        let photo = try withExtendedLifetime(buffer) { try PhotoEncoder.photo(from: frame, settings: PhotoSettings(), device: device) }
        #expect(photo.metadata.passedThrough)
        #expect(photo.width == 64 && photo.height == 48)
        let g = try #require(decodeGray(photo.data), "pass-through JPEG decodes")
        #expect(abs(Int(g.pixels[24 * 64 + 32]) - 100) <= 3)
        // A transform (mirror) re-encodes through the decoder.
        let mirrored = try withExtendedLifetime(buffer) {
            try PhotoEncoder.photo(from: frame, settings: PhotoSettings(mirror: .on), device: device)
        }
        #expect(!mirrored.metadata.passedThrough && decodeGray(mirrored.data) != nil)
    }

    @Test("file variant: atomic write, and an unwritable path fails before capturing")
    func fileVariant() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Never started: the path error must win, proving the check runs before any capture.
        let idle = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        do {
            try await idle.capturePhoto(to: URL(fileURLWithPath: "/nonexistent-dir/x.jpg"))
            Issue.record("no error")
        } catch {
            guard case .invalidArgument(let name, let value, _) = error else { Issue.record("got \(error)"); return }
            #expect(name == "path" && value == "/nonexistent-dir/x.jpg")
        }
        let camera = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        camera.start()
        let url = dir.appendingPathComponent("p.jpg")
        let photo = try await camera.capturePhoto(to: url)
        await camera.stop()
        let onDisk = try [UInt8](Data(contentsOf: url))
        #expect(onDisk == photo.data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["p.jpg"], "no temporary file left")
    }

    @Test("never hangs: an unstarted session is refused, a stalled one times out")
    func noHang() async throws {
        // Unstarted: refused as `configurationFailed` ("not running"). Waiting for a frame instead
        // would end in `timeout`, so the error's kind, not a wall-clock bound, shows nothing waited.
        let idle = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        do {
            _ = try await idle.capturePhoto()
            Issue.record("captured from a session that was never started")
        } catch {
            guard case .configurationFailed(let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("not running"), "\(message)")
        }

        // Stalled: the source pauses for 30 s, the photo's timeout is 0.5 s. Ignoring the timeout
        // would capture a frame once the pause ends, which this test records as a failure.
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[0])
        camera.start()
        #expect(await waitStreaming(camera))
        backend.inject(.interruption(seconds: 30), deviceID: "virtual-back")
        let t1 = Date()
        do {
            _ = try await camera.capturePhoto(PhotoSettings(timeout: .seconds(0.5)))
            Issue.record("captured from a paused source")
        } catch {
            guard case .timeout = error else { Issue.record("got \(error)"); return }
        }
        #expect(Date().timeIntervalSince(t1) >= 0.5, "gave up before its timeout")
        await camera.stop()
    }

    @Test("settings are validated with the bad field named")
    func validation() async {
        for (s, field) in [(PhotoSettings(quality: 0), "quality"), (PhotoSettings(rotationDegrees: 45), "rotationDegrees"),
                           (PhotoSettings(maxSize: Size(width: 0, height: 10)), "maxSize")] {
            do {
                try s.validate()
                Issue.record("accepted \(field)")
            } catch {
                guard case .invalidArgument(let name, _, _) = error else { Issue.record("\(error)"); continue }
                #expect(name == field)
            }
        }
    }
}

@Suite("Raw Bayer frames (vimc's Raw Capture nodes)")
struct BayerTests {
    /// A 64x48 mosaic of one scene colour (R 200, G 100, B 50) in the given Bayer order.
    func mosaic(_ format: PixelFormat, red: (Int, Int), blue: (Int, Int)) -> Frame {
        let w = 64, h = 48
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let cell = (x % 2, y % 2)
                bytes[y * w + x] = cell == red ? 200 : cell == blue ? 50 : 100
            }
        }
        let box = BytesBox(bytes)
        return Frame(format: format, width: w, height: h,
                     planes: [FramePlane(baseAddress: UnsafeRawPointer(bytes), length: w * h, bytesPerRow: w)],
                     sequence: 1, timestamp: 0, onRelease: { box.free() })
    }

    final class BytesBox: @unchecked Sendable {
        let p: UnsafeMutablePointer<UInt8>
        init(_ p: UnsafeMutablePointer<UInt8>) { self.p = p }
        func free() { p.deallocate() }
    }

    @Test("every 8-bit Bayer order demosaics to the scene colour",
          arguments: [("BA81", (1, 1), (0, 0)), ("GBRG", (0, 1), (1, 0)), ("GRBG", (1, 0), (0, 1)), ("RGGB", (0, 0), (1, 1))])
    func demosaic(fourCC: String, red: (Int, Int), blue: (Int, Int)) throws {
        let format = try #require(PixelFormat(fourCC: fourCC))
        #expect(format.isBayer)
        let frame = mosaic(format, red: red, blue: blue)
        let rgba = try PixelConverter.rgba(frame)
        #expect(rgba.width == 64 && rgba.height == 48)
        let center = rgba.storage + 24 * rgba.bytesPerRow + 32 * 4
        // Through limited-range YUV and back: within a few levels.
        #expect(abs(Int(center[0]) - 200) <= 6 && abs(Int(center[1]) - 100) <= 6 && abs(Int(center[2]) - 50) <= 6,
                "got \(center[0]),\(center[1]),\(center[2]) for \(fourCC)")
        let jpeg = try PixelConverter.i420(frame, size: Size(width: 32, height: 24))
        #expect(jpeg.width == 32 && jpeg.height == 24)
    }
}
#endif
