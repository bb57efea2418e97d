import CamHAL
import Synchronization

/// Every snapshot of a session from the moment the log is made (the current one first, S9), fed
/// by the camera's `stateUpdates()`; a wait is woken by each snapshot as it arrives, never by a
/// timer that polls.
public final class StateLog: Sendable {
    private struct State {
        var snapshots: [CameraState] = []
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits cancelled before their continuation was parked.
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Starts recording `camera`'s snapshots.
    public init(_ camera: any CameraDevice) {
        let stream = camera.stateUpdates()
        Task { [self] in for await s in stream { append(s) } }
    }

    /// Every snapshot recorded so far.
    public var value: [CameraState] { state.locked { $0.snapshots } }

    /// The first recorded snapshot (old or new) from `index` on that satisfies `predicate`,
    /// waiting for new ones; nil once the waiting task is cancelled.
    public func first(after index: Int = 0, where predicate: (CameraState) -> Bool) async -> CameraState? {
        var checked = max(0, index)
        while !Task.isCancelled {
            let new = state.locked { s in s.snapshots.count > checked ? Array(s.snapshots[checked...]) : [] }
            if let s = new.first(where: predicate) { return s }
            checked += new.count
            await waitForMore(than: checked)
        }
        return nil
    }

    /// `first(after:where:)` within `timeout` seconds the cooperative pool could run (`within`).
    public func wait(
        after index: Int = 0, timeout: Double = 10, _ predicate: @escaping @Sendable (CameraState) -> Bool
    ) async -> CameraState? {
        await within(timeout) { () async -> CameraState? in
            await self.first(after: index, where: predicate)
        } ?? nil
    }

    private func append(_ snapshot: CameraState) {
        let woken = state.locked { s -> [CheckedContinuation<Void, Never>] in
            s.snapshots.append(snapshot)
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for c in woken { c.resume() }
    }

    /// Returns once more than `count` snapshots are recorded, or the task is cancelled.
    private func waitForMore(than count: Int) async {
        let id = state.locked { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.locked { s -> Bool in
                    if s.cancelledEarly.remove(id) != nil || s.snapshots.count > count { return true }
                    s.waiters[id] = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            let parked = state.locked { s -> CheckedContinuation<Void, Never>? in
                if let c = s.waiters.removeValue(forKey: id) { return c }
                s.cancelledEarly.insert(id)
                return nil
            }
            parked?.resume()
        }
    }
}

/// The first snapshot of `camera`, the current one included, that satisfies `predicate`, awaited
/// on `stateUpdates()` (no polling); nil when none came within `timeout` seconds the cooperative
/// pool could run (`within`).
public func firstSnapshot(
    of camera: any CameraDevice, timeout: Double = 10, _ predicate: @escaping @Sendable (CameraState) -> Bool
) async -> CameraState? {
    await within(timeout) { () async -> CameraState? in
        for await s in camera.stateUpdates() where predicate(s) { return s }
        return nil
    } ?? nil
}
