/// A value guarded by a lock, for state read from any thread (S3) and touched by driver threads.
///
/// The value lives behind a pointer of its own, not in a stored property: an `inout` access to a
/// class's stored property is checked for exclusivity at run time (a thread-local access set
/// entered and left on every access), which the lock already guarantees. On the frame path, where
/// several of these are taken per frame, those checks were about a tenth of the core's
/// instructions (measured with callgrind).
// @unchecked: the value sits behind a pointer (see above) that only `withLock` touches; a Mutex
// would make it Sendable by construction but cannot hand a non-Sendable Value out of the lock.
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
