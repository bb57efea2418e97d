@testable import CamHALMedia
import CamHAL
import Foundation
import Glibc
import Testing

/// A file that appears at the output path after the policy's check, while the photo is being
/// encoded (another program saving there): without `.replace` it is refused and kept, never
/// replaced. Would catch the temporary file put in place with rename(), which replaces silently.
@Suite("AtomicFile: a file that appears after the check")
struct AtomicFileRaceTests {
    static func write(_ text: String, _ path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("refused and kept without .replace; replaced with it; no temporary file left either way")
    func appearedAfterCheck() throws {
        let dir = tempDir().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/photo.jpg", tmp = dir + "/.photo.jpg.tmp"
        try AtomicFile.checkWritable(path: path, existing: .refuse)  // nothing there yet
        try Self.write("theirs", path)  // another program saves there meanwhile
        try Self.write("ours", tmp)
        #expect(AtomicFile.publish(tmp, at: path, replacing: false) == "already exists")
        #expect(Self.read(path) == "theirs")
        try Self.write("ours", tmp)
        #expect(AtomicFile.publish(tmp, at: path, replacing: true) == nil)
        #expect(Self.read(path) == "ours")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(left == ["photo.jpg"], "\(left)")
    }

    @Test("a new path is published without .replace, and the temporary name is gone")
    func newPath() throws {
        let dir = tempDir().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/new.jpg", tmp = dir + "/.new.jpg.tmp"
        try Self.write("ours", tmp)
        #expect(AtomicFile.publish(tmp, at: path, replacing: false) == nil)
        #expect(Self.read(path) == "ours")
        #expect(access(tmp, F_OK) != 0)
    }
}
