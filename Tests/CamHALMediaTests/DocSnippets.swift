#if Media
import CamHAL
import CamHALMedia
import CamHALVirtual
import Foundation
import Testing

/// The code of the catalogs' media articles (PhotosAndRecording.md), compiled and run here, as
/// Tests/ConformanceTests/DocSnippets.swift does for the core ones: `scripts/docs` fails when an
/// article's ```swift block is not found verbatim in a DocSnippets.swift.
enum MediaDocSnippets {
    struct Result {
        let photo: Photo
        let savedPhoto: URL
        let recorded: RecordingStats?
        let recordingError: CameraError?
        let codes: [Barcode]
    }

    /// PhotosAndRecording.md, "A photo, a recording, barcodes", on the virtual back camera.
    static func photosAndRecording(folder: URL) async throws -> Result {
        let camera = try BackendRegistry([VirtualBackend()], environment: [:]).open(backend: "virtual", device: "virtual-back")
        var recorded: RecordingStats?
        var recordingError: CameraError?
        var codes: [Barcode] = []
        // snippet photos-and-recording
        camera.start()
        let photo = try await camera.capturePhoto(PhotoSettings(quality: 90, maxSize: Size(width: 1280, height: 720)))
        // photo.data: a whole JPEG with EXIF; photo.metadata: the device, lens, frame and crop it shows
        try await camera.capturePhoto(to: folder.appendingPathComponent("photo.jpg"))  // temporary file, fsync, rename

        let recording = try await camera.startRecording(to: folder.appendingPathComponent("clip.mkv"))
        for await event in recording.events {  // started, status (at least once a second), finalized
            switch event {
            case .started(let info): print("recording \(info.size) at \(info.frameRate) fps")
            case .status(let stats): if stats.frames >= 30 { recording.stop() }  // about a second
            case .finalized(_, let stats, let error): (recorded, recordingError) = (stats, error)
            }
        }

        let scanner = BarcodeScanner(formats: [.qrCode, .ean13, .code128])
        for try await frame in camera.frames() {
            codes = try scanner.scan(frame)  // value, format, bounds in pixels and in the view
            break
        }
        await camera.stop()
        // end snippet
        return Result(
            photo: photo, savedPhoto: folder.appendingPathComponent("photo.jpg"), recorded: recorded,
            recordingError: recordingError, codes: codes)
    }
}

@Suite struct MediaDocSnippetTests {
    /// The article's code takes a photo of the asked size, writes the file, records a playable
    /// second and scans a frame. Would catch: an API change that breaks the article, or a sample
    /// that compiles but records nothing.
    @Test func photosAndRecordingRunsOnTheVirtualCamera() async throws {
        let folder = tempDir()
        defer { try? FileManager.default.removeItem(at: folder) }
        let r = try await MediaDocSnippets.photosAndRecording(folder: folder)
        #expect(r.photo.data.prefix(2) == [0xFF, 0xD8], "a JPEG")
        #expect(r.photo.width <= 1280 && r.photo.height <= 720, "\(r.photo.width)x\(r.photo.height)")
        let saved = try Data(contentsOf: r.savedPhoto)
        #expect(saved.prefix(2) == Data([0xFF, 0xD8]))
        #expect(r.recordingError == nil, "\(String(describing: r.recordingError))")
        let recorded = try #require(r.recorded, "no finalized event")
        #expect(recorded.frames >= 30, "\(recorded)")
        #expect(r.codes.isEmpty, "the virtual scene has no barcode: \(r.codes)")
    }
}
#endif
