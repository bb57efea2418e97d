/// Power-line flicker avoidance (N1), as CameraX's CONTROL_AE_ANTIBANDING_MODE and V4L2's
/// `power_line_frequency` menu.
public enum AntiFlickerMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case off
    case hz50
    case hz60
    /// The device detects the mains frequency itself.
    case auto

    public var description: String { rawValue }
}
