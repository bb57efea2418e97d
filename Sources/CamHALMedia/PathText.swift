#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File paths as text, the way `URL(fileURLWithPath:)` and its `path`, `lastPathComponent`,
/// `deletingLastPathComponent()` and `pathExtension` read them, without `URL`: in a program built
/// with the Swift runtime inside (`camhal`), the first `URL` costs a million instructions and
/// 3 MiB of resident code (measured), more than the rest of a one-shot photo's file handling.
package enum PathText {
    /// `path` made absolute against the working directory (`.` and `..` kept, as URL keeps them).
    package static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let directory = String(cString: cwd)
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    /// The directory an absolute path's last component is in: `/a/b` and `/a/b/` give `/a`,
    /// `/a` gives `/`.
    package static func directory(of path: String) -> String {
        let bytes = trimmed(path)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return String(decoding: trimmed(bytes[..<slash]), as: UTF8.self)
    }

    /// The last component: `/a/b.jpg` gives `b.jpg`, `/` gives `/`.
    package static func lastComponent(of path: String) -> String {
        let bytes = trimmed(path)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), bytes.count > 1 else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes[(slash + 1)...], as: UTF8.self)
    }

    /// The last component's extension, without its dot; empty when it has none (`x`, `x.`, `.x`).
    package static func pathExtension(of path: String) -> String {
        let name = Array(lastComponent(of: path).utf8)
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return "" }
        return String(decoding: name[(dot + 1)...], as: UTF8.self)
    }

    /// The bytes of `path` without trailing slashes (a lone `/` stays).
    private static func trimmed(_ path: String) -> ArraySlice<UInt8> { trimmed(Array(path.utf8)[...]) }

    /// `bytes` without trailing slashes; empty (the root's directory) becomes `/`.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        return bytes.isEmpty ? [UInt8(ascii: "/")][...] : bytes
    }
}
