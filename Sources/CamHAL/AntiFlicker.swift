/// Power-line flicker avoidance (N1), as CameraX's CONTROL_AE_ANTIBANDING_MODE and V4L2's
/// `power_line_frequency` menu.
public enum AntiFlickerMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// No flicker avoidance (V4L2 `power_line_frequency` Disabled, CameraX OFF).
    case off
    /// Avoids the flicker of 50 Hz mains lighting (V4L2 `power_line_frequency` 50 Hz, CameraX 50HZ).
    case hz50
    /// Avoids the flicker of 60 Hz mains lighting (V4L2 `power_line_frequency` 60 Hz, CameraX 60HZ).
    case hz60
    /// The device detects the mains frequency itself.
    case auto

    public var description: String { rawValue }
}
