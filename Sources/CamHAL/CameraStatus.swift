/// Where a session is in its life (S4).
public enum CameraStatus: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Not started, or stopped.
    case idle
    /// A bind is in flight; zoom fields are nominal (1.0) and torch is off.
    case starting
    /// Bound and streaming (the first frame may not have arrived yet: see `isPreviewActive`).
    case running
    /// Frames stopped arriving or the source was lost; recovery is automatic (S8).
    case interrupted
    /// A fatal failure; `CameraState.error` says which.
    case error

    public var description: String { rawValue }
}
