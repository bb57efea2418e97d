#if Media
import CamHAL
import CamHALMedia
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing

/// MJPEG frames cut short or garbled in transit (a webcam's lost USB packets) are never a photo
/// or a recorded frame: the core discards them and counts them as broken payloads, and a photo
/// waits for a whole frame or fails saying why.
@Suite("Broken payloads (R5)")
struct BrokenPayloadTests {
    /// A real 64x48 JPEG from the codec.
    static func jpeg() throws -> [UInt8] {
        let image = I420Image(width: 64, height: 48)
        image.y.update(repeating: 90, count: image.strideY * 48)
        image.u.update(repeating: 128, count: image.strideUV * image.chromaHeight * 2)
        return try JPEGCodec.shared.encode(image, quality: 80)
    }

    /// `bytes` as an MJPEG frame of 64x48 (the bytes stay alive with the frame).
    static func frame(_ bytes: [UInt8], width: Int = 64, height: Int = 48) -> Frame {
        let image = PackedImage(format: .gray8, width: max(1, bytes.count), height: 1)
        image.storage.update(from: bytes, count: bytes.count)
        return Frame(format: .mjpeg, width: width, height: height,
                     planes: [FramePlane(baseAddress: UnsafeRawPointer(image.storage), length: bytes.count, bytesPerRow: bytes.count)],
                     sequence: 1, timestamp: 0, onRelease: { withExtendedLifetime(image) {} })
    }

    static func problem(_ bytes: [UInt8], _ w: Int = 64, _ h: Int = 48) -> String? {
        bytes.withUnsafeBytes { JPEGCheck.problem(in: $0, width: w, height: h) }
    }

    // Would catch: a truncated frame, one without a frame header, or one of another size passing
    // as whole; or a whole frame padded after its EOI (webcams do) refused.
    @Test func theCheckTellsWholeFromBroken() throws {
        let whole = try Self.jpeg()
        #expect(Self.problem(whole) == nil)
        #expect(Self.problem(whole + [UInt8](repeating: 0, count: 40)) == nil)
        #expect(Self.problem(Array(whole[..<(whole.count / 2)]))?.contains("EOI") == true)
        #expect(Self.problem(whole, 1280, 720)?.contains("64x48") == true)
        // SOI, a comment, then garbage (the emulated webcam's `corrupt`), ending in EOI.
        let garbled: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFE, 0x00, 0x04, 0x41, 0x42] + [UInt8](repeating: 0x5A, count: 100) + [0xFF, 0xD9]
        #expect(Self.problem(garbled) != nil)
        #expect(Self.problem([0x00, 0x01, 0x02, 0x03, 0xFF, 0xD9]) != nil)
    }

    // Would catch: PhotoEncoder passing a truncated MJPEG frame through as a "0x0 JPEG" without
    // an EOI (what `camhal capture` wrote after the emulated C920's `truncate`).
    @Test func photoEncoderRefusesATruncatedFrame() throws {
        let whole = try Self.jpeg()
        let device = DeviceDescriptor(id: "t", name: "t", backend: "t", facing: .back, lenses: DeviceDescriptor.singleLens(facing: .back, maxZoom: 1),
                                      formats: [], zoomMethod: .frameCrop)
        let good = try PhotoEncoder.photo(from: Self.frame(whole), settings: PhotoSettings(mirror: .off), device: device)
        #expect(good.width == 64 && good.height == 48)
        #expect(throws: CameraError.self) {
            try PhotoEncoder.photo(from: Self.frame(Array(whole[..<(whole.count / 2)])), settings: PhotoSettings(mirror: .off), device: device)
        }
    }

    // Would catch: a camera whose every MJPEG frame is cut short giving a photo anyway, or not
    // counting what it skipped (the user is told "N broken frames were skipped").
    @Test func aCameraOfBrokenFramesGivesNoPhotoAndCountsThem() async throws {
        let whole = try Self.jpeg()
        let backend = FixedImageBackend(identifier: "broken", picture: Self.frame(Array(whole[..<(whole.count / 2)])))
        let camera = Camera(backend: backend, device: backend.descriptor)
        camera.start()
        await #expect(throws: CameraError.self) { try await camera.capturePhoto(PhotoSettings(mirror: .off, timeout: .seconds(1))) }
        let stats = camera.frameStatistics
        #expect(stats.droppedAsBroken > 0 && stats.framesDelivered == 0, "\(stats)")
        await camera.stop()

        let fine = FixedImageBackend(identifier: "whole", picture: Self.frame(whole))
        let camera2 = Camera(backend: fine, device: fine.descriptor)
        camera2.start()
        let photo = try await camera2.capturePhoto(PhotoSettings(mirror: .off, timeout: .seconds(5)))
        #expect(photo.width == 64 && photo.height == 48 && photo.metadata.passedThrough)
        #expect(camera2.frameStatistics.droppedAsBroken == 0)
        await camera2.stop()
    }
}
#endif
