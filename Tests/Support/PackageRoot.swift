import Foundation

/// The package's root directory (where Package.swift is), for tests that run the project's
/// scripts, profiles or built binaries: the folder above Tests/, taken from this file's path at
/// build time.
public let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
