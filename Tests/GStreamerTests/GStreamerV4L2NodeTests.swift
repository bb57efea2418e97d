#if GStreamer
import CamHAL
@testable import CamHALGStreamer
import Foundation
import Testing

/// Which V4L2 nodes the backend offers through v4l2src, and the v4l2src workaround it sets up.
struct GStreamerV4L2NodeTests {
    /// vimc's capture nodes report device_caps 0x24200001 (V4L2_CAP_IO_MC set): they stream only
    /// once their media pipeline is configured, which v4l2src does not do, so they are skipped
    /// with a reason naming the v4l2 backend. vivid's 0x04200001-style caps are kept.
    @Test func mediaControllerNodesAreSkippedWithAReason() {
        let vimc = GStreamerDevices.skipReason(deviceCaps: 0x2420_0001)
        #expect(vimc?.contains("V4L2_CAP_IO_MC") == true)
        #expect(vimc?.contains("v4l2 backend") == true)
        #expect(GStreamerDevices.skipReason(deviceCaps: 0x0420_0001) == nil)
        #expect(GStreamerDevices.skipReason(deviceCaps: 0x0520_0001) == nil)
    }

    /// GStreamer 1.22.0's v4l2src leaks its pool on the orphaning stop path (5 fds per cycle on
    /// vivid); the runtime selects the draining path before gst_init.
    @Test func v4l2DrainIsSelectedBeforeInit() {
        #expect(GStreamerRuntime.start() == nil)
        #expect(getenv("GST_V4L2_FORCE_DRAIN") != nil)
    }
}
#endif
