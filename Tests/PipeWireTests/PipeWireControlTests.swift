#if PipeWire
import CamHAL
@testable import CamHALPipeWire
import CamHALPipeWireShim
import CamHALTestSupport
import Foundation
import Testing

extension PipeWireTests {
/// Controls from a node's PropInfo and Props params: the test camera started with `--controls`
/// publishes five, as SPA's v4l2 plugin publishes a webcam's (`brightness` under
/// SPA_PROP_brightness; `zoom_absolute` 100...500, `focus_automatic_continuous`, `focus_absolute`
/// 0...250 step 5 and the menu `power_line_frequency` under SPA_PROP_START_CUSTOM + their V4L2
/// control IDs), and publishes their values in its Props param, applying any Props param a client
/// sets on its node.
@Suite("PipeWire backend: node controls")
final class ControlTests {
    let session: PipeWireSession
    let backend: PipeWireBackend
    static let name = "camhal-controls"

    init() async throws {
        session = try await PipeWireSession()
        try await session.addCamera(Self.name, controls: true)
        backend = PipeWireBackend(remote: session.remote)
    }

    /// Sets Props on the node from another process (`pw-cli set-param`), as another client would.
    func setFromAnotherProcess(_ device: DeviceDescriptor, _ props: String) async throws {
        let id = try #require(device.details["pipewire.id"])
        let (status, text) = try await PipeWireSession.spawnAndWait(
            "/usr/bin/pw-cli", ["set-param", id, "Props", props], environment: ["PIPEWIRE_REMOTE": session.remote])
        try #require(status == 0, "pw-cli set-param \(id) Props \(props): \(text)")
    }

    @Test func controlsAreListedAndMappedAsTheV4L2BackendMapsThem() async throws {
        let d = try backend.device(id: Self.name)
        #expect(d.zoomMethod == .optical, "zoom_absolute zooms on the device")
        #expect(d.details["zoomControl"] == "ZOOM_ABSOLUTE 100...500 (ratio = value / 100: 1x...5x)")
        #expect(d.focusModes == [.continuous, .locked, .manual])
        #expect(d.antiFlickerModes == [.off, .hz50, .hz60])
        #expect(d.exposure == nil && d.whiteBalance == nil && !d.hasTorch, "what the node does not list is not supported")
        let controls = try backend.deviceControls(for: d).list()
        #expect(controls.map(\.name) == ["brightness", "zoom_absolute", "focus_automatic_continuous", "focus_absolute", "power_line_frequency"])
        let byName = Dictionary(uniqueKeysWithValues: controls.map { ($0.name, $0) })
        let brightness = try #require(byName["brightness"])
        #expect(brightness.id == 0x0098_0900 && brightness.group == "User Controls" && brightness.type == .integer)
        #expect(brightness.minimum == 0 && brightness.maximum == 255 && brightness.step == 1 && brightness.defaultValue == 128)
        #expect(brightness.value == .integer(128) && brightness.ownedBy == nil)
        let zoom = try #require(byName["zoom_absolute"])
        #expect(zoom.id == 0x009a_090d && zoom.group == "Camera Controls" && zoom.minimum == 100 && zoom.maximum == 500)
        #expect(zoom.ownedBy == "setZoomRatio")
        #expect(byName["focus_automatic_continuous"]?.type == .boolean && byName["focus_automatic_continuous"]?.ownedBy == "setFocusMode")
        #expect(byName["focus_absolute"]?.step == 5)
        let menu = try #require(byName["power_line_frequency"])
        #expect(menu.type == .menu && menu.value == .integer(2))
        #expect(menu.menu == [.init(index: 0, name: "Disabled"), .init(index: 1, name: "50 Hz"), .init(index: 2, name: "60 Hz")])
        // A node without controls has none, and keeps the frame-path crop.
        try await session.addCamera("camhal-plain")
        let plain = try backend.device(id: "camhal-plain")
        #expect(plain.zoomMethod == .frameCrop && plain.focusModes.isEmpty)
        #expect(try backend.deviceControls(for: plain).list().isEmpty)
    }

    @Test func rawControlsAreSetOnTheNode() throws {
        let controls = try backend.deviceControls(for: backend.device(id: Self.name))
        #expect(try controls.set("brightness", to: .integer(77)) == .integer(77))
        #expect(try controls.value(of: "brightness") == .integer(77))
        // Clamped and stepped before the write, as the V4L2 core would store it (X2).
        #expect(try controls.set("brightness", to: .integer(999)) == .integer(255))
        #expect(try controls.set("focus_absolute", to: .integer(12)) == .integer(10))
        #expect(try controls.set("power_line_frequency", text: "50 Hz") == .integer(1))
        #expect(throws: CameraError.self) { try controls.set("power_line_frequency", to: .integer(5)) }
        #expect(throws: CameraError.self) { try controls.set("zoom_absolute", to: .integer(200)) }
        // Another client (a new connection) reads what was written.
        let again = try PipeWireBackend(remote: session.remote).deviceControls(for: backend.device(id: Self.name))
        #expect(try again.value(of: "brightness") == .integer(255) && again.value(of: "power_line_frequency") == .integer(1))
    }

    @Test func zoomAndFocusOfASessionReachTheNode() async throws {
        let device = try backend.device(id: Self.name)
        let camera = Camera(backend: backend, device: device)
        camera.start()
        _ = await awaitState(camera) { $0.isPreviewActive }
        camera.setZoomRatio(3)
        let zoomed = await awaitState(camera) { abs($0.zoomRatio - 3) < 0.01 }
        #expect(zoomed != nil, "\(camera.currentState)")
        let controls = try backend.deviceControls(for: device)
        #expect(try controls.value(of: "zoom_absolute") == .integer(300), "3x is zoom_absolute 300 (100 = 1x)")
        // The frames say the device zoomed: the sensor crop is the middle third, the frame path crops nothing.
        let frame = try await camera.frame(atGeneration: camera.requestedSettingsGeneration, timeout: .seconds(5))
        #expect(abs(frame.metadata.deviceCrop.width - 1.0 / 3) < 0.01 && frame.metadata.frameCrop == .full, "\(frame.metadata)")
        camera.setFocusMode(.locked)
        _ = await awaitState(camera) { $0.focusMode == .locked }
        #expect(try controls.value(of: "focus_automatic_continuous") == .integer(0))
        camera.setFocusMode(.continuous)
        _ = await awaitState(camera) { $0.focusMode == .continuous }
        #expect(try controls.value(of: "focus_automatic_continuous") == .integer(1))
        await camera.stop()
    }

    @Test func anotherClientsZoomAndFocusReachTheSnapshot() async throws {
        let device = try backend.device(id: Self.name)
        let camera = Camera(backend: backend, device: device)
        camera.start()
        _ = await awaitState(camera) { $0.isPreviewActive }
        try await setFromAnotherProcess(device, "{ \(0x0100_0000 + 0x009a_090d): 200 }")  // zoom_absolute
        let zoomed = await awaitState(camera) { abs($0.zoomRatio - 2) < 0.01 }
        #expect(zoomed != nil, "zoom_absolute 200 set by another client: \(camera.currentState)")
        try await setFromAnotherProcess(device, "{ \(0x0100_0000 + 0x009a_090c): false }")  // focus_automatic_continuous
        let manual = await awaitState(camera) { $0.focusMode == .manual }
        #expect(manual != nil, "focus_automatic_continuous off by another client, with focus_absolute: \(camera.currentState)")
        await camera.stop()
    }

    /// A session's own writes come back as Props params (their echo), and the first Props param
    /// after the subscription holds the node's values from before this session: neither is another
    /// client's change. Both were once reported as one (a zoom flood: an older echo after a newer
    /// write; a new session: a previous session's zoom after this one's first write).
    @Test func echoesAndTheFirstPropsParamAreNotAnotherClientsChange() throws {
        let zoomID: UInt32 = 0x009a_090d
        var p = camhal_pw_prop()
        p.id = 0x0100_0000 + zoomID
        p.kind = UInt32(CAMHAL_PW_PROP_INT)
        p.minimum = 100
        p.maximum = 500
        p.step = 1
        p.def = 100
        let written = Locked([Int64]())
        let access = PipeWireV4L2Controls(PipeWireControls(scheme: .v4l2, entries: [.init(p)])) { _, v in
            written.withLock { $0.append(v) }
            return nil
        }
        try access.setControl(zoomID, 100)
        access.baseline([(propID: p.id, value: 200)])
        #expect(access.update(reported: [(propID: p.id, value: 100)]).isEmpty, "the echo of this session's first write")
        #expect(try access.getControl(zoomID) == 100)
        try access.setControl(zoomID, 240)
        try access.setControl(zoomID, 150)
        #expect(access.update(reported: [(propID: p.id, value: 240)]).isEmpty, "an older echo after a newer write")
        #expect(access.update(reported: [(propID: p.id, value: 150)]).isEmpty)
        #expect(access.update(reported: [(propID: p.id, value: 300)]).map(\.value) == [300], "another client's zoom")
        #expect(written.value == [100, 240, 150])
    }

    @Test func changesReportAnotherClientsWrites() async throws {
        let device = try backend.device(id: Self.name)
        let controls = try backend.deviceControls(for: device)
        #expect(controls.reportsExternalChanges, "the test camera publishes its Props values")
        let stream = controls.changes()
        let seen = Task { () -> DeviceControlChange? in
            for await change in stream where change.name == "brightness" && change.control.value == .integer(42) { return change }
            return nil
        }
        try await setFromAnotherProcess(device, "{ brightness: 42 }")
        let change = await within(10) { await seen.value } ?? nil
        seen.cancel()
        #expect(change?.kind == .value, "no change reported for brightness 42 set by pw-cli")
    }
}
}
#endif
