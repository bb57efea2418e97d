/// Which way a camera points, as seen from the device's user.
public enum Facing: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Towards the user (a laptop or phone's selfie camera).
    case front
    /// Away from the user (a phone's main camera, a robot's forward camera).
    case back
    /// Not attached to the body of the device: a USB webcam, a network camera, a test source.
    case external

    public var description: String { rawValue }
}
