import Dispatch
import FoundationEssentials

// Metering regions (A1–A6), as CameraX's FocusMeteringAction: setters validate and hop onto the
// queue (fire-and-forget, refusals named, B1, Q1); the regions are desired values in view
// coordinates, mapped to the lens through the live crop when applied (the one mapping a focus
// point uses, F1) and re-applied on every bind (P1). The backends only meter what they are told.
extension Camera {
    /// Meters `regions` for AF, AE and/or AWB, as CameraX's
    /// `startFocusAndMetering(FocusMeteringAction)` and AVFoundation's `focusPointOfInterest` and
    /// `exposurePointOfInterest`: `camera.setMetering([MeteringRegion(point: tap, modes: .ae)])`.
    ///
    /// Regions are view-normalized and follow the view through zoom (A3). The device meters the
    /// part it supports (`MeteringCapabilities`); the rest is answered with `controlUnsupported`
    /// (A6). After `autoCancelAfter` (CameraX's default 5 s; nil for never)
    /// metering returns to the whole frame, as `cancelMetering()` does (A4). A region with a NaN,
    /// its centre outside the view, a side not in (0, 1] or no mode, and a duration not above
    /// zero, are refused with `invalidArgument` naming them, leaving metering as it
    /// was (A2); a region spilling over the view's edge is clipped to it. An empty list is
    /// `cancelMetering()`.
    public func setMetering(_ regions: [MeteringRegion], autoCancelAfter duration: Duration? = .seconds(5)) {
        if let duration, duration <= .zero { return reject("meteringAutoCancel", duration) }
        let seconds = duration.map(Seconds.of)
        var valid: [MeteringRegion] = []
        for region in regions {
            guard let v = MeteringMath.validated(region) else { return reject("meteringRegion", region) }
            valid.append(v)
        }
        submit(.metering(valid, autoCancel: seconds.flatMap { $0 >= Seconds.maximum ? nil : $0 }))
    }

    /// Returns AF, AE and AWB to metering the whole frame, as CameraX's
    /// `cancelFocusAndMetering()` (A4).
    public func cancelMetering() { submit(.metering([], autoCancel: nil)) }

    // MARK: Applying (on the queue)

    /// One metering call's effect: the desired regions change, the auto-cancel is re-armed, and
    /// a running session applies them and emits one snapshot (S2).
    func applyMeteringChange(_ regions: [MeteringRegion], autoCancel: Double?, isRunning: Bool) {
        desired.metering = regions
        armMeteringCancel(regions.isEmpty ? nil : autoCancel)
        guard isRunning, live.binding != nil else { return }
        applyMetering(asked: true)
        emit()
    }

    /// Applies the desired regions, mapped through the live crop (A3), or warns where the device
    /// lacks what they ask (A6); `asked` is a metering call being applied (false on a bind).
    func applyMetering(asked: Bool) {
        guard let binding = live.binding else { return }
        guard let caps = device.metering else {
            live.metering = []
            if !desired.metering.isEmpty { live.warning = .controlUnsupported("metering regions") }
            return
        }
        let (regions, dropped) = caps.supported(desired.metering)
        if !dropped.isEmpty { live.warning = .controlUnsupported("metering \(dropped) (device takes \(caps.modes), \(caps.maxRegions) each)") }
        guard asked || !regions.isEmpty || !live.metering.isEmpty else { return }  // a bind on the default changes nothing
        guard binding.applyMetering(MeteringMath.toLens(regions, crop: viewCrop)) else {
            live.metering = []
            live.warning = .controlUnsupported("metering regions")
            return
        }
        live.metering = regions
        // Auto exposure now aims at the metered light: the snapshot's duration and gain are read again.
        if live.exposure?.mode == .continuousAuto { applyExposure(asked: nil) }
    }

    /// Schedules the return to whole-frame metering `seconds` from now (A4); nil cancels it.
    func armMeteringCancel(_ seconds: Double?) {
        meteringCancel?.cancel()
        meteringCancel = nil
        guard let seconds else { return }
        let timer = queue.makeTimer { [weak self] in
            guard let self else { return }
            self.meteringCancel?.cancel()
            self.meteringCancel = nil
            self.drainPending()  // a metering call already waiting wins over its predecessor's cancel
            guard !self.desired.metering.isEmpty, self.meteringCancel == nil else { return }
            self.applyMeteringChange([], autoCancel: nil, isRunning: self.core.locked { $0.isStreaming })
        }
        meteringCancel = timer
        timer.schedule(after: seconds)
    }
}
