#if Media
import CGStreamer
import CamHAL
import FoundationEssentials

/// Reads recorded files back, in process (no gst-launch needed): for conformance and tests.
public enum VideoFileProbe {
    /// Decodes every video frame of `url` (decodebin: any container and decoder GStreamer has) and
    /// returns how many there were. Throws when the file does not decode.
    public static func decodedFrameCount(_ url: URL, timeout: Duration = .seconds(30)) throws(CameraError) -> Int {
        try GStreamerRuntime.require()
        let p = try GStreamerRuntime.parse("filesrc name=src ! decodebin ! video/x-raw ! appsink name=sink sync=false")
        defer {
            gst_element_set_state(p, GST_STATE_NULL)
            gst_object_unref(p)
        }
        guard let src = gst_bin_get_by_name(camhal_gst_bin(p), "src"), let sink = gst_bin_get_by_name(camhal_gst_bin(p), "sink") else {
            throw CameraError.configurationFailed("probe pipeline incomplete")
        }
        camhal_gst_set(src, "location", url.path)
        gst_object_unref(src)
        defer { gst_object_unref(sink) }
        gst_element_set_state(p, GST_STATE_PLAYING)
        let appsink = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstAppSink.self)
        let bus = gst_element_get_bus(p)
        defer { gst_object_unref(bus) }
        var count = 0
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
                let text = GStreamerRuntime.errorText(m)
                gst_message_unref(m)
                throw CameraError.streamFailed("\(url.path) does not decode: \(text)")
            }
            if let sample = gst_app_sink_try_pull_sample(appsink, 200_000_000) {
                count += 1
                gst_sample_unref(sample)
            } else if gst_app_sink_is_eos(appsink) != 0 {
                return count
            }
        }
        throw CameraError.timeout("decoding \(url.path) took over \(timeout)")
    }
}
#endif
