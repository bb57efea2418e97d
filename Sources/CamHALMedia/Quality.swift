#if Media
import CamHAL

/// A video quality class, by lines (CameraX `Quality`).
public enum Quality: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// 480 lines (720x480, 640x480).
    case sd = 480
    /// 720 lines (1280x720).
    case hd = 720
    /// 1080 lines (1920x1080).
    case fhd = 1080
    /// 2160 lines (3840x2160).
    case uhd = 2160

    public static func < (a: Quality, b: Quality) -> Bool { a.rawValue < b.rawValue }
    /// The height in pixels the quality stands for (720 for HD).
    public var height: Int { rawValue }
    public var description: String {
        switch self {
        case .sd: return "SD"
        case .hd: return "HD"
        case .fhd: return "FHD"
        case .uhd: return "UHD"
        }
    }
    /// A sensible H.264 bit rate for this class, kbit/s.
    public var bitrateKbps: Int {
        switch self {
        case .sd: return 2_000
        case .hd: return 5_000
        case .fhd: return 8_000
        case .uhd: return 20_000
        }
    }
    /// The quality class of a size (by its lines), nil when it matches none.
    public init?(size: Size) {
        guard let q = Quality.allCases.first(where: { $0.height == size.height }) else { return nil }
        self = q
    }
}

/// What to do when no requested quality is supported (CameraX `FallbackStrategy`).
public enum FallbackStrategy: Sendable, Hashable {
    /// Fail.
    case none
    /// The closest quality above `q`, else the closest below.
    case higherQualityOrLowerThan(Quality)
    /// The closest quality above `q` only.
    case higherQualityThan(Quality)
    /// The closest quality below `q`, else the closest above.
    case lowerQualityOrHigherThan(Quality)
    /// The closest quality below `q` only.
    case lowerQualityThan(Quality)
}

/// Picks the recording quality (CameraX `QualitySelector`): the first supported quality of an
/// ordered list, then the fallback.
public struct QualitySelector: Sendable, Hashable {
    /// The qualities to try, in order.
    public var qualities: [Quality]
    /// What to do when none of `qualities` is available.
    public var fallback: FallbackStrategy

    /// Tries `qualities` in order, then `fallback`.
    public init(_ qualities: [Quality], fallback: FallbackStrategy = .none) {
        self.qualities = qualities
        self.fallback = fallback
    }

    /// One quality, then `fallback`.
    public static func from(_ quality: Quality, fallback: FallbackStrategy = .none) -> QualitySelector {
        QualitySelector([quality], fallback: fallback)
    }

    /// FHD, falling back to the best below it (what most apps want).
    public static let `default` = QualitySelector.from(.fhd, fallback: .higherQualityOrLowerThan(.fhd))

    /// The chosen quality and the largest supported size of that class, or nil.
    public func resolve(sizes: [Size]) -> (quality: Quality, size: Size)? {
        var bySupported: [Quality: Size] = [:]
        for s in sizes {
            guard let q = Quality(size: s) else { continue }
            if let old = bySupported[q], old.width >= s.width { continue }
            bySupported[q] = s
        }
        func pick(_ q: Quality) -> (Quality, Size)? { bySupported[q].map { (q, $0) } }
        for q in qualities { if let r = pick(q) { return r } }
        let supported = bySupported.keys.sorted()
        let higher: (Quality) -> Quality? = { q in supported.first { $0 > q } }
        let lower: (Quality) -> Quality? = { q in supported.last { $0 < q } }
        let chosen: Quality?
        switch fallback {
        case .none: chosen = nil
        case .higherQualityOrLowerThan(let q): chosen = higher(q) ?? lower(q)
        case .higherQualityThan(let q): chosen = higher(q)
        case .lowerQualityOrHigherThan(let q): chosen = lower(q) ?? higher(q)
        case .lowerQualityThan(let q): chosen = lower(q)
        }
        return chosen.flatMap(pick)
    }

    /// The stream request that makes `device` stream the chosen quality (open the camera with it
    /// so the recording needs no scaling), or nil when nothing fits.
    public func streamRequest(for device: DeviceDescriptor, pixelFormat: PixelFormat? = nil) -> StreamRequest? {
        let raw = device.formats.filter { pixelFormat == nil ? !$0.pixelFormat.isCompressed || $0.pixelFormat == .mjpeg : $0.pixelFormat == pixelFormat }
        guard let (_, size) = resolve(sizes: raw.map(\.size)) else { return nil }
        return StreamRequest(pixelFormat: pixelFormat, size: size)
    }
}
#endif
