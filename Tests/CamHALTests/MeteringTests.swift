import Foundation
import Testing
@_spi(Testing) @testable import CamHAL
@_spi(Testing) @_spi(Backend) @testable import CamHALVirtual

/// Metering regions (A1–A7): the pure validation, capability cutting and view-to-lens mapping,
/// the virtual sensor's metered auto exposure, and the session's handling of the setters.
@Suite("Metering (A1-A7)")
struct MeteringTests {
    // A2: NaN, infinities, a centre outside the view, a side outside (0, 1] and no mode are
    // refused; a point near an edge is clipped to the view, keeping its centre's side.
    @Test func regionsAreValidatedAndClipped() throws {
        #expect(MeteringMath.validated(MeteringRegion(point: NormalizedPoint(x: .nan, y: 0.5))) == nil)
        #expect(MeteringMath.validated(MeteringRegion(point: NormalizedPoint(x: 1.5, y: 0.5))) == nil)
        #expect(MeteringMath.validated(MeteringRegion(point: .center, size: .infinity)) == nil)
        #expect(MeteringMath.validated(MeteringRegion(point: .center, size: 0)) == nil)
        #expect(MeteringMath.validated(MeteringRegion(point: .center, size: 1.5)) == nil)
        #expect(MeteringMath.validated(MeteringRegion(point: .center, modes: [])) == nil)
        let corner = try #require(MeteringMath.validated(MeteringRegion(point: NormalizedPoint(x: 0, y: 1))))
        #expect(corner.rect.x == 0 && abs(corner.rect.y - 0.925) < 1e-12 && abs(corner.rect.width - 0.075) < 1e-12)
        #expect(abs(corner.rect.y + corner.rect.height - 1) < 1e-12)
        let whole = MeteringRegion(rect: .full, modes: .ae)
        #expect(MeteringMath.validated(whole) == whole)
    }

    // A3: the one crop a focus point goes through: the centre stays the centre at any zoom, the
    // view's (0.25, 0.25) at 2x is the lens's (0.375, 0.375), and the size shrinks with the zoom.
    @Test func regionsMapThroughTheZoomCrop() {
        for zoom in [1.0, 2.0, 5.3] {
            let lens = MeteringMath.toLens([MeteringRegion(point: .center)], crop: .centered(zoomFactor: zoom))
            #expect(abs(lens[0].center.x - 0.5) < 1e-12 && abs(lens[0].center.y - 0.5) < 1e-12)
        }
        let lens = MeteringMath.toLens([MeteringRegion(point: NormalizedPoint(x: 0.25, y: 0.25), modes: .af)], crop: .centered(zoomFactor: 2))
        #expect(abs(lens[0].center.x - 0.375) < 1e-12 && abs(lens[0].center.y - 0.375) < 1e-12)
        #expect(abs(lens[0].rect.width - MeteringRegion.defaultPointSize / 2) < 1e-12)
        #expect(lens[0].modes == .af)
    }

    // A7: what the device cannot meter is cut away and named: a loop it lacks, regions past its count.
    @Test func capabilitiesCutWhatTheDeviceLacks() {
        let aeOnly = MeteringCapabilities(modes: .ae, maxRegions: 1)
        let (kept, dropped) = aeOnly.supported([MeteringRegion(point: .center), MeteringRegion(point: NormalizedPoint(x: 0.2, y: 0.2), modes: .ae)])
        #expect(kept.map(\.modes) == [.ae])
        #expect(dropped == .all)
        let all = MeteringCapabilities(modes: .all, maxRegions: 2)
        let r = [MeteringRegion(point: .center, modes: .af), MeteringRegion(point: .center, modes: .all)]
        #expect(all.supported(r).regions == r && all.supported(r).dropped.isEmpty)
        #expect(MeteringCapabilities(modes: .all, maxRegions: 0).maxRegions == 1)
        #expect(MeteringModes.all.description == "af+ae+awb" && MeteringModes().description == "none")
    }

    // Q1, A4: a metering call and a cancel are one control, the latest wins.
    @Test func meteringAndCancelCoalesce() {
        var p = Camera.Pending()
        _ = p.add(.metering([MeteringRegion(point: .center)], autoCancel: 5))
        _ = p.add(.torch(true))
        _ = p.add(.metering([], autoCancel: nil))
        let (changes, _) = p.take()
        #expect(changes.count == 2)
        guard case .metering(let regions, let cancel) = changes.last else {
            Issue.record("changes \(changes)")
            return
        }
        #expect(regions.isEmpty && cancel == nil)
    }

    // A5: the virtual sensor's auto exposure aims at the metered light: a dark region (the left
    // of the gradient) raises the target, a bright one lowers it, the whole frame keeps 2^bias;
    // the loop reports adjusting until it arrives, then converged.
    @Test func virtualAutoExposureConvergesOnTheMeteredLight() {
        let wide = Lens(id: "w", kind: .wide, facing: .back, minZoomRatio: 1, maxZoomRatio: 10, hasFlash: false)
        var v = VirtualPhysics(frameRate: 30)
        _ = v.apply(ExposureSettings(mode: .continuousAuto))
        #expect(v.target == 1 && v.exposureConvergence == .converged)
        let dark = SceneRenderer.light(in: MeteringRegion(point: NormalizedPoint(x: 0.1, y: 0.5)).rect, lens: wide)
        let bright = SceneRenderer.light(in: MeteringRegion(point: NormalizedPoint(x: 0.9, y: 0.5)).rect, lens: wide)
        #expect(abs(SceneRenderer.light(in: .full, lens: wide) - VirtualPhysics.referenceLight) < 1e-9)
        #expect(dark < VirtualPhysics.referenceLight && bright > VirtualPhysics.referenceLight)
        v.meter(light: dark)
        #expect(abs(v.target - VirtualPhysics.referenceLight / dark) < 1e-9)
        #expect(v.exposureConvergence == .adjusting)
        var frames = 0
        while v.exposureConvergence == .adjusting, frames < 30 {
            v.step()
            frames += 1
        }
        #expect(v.exposureConvergence == .converged && frames > 1 && frames < 12)
        v.meter(light: bright)
        #expect(v.target < 1)
        v.meter(light: nil)
        #expect(abs(v.target - 1) < 1e-12)
        // Locked holds: metering moves no target.
        _ = v.apply(ExposureSettings(mode: .locked))
        let held = v.target
        v.meter(light: dark)
        #expect(v.target == held && v.exposureConvergence == .converged)
    }

    // A2, B1: refusals are warnings naming the value; nothing changes.
    @Test func refusedMeteringNamesTheValue() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let mark = states.value.count
        cam.setMetering([MeteringRegion(point: .center)], autoCancelAfter: .seconds(-1))
        let s = try #require(await waitFor(states, after: mark) { $0.warning != nil })
        #expect(s.warning == .invalidArgument(name: "meteringAutoCancel", value: "\(Duration.seconds(-1))"))
        #expect(s.metering.isEmpty)
        await cam.stop()
    }

    // A1, A3, A6: metering set before start lands on the first bind, mapped through the zoom
    // the session starts at, follows a later zoom, and survives stop/start.
    @Test func meteringSetBeforeStartLandsFollowsZoomAndPersists() async throws {
        let (cam, states, backend) = try makeSession()
        let region = MeteringRegion(point: NormalizedPoint(x: 0.25, y: 0.25), modes: .ae)
        cam.setZoomRatio(2)
        cam.setMetering([region], autoCancelAfter: nil)
        cam.start()
        let s = try #require(await waitFor(states) { $0.isPreviewActive })
        #expect(s.metering == [region])
        let lens = try #require(backend.lastMeteringRegions(deviceID: "virtual-back")?.first)
        #expect(abs(lens.center.x - 0.375) < 1e-9 && abs(lens.center.y - 0.375) < 1e-9)
        cam.setZoomRatio(1)
        _ = try await cam.frame(atGeneration: cam.requestedSettingsGeneration)
        let followed = try #require(backend.lastMeteringRegions(deviceID: "virtual-back")?.first)
        #expect(abs(followed.center.x - 0.25) < 1e-9)
        await cam.stop()
        let mark = states.value.count
        cam.start()
        let again = try #require(await waitFor(states, after: mark) { $0.isPreviewActive })
        #expect(again.metering == [region])
        await cam.stop()
    }

    // A4: the auto-cancel returns to whole-frame metering in a snapshot of its own, and the
    // device is told (awaited as a state, not slept for).
    @Test func autoCancelReturnsToTheWholeFrame() async throws {
        let (cam, states, backend) = try makeSession()
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let mark = states.value.count
        cam.setMetering([MeteringRegion(point: .center)], autoCancelAfter: .seconds(0.2))
        let set = try #require(await waitFor(states, after: mark) { !$0.metering.isEmpty })
        let cancelled = try #require(await waitFor(states, after: states.value.firstIndex(of: set) ?? mark) { $0.metering.isEmpty })
        #expect(cancelled.status == .running && cancelled.warning == nil)
        #expect(backend.lastMeteringRegions(deviceID: "virtual-back") == [])
        await cam.stop()
    }

    // A5: metering a dark area on a continuous-auto session: the snapshot of the change says
    // adjusting and shows the longer exposure the loop heads for, a later one says converged.
    @Test func meteringMovesTheExposureAndReportsConvergence() async throws {
        let (cam, states, _) = try makeSession()
        cam.start()
        let before = try #require(await waitFor(states) { $0.isPreviewActive })
        func light(_ s: CameraState) -> Double { Seconds.of(s.exposure?.duration ?? .zero) * (s.exposure?.gain ?? 0) }
        let mark = states.value.count
        cam.setMetering([MeteringRegion(point: NormalizedPoint(x: 0.1, y: 0.5), modes: .ae)], autoCancelAfter: nil)
        let metered = try #require(await waitFor(states, after: mark) { !$0.metering.isEmpty })
        #expect(metered.convergence.exposure == .adjusting)
        #expect(light(metered) > 1.5 * light(before))
        let converged = try #require(await waitFor(states, after: mark) { $0.convergence.exposure == .converged })
        #expect(converged.sequence > metered.sequence && converged.metering == metered.metering && converged.warning == nil)
        await cam.stop()
    }

    // A7: a device without metering answers controlUnsupported, reports no region and stays running.
    @Test func unsupportedDeviceWarns() async throws {
        let (cam, states, _) = try makeSession("virtual-front")
        #expect(cam.capabilities.metering(for: .front) == nil)
        cam.start()
        _ = try #require(await waitFor(states) { $0.isPreviewActive })
        let mark = states.value.count
        cam.setMetering([MeteringRegion(point: .center)])
        let s = try #require(await waitFor(states, after: mark) { $0.warning != nil })
        #expect(s.warning?.code == "controlUnsupported" && s.status == .running && s.metering.isEmpty)
        await cam.stop()
    }

    // A5: convergence is unknown while not bound and on a backend that does not report it.
    @Test func convergenceUnknownWhereNotReported() async throws {
        #expect(CameraState.initial.convergence == .unknown)
        let (cam, states, _) = try makeSession()
        cam.start()
        let running = try #require(await waitFor(states) { $0.isPreviewActive })
        #expect(running.convergence == Convergence(exposure: .converged, focus: .converged))
        #expect(states.value.first { $0.status == .starting }?.convergence == .unknown)
        await cam.stop()
    }
}
