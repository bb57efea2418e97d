import CamHAL
import CamHALBackends
import CamHALMedia
import CamHALVirtual
import Foundation

/// Shared by `capture`, `record` and `scan`: opening the source the flags name.
enum MediaSupport {
    /// Opens `--backend`/`--device` (default: the first available backend's first device), or a
    /// virtual camera showing `--image` when given.
    static func open(_ a: Arguments, stream: StreamRequest = .default, image: String? = nil) throws -> Camera {
        let config = Camera.Configuration(stream: stream)
        if let image {
            if let b = a["backend"], b != "virtual" { throw UsageError("--image shows a still image through the virtual camera; drop --backend \(b)") }
            let g = try ImageLoader.loadGray(URL(fileURLWithPath: image))
            guard let gray = VirtualScene.GrayImage(width: g.width, height: g.height, pixels: g.pixels) else {
                throw UsageError("--image \(image): empty image")
            }
            let backend = VirtualBackend(scene: .image(gray))
            return try BackendRegistry([backend], environment: [:]).open(backend: "virtual", device: a["device"], configuration: config)
        }
        return try Backends.registry().open(backend: a["backend"], device: a["device"], configuration: config)
    }

    /// Waits up to `timeout` s for the first frame (isPreviewActive) or an error.
    static func waitUntilStreaming(_ camera: Camera, timeout: Double = 10) async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            let s = camera.currentState
            if s.status == .error, let e = s.error { throw e }
            if s.isPreviewActive { return }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        throw CameraError.timeout("\(camera.device) did not deliver a frame within \(timeout) s")
    }

    static func parseSize(_ s: String?, flag: String) throws -> Size? {
        guard let s else { return nil }
        let parts = s.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
            throw UsageError("option --\(flag): '\(s)' is not WIDTHxHEIGHT")
        }
        return Size(width: w, height: h)
    }

    static func parseMirror(_ s: String?) throws -> PhotoSettings.Mirror {
        guard let s else { return .auto }
        guard let m = PhotoSettings.Mirror(rawValue: s) else { throw UsageError("option --mirror: '\(s)' is not auto, on or off") }
        return m
    }

    static func human(_ bytes: Int64) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MB", Double(bytes) / 1048576) : String(format: "%.1f kB", Double(bytes) / 1024)
    }
}
