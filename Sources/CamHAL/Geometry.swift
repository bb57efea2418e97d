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
        func even(_ v: Double) -> Int { Int((v / 2).rounded()) * 2 }
        let w = max(2, min(width, even(rect.width * Double(width))))
        let h = max(2, min(height, even(rect.height * Double(height))))
        let x = max(0, min(width - w, even(rect.x * Double(width))))
        let y = max(0, min(height - h, even(rect.y * Double(height))))
        return PixelRect(x: x, y: y, width: w, height: h)
    }
}
