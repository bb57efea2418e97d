#if Media
import CamHAL
import CamHALMedia
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing
@testable import camhal

/// `capture`, `record` and `scan` turn every frame into pictures: a `--format` they cannot
/// convert is refused before the device streams, naming the formats that would work (it failed
/// only at the second frame: "cannot be converted (frame 2)").
@Suite("camhal: unconvertible formats")
struct FormatRefusalTests {
    // Would catch: the refusal coming only from the converter once frames flow, or a message that
    // does not say what to use instead.
    @Test func anUnconvertibleFormatIsRefusedBeforeStreamingNamingTheUsableOnes() throws {
        let hsv = try #require(PixelFormat(fourCC: "HSV4"))
        let picture = PackedImage(format: .rgba, width: 8, height: 8)
        let frame = Frame(format: hsv, width: 8, height: 8,
                          planes: [FramePlane(baseAddress: UnsafeRawPointer(picture.storage), length: picture.byteCount, bytesPerRow: 32)],
                          sequence: 0, timestamp: 0, onRelease: { withExtendedLifetime(picture) {} })
        let backend = FixedImageBackend(identifier: "hsv", picture: frame)
        let camera = Camera(backend: backend, device: backend.descriptor)
        let args = try Arguments(["--format", "HSV4"], options: MediaSupport.sourceOptions, booleans: [])
        do {
            try MediaSupport.requireConvertible(camera, args)
            Issue.record("HSV4 accepted")
        } catch let e as UsageError {
            #expect("\(e)".contains("'HSV4'") && "\(e)".contains("no format camhal converts"), "\(e)")
        }
        #expect(camera.currentState.status == .idle, "the device never streamed")
        // Y10 and the other deep grays convert now: accepted.
        for ok in ["Y10", "Y12", "Y16-BE", "MJPG", "YUYV"] {
            try MediaSupport.requireConvertible(camera, try Arguments(["--format", ok], options: MediaSupport.sourceOptions, booleans: []))
        }
        // A device with usable formats: they are named.
        let virtual = Camera(backend: VirtualBackend(), device: VirtualBackend.descriptors()[0])
        #expect(throws: UsageError.self) { try MediaSupport.requireConvertible(virtual, args) }
        do {
            try MediaSupport.requireConvertible(virtual, args)
        } catch {
            #expect("\(error)".contains("use one of") && "\(error)".contains("NV12"), "\(error)")
        }
    }
}
#endif
