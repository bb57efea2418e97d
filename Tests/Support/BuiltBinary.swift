import Foundation

/// The path of the executable `name` (`camhal`, `camhal-bench-v4l2`...) built beside this test
/// bundle, or nil when it is not there. A test target that depends on the executable makes
/// `swift test` build it first; a script that copies the bundle elsewhere (into the VM) copies
/// the executables it needs beside it.
public func builtBinary(_ name: String) -> URL? {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    // The bundle's executable may sit inside a `.xctest` directory on some toolchains.
    if dir.pathExtension == "xctest" { dir.deleteLastPathComponent() }
    let candidate = dir.appendingPathComponent(name)
    return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
}
