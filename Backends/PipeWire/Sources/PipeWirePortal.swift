#if PipeWire
import CamHAL
import CamHALPipeWireShim
import Dispatch
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PipeWireBackend {
    /// Whether the backend reaches PipeWire through the camera portal (`org.freedesktop.portal.Camera`).
    public enum Portal: String, Sendable, Hashable, CaseIterable {
        /// The portal inside a Flatpak sandbox, and outside one when no daemon was chosen (no
        /// `remote`, no `$PIPEWIRE_REMOTE`) and the session bus has the camera portal; otherwise
        /// the daemon's socket directly.
        case auto
        /// Always the portal; without one the backend is unavailable, saying why.
        case always
        /// Never: the daemon's socket (`remote`, `$PIPEWIRE_REMOTE`, or `pipewire-0`).
        case never
    }

    /// The answer to `requestAccess()`.
    public enum Access: Sendable, Hashable {
        /// Cameras may be used: the portal granted access, or the backend does not go through
        /// the portal (the daemon's own access rules apply).
        case granted
        /// The user, or a stored decision, denied camera access; the portal hands out no
        /// PipeWire connection until it is allowed (in the desktop's privacy settings).
        case denied
        /// The portal could not be asked (no session bus, no camera portal, no answer): `reason`.
        case unavailable(reason: String)
    }

    /// Asks for camera access, as AVFoundation's `AVCaptureDevice.requestAccess(for: .video)`:
    /// through the camera portal's AccessCamera, which may show the desktop's permission dialog
    /// (a sandboxed app asks once; the answer is remembered by the desktop) and returns when the
    /// user answered, or after `accessTimeout` seconds. Without the portal (`portal` resolves to
    /// direct access) it returns `.granted` at once. Listing or opening a camera without asking
    /// first asks then, blocking the caller until the answer.
    public func requestAccess() async -> Access {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.portalAccess()) }
        }
    }

    /// Whether this backend goes through the camera portal (`portal` resolved on this machine).
    public var usesPortal: Bool { route.usesPortal }
}

/// How a backend reaches the daemon: the portal decision, made once per backend, and the access
/// it was granted (asked again while not granted: a denied answer is the desktop's to change).
struct PortalRoute: Sendable {
    let usesPortal: Bool
    /// The D-Bus address to ask, nil for the session bus (tests point it at a private bus).
    let bus: String?

    init(_ portal: PipeWireBackend.Portal, remote: String?, bus: String?) {
        self.bus = bus
        switch portal {
        case .never: usesPortal = false
        case .always: usesPortal = true
        case .auto:
            if camhal_portal_in_flatpak() != 0 {
                usesPortal = true
            } else if remote != nil || ProcessInfo.processInfo.environment["PIPEWIRE_REMOTE"] != nil {
                usesPortal = false
            } else {
                var error: UnsafeMutablePointer<CChar>?
                usesPortal = camhal_portal_camera_version(bus, &error) >= 0
                free(error)
            }
        }
    }
}

extension PipeWireBackend {
    /// Seconds AccessCamera may wait for the user's answer.
    static let accessTimeout: Double = 300

    /// The portal's answer now: `.granted` once granted (remembered), else asked again.
    func portalAccess() -> Access {
        guard route.usesPortal else { return .granted }
        if accessGranted.withLock({ $0 }) { return .granted }
        var error: UnsafeMutablePointer<CChar>?
        let r = camhal_portal_access_camera(route.bus, Int32(Self.accessTimeout * 1000), &error)
        let reason = takeCString(error)
        switch r {
        case 1:
            accessGranted.withLock { $0 = true }
            return .granted
        case 0: return .denied
        default: return .unavailable(reason: reason ?? "the camera portal did not answer")
        }
    }

    /// A connection to the daemon: through a fresh `OpenPipeWireRemote` fd when the backend goes
    /// through the portal (asking for access first when not granted yet), else to `remote`.
    func connect() throws(PipeWireFailure) -> PipeWireConnection {
        try PipeWireConnection(fd: try remoteFD(), remote: remote, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// The fd of a new portal remote, or -1 to dial `remote` directly.
    func remoteFD() throws(PipeWireFailure) -> Int32 {
        guard route.usesPortal else { return -1 }
        switch portalAccess() {
        case .granted: break
        case .denied:
            throw PipeWireFailure(reason: "camera access was denied through the camera portal (allow it in the desktop's privacy settings)", denied: true)
        case .unavailable(let reason):
            throw PipeWireFailure(reason: "the camera portal: \(reason)")
        }
        var error: UnsafeMutablePointer<CChar>?
        let fd = camhal_portal_open_pipewire_remote(route.bus, &error)
        guard fd >= 0 else { throw PipeWireFailure(reason: "the camera portal: \(takeCString(error) ?? "OpenPipeWireRemote failed")") }
        return fd
    }
}
#endif
