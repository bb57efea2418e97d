@testable import camhal
import CamHAL
import Foundation
import Glibc
import Testing

/// `record` without --overwrite takes its new path before the camera starts (`OutputPath.claim`):
/// its muxer opens the path, truncating, only once frames flow, and a file saved there in between
/// would be lost. Would catch the claim not being exclusive (a second claim, or another program's
/// file, taken over), a failed recording leaving an empty file behind, or the release removing a
/// file the recording wrote or another program put there.
@Suite("camhal record: the output path claimed before the camera starts")
struct RecordClaimTests {
    let scratch = Scratch()
    var dir: String { scratch.url.path }

    static func arguments(_ extra: [String] = []) throws -> Arguments {
        try Arguments(["-o", "x.mkv"] + extra, options: ["output"], booleans: [OutputPath.overwriteFlag])
    }

    @Test("exclusive: a second claim, or a path taken since, is refused naming --overwrite")
    func exclusive() throws {
        let path = dir + "/take.mkv"
        let claim = try #require(try OutputPath.claim(path, Self.arguments()))
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_size == 0)
        do {
            _ = try OutputPath.claim(path, Self.arguments())
            Issue.record("a second claim of \(path) succeeded")
        } catch {
            #expect("\(error)".contains("already exists; pass --overwrite"), "\(error)")
        }
        claim.release()
        #expect(access(path, F_OK) != 0, "an empty claim is removed")
        #expect(try OutputPath.claim(path, Self.arguments(["--overwrite"])) == nil, "--overwrite claims nothing")
        #expect(access(path, F_OK) != 0)
    }

    @Test("the release keeps a file with bytes, and a file that replaced the claim")
    func releaseKeeps() throws {
        let written = dir + "/written.mkv", replaced = dir + "/replaced.mkv"
        let a = try #require(try OutputPath.claim(written, Self.arguments()))
        try Data("frames".utf8).write(to: URL(fileURLWithPath: written))  // in place, as the muxer writes
        a.release()
        #expect(FileManager.default.contents(atPath: written) == Data("frames".utf8))
        let b = try #require(try OutputPath.claim(replaced, Self.arguments()))
        unlink(replaced)
        #expect(FileManager.default.createFile(atPath: replaced, contents: Data()))  // someone else's empty file
        b.release()
        #expect(access(replaced, F_OK) == 0, "another file at the path is not ours to remove")
    }
}
