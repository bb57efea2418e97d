import CamHAL
import CamHALTestSupport
import Foundation
import Glibc
import Testing

/// What identifies a file for "did anything change": its type and mode, inode, device numbers,
/// size and modification time, as lstat(2) gives them (nil: nothing there).
struct FileStamp: Equatable, CustomStringConvertible {
    let mode: UInt32, inode: UInt64, rdev: UInt64, size: Int64, mtime: Int, mtimeNs: Int

    init?(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        mode = st.st_mode
        inode = UInt64(st.st_ino)
        rdev = UInt64(st.st_rdev)
        size = Int64(st.st_size)
        mtime = st.st_mtim.tv_sec
        mtimeNs = st.st_mtim.tv_nsec
    }

    var type: UInt32 { mode & S_IFMT }
    var description: String { String(format: "mode %o inode %llu rdev %llx size %lld", mode, inode, rdev, size) }

    /// Every entry directly in `dir` with its stamp.
    static func tree(_ dir: String) -> [String: FileStamp] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return Dictionary(uniqueKeysWithValues: names.compactMap { n in FileStamp(dir + "/" + n).map { (n, $0) } })
    }
}

extension CamhalBinaryTests {
    /// The output policy every verb that writes a file follows (`AtomicFile` in the library): a new
    /// path or a regular file is written atomically, an existing one only with --overwrite (its
    /// permissions kept), a symbolic link writes its target, and a device, FIFO, socket, directory
    /// or dangling link is refused naming what it is. Each case checks that nothing else changed:
    /// /dev (every entry's inode, mode, type and device numbers) and the scratch directory but for
    /// the named path.
    @Suite("camhal: the output path policy")
    struct OutputPathTests {
        let scratchDir = Scratch()
        var dir: String { scratchDir.url.path }

        /// Runs `camhal args` and checks that /dev and the scratch directory changed nowhere but at
        /// `changes` (names in the scratch directory).
        func run(_ args: [String], changes: Set<String> = [], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Run {
            let dev = FileStamp.tree("/dev"), before = FileStamp.tree(dir)
            let run = try await camhal(args)
            let devAfter = FileStamp.tree("/dev")
            for (name, stamp) in dev where devAfter[name]?.inode != stamp.inode || devAfter[name]?.mode != stamp.mode
                || devAfter[name]?.rdev != stamp.rdev {
                Issue.record("\(args): /dev/\(name) changed: \(stamp) -> \(devAfter[name].map { "\($0)" } ?? "gone")", sourceLocation: sourceLocation)
            }
            let after = FileStamp.tree(dir)
            for name in Set(before.keys).union(after.keys).subtracting(changes) where before[name] != after[name] {
                Issue.record("\(args): \(name) changed: \(before[name].map { "\($0)" } ?? "absent") -> \(after[name].map { "\($0)" } ?? "gone")",
                             sourceLocation: sourceLocation)
            }
            return run
        }

        func path(_ name: String) -> String { dir + "/" + name }

        func isJPEG(_ path: String) -> Bool {
            ((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()).starts(with: [0xFF, 0xD8, 0xFF])
        }

        @Test("a new path is written atomically with mode 0644, nothing else created")
        func newPath() async throws {
            let r = try await run(["capture", "--backend", "virtual", "-o", path("new.jpg")], changes: ["new.jpg"])
            #expect(r.status == 0, "\(r)")
            #expect(isJPEG(path("new.jpg")))
            #expect(FileStamp(path("new.jpg")).map { $0.mode & 0o7777 } == 0o644)
        }

        @Test("an existing file (read-only here) is refused without --overwrite; with it, replaced keeping its mode")
        func existingReadOnly() async throws {
            try Data("keep".utf8).write(to: URL(fileURLWithPath: path("ro.jpg")))
            chmod(path("ro.jpg"), 0o444)
            let refused = try await run(["capture", "--backend", "virtual", "-o", path("ro.jpg")])
            #expect(refused.status == 1 && refused.stderr.contains("already exists") && refused.stderr.contains("--overwrite"), "\(refused)")
            #expect(try String(contentsOfFile: path("ro.jpg"), encoding: .utf8) == "keep")
            // As root (CI) the file is writable and so replaced; as another user its mode refuses it.
            let replaced = try await run(["capture", "--backend", "virtual", "-o", path("ro.jpg"), "-y"], changes: ["ro.jpg"])
            if geteuid() == 0 {
                #expect(replaced.status == 0, "\(replaced)")
                #expect(isJPEG(path("ro.jpg")))
            } else {
                #expect(replaced.status == 1 && replaced.stderr.contains("not writable"), "\(replaced)")
            }
            #expect(FileStamp(path("ro.jpg")).map { $0.mode & 0o7777 } == 0o444)
        }

        @Test("a symbolic link writes its target (the link stays); a dangling one is refused")
        func symlinks() async throws {
            try Data("old".utf8).write(to: URL(fileURLWithPath: path("target.jpg")))
            chmod(path("target.jpg"), 0o640)
            symlink("target.jpg", path("link.jpg"))
            let r = try await run(["capture", "--backend", "virtual", "-o", path("link.jpg"), "--overwrite"], changes: ["target.jpg"])
            #expect(r.status == 0, "\(r)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path("link.jpg")) == "target.jpg")
            #expect(isJPEG(path("target.jpg")))
            #expect(FileStamp(path("target.jpg")).map { $0.mode & 0o7777 } == 0o640)

            symlink("nowhere.jpg", path("dangling.jpg"))
            let dangling = try await run(["capture", "--backend", "virtual", "-o", path("dangling.jpg"), "-y"])
            #expect(dangling.status == 1 && dangling.stderr.contains("nowhere.jpg, which does not exist"), "\(dangling)")
            #expect(FileStamp(path("nowhere.jpg")) == nil)
        }

        @Test("a FIFO is refused at once (record did hang on one with no reader), and stays a FIFO")
        func fifo() async throws {
            #expect(mkfifo(path("pipe.jpg"), 0o644) == 0 && mkfifo(path("pipe.mkv"), 0o644) == 0)
            let capture = try await run(["capture", "--backend", "virtual", "-o", path("pipe.jpg"), "-y"])
            #expect(capture.status == 1 && capture.stderr.contains("is a FIFO"), "\(capture)")
            // Under timeout(1): a hang is exit 124, not a stuck suite.
            let exe = try camhalBinary().path
            let before = FileStamp(path("pipe.mkv"))
            let record = try await tool("timeout", ["20", exe, "record", "--backend", "virtual", "--duration", "1", "-o", path("pipe.mkv")])
            #expect(record.status == 1 && record.stderr.contains("is a FIFO"), "\(record)")
            #expect(FileStamp(path("pipe.mkv")) == before)
        }

        @Test("character devices (/dev/null, /dev/full, through a link too) are refused and untouched", arguments: [
            ["capture", "--backend", "virtual", "-y", "-o"], ["record", "--backend", "virtual", "--duration", "1", "-y", "-o"],
            ["conformance", "--backend", "virtual", "--clauses", "T1", "-y", "--junit"],
        ])
        func devices(verb: [String]) async throws {
            for device in ["/dev/null", "/dev/full"] {
                let direct = try await run(verb + [device])
                #expect(direct.status == 1 && direct.stderr.contains("is a character device"), "\(direct)")
            }
            let link = "full-\(verb[0]).\(verb[0] == "record" ? "mkv" : "jpg")"
            symlink("/dev/full", path(link))
            let linked = try await run(verb + [path(link)])
            #expect(linked.status == 1 && linked.stderr.contains("is a character device (/dev/full)"), "\(linked)")
        }

        @Test("a directory and a missing directory are errors naming them; nothing is created")
        func directories() async throws {
            try FileManager.default.createDirectory(atPath: path("dir.jpg"), withIntermediateDirectories: false)
            let isDir = try await run(["capture", "--backend", "virtual", "-y", "-o", path("dir.jpg")])
            #expect(isDir.status == 1 && isDir.stderr.contains("is a directory"), "\(isDir)")
            let missing = try await run(["capture", "--backend", "virtual", "-o", path("no/such/x.jpg")])
            #expect(missing.status == 1 && missing.stderr.contains("directory \(path("no/such")) does not exist"), "\(missing)")
            let record = try await run(["record", "--backend", "virtual", "-o", path("no/x.mkv")])
            #expect(record.status == 1 && record.stderr.contains("does not exist"), "\(record)")
        }

        @Test("a write past a file size limit (EFBIG) is an error and leaves no temporary file")
        func fileSizeLimit() async throws {
            // ulimit -f counts 512-byte blocks in dash (1024 in bash): either way far below a photo.
            let exe = try camhalBinary().path
            let before = FileStamp.tree(dir)
            let r = try await tool("sh", ["-c", "ulimit -f 4 && exec \"$0\" capture --backend virtual -o \"$1\"", exe, path("big.jpg")])
            #expect(r.status == 1 && r.stderr.contains("File too large"), "\(r)")
            #expect(FileStamp.tree(dir) == before, "left \(Set(FileStamp.tree(dir).keys).subtracting(before.keys))")
        }

        @Test("a full file system (a 16 KiB tmpfs) is an error and leaves nothing behind")
        func fullFileSystem() async throws {
            // Mounting needs CAP_SYS_ADMIN: in a private mount namespace, so nothing outside sees it.
            let probe = try await tool("unshare", ["-m", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs \"$0\"", dir])
            guard probe.status == 0 else {
                print("skipped: cannot mount a tmpfs here (\(probe.stderr.trimmingCharacters(in: .whitespacesAndNewlines))); the EFBIG test covers the write failure")
                return
            }
            let exe = try camhalBinary().path
            let script = """
                mount -t tmpfs -o size=16k tmpfs "$0" && head -c 12288 /dev/zero > "$0/filler" && "$1" capture --backend virtual -o "$0/x.jpg"
                s=$?; ls -A "$0"; exit $s
                """
            let r = try await tool("unshare", ["-m", "sh", "-c", script, dir, exe])
            #expect(r.status == 1 && r.stderr.contains("No space left on device"), "\(r)")
            #expect(r.stdout.split(separator: "\n") == ["filler"], "left behind: \(r.stdout)")
        }

        @Test("-o - writes the JPEG to standard output and the summary to standard error")
        func standardOutput() async throws {
            let r = try await run(["capture", "--backend", "virtual", "-o", "-"])
            #expect(r.status == 0 && r.stderr.contains("wrote standard output: 640x480 JPEG"), "\(r.stderr)")
            #expect(r.stdout.utf8.count > 1000, "\(r.stdout.utf8.count) bytes on stdout")
            let record = try await run(["record", "--backend", "virtual", "-o", "-"])
            #expect(record.status == 2 && record.stderr.contains("'-' (standard output) is not supported"), "\(record)")
        }

        @Test("a name whose extension is not JPEG's is refused, naming the extension", arguments: ["x.png", "x.PNG", "x", "x.tiff"])
        func extensions(name: String) async throws {
            let r = try await run(["capture", "--backend", "virtual", "-o", path(name)])
            #expect(r.status == 2, "\(r)")
            #expect(r.stderr.contains(name.contains(".") ? "'.\(name.split(separator: ".")[1])'" : "has no extension"), "\(r)")
            #expect(r.stderr.contains(".jpg or .jpeg"), "\(r)")
        }

        @Test("record refuses an existing file without --overwrite and replaces it with it")
        func recordExisting() async throws {
            try Data("old".utf8).write(to: URL(fileURLWithPath: path("clip.mkv")))
            chmod(path("clip.mkv"), 0o600)
            let refused = try await run(["record", "--backend", "virtual", "--duration", "0.5", "--quiet", "-o", path("clip.mkv")])
            #expect(refused.status == 1 && refused.stderr.contains("already exists"), "\(refused)")
            let replaced = try await run(["record", "--backend", "virtual", "--duration", "0.5", "--quiet", "-y", "-o", path("clip.mkv")],
                                         changes: ["clip.mkv"])
            #expect(replaced.status == 0, "\(replaced)")
            #expect(FileStamp(path("clip.mkv")).map { $0.size > 100 && $0.mode & 0o7777 == 0o600 } == true)
        }

        /// A path ending in '/' names a directory, and a link in a loop of links has no file at
        /// its end: both refused before the camera opens, nothing created. Would catch the slash
        /// dropped (record wrote "x.mkv" for "x.mkv/") or checked only after the capture, and the
        /// loop called a link to a file that does not exist.
        @Test("a new path ending in '/' and a loop of links are refused up front")
        func trailingSlashAndLoop() async throws {
            for verb in [["capture", "--backend", "virtual"], ["record", "--backend", "virtual", "--duration", "0.5"]] {
                let name = verb[0] == "record" ? "new.mkv" : "new.jpg"
                let r = try await run(verb + ["-o", path(name) + "/"])
                #expect(r.status == 1 && r.stderr.contains("ends with '/'"), "\(r)")
                #expect(FileStamp(path(name)) == nil)
            }
            symlink("loop2.jpg", path("loop1.jpg"))
            symlink("loop1.jpg", path("loop2.jpg"))
            let loop = try await run(["capture", "--backend", "virtual", "-y", "-o", path("loop1.jpg")])
            #expect(loop.status == 1 && loop.stderr.contains("in a loop of links"), "\(loop)")
        }

        /// A new file's mode is 0666 less the umask, as any program's: under umask 077 a photo is
        /// private. Would catch a fixed 0644 (a photo readable by every user against the umask).
        @Test("a new photo follows the umask")
        func umaskIsFollowed() async throws {
            let exe = try camhalBinary().path
            let r = try await tool("sh", ["-c", "umask 077 && exec \"$0\" capture --backend virtual -o \"$1\"", exe, path("private.jpg")])
            #expect(r.status == 0, "\(r)")
            #expect(FileStamp(path("private.jpg")).map { $0.mode & 0o7777 } == 0o600)
        }

        /// A recording never writes over its own source: the same file named directly, or
        /// through a link, is refused (exit 2) and left as it was. Would catch the source truncated
        /// as it is read (record --source file:///x.mkv -o x.mkv -y).
        @Test("record refuses its own source file as output")
        func recordOverItsSource() async throws {
            let made = try await run(["record", "--backend", "virtual", "--duration", "0.5", "--quiet", "-o", path("src.mkv")], changes: ["src.mkv"])
            #expect(made.status == 0, "\(made)")
            symlink("src.mkv", path("link.mkv"))
            for (source, output) in [("file://" + path("src.mkv"), path("src.mkv")), ("filesrc location=\(path("src.mkv")) ! decodebin", path("link.mkv"))] {
                let r = try await run(["record", "--source", source, "--duration", "0.5", "-y", "-o", output])
                #expect(r.status == 2 && r.stderr.contains("is the recording's source"), "\(r)")
            }
        }
}
}
