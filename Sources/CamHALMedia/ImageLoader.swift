#if Media
import CGStreamer
import CamHAL
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Loads still images (PNG, JPEG, anything GStreamer's decodebin reads) as 8-bit gray, for test
/// scenes and `camhal scan --image`.
public enum ImageLoader {
    /// The decoded image's luma, tightly packed, row-major.
    public static func loadGray(_ url: URL) throws(CameraError) -> (width: Int, height: Int, pixels: [UInt8]) {
        try GStreamerRuntime.require()
        guard url.isFileURL, !url.path.isEmpty else { throw CameraError.invalidArgument(name: "image", value: url.absoluteString, reason: "not a file path") }
        // Only a regular file: a FIFO would block the read with no writer, a directory or a device
        // is no image.
        var st = stat()
        guard stat(url.path, &st) == 0 else {
            throw CameraError.invalidArgument(name: "image", value: url.path, reason: String(cString: strerror(errno)))
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw CameraError.invalidArgument(name: "image", value: url.path, reason: "is \(AtomicFile.kind(st.st_mode)); only a regular file is read")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw CameraError.invalidArgument(name: "image", value: url.path, reason: "not a readable file")
        }
        let p = try GStreamerRuntime.parse(
            "filesrc name=src ! decodebin ! videoconvert ! video/x-raw,format=GRAY8 ! appsink name=sink sync=false")
        defer {
            gst_element_set_state(p, GST_STATE_NULL)
            gst_object_unref(p)
        }
        guard let src = gst_bin_get_by_name(camhal_gst_bin(p), "src"), let sink = gst_bin_get_by_name(camhal_gst_bin(p), "sink") else {
            throw CameraError.configurationFailed("image loader pipeline incomplete")
        }
        camhal_gst_set(src, "location", url.path)
        gst_object_unref(src)
        defer { gst_object_unref(sink) }
        gst_element_set_state(p, GST_STATE_PLAYING)
        let appsink = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstAppSink.self)
        guard let sample = gst_app_sink_try_pull_sample(appsink, 5 * 1_000_000_000) else {
            let bus = gst_element_get_bus(p)
            defer { gst_object_unref(bus) }
            var why = "no picture decoded within 5 s"
            if let m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
                why = GStreamerRuntime.errorText(m)
                gst_message_unref(m)
            }
            throw CameraError.invalidArgument(name: "image", value: url.path, reason: why)
        }
        defer { gst_sample_unref(sample) }
        var info = GstVideoInfo()
        guard let caps = gst_sample_get_caps(sample), gst_video_info_from_caps(&info, caps) != 0,
              let buffer = gst_sample_get_buffer(sample) else {
            throw CameraError.invalidArgument(name: "image", value: url.path, reason: "decoded sample without video caps")
        }
        let w = Int(info.width), h = Int(info.height), stride = Int(info.stride.0)
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else {
            throw CameraError.invalidArgument(name: "image", value: url.path, reason: "cannot map decoded buffer")
        }
        defer { gst_buffer_unmap(buffer, &map) }
        var pixels = [UInt8](repeating: 0, count: w * h)
        pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<h { (out.baseAddress! + y * w).update(from: map.data + y * stride, count: w) }
        }
        return (w, h, pixels)
    }
}
#endif
