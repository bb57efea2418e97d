/// Waits on a session's state that await its snapshots instead of polling `currentState`.
extension CameraDevice {
    /// The first snapshot, the current one included, that satisfies `predicate`: awaited on
    /// `stateUpdates()`, which opens with the current snapshot and then brings each transition.
    /// Nil when none came within `timeout` (no limit when nil), the stream ended, or the waiting
    /// task was cancelled (then at once).
    ///
    /// ```swift
    /// camera.start()
    /// let ready = await camera.firstState(within: .seconds(5)) { $0.isPreviewActive || $0.status == .error }
    /// ```
    public func firstState(
        within timeout: Duration?, where predicate: @escaping @Sendable (CameraState) -> Bool
    ) async -> CameraState? {
        let states = stateUpdates()
        return await withTaskGroup(of: CameraState?.self) { group in
            group.addTask {
                for await s in states where predicate(s) { return s }
                return nil
            }
            if let timeout {
                // Clamped (any Duration, B3); a cancelled sleep ends at once.
                group.addTask {
                    try? await Seconds.sleep(Seconds.of(timeout))
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
