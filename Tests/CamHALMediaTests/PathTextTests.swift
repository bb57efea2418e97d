@testable import CamHALMedia
import Foundation
import Testing

/// `PathText` reads paths as `URL(fileURLWithPath:)` reads them, so the file policy's messages and
/// temporary names stay what they were when `AtomicFile` went through `URL`. `URL` is the oracle
/// here: would catch a relative path left relative (an error naming `x.jpg` where it named
/// `/cwd/x.jpg`), a trailing slash kept in a directory, or a hidden file's name taken for an
/// extension.
@Suite("PathText: paths read as URL reads them")
struct PathTextTests {
    @Test("absolute, directory, last component and extension agree with URL's")
    func agreesWithURL() {
        let paths = ["/tmp/a.jpg", "/tmp/dir/", "/a", "/", "x.jpg", "sub/x.JPEG", "/tmp/.hidden", "/tmp/x.", "/tmp/archive.tar.gz",
                     "/tmp/no extension", "/tmp/é/ü.jpg", "//tmp//a.jpg"]
        for p in paths {
            let url = URL(fileURLWithPath: p)
            #expect(PathText.absolute(p) == p || PathText.absolute(p) == url.path, "absolute(\(p)): \(PathText.absolute(p)) vs \(url.path)")
            let absolute = PathText.absolute(p)
            #expect(PathText.directory(of: absolute) == URL(fileURLWithPath: absolute).deletingLastPathComponent().path,
                    "directory(\(absolute))")
            #expect(PathText.lastComponent(of: absolute) == URL(fileURLWithPath: absolute).lastPathComponent, "lastComponent(\(absolute))")
            #expect(PathText.pathExtension(of: absolute) == URL(fileURLWithPath: absolute).pathExtension, "pathExtension(\(absolute))")
        }
        #expect(PathText.absolute("x.jpg") == FileManager.default.currentDirectoryPath + "/x.jpg")
    }
}
