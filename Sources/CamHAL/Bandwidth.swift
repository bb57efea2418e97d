/// USB bandwidth planning for several cameras on one bus: what a format costs on the wire and,
/// when a start is refused for bandwidth, which offered formats cost less.
public enum Bandwidth {
    /// Bytes per second `format` at `frameRate` puts on the bus when the device sends it
    /// uncompressed (bytes per frame x frames per second); nil for compressed formats (MJPEG,
    /// H.264: their size depends on the scene) and formats whose frame size is unknown.
    public static func bytesPerSecond(_ pixelFormat: PixelFormat, size: Size, frameRate: Double) -> Double? {
        guard !pixelFormat.isCompressed, frameRate.isFinite, frameRate > 0,
              let frame = pixelFormat.frameSize(width: size.width, height: size.height)
        else { return nil }
        return Double(frame) * frameRate
    }

    /// `bytesPerSecond` as a short text: `55.3 MB/s`, or `compressed` for formats without an
    /// estimate.
    public static func describe(_ pixelFormat: PixelFormat, size: Size, frameRate: Double) -> String {
        guard let b = bytesPerSecond(pixelFormat, size: size, frameRate: frameRate) else { return "compressed" }
        return "\(ZoomMath.format((b / 1e5).rounded() / 10)) MB/s"
    }

    /// Formats among `offered` that need less bus bandwidth than `requested`, best first, at most
    /// `limit`: a compressed format (MJPEG) at the requested size and a rate up to the requested
    /// one, then uncompressed formats at a lower estimate, the largest estimate first (the
    /// nearest to what was asked that fits better).
    public static func alternatives(to requested: StreamFormat, among offered: [FormatDescription], limit: Int = 3) -> [StreamFormat] {
        let asked = bytesPerSecond(requested.pixelFormat, size: requested.size, frameRate: requested.frameRate)
        var compressed: [StreamFormat] = []
        var smaller: [(StreamFormat, Double)] = []
        for f in offered {
            if f.pixelFormat.isCompressed {
                // Compressed at the requested size (or the nearest larger-or-equal rate list).
                guard !requested.pixelFormat.isCompressed, f.size == requested.size else { continue }
                let rate = f.frameRates.first(where: { $0 <= requested.frameRate + 0.01 }) ?? f.frameRates.last ?? requested.frameRate
                compressed.append(StreamFormat(pixelFormat: f.pixelFormat, width: f.size.width, height: f.size.height, frameRate: rate))
                continue
            }
            for rate in f.frameRates {
                guard let b = bytesPerSecond(f.pixelFormat, size: f.size, frameRate: rate) else { continue }
                // Without an estimate for the request (it was compressed), any uncompressed
                // format is no improvement to suggest.
                guard let asked, b < asked * 0.999 else { continue }
                smaller.append((StreamFormat(pixelFormat: f.pixelFormat, width: f.size.width, height: f.size.height, frameRate: rate), b))
            }
        }
        smaller.sort { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.description < $1.0.description }
        var out = compressed
        var seen = Set(out)
        for (f, _) in smaller where !seen.contains(f) {
            seen.insert(f)
            out.append(f)
        }
        return Array(out.prefix(max(0, limit)))
    }
}
