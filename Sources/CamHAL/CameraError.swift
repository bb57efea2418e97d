import FoundationEssentials

/// A fatal camera failure, or a refused request (S7, B2).
///
/// Every case names the value or device it is about, so the message alone tells the user what
/// to fix.
public enum CameraError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The user may not open the device node; `remedy` says how to get access.
    case permissionDenied(device: String, remedy: String)
    /// Another process or session is using the device.
    case busy(device: String, detail: String)
    /// The device went away (unplugged, driver unbound), or a device known by its stable ID is
    /// not plugged in when opened.
    case disconnected(device: String)
    /// The device or backend cannot do what was asked.
    case unsupported(String)
    /// Setting up the stream failed (format negotiation, pipeline linking, ...).
    case configurationFailed(String)
    /// The stream broke while running.
    case streamFailed(String)
    /// A parameter was malformed (NaN, out of range with no sensible clamp, unwritable path...).
    case invalidArgument(name: String, value: String, reason: String)
    /// No device with this ID exists in the named backend.
    case unknownDevice(id: String, backend: String)
    /// No backend with this identifier is registered.
    case unknownBackend(String, known: [String])
    /// The backend exists but cannot be used here; `reason` says why.
    case backendUnavailable(backend: String, reason: String)
    /// `LensSelection.pin(_:)` on a lens that reports `isPinnable == false`.
    case lensNotPinnable(lensID: String)
    /// An operation did not finish in time.
    case timeout(String)
    /// `BackendRegistry.open()` found no camera to open by default. `lookedAt` says, one entry
    /// per backend asked, what each one saw (unavailable and why, no device, a device it may not
    /// open, only test sources). Test sources (the virtual camera, `videotestsrc`) are never the
    /// default: open one by name or list its backend in `CAMHAL_BACKENDS`.
    case noCamera(lookedAt: [String])
    /// The device refused to start `requested` for lack of bus bandwidth (a USB camera whose bus
    /// has no isochronous bandwidth left, usually taken by other cameras on it: STREAMON's
    /// ENOSPC). `alternatives` are formats the device offers that need less (`Bandwidth`).
    case insufficientBandwidth(device: String, requested: StreamFormat, alternatives: [StreamFormat])

    /// A short stable code, for logs and JSON.
    public var code: String {
        switch self {
        case .permissionDenied: return "permissionDenied"
        case .busy: return "busy"
        case .disconnected: return "disconnected"
        case .unsupported: return "unsupported"
        case .configurationFailed: return "configurationFailed"
        case .streamFailed: return "streamFailed"
        case .invalidArgument: return "invalidArgument"
        case .unknownDevice: return "unknownDevice"
        case .unknownBackend: return "unknownBackend"
        case .backendUnavailable: return "backendUnavailable"
        case .lensNotPinnable: return "lensNotPinnable"
        case .timeout: return "timeout"
        case .noCamera: return "noCamera"
        case .insufficientBandwidth: return "insufficientBandwidth"
        }
    }

    public var description: String {
        switch self {
        case .permissionDenied(let device, let remedy):
            return "permission denied opening \(device): \(remedy)"
        case .busy(let device, let detail):
            return "device \(device) is busy: \(detail)"
        case .disconnected(let device):
            return "device \(device) is not connected (disconnected)"
        case .unsupported(let what):
            return "unsupported: \(what)"
        case .configurationFailed(let what):
            return "configuration failed: \(what)"
        case .streamFailed(let what):
            return "stream failed: \(what)"
        case .invalidArgument(let name, let value, let reason):
            return "invalid \(name) '\(value)': \(reason)"
        case .unknownDevice(let id, let backend):
            return "unknown device '\(id)' in backend \(backend)"
        case .unknownBackend(let name, let known):
            return "unknown backend '\(name)' (known: \(known.joined(separator: ", ")))"
        case .backendUnavailable(let backend, let reason):
            return "backend \(backend) unavailable: \(reason)"
        case .lensNotPinnable(let id):
            return "lens '\(id)' is not pinnable"
        case .timeout(let what):
            return "timed out: \(what)"
        case .noCamera(let lookedAt):
            return "no camera found" + (lookedAt.isEmpty ? " (no backend registered)" : "; looked at " + lookedAt.joined(separator: "; "))
                + ". Test sources open only by name (open(backend: \"virtual\"), CAMHAL_BACKENDS=virtual)"
        case .insufficientBandwidth(let device, let requested, let alternatives):
            let fit = alternatives.isEmpty
                ? "the device offers no format needing less; stop another camera on the same USB bus or move this one to another bus"
                : "try " + alternatives.map(\.description).joined(separator: ", or ")
                    + " (or stop another camera on the same USB bus)"
            return "device \(device) cannot stream \(requested): not enough USB bandwidth left on its bus; \(fit)"
        }
    }
}

extension CameraError: LocalizedError {
    /// The same message as `description`, so `localizedDescription` (what an app's alert or log
    /// line usually shows) names the device and value, not "CamHAL.CameraError error 7".
    public var errorDescription: String? { description }
}

/// A non-fatal problem on a live session (S7). The session keeps its status.
public enum CameraWarning: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A pinned lens could not be bound; the session fell back to automatic selection (L2).
    case lensUnavailable(lensID: String)
    /// No device of the requested facing exists; the current binding stays.
    case facingUnavailable(Facing)
    /// The device lacks a control the app asked for (a focus mode, a focus point...).
    case controlUnsupported(String)
    /// A setter got a value it could not use (NaN); the desired value was left unchanged (B1).
    case invalidArgument(name: String, value: String)
    /// The source reported dropped frames.
    case framesDropped(Int)
    /// The device reported a stream error it stays present through (its queue failed, a buffer
    /// could not be handed back); the session restarts the stream as for an interruption (S11).
    case streamError(String)
    /// The device does not offer the pixel format the session's configuration asked for; it
    /// streams `chosen` instead (what `StreamRequest.choose` picked).
    case formatUnavailable(requested: PixelFormat, chosen: PixelFormat)
    /// The device does not offer the frame size the session's configuration asked for; it
    /// streams the nearest offered size, `chosen`, instead.
    case sizeUnavailable(requested: Size, chosen: Size)
    /// The device does not offer the frame rate the session's configuration asked for; it
    /// streams at `chosen` frames per second, the nearest it offers.
    case frameRateUnavailable(requested: Double, chosen: Double)
    /// A setter's value was outside what the device takes: `applied` is in effect instead
    /// (an exposure duration, gain or bias, a white-balance temperature).
    case clamped(name: String, requested: Double, applied: Double)
    /// A setter's value was stored but has no effect in the current mode (an exposure bias while
    /// exposure is manual); `reason` says which mode would apply it.
    case ignored(name: String, reason: String)
    /// The device's frame timestamps show it sent no frame for `length` from `start` (seconds on
    /// CLOCK_MONOTONIC, as `Camera.Interruption`): a stall the session saw only when frames
    /// resumed, because frames from before it were still arriving (a reader slower than the
    /// camera) and the stream never fell silent. It is in `Camera.FrameStatistics.interruptions`.
    case stalled(start: Double, length: Duration)

    /// A stable name of the warning's case (`lensUnavailable`, `framesDropped`...) for logs and JSON.
    public var code: String {
        switch self {
        case .lensUnavailable: return "lensUnavailable"
        case .facingUnavailable: return "facingUnavailable"
        case .controlUnsupported: return "controlUnsupported"
        case .invalidArgument: return "invalidArgument"
        case .framesDropped: return "framesDropped"
        case .streamError: return "streamError"
        case .formatUnavailable: return "formatUnavailable"
        case .sizeUnavailable: return "sizeUnavailable"
        case .frameRateUnavailable: return "frameRateUnavailable"
        case .clamped: return "clamped"
        case .ignored: return "ignored"
        case .stalled: return "stalled"
        }
    }

    public var description: String {
        switch self {
        case .lensUnavailable(let id): return "lens '\(id)' unavailable; using automatic lens selection"
        case .facingUnavailable(let facing): return "no \(facing) camera; binding unchanged"
        case .controlUnsupported(let what): return "control unsupported: \(what)"
        case .invalidArgument(let name, let value): return "ignored invalid \(name) '\(value)'"
        case .framesDropped(let n): return "\(n) frames dropped"
        case .streamError(let what): return "stream error: \(what)"
        case .formatUnavailable(let requested, let chosen):
            return "pixel format \(requested) not offered by the device; streaming \(chosen)"
        case .sizeUnavailable(let requested, let chosen):
            return "size \(requested) not offered by the device; streaming \(chosen), the nearest it offers"
        case .frameRateUnavailable(let requested, let chosen):
            return "frame rate \(ZoomMath.format(requested)) fps not offered by the device; streaming \(ZoomMath.format(chosen)) fps"
        case .clamped(let name, let requested, let applied):
            return "\(name) \(requested) is outside the device's range; \(applied) applied"
        case .ignored(let name, let reason):
            return "\(name) has no effect now: \(reason)"
        case .stalled(_, let length):
            let c = length.components
            let seconds = Double(c.seconds) + Double(c.attoseconds) / 1e18
            return "the device sent no frame for \(ZoomMath.format(seconds)) s (a hole in its frame timestamps)"
        }
    }
}
