import CamHALGStreamer

/// libFuzzer entry: a GStreamer source description or URI, as an app would pass one from a user
/// or a config file. Only parsing and the allowlist run; no pipeline changes state.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    // The first byte picks the entry point, the rest is the text.
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    switch data[0] % 4 {
    case 0: _ = try? GStreamerSource.description(text)
    case 1: _ = try? GStreamerSource.description(text, policy: .allowingLocalFiles)
    case 2: _ = try? GStreamerSource.uri(text)
    default: _ = try? GStreamerSource.description(text, allowPipeline: true)
    }
    return 0
}
