#if PipeWire
import CamHAL
@testable import CamHALPipeWire
import CamHALTestSupport
import Foundation
import Testing

/// Whether xdg-desktop-portal is installed (scripts/bootstrap installs it).
let portalInstalled = FileManager.default.isExecutableFile(atPath: "/usr/libexec/xdg-desktop-portal")

extension PipeWireTests {
/// The camera portal end to end, on a private session bus: xdg-desktop-portal 1.16 (the real
/// one, unsandboxed caller: app id "") with a stand-in permission dialog
/// (`camhal-portal-access-stub`: xdg-desktop-portal exports the Camera interface only when a
/// desktop's Access backend is installed, and asks it because the permission store has no answer
/// yet), wireplumber granting the portal's remote its camera nodes, and the backend listing and
/// streaming through the fd OpenPipeWireRemote returns. What this cannot reach: a real Flatpak
/// sandbox (the app id comes from one) and a real desktop's dialog.
@Suite("PipeWire backend: camera portal", .enabled(if: portalInstalled, "needs xdg-desktop-portal (scripts/bootstrap)"))
struct PortalTests {
    /// This process's environment without the variables that would name the daemon directly.
    static func environment(bus: String, runtime: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["PIPEWIRE_REMOTE"] = nil
        env["DBUS_SESSION_BUS_ADDRESS"] = bus
        env["XDG_RUNTIME_DIR"] = runtime
        return env
    }

    @Test func grantedAccessListsAndStreamsThroughThePortalsRemote() async throws {
        let session = try await PipeWireSession(portal: "grant")
        try await session.addCamera("camhal-portal")
        let backend = PipeWireBackend(remote: nil, portal: .always, timeout: .seconds(5), portalBus: session.bus)
        #expect(backend.usesPortal)
        #expect(await backend.requestAccess() == .granted)
        let dialog = try String(contentsOfFile: session.directory + "/portal-stub.log", encoding: .utf8)
        #expect(dialog.contains("AccessDialog app_id='' title='Turn On Camera?' -> grant"), "the dialog was not asked: \(dialog)")
        let devices = try backend.devices()
        #expect(devices.map(\.id) == ["camhal-portal"], "through the portal's remote: \(devices.map(\.id))")
        let (frames, state) = await streamBriefly(backend, try #require(devices.first), count: 3)
        #expect(state.error == nil, "\(state)")
        #expect(frames.count == 3, "\(frames.count) frames through the portal's remote")

        // Another process, as an app runs: no daemon named, no pipewire-0 in its runtime
        // directory, the portal on its session bus (`.auto` picks it); access already granted.
        let runtime = session.directory + "/app-runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let env = Self.environment(bus: session.bus, runtime: runtime)
        let hold = try await runChild(
            PipeWireSession.builtTool("camhal"), ["hold", "--backend", "pipewire", "--device", "camhal-portal", "--seconds", "1"],
            environment: env, mergeOutput: true)
        #expect(hold.status == 0 && hold.stdout.contains("streaming "), "camhal hold through the portal: \(hold.stdout)")
        let probe = try await runChild(PipeWireSession.builtTool("camhal"), ["probe", "--backend", "pipewire"], environment: env, mergeOutput: true)
        #expect(probe.status == 0 && probe.stdout.contains("device camhal-portal "), "camhal probe through the portal: \(probe.stdout)")
    }

    @Test func deniedAccessIsPermissionDeniedNamingThePortal() async throws {
        let session = try await PipeWireSession(portal: "deny")
        try await session.addCamera("camhal-portal")
        let backend = PipeWireBackend(remote: nil, portal: .always, timeout: .seconds(5), portalBus: session.bus)
        #expect(await backend.requestAccess() == .denied)
        #expect(throws: CameraError.self) { try backend.devices() }
        do {
            _ = try backend.devices()
        } catch {
            guard case .permissionDenied(_, let remedy) = error else { Issue.record("denied access gave \(error)"); return }
            #expect(remedy.contains("camera portal"), "\(remedy)")
        }
        guard case .unavailable(let reason) = backend.availability() else { Issue.record("available with access denied"); return }
        #expect(reason.contains("denied"), "\(reason)")
    }

    @Test func aNamedDaemonOrNeverBypassesThePortal() async throws {
        let session = try await PipeWireSession(portal: "deny")
        try await session.addCamera("camhal-direct")
        // `.auto` with a remote: the daemon named; `.never`: never the portal (its denial is not consulted).
        for backend in [PipeWireBackend(remote: session.remote, portal: .auto, timeout: .seconds(5), portalBus: session.bus),
                        PipeWireBackend(remote: session.remote, portal: .never, timeout: .seconds(5), portalBus: session.bus)] {
            #expect(!backend.usesPortal)
            #expect(await backend.requestAccess() == .granted)
            #expect(try backend.devices().map(\.id) == ["camhal-direct"])
        }
        // `.always` without a camera portal on the bus: unavailable, saying so.
        let none = PipeWireBackend(remote: nil, portal: .always, timeout: .seconds(5), portalBus: "unix:path=\(session.directory)/no-bus")
        guard case .unavailable(let reason) = none.availability() else { Issue.record("available without a portal"); return }
        #expect(reason.contains("portal"), "\(reason)")
    }
}
}
#endif
