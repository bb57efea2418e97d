/// A value guarded by a lock, in a class box: for state an escaping closure shares (a thread's
/// body, a callback, a stream's termination handler), which cannot capture a `Mutex` (it is
/// noncopyable), and for a non-Sendable value handed out of the lock, which a `Mutex` refuses. A
/// lock only its own class touches is a `Mutex`, so the class can be plain `Sendable`.
///
/// The value lives behind a pointer of its own, not in a stored property: an `inout` access to a
/// class's stored property is checked for exclusivity at run time (a thread-local access set
/// entered and left on every access), which the lock already guarantees. On the frame path, where
/// several of these are taken per frame, those checks were about a tenth of the core's
/// instructions (measured with callgrind).
// @unchecked: lock-protected box: the value sits behind a pointer (see above) that only `withLock` touches.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = ThreadLock()
    private let storage: UnsafeMutablePointer<Value>
    /// Guards `value`.
    public init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Do not call back into the same lock from `body`.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage.pointee)
    }

    /// A copy of the value.
    public var value: Value { withLock { $0 } }
    /// Replaces the value.
    public func set(_ newValue: Value) { withLock { $0 = newValue } }
}
