extension CLI {
    /// The version `camhal --version` prints: the one place it is written. CHANGELOG.md's sections
    /// are named after it when a release is cut.
    static let version = "0.1.0-dev"
}
