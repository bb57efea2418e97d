import CamHAL
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Renders the virtual scene. Every pixel encodes where it looks in the world, so tests can
/// measure the field of view from the pixels alone:
///
/// - luma (Y, or R in RGB) rises linearly with the world x coordinate over -2...2 (the
///   ultra-wide lens at 1x sees exactly that span; the wide lens at 1x sees -1...1);
/// - V (or G) rises with the world y coordinate over the same scale;
/// - U (or B) names the lens: `lensCode(for:)`;
/// - the torch lifts U by 16, a visible "light";
/// - the first 8 pixels of the first row carry the frame sequence number's low byte in luma;
/// - exposure scales the light: luma above black (16) is multiplied by the exposure factor
///   (duration x gain x 2^EV over the reference exposure, `VirtualPhysics`), clipping at 235, so
///   the default exposure (factor 1) renders the position encoding unchanged;
/// - white balance casts colour: a temperature below the scene's illuminant adds to U (B) and
///   takes from V (bluer), above it the reverse (warmer); at the illuminant there is no cast.
///
/// The virtual backend's own renderer, not for apps: `@_spi(Backend) import CamHALVirtual` sees it.
@_spi(Backend)
public enum SceneRenderer {
    /// Half-width of the world the ultra-wide lens sees at 1x: the encoding's full scale.
    public static let worldHalfWidth = 2.0

    /// The world x a luma value encodes.
    public static func worldX(luma: UInt8) -> Double {
        (Double(luma) - 16) / 219 * (2 * worldHalfWidth) - worldHalfWidth
    }

    static func luma(worldX x: Double) -> UInt8 {
        let v = 16 + (x + worldHalfWidth) / (2 * worldHalfWidth) * 219
        return UInt8(min(max(v.rounded(), 16), 235))
    }

    /// The light above black the gradient shows at world x at the reference exposure, 0...219
    /// (luma less 16, unrounded).
    static func light(worldX x: Double) -> Double {
        min(max((x + worldHalfWidth) / (2 * worldHalfWidth) * 219, 0), 219)
    }

    /// The mean light above black in `rect` (lens-normalized) of `lens`'s field of view, at the
    /// reference exposure: what a metering region sees (A5). Luma varies with x alone.
    static func light(in rect: NormalizedRect, lens: Lens) -> Double {
        let halfWidth = 1 / lens.minZoomRatio, samples = 16
        let total = (0..<samples).reduce(0.0) { sum, i in
            let u = rect.x + (Double(i) + 0.5) / Double(samples) * rect.width
            return sum + light(worldX: (u * 2 - 1) * halfWidth)
        }
        return total / Double(samples)
    }

    /// The chroma value naming each lens kind.
    public static func lensCode(for lens: Lens) -> UInt8 {
        switch lens.kind {
        case .ultraWide: return 64
        case .wide: return lens.facing == .front ? 160 : 128
        case .telephoto: return 192
        default: return 96
        }
    }

    /// Renders one frame of `format` through `lens` with the sensor `crop` (relative to the lens's field of view).
    static func render(
        into buffer: UnsafeMutableRawPointer, format: StreamFormat, lens: Lens, crop: NormalizedRect, torch: Bool, sequence: UInt64,
        exposure: Double = 1, colourCast: Int = 0
    ) {
        let w = format.width, h = format.height
        let halfWidth = 1 / lens.minZoomRatio  // the lens's half field of view in world units at 1x
        let aspect = Double(h) / Double(w)
        func worldX(_ px: Int) -> Double { (crop.x + (Double(px) + 0.5) / Double(w) * crop.width) * 2 * halfWidth - halfWidth }
        func worldY(_ py: Int) -> Double { ((crop.y + (Double(py) + 0.5) / Double(h) * crop.height) * 2 * halfWidth - halfWidth) * aspect }
        let lensCode = cast(lensCode(for: lens) &+ (torch ? 16 : 0), by: colourCast)
        let lumaRow = (0..<w).map { exposed(luma(worldX: worldX($0)), by: exposure) }
        /// V (or G) encodes the world y on the luma scale, less the white-balance cast.
        func chromaV(_ y: Double) -> UInt8 { cast(Self.luma(worldX: y), by: -colourCast) }
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        let stamp = UInt8(truncatingIfNeeded: sequence)

        switch format.pixelFormat {
        case .nv12:
            for y in 0..<h {
                lumaRow.withUnsafeBufferPointer { (bytes + y * w).update(from: $0.baseAddress!, count: w) }
            }
            let uv = bytes + w * h
            for cy in 0..<(h / 2) {
                let v = chromaV(worldY(cy * 2))
                let row = uv + cy * w
                var i = 0
                while i + 1 < w {
                    row[i] = lensCode
                    row[i + 1] = v
                    i += 2
                }
            }
            for i in 0..<min(8, w) { bytes[i] = stamp }
        case .rgb24:
            var template = [UInt8](repeating: lensCode, count: w * 3)
            for x in 0..<w { template[x * 3] = lumaRow[x] }
            for y in 0..<h {
                let row = bytes + y * w * 3
                template.withUnsafeBufferPointer { row.update(from: $0.baseAddress!, count: w * 3) }
                let g = chromaV(worldY(y))
                var i = 1
                while i < w * 3 {
                    row[i] = g
                    i += 3
                }
            }
            for i in 0..<min(8, w) { bytes[i * 3] = stamp }
        default:  // YUYV
            var template = [UInt8](repeating: lensCode, count: w * 2)
            for x in 0..<w { template[x * 2] = lumaRow[x] }
            for y in 0..<h {
                let row = bytes + y * w * 2
                template.withUnsafeBufferPointer { row.update(from: $0.baseAddress!, count: w * 2) }
                let v = chromaV(worldY(y))
                var i = 3
                while i < w * 2 {
                    row[i] = v
                    i += 4
                }
            }
            for i in 0..<min(8, w) { bytes[i * 2] = stamp }
        }
    }

    /// A luma value after exposure `factor`: the light above black scaled, clipped at white.
    static func exposed(_ v: UInt8, by factor: Double) -> UInt8 {
        guard factor != 1 else { return v }
        let out = 16 + (Double(v) - 16) * max(0, factor)
        return UInt8(min(max(out.rounded(), 16), 235))
    }

    /// A chroma value moved by `amount`, kept within 16...240.
    static func cast(_ v: UInt8, by amount: Int) -> UInt8 {
        guard amount != 0 else { return v }
        return UInt8(min(max(Int(v) + amount, 16), 240))
    }

    /// The chroma cast white balance at `temperature` gives under the scene's illuminant
    /// (`VirtualPhysics.sceneKelvin`): 64 per doubling of the mismatch, at most 100.
    public static func colourCast(temperature: Double, illuminant: Double) -> Int {
        guard temperature > 0, illuminant > 0 else { return 0 }
        return Int(min(max(64 * log2(illuminant / temperature), -100), 100).rounded())
    }

    /// Renders a still gray image (a `VirtualScene.image`) fitted into the lens's field of view,
    /// aspect kept, white around it; the sensor `crop` zooms into it. Chroma is neutral.
    static func renderImage(into buffer: UnsafeMutableRawPointer, format: StreamFormat, image: VirtualScene.GrayImage, crop: NormalizedRect) {
        let w = format.width, h = format.height
        let frameAspect = Double(w) / Double(h), imageAspect = Double(image.width) / Double(image.height)
        let fitW = min(1, imageAspect / frameAspect), fitH = min(1, frameAspect / imageAspect)
        let xs: [Int] = (0..<w).map { px in
            let u = (crop.x + (Double(px) + 0.5) / Double(w) * crop.width - (1 - fitW) / 2) / fitW
            return u >= 0 && u < 1 ? Int(u * Double(image.width)) : -1
        }
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        var row = [UInt8](repeating: 255, count: w)
        for py in 0..<h {
            let v = (crop.y + (Double(py) + 0.5) / Double(h) * crop.height - (1 - fitH) / 2) / fitH
            let iy = v >= 0 && v < 1 ? Int(v * Double(image.height)) : -1
            for px in 0..<w {
                let ix = xs[px]
                row[px] = ix >= 0 && iy >= 0 ? image.pixels[iy * image.width + ix] : 255
            }
            switch format.pixelFormat {
            case .nv12:
                row.withUnsafeBufferPointer { (bytes + py * w).update(from: $0.baseAddress!, count: w) }
            case .rgb24:
                let out = bytes + py * w * 3
                for px in 0..<w { out[px * 3] = row[px]; out[px * 3 + 1] = row[px]; out[px * 3 + 2] = row[px] }
            default:  // YUYV
                let out = bytes + py * w * 2
                for px in 0..<w { out[px * 2] = row[px]; out[px * 2 + 1] = 128 }
            }
        }
        if format.pixelFormat == .nv12 {
            (bytes + w * h).update(repeating: 128, count: w * (h / 2))
        }
    }
}

/// What the virtual camera shows.
public enum VirtualScene: Sendable, Hashable {
    /// An 8-bit gray image, row-major, `width` x `height` bytes.
    public struct GrayImage: Sendable, Hashable {
        /// Width in pixels.
        public let width: Int
        /// Height in pixels.
        public let height: Int
        /// The gray levels, row by row, `width` per row.
        public let pixels: [UInt8]
        /// nil unless `pixels.count == width * height` and both sides are positive.
        public init?(width: Int, height: Int, pixels: [UInt8]) {
            guard width > 0, height > 0, pixels.count == width * height else { return nil }
            self.width = width
            self.height = height
            self.pixels = pixels
        }
    }
    /// The position-encoding gradient (the default; see `SceneRenderer`).
    case gradient
    /// A still image (a barcode, a test chart) instead of the gradient, fitted into every lens's
    /// field of view; zoom crops into it. Lens codes, torch and the sequence stamp are not drawn.
    case image(GrayImage)
}

