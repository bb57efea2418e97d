import FoundationEssentials

/// The backends an app may use, in its order of preference (D1).
///
/// `CAMHAL_BACKENDS=v4l2,gstreamer` in the environment overrides the app's order (and filters it).
/// An unavailable backend is listed with its reason; it is skipped, never fatal.
public struct BackendRegistry: Sendable {
    /// Every registered backend, in the app's order of preference.
    public let registered: [any CameraBackend]
    /// The order in force, after `CAMHAL_BACKENDS`.
    public let preference: [String]

    /// - Parameters:
    ///   - backends: every backend the app links, in its order of preference.
    ///   - environment: where `CAMHAL_BACKENDS` is read (the process environment by default).
    public init(_ backends: [any CameraBackend], environment: [String: String] = ProcessInfo.processInfo.environment) {
        registered = backends
        let names = backends.map(\.identifier)
        override = environment["CAMHAL_BACKENDS"]
        if let env = override, !trimmingSpaces(env).isEmpty {
            preference = env.split(separator: ",").map { trimmingSpaces($0).lowercased() }
                .filter { !$0.isEmpty }
        } else {
            preference = names
        }
    }

    /// `CAMHAL_BACKENDS` as given.
    private let override: String?

    /// Why the preference order cannot open anything whatever the devices: `CAMHAL_BACKENDS`
    /// names only unknown backends (`unknownBackend` naming the first), or only separators
    /// (`invalidArgument`); nil otherwise.
    public var preferenceProblem: CameraError? {
        guard !registered.isEmpty, ordered.allSatisfy({ $0.backend == nil }) else { return nil }
        if let unknown = preference.first { return .unknownBackend(unknown, known: identifiers) }
        return .invalidArgument(name: "CAMHAL_BACKENDS", value: override ?? "",
                                reason: "names no backend; use a comma-separated list of \(identifiers.joined(separator: ", "))")
    }

    /// The registered identifiers.
    public var identifiers: [String] { registered.map(\.identifier) }

    /// The backend named `identifier`, or `CameraError.unknownBackend` naming it (B2).
    public func backend(_ identifier: String) throws(CameraError) -> any CameraBackend {
        guard let b = registered.first(where: { $0.identifier == identifier.lowercased() }) else {
            throw CameraError.unknownBackend(identifier, known: identifiers)
        }
        return b
    }

    /// Backends in preference order (unknown names in `CAMHAL_BACKENDS` are reported, not fatal).
    public var ordered: [(identifier: String, backend: (any CameraBackend)?)] {
        preference.map { name in (name, registered.first { $0.identifier == name }) }
    }

    /// The first camera in preference order: the first device of the first available backend
    /// that has one, skipping devices listed with an access error (`details["error"]`) and test sources (`DeviceDescriptor.isTestSource`) unless
    /// `CAMHAL_BACKENDS` names the backends (then the user asked for them).
    public func firstAvailable() -> (any CameraBackend, DeviceDescriptor)? {
        (try? defaultDevice().get())
    }

    /// Whether `CAMHAL_BACKENDS` chose the backends (so their test sources may open by default).
    private var preferenceIsExplicit: Bool { override.map { !trimmingSpaces($0).isEmpty } ?? false }

    /// The default device, or `CameraError.noCamera` saying what each backend saw.
    private func defaultDevice() -> Result<(any CameraBackend, DeviceDescriptor), CameraError> {
        var lookedAt: [String] = []
        for (name, backend) in ordered {
            guard let backend else {
                lookedAt.append("\(name): unknown backend in CAMHAL_BACKENDS")
                continue
            }
            if case .unavailable(let reason) = backend.availability() {
                lookedAt.append("\(name): unavailable (\(reason))")
                continue
            }
            let devices: [DeviceDescriptor]
            do {
                devices = try backend.devices()
            } catch {
                lookedAt.append("\(name): listing failed (\(error))")
                continue
            }
            // A device listed with an access error (`details["error"]`: a node this user may not
            // open) is reported, not chosen: another camera may be usable.
            if let camera = devices.first(where: { ($0.details["error"] == nil) && (preferenceIsExplicit || !$0.isTestSource) }) {
                return .success((backend, camera))
            }
            var seen = devices.compactMap { d in d.details["error"].map { "'\(d.id)' cannot be opened (\($0))" } }
            let tests = devices.filter { $0.isTestSource && $0.details["error"] == nil }.map { "'\($0.id)'" }
            if !tests.isEmpty { seen.append("only test source \(tests.joined(separator: ", ")), opened by name") }
            lookedAt.append("\(name): " + (seen.isEmpty ? "no device" : seen.joined(separator: ", ")))
        }
        return .failure(.noCamera(lookedAt: lookedAt))
    }

    /// Opens a session on `deviceID` of `backend`; with neither, on the first camera in preference
    /// order (``firstAvailable()``), or throws `CameraError.noCamera` saying what was looked at.
    /// A test source is never the default: name it (`open(backend: "virtual")`) or list its
    /// backend in `CAMHAL_BACKENDS`.
    public func open(backend: String? = nil, device deviceID: String? = nil, configuration: Camera.Configuration = .init())
        throws(CameraError) -> Camera
    {
        if let backend {
            let b = try self.backend(backend)
            if case .unavailable(let reason) = b.availability() {
                // A backend with no device at all (the one webcam unplugged) may still know the
                // ID: "not connected" says more than "unavailable".
                if let deviceID, case .failure(.disconnected(let id)) = Result(catching: { () throws(CameraError) in try b.device(id: deviceID) }) {
                    throw CameraError.disconnected(device: id)
                }
                throw CameraError.backendUnavailable(backend: b.identifier, reason: reason)
            }
            let device: DeviceDescriptor
            if let deviceID {
                device = try b.device(id: deviceID)
            } else {
                guard let d = try b.devices().first else { throw CameraError.backendUnavailable(backend: b.identifier, reason: "no device found") }
                device = d
            }
            return Camera(backend: b, device: device, configuration: configuration)
        }
        if let problem = preferenceProblem { throw problem }
        if let deviceID {
            var absent: CameraError?
            // A backend's own failure with the ID (no permission, busy, its listing failed) says
            // more than "unknown device", which it would become if every backend were only asked
            // whether it knows the ID.
            var failure: CameraError?
            for (_, b) in ordered {
                guard let b, b.availability().isAvailable else { continue }
                do {
                    return Camera(backend: b, device: try b.device(id: deviceID), configuration: configuration)
                } catch .disconnected(let id) {
                    absent = .disconnected(device: id)  // a backend knows the ID: its device is unplugged
                } catch .unknownDevice {
                    continue
                } catch {
                    if failure == nil { failure = error }
                }
            }
            throw absent ?? failure ?? CameraError.unknownDevice(id: deviceID, backend: preference.joined(separator: ","))
        }
        let (b, d) = try defaultDevice().get()
        return Camera(backend: b, device: d, configuration: configuration)
    }
}

extension BackendRegistry {
    /// Watches every available backend for devices appearing and disappearing (D3). Backends
    /// that cannot watch are skipped; the returned watches stop when cancelled.
    public func watchDevices(_ handler: @escaping @Sendable (_ backend: String, DeviceEvent) -> Void) -> [any DeviceWatch] {
        ordered.compactMap { entry -> (any DeviceWatch)? in
            guard let backend = entry.backend, backend.availability().isAvailable else { return nil }
            let id = backend.identifier
            return backend.watchDevices { handler(id, $0) }
        }
    }
}
