/// How the lens focuses (F2).
public enum FocusMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The device refocuses by itself whenever the scene changes (the default).
    case continuous
    /// One autofocus sweep, then hold (also triggered by `setFocusPoint`).
    case auto
    /// Hold the current focus position.
    case locked
    /// The app drives the lens position.
    case manual
    /// Reported only, never requested: the lens has no focus control at all (most webcams).
    case fixed

    public var description: String { rawValue }

    /// The modes an app may request.
    public static let requestable: [FocusMode] = [.continuous, .auto, .locked, .manual]
}
