/// A value guarded by a lock, for state read from any thread (S3) and touched by driver threads.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = ThreadLock()
    private var storage: Value
    /// Guards `value`.
    public init(_ value: Value) { storage = value }

    /// Runs `body` with exclusive access to the value. Do not call back into the same lock from `body`.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage)
    }

    /// A copy of the value.
    public var value: Value { withLock { $0 } }
    /// Replaces the value.
    public func set(_ newValue: Value) { withLock { $0 = newValue } }
}
