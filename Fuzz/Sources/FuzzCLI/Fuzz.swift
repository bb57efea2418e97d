@_spi(Backend) import CamHAL
import CamHALMedia
import Dispatch
import Foundation

/// libFuzzer entry: a `camhal` command line (arguments separated by NUL bytes) run through
/// `CLI.main` with every verb's own parsing and checks, stopped before any device, source or file
/// is opened (`CLI.parseOnly`); then each argument through the shared number, size, FourCC and
/// mirror parsers; then the input's bytes as the numbers of the public `StreamRequest`,
/// `PhotoSettings` and `RecordingOptions` initialisers and what takes them (`choose(from:)`,
/// `frameRate(in:)`, `validate()`, `PhotoEncoder.outputSize`, `validated(for:)`). A trap anywhere is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let args = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    runCLI(args)
    for value in args {
        _ = try? NumericOption.number(value, option: "n", in: .seconds())
        _ = try? NumericOption.integer(value, option: "n", in: 1...100)
        _ = try? NumericOption.size(value, option: "size")
        _ = try? MediaSupport.parseMirror(value)
        if let f = PixelFormat(fourCC: value) {
            // A code read back must name the same format.
            precondition(PixelFormat(fourCC: f.fourCC.padding(toLength: 4, withPad: " ", startingAt: 0)) == f)
        }
    }
    libraryInitialisers(bytes)
    return 0
}

/// `camhal ARGS` in this process under `CLI.parseOnly`, waited for (libFuzzer's thread is not a
/// cooperative one; blocking it is fine).
func runCLI(_ args: [String]) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await CLI.$parseOnly.withValue(true) { _ = await CLI.main(arguments: args, verbs: CLI.verbs) }
        done.signal()
    }
    done.wait()
}

/// Reads fixed-width numbers from the input, zero past its end.
struct ByteReader {
    var bytes: ArraySlice<UInt8>

    mutating func uint64() -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes.popFirst() ?? 0) << (8 * UInt64(i)) }
        return v
    }

    mutating func int() -> Int { Int(truncatingIfNeeded: uint64()) }
    mutating func double() -> Double { Double(bitPattern: uint64()) }
    /// Any Duration from -2^63 to 2^63 s, at attosecond resolution.
    mutating func duration() -> Duration { Duration(secondsComponent: Int64(truncatingIfNeeded: uint64()), attosecondsComponent: Int64(uint64() % 1_000_000_000_000_000_000)) }
    mutating func size() -> Size { Size(width: int(), height: int()) }
}

/// The public initialisers that take sizes and spans of time, with any values, and what uses them.
func libraryInitialisers(_ bytes: [UInt8]) {
    var r = ByteReader(bytes: bytes[...])
    let request = StreamRequest(pixelFormat: PixelFormat(rawValue: UInt32(truncatingIfNeeded: r.uint64())), size: r.size(), frameRate: r.double())
    let formats = (0..<3).map { _ in
        FormatDescription(pixelFormat: [.yuyv, .mjpeg, .nv12][Int(r.uint64() % 3)], size: r.size(), frameRates: [r.double(), r.double()])
    }
    _ = request.choose(from: formats)
    _ = StreamRequest(size: r.size()).choose(from: formats)
    for f in formats { _ = request.frameRate(in: f) }
    let mirror = PhotoSettings.Mirror.allCases[Int(r.uint64() % 3)]
    let photo = PhotoSettings(quality: r.int(), maxSize: r.size(), mirror: mirror, rotationDegrees: r.int(), timeout: r.duration())
    _ = try? photo.validate()
    _ = PhotoEncoder.outputSize(visible: r.size(), maxSize: photo.maxSize)
    let options = RecordingOptions(
        quality: .from(Quality.allCases[Int(r.uint64() % UInt64(Quality.allCases.count))]), mirror: mirror, bitrateKbps: r.int(),
        firstFrameTimeout: r.duration(), maxDuration: r.duration())
    _ = try? options.validated(for: URL(fileURLWithPath: "/nonexistent/clip.mkv"))
}
