import Dispatch
import FoundationEssentials

/// The published snapshot and its subscribers, behind one lock so a new subscriber gets the
/// current snapshot first and then every later one, with no gap and no repeat (S9).
struct StateChannel {
    var state = CameraState.initial
    /// The subscribers, oldest first, each under a number of this channel's (a few per camera:
    /// an array, and a counter rather than `UUID`, whose first use costs a one-shot command a
    /// million instructions).
    private(set) var continuations: [(id: UInt64, continuation: AsyncStream<CameraState>.Continuation)] = []
    private var lastID: UInt64 = 0

    /// A number no subscriber of this channel had.
    mutating func newID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Adds a subscriber and replays the current snapshot to it. The replay is not a transition
    /// (S2 counts transitions): its sequence number is the one the snapshot already had.
    mutating func subscribe(_ id: UInt64, _ continuation: AsyncStream<CameraState>.Continuation) {
        continuations.append((id, continuation))
        continuation.yield(state)
    }

    /// Drops the subscriber `id`.
    mutating func unsubscribe(_ id: UInt64) {
        continuations.removeAll { $0.id == id }
    }

    /// Stores `next` as the current snapshot and delivers it to every subscriber.
    mutating func publish(_ next: CameraState) {
        state = next
        for c in continuations { c.continuation.yield(next) }
    }
}

// The one state channel (S1–S3): every transition becomes one full snapshot, stored for
// `currentState` and delivered in order to the delegate queue and every `stateUpdates()` stream.
extension Camera {
    /// Publishes one snapshot. With `onlyIfChanged`, nothing is published when the snapshot would
    /// repeat the last one but for its sequence number (S1: one snapshot per change).
    func emit(released: Bool = false, onlyIfChanged: Bool = false) {
        let session = core.locked { m in (status: m.status, isPreviewActive: m.isPreviewActive, error: m.error) }
        let nominal = session.status == .starting || session.status == .idle
        // A5: each snapshot carries the device's convergence as it is now.
        live.convergence = nominal ? .unknown : live.binding?.convergence ?? .unknown
        let published = channel.withLock { ch -> CameraState? in
            func snapshot(_ sequence: UInt64) -> CameraState { CameraState(
                status: session.status,
                zoomRatio: nominal ? 1 : live.ratio,
                minZoomRatio: nominal ? 1 : live.range.lowerBound,
                maxZoomRatio: nominal ? 1 : live.range.upperBound,
                isTorchEnabled: nominal ? false : live.torch,
                focusMode: nominal ? desired.focusMode : live.focusMode,
                activeLens: nominal ? nil : live.lens,
                isPreviewActive: session.isPreviewActive,
                isReleased: released,
                warning: live.warning ?? live.bindingWarning,
                error: session.error,
                sequence: sequence,
                exposure: nominal ? device.exposure.map { $0.clamped(desired.exposure) } : live.exposure,
                whiteBalance: nominal ? device.whiteBalance.map { $0.clamped(desired.whiteBalance) } : live.whiteBalance,
                antiFlicker: nominal ? (device.antiFlickerModes == nil ? nil : desired.antiFlicker) : live.antiFlicker,
                frameRate: nominal ? 0 : live.binding?.format.frameRate ?? 0,
                metering: nominal ? device.metering.map { $0.supported(desired.metering).regions } ?? [] : live.metering,
                convergence: live.convergence) }
            if onlyIfChanged, snapshot(ch.state.sequence) == ch.state { return nil }
            let state = snapshot(ch.state.sequence + 1)
            ch.publish(state)
            return state
        }
        guard let state = published else { return }
        // S10: an event's warning is on its own snapshot only; the next transition is clean.
        live.warning = nil
        publishFrameSettings()
        if let d = delegate {
            delegateQueue.async { d.camera(self, didChangeState: state) }
        }
    }

    /// Hands the settings now in effect to the frame router, which stamps them on frames (M1);
    /// `generation` is the newest setter generation whose changes are applied (M2), nil to keep
    /// the machine's.
    func publishFrameSettings(generation: UInt64? = nil) {
        core.locked { m in
            let settings = FrameSettings(
                lens: live.lens, zoomRatio: live.ratio, deviceCropFactor: live.deviceCropFactor,
                frameCropFactor: live.frameCropFactor, focusMode: live.binding == nil ? nil : live.focusMode,
                torch: live.torch, generation: max(generation ?? 0, m.settings.generation),
                exposure: live.binding == nil ? nil : live.exposure,
                whiteBalanceTemperature: live.binding == nil ? nil : live.whiteBalance?.temperature)
            m.publish(settings)
        }
    }
}
