import CamHAL

/// libFuzzer entry: a `camhal` command line (arguments separated by NUL bytes) through the
/// shared flag parser, then every value through the number, size, mirror and FourCC parsers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let args = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let options: Set<String> = ["size", "fps", "format", "output", "mirror", "duration", "count"]
    guard let parsed = try? Arguments(args, options: options, booleans: ["json", "verbose"]) else { return 0 }
    for name in options.sorted() {
        _ = try? parsed.double(name)
        _ = try? parsed.int(name)
        _ = try? parsed.size(name)
        _ = try? parsed.fourCC(name)
    }
    _ = try? MediaSupport.parseMirror(parsed["mirror"])
    for value in [parsed["format"]].compactMap({ $0 }) {
        if let f = PixelFormat(fourCC: value) {
            // A code read back must name the same format.
            precondition(PixelFormat(fourCC: f.fourCC.padding(toLength: 4, withPad: " ", startingAt: 0)) == f)
        }
    }
    return 0
}
