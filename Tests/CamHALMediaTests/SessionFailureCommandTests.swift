#if Media
@_spi(Testing) import CamHAL
import CamHALTestSupport
import CamHALMedia
@_spi(Testing) import CamHALVirtual
import Foundation
import Testing
@testable import camhal

/// `camhal record` and `camhal hold` when the session fails mid-way: they end at once
/// with the session's error instead of running out their duration, and a cut recording reports
/// the disconnect and stays playable. Faults come from the virtual camera's injection hooks.
@Suite(.serialized)
struct SessionFailureCommandTests {
    /// Waits until `camera` delivers frames, then injects `fault` into its device.
    func inject(_ fault: InjectedFault, into backend: VirtualBackend, camera: Camera) async {
        _ = await firstSnapshot(of: camera, timeout: 5) { $0.isPreviewActive }
        try? await Task.sleep(nanoseconds: 1_000_000_000)  // a second of recording before the cut
        backend.inject(fault, deviceID: camera.device.id)
    }

    /// Would catch: `record` printing a frozen status line until --duration ends, then reporting
    /// "the camera stopped" instead of the disconnect (the file must still decode).
    @Test func recordEndsAtOnceOnDisconnectWithAPlayableFile() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cut.mkv")
        let injector = Task { await inject(.disconnect, into: backend, camera: camera) }
        let started = Date()
        let (status, error, _) = await RecordCommand.record(camera, to: url, duration: 60, options: RecordingOptions(), quiet: true)
        injector.cancel()
        #expect(status == 1)
        guard case .disconnected = error else { Issue.record("ended with \(String(describing: error)), expected disconnected"); return }
        // Bounded far above the second of recording: it would be 60 s if record ran out --duration.
        #expect(Date().timeIntervalSince(started) < 30)
        // Playable: it decodes, and holds what was encoded before the cut (few frames on a loaded machine).
        let decoded = try #require(await decodedFrameCount(url), "the cut file decodes")
        #expect(decoded >= 1, "decoded \(decoded) frames")
    }

    /// Would catch: `hold` sleeping out --seconds and exiting 0 after the device disappeared.
    @Test func holdThrowsTheDisconnectAtOnce() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
        let announced = Locked(false)
        let injector = Task { await inject(.disconnect, into: backend, camera: camera) }
        let started = Date()
        do {
            try await HoldCommand.hold(camera, seconds: 60) { _ in announced.set(true) }
            Issue.record("hold returned normally after a disconnect")
        } catch let e as CameraError {
            guard case .disconnected = e else { Issue.record("threw \(e), expected disconnected"); return }
        }
        injector.cancel()
        #expect(announced.value, "it streamed before the disconnect")
        #expect(Date().timeIntervalSince(started) < 30)
    }

    /// Would catch: `hold` on a busy device waiting instead of failing.
    @Test func holdOnABusyDeviceFailsWithBusy() async throws {
        let backend = VirtualBackend()
        let device = VirtualBackend.descriptors()[1]
        backend.inject(.busy, deviceID: device.id)
        let camera = Camera(backend: backend, device: device)
        await #expect(throws: CameraError.self) { try await HoldCommand.hold(camera, seconds: 60) { _ in } }
    }

    // Faults the session survives reach the user (they passed in silence: hold printed nothing,
    // record exited 0 with no word of a hole). Would catch: a summary without the drops by
    // cause, an error-flagged buffer counted as a driver gap, or an interruption missing.
    @Test func holdSummarisesDropsByCauseAndInterruptions() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
        let injector = Task {
            await inject(.dropFrames(count: 5), into: backend, camera: camera)
            try? await Task.sleep(nanoseconds: 300_000_000)
            backend.inject(.bufferError, deviceID: camera.device.id)
            try? await Task.sleep(nanoseconds: 300_000_000)
            backend.inject(.silentStall(seconds: 2.5), deviceID: camera.device.id)
        }
        let summary = try await HoldCommand.hold(camera, seconds: 7) { _ in }
        injector.cancel()
        let text = summary.joined(separator: "\n")
        #expect(text.contains("driver gap 5"), "\(text)")
        #expect(text.contains("error-flagged 1"), "\(text)")
        #expect(text.contains("1 interruption: at "), "\(text)")
        // The hole's length, as the summary gives it ("... for 2.6 s"): about the stall's 2.5 s.
        let length = text.split(separator: " for ").last.flatMap { Double($0.prefix { $0 != " " }) }
        let hole = try #require(length, "\(text)")
        #expect(hole >= 2 && hole < 4.5, "\(text)")
    }

    // --strict: the first fault ends hold at once with an error. Would catch: --strict ignored.
    @Test func strictHoldFailsAtTheFirstFault() async throws {
        let backend = VirtualBackend()
        let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
        let injector = Task { await inject(.bufferError, into: backend, camera: camera) }
        let started = Date()
        await #expect(throws: CameraError.self) { try await HoldCommand.hold(camera, seconds: 30, strict: true) { _ in } }
        injector.cancel()
        #expect(Date().timeIntervalSince(started) < 20)
    }

    // A recording with a hole exits 0 (the file is whole) but its summary gives the hole's time
    // in the file; with --strict it ends at the hole with status 1, file kept.
    // Would catch: record exiting 0 in silence after a 3 s stall, or --strict not stopping.
    @Test func recordReportsAHoleAndStrictMakesItFatal() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for strict in [false, true] {
            let backend = VirtualBackend()
            let camera = Camera(backend: backend, device: VirtualBackend.descriptors()[1])
            let url = dir.appendingPathComponent("hole-\(strict).mkv")
            let injector = Task { await inject(.interruption(seconds: 2), into: backend, camera: camera) }
            let started = Date()
            let (status, error, summary) = await RecordCommand.record(
                camera, to: url, duration: 6, options: RecordingOptions(), quiet: true, strict: strict)
            injector.cancel()
            #expect(error == nil)
            #expect(status == (strict ? 1 : 0), "strict \(strict): \(summary)")
            #expect(summary.joined().contains("1 interruption: at "), "strict \(strict): \(summary)")
            if strict { #expect(Date().timeIntervalSince(started) < 6, "--strict stopped at the hole") }
            #expect(FileManager.default.fileExists(atPath: url.path))
        }
    }
}
#endif
