/// The kind of a physical lens, by field of view relative to the wide lens.
public enum LensKind: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Wider than the wide lens (typically 0.5x).
    case ultraWide
    /// The main lens: 1.0 in wide-normalized zoom.
    case wide
    /// Narrower than the wide lens (typically 2x or 3x).
    case telephoto
    /// The one lens of an external camera (a webcam): its own 1x.
    case external
    /// A lens whose field of view the backend cannot tell.
    case unknown
    public var description: String { rawValue }
}

/// One physical lens of a camera (K2).
///
/// Zoom ratios are wide-normalized: 1.0 is the wide lens at 1x, an ultra-wide starts below 1.0
/// (typically 0.5) and a telephoto above it (typically 2 or 3). Equality and hashing use only
/// `id`, `kind` and `facing`, so a lens from a capabilities snapshot compares equal to
/// `CameraState.activeLens` for the same glass.
public struct Lens: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Stable identifier, unique within its device.
    public let id: String
    /// What kind of lens this is, by field of view.
    public let kind: LensKind
    /// Which way the lens points.
    public let facing: Facing
    /// The widest framing this lens gives, in wide-normalized terms (its native 1x).
    public let minZoomRatio: Double
    /// The tightest framing this lens gives (native ceiling, optical or digital), wide-normalized.
    public let maxZoomRatio: Double
    /// Still-photo flash next to this lens. Not torch capability: see `CameraCapabilities.hasTorch(for:)`.
    public let hasFlash: Bool
    /// Whether `LensSelection.pin(_:)` accepts this lens.
    public let isPinnable: Bool

    /// A lens; ratios are wide-normalized (see the type's discussion).
    public init(
        id: String, kind: LensKind, facing: Facing, minZoomRatio: Double, maxZoomRatio: Double,
        hasFlash: Bool = false, isPinnable: Bool = true
    ) {
        self.id = id
        self.kind = kind
        self.facing = facing
        self.minZoomRatio = minZoomRatio
        self.maxZoomRatio = max(minZoomRatio, maxZoomRatio)
        self.hasFlash = hasFlash
        self.isPinnable = isPinnable
    }

    public static func == (lhs: Lens, rhs: Lens) -> Bool {
        lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.facing == rhs.facing
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(kind)
        hasher.combine(facing)
    }

    /// The lens's own digital/optical ceiling relative to its native 1x.
    public var nativeZoomCeiling: Double { maxZoomRatio / minZoomRatio }

    public var description: String {
        "\(kind) lens \(id) (\(facing), \(ZoomMath.format(minZoomRatio))x...\(ZoomMath.format(maxZoomRatio))x)"
    }
}

/// Which lens a session binds (L1).
public enum LensSelection: Sendable, Hashable, CustomStringConvertible {
    /// CamHAL picks the lens from the zoom ratio; zoom is wide-normalized.
    case automatic
    /// One lens only; zoom is re-based so that 1.0 is this lens at 1x.
    case pinned(Lens)

    /// A selection pinned to `lens`. Throws `CameraError.lensNotPinnable` only when the lens
    /// reports `isPinnable == false`; a lens that cannot be bound later falls back to automatic
    /// with the warning `lensUnavailable` (L2).
    public static func pin(_ lens: Lens) throws(CameraError) -> LensSelection {
        guard lens.isPinnable else { throw CameraError.lensNotPinnable(lensID: lens.id) }
        return .pinned(lens)
    }

    /// The pinned lens, or nil for `.automatic`.
    public var pinnedLens: Lens? {
        if case .pinned(let lens) = self { return lens }
        return nil
    }

    public var description: String {
        switch self {
        case .automatic: return "automatic"
        case .pinned(let lens): return "pinned(\(lens.id))"
        }
    }
}
