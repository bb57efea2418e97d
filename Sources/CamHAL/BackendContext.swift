/// What a backend learned about a device while listing it that its bind can reuse in the same
/// process (the V4L2 backend's control queries, so a first frame does not wait for the driver to
/// answer them twice). Carried with a `DeviceDescriptor` and its copies; never compared, hashed or
/// encoded, so two descriptors of one device stay equal whether or not one carries it.
package struct BackendContext: Sendable, Hashable {
    /// The backend's own value; the backend casts it back, and asks the driver again when it
    /// is absent or of another type (a descriptor decoded, or made by hand).
    package let value: (any Sendable)?

    package init(_ value: (any Sendable)? = nil) { self.value = value }

    package static func == (lhs: BackendContext, rhs: BackendContext) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
