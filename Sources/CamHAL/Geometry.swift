/// A size in pixels.
public struct Size: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// A size of `width` by `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)" }
}

extension Size: LosslessStringConvertible {
    /// Parses `WIDTHxHEIGHT` (`640x480`, `1920X1080`): both numbers positive, nothing else around
    /// them. Returns nil for anything else, so a caller can name the bad text in its error.
    public init?(_ description: String) {
        let parts = description.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }
}

extension Int {
    /// `value` rounded to an even integer (`rule` applied to `value / 2`), never below `minimum`;
    /// a value that is not finite gives `minimum`. The one even-rounding helper: subsampled
    /// (4:2:0, 4:2:2) pixels need even sizes and offsets in crops, scales and selections.
    package init(even value: Double, rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero, minimum: Int = 0) {
        guard value.isFinite else {
            self = minimum
            return
        }
        // Clamped so a huge value (a zoom factor near 0) cannot trap converting to Int.
        let half = Swift.min(Swift.max((value / 2).rounded(rule), -4e18), 4e18)
        self = Swift.max(minimum, Int(half) * 2)
    }
}

/// A point in normalized coordinates: {0,0} is the top-left, {1,1} the bottom-right.
public struct NormalizedPoint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Horizontal position, 0 at the left edge, 1 at the right.
    public var x: Double
    /// Vertical position, 0 at the top edge, 1 at the bottom.
    public var y: Double
    /// The point at `x`, `y`.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
    /// The center of the frame, (0.5, 0.5).
    public static let center = NormalizedPoint(x: 0.5, y: 0.5)
    public var description: String { "(\(ZoomMath.format(x)), \(ZoomMath.format(y)))" }
}

/// A rectangle in normalized coordinates (top-left origin).
public struct NormalizedRect: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Left edge, as a fraction of the parent's width.
    public var x: Double
    /// Top edge, as a fraction of the parent's height.
    public var y: Double
    /// Width, as a fraction of the parent's width.
    public var width: Double
    /// Height, as a fraction of the parent's height.
    public var height: Double
    /// The rectangle with top-left corner `x`, `y` and size `width` by `height`.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    /// The whole field of view.
    public static let full = NormalizedRect(x: 0, y: 0, width: 1, height: 1)

    /// The centered rectangle a zoom `factor` (>= 1) keeps: 1/factor of each side.
    public static func centered(zoomFactor factor: Double) -> NormalizedRect {
        let f = factor.isFinite && factor >= 1 ? factor : 1
        let side = 1 / f
        return NormalizedRect(x: (1 - side) / 2, y: (1 - side) / 2, width: side, height: side)
    }

    /// Maps a point given relative to this rectangle into the rectangle's parent space.
    public func map(_ p: NormalizedPoint) -> NormalizedPoint {
        NormalizedPoint(x: x + p.x * width, y: y + p.y * height)
    }

    /// Composes: `inner` is relative to self; the result is relative to self's parent.
    public func map(_ inner: NormalizedRect) -> NormalizedRect {
        NormalizedRect(x: x + inner.x * width, y: y + inner.y * height, width: inner.width * width, height: inner.height * height)
    }

    public var description: String {
        "[\(ZoomMath.format(x)),\(ZoomMath.format(y)) \(ZoomMath.format(width))x\(ZoomMath.format(height))]"
    }
}

/// A rectangle in pixels of a frame buffer.
public struct PixelRect: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Left edge in pixels.
    public var x: Int
    /// Top edge in pixels.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The rectangle with top-left pixel `x`, `y` and size `width` by `height`.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// The pixel rectangle of `rect` inside a `width` x `height` image, on even coordinates so
    /// subsampled (4:2:0, 4:2:2) formats stay aligned.
    public static func from(_ rect: NormalizedRect, width: Int, height: Int) -> PixelRect {
        let w = max(2, min(width, Int(even: rect.width * Double(width))))
        let h = max(2, min(height, Int(even: rect.height * Double(height))))
        let x = max(0, min(width - w, Int(even: rect.x * Double(width))))
        let y = max(0, min(height - h, Int(even: rect.y * Double(height))))
        return PixelRect(x: x, y: y, width: w, height: h)
    }
}
