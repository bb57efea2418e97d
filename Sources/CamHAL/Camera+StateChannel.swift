import Dispatch

// The one state channel (S1–S3): every transition becomes one full snapshot, stored for
// `currentState` and delivered in order to the delegate queue and every `stateUpdates()` stream.
extension Camera {
    func emit(released: Bool = false) {
        let nominal = live.status == .starting || live.status == .idle
        let previous = published.value
        let state = CameraState(
            status: live.status,
            zoomRatio: nominal ? 1 : live.ratio,
            minZoomRatio: nominal ? 1 : live.range.lowerBound,
            maxZoomRatio: nominal ? 1 : live.range.upperBound,
            isTorchEnabled: nominal ? false : live.torch,
            focusMode: nominal ? desired.focusMode : live.focusMode,
            activeLens: nominal ? nil : live.lens,
            isPreviewActive: live.previewActive,
            isReleased: released,
            warning: live.warning,
            error: live.error,
            sequence: previous.sequence + 1)
        published.set(state)
        for c in stateContinuations.value.values { c.yield(state) }
        if let d = delegate {
            delegateQueue.async { d.camera(self, didChangeState: state) }
        }
    }
}
