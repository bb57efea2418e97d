#if Media
import CLibYUV
import CTurboJPEG
import CamHAL
import CamHALBench
import CamHALMedia
@_spi(Testing) import CamHALVirtual
import Foundation

/// `camhal-bench --backend media`: CamHAL's photo and conversion paths against libjpeg-turbo and
/// libyuv called directly, in the same run, on the same frames (the reference for the media side).
enum MediaBench {
    /// Runs every measurement `n` times, interleaved CamHAL/direct, on `size` frames.
    static func run(iterations n: Int, size: Size) async throws -> Int32 {
        let w = size.width, h = size.height
        #if DEBUG
        print("warning: debug build; use `swift run -c release camhal-bench --backend media` for real numbers")
        #endif
        print("frame \(w)x\(h), \(n) iterations each, median ms (min)")

        // Test content with texture, so the entropy coder has real work.
        let nv12 = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h * 3 / 2)
        for y in 0..<h { for x in 0..<w { nv12[y * w + x] = UInt8(truncatingIfNeeded: (x &+ y) ^ ((x &* y) >> 7)) } }
        for i in 0..<(w * h / 2) { nv12[w * h + i] = UInt8(truncatingIfNeeded: 128 &+ (i % 61) &- 30) }
        let yuyv = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h * 2)
        for i in 0..<(w * h) { yuyv[2 * i] = nv12[i]; yuyv[2 * i + 1] = UInt8(truncatingIfNeeded: 128 &+ (i % 37) &- 18) }
        defer { nv12.deallocate(); yuyv.deallocate() }
        let nv12Frame = Frame(format: .nv12, width: w, height: h, planes: [
            FramePlane(baseAddress: UnsafeRawPointer(nv12), length: w * h, bytesPerRow: w),
            FramePlane(baseAddress: UnsafeRawPointer(nv12 + w * h), length: w * h / 2, bytesPerRow: w),
        ], sequence: 1, timestamp: 0)
        let yuyvFrame = Frame(format: .yuyv, width: w, height: h,
                              planes: [FramePlane(baseAddress: UnsafeRawPointer(yuyv), length: w * h * 2, bytesPerRow: w * 2)],
                              sequence: 1, timestamp: 0)
        let device = DeviceDescriptor(id: "bench", name: "bench", backend: "bench", facing: .back,
                                      lenses: DeviceDescriptor.singleLens(facing: .back), formats: [])

        // Direct TurboJPEG: one handle, one output buffer, one I420 scratch, made once.
        guard let tj = tjInitCompress() else { throw CameraError.unsupported("tjInitCompress") }
        defer { tjDestroy(tj) }
        let cap = tjBufSize(Int32(w), Int32(h), Int32(TJSAMP_420.rawValue))
        var outBuf: UnsafeMutablePointer<UInt8>? = tjAlloc(Int32(cap))
        defer { tjFree(outBuf) }
        let i420 = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h * 3 / 2)
        let rgb = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h * 3)
        let rgba = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h * 4)
        defer { i420.deallocate(); rgb.deallocate(); rgba.deallocate() }
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var directBytes = 0
        func directYUV() {
            NV12ToI420(nv12, Int32(w), nv12 + w * h, Int32(w), i420, Int32(w), i420 + w * h, Int32(cw),
                       i420 + w * h + cw * ch, Int32(cw), Int32(w), Int32(h))
            var planes: [UnsafePointer<UInt8>?] = [UnsafePointer(i420), UnsafePointer(i420 + w * h), UnsafePointer(i420 + w * h + cw * ch)]
            let strides: [Int32] = [Int32(w), Int32(cw), Int32(cw)]
            var size = cap
            _ = tjCompressFromYUVPlanes(tj, &planes, Int32(w), strides, Int32(h), Int32(TJSAMP_420.rawValue), &outBuf, &size, 90, TJFLAG_NOREALLOC)
            directBytes = Int(size)
        }
        func directRGB() {
            NV12ToRAW(nv12, Int32(w), nv12 + w * h, Int32(w), rgb, Int32(w * 3), Int32(w), Int32(h))
            var size = cap
            _ = tjCompress2(tj, rgb, Int32(w), 0, Int32(h), Int32(TJPF_RGB.rawValue), &outBuf, &size, Int32(TJSAMP_420.rawValue), 90, TJFLAG_NOREALLOC)
        }
        var camhalBytes = 0
        func camhalJPEG() {
            camhalBytes = (try? PhotoEncoder.photo(from: nv12Frame, settings: PhotoSettings(quality: 90), device: device))?.data.count ?? -1
        }
        let t1 = interleave(n, camhalJPEG, directYUV)
        report("NV12 -> JPEG q90", t1, note: "CamHAL \(camhalBytes) B (incl. EXIF) vs direct \(directBytes) B")
        let tRGB = measure(n, directRGB)
        print(String(format: "  (alternative direct path NV12 -> RGB -> tjCompress2: %.2f ms; NV12 -> I420 -> tjCompressFromYUVPlanes: %.2f ms)",
                     tRGB.median, t1.direct.median))

        let reused = PackedImage(format: .rgba, width: w, height: h)
        let t2 = interleave(n, { try? PixelConverter.rgba(nv12Frame, into: reused) },
                            { NV12ToABGR(nv12, Int32(w), nv12 + w * h, Int32(w), rgba, Int32(w * 4), Int32(w), Int32(h)) })
        report("NV12 -> RGBA (reused output)", t2)
        let t2b = interleave(n, { _ = try? PixelConverter.rgba(nv12Frame) },
                             { NV12ToABGR(nv12, Int32(w), nv12 + w * h, Int32(w), rgba, Int32(w * 4), Int32(w), Int32(h)) })
        report("NV12 -> RGBA (new image per call)", t2b)
        let t3 = interleave(n, { try? PixelConverter.rgba(yuyvFrame, into: reused) }, {
            YUY2ToARGB(yuyv, Int32(w * 2), rgba, Int32(w * 4), Int32(w), Int32(h))
            ARGBToABGR(rgba, Int32(w * 4), rgba, Int32(w * 4), Int32(w), Int32(h))
        })
        report("YUYV -> RGBA (reused output)", t3)

        // MJPEG (a webcam's frame, with Huffman tables) decoded to RGBA: CamHAL against tjDecompress2.
        directYUV()
        let mjpeg = Array(UnsafeBufferPointer(start: outBuf, count: directBytes))
        guard let tjd = tjInitDecompress() else { throw CameraError.unsupported("tjInitDecompress") }
        defer { tjDestroy(tjd) }
        let t4 = mjpeg.withUnsafeBytes { b -> Pair? in
            guard let base = b.baseAddress else { return nil }
            let frame = Frame(format: .mjpeg, width: w, height: h, planes: [FramePlane(baseAddress: base, length: b.count, bytesPerRow: 0)],
                              sequence: 1, timestamp: 0)
            return interleave(n, { try? PixelConverter.rgba(frame, into: reused) }, {
                _ = tjDecompress2(tjd, base.assumingMemoryBound(to: UInt8.self), UInt(b.count), rgba, Int32(w), Int32(w * 4), Int32(h),
                                  Int32(TJPF_RGBA.rawValue), 0)
            })
        }
        guard let t4 else { throw CameraError.unsupported("no JPEG to decode") }
        report("MJPEG -> RGBA (reused output)", t4, note: "\(mjpeg.count) B JPEG q90")

        // capturePhoto latency on a live 1080p NV12 source at 30 fps (includes waiting for the next frame).
        let backend = FixedImageBackend(identifier: "synthetic", name: "synthetic NV12", picture: nv12Frame)
        let camera = Camera(backend: backend, device: backend.descriptor)
        camera.start()
        // Wait for the first frame, so the latencies below are of capturePhoto alone.
        for try await _ in camera.frames(policy: .keepOnlyLatest) { break }
        var latencies: [Double] = []
        for _ in 0..<min(n, 20) {
            let t = DispatchTime.now().uptimeNanoseconds
            _ = try await camera.capturePhoto()
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        }
        await camera.stop()
        latencies.sort()
        print(String(format: "capturePhoto -> bytes at %dx%d NV12 30 fps: median %.1f ms, max %.1f ms (includes up to one frame interval, 33 ms, of waiting for a fresh frame)",
                     w, h, latencies[latencies.count / 2], latencies.last ?? 0))
        return 0
    }

    struct Timing { var median: Double; var min: Double }
    struct Pair { var camhal: Timing; var direct: Timing }

    static func timing(_ xs: [Double]) -> Timing {
        let s = xs.sorted()
        return Timing(median: s[s.count / 2], min: s.first ?? 0)
    }

    static func measure(_ n: Int, _ f: () -> Void) -> Timing {
        f()
        var xs: [Double] = []
        for _ in 0..<n {
            let t = DispatchTime.now().uptimeNanoseconds
            f()
            xs.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        }
        return timing(xs)
    }

    static func interleave(_ n: Int, _ camhal: () -> Void, _ direct: () -> Void) -> Pair {
        camhal(); direct()
        var a: [Double] = [], b: [Double] = []
        for i in 0..<(2 * n) {
            let t = DispatchTime.now().uptimeNanoseconds
            if i % 2 == 0 { camhal() } else { direct() }
            let ms = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6
            if i % 2 == 0 { a.append(ms) } else { b.append(ms) }
        }
        return Pair(camhal: timing(a), direct: timing(b))
    }

    static func report(_ name: String, _ p: Pair, note: String = "") {
        print(String(format: "%-36@ CamHAL %7.2f (%.2f)  direct %7.2f (%.2f)  ratio %.2fx %@", name as NSString,
                     p.camhal.median, p.camhal.min, p.direct.median, p.direct.min, p.direct.median / p.camhal.median, note as NSString))
    }
}
#endif
