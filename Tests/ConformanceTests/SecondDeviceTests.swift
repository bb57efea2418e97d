import CamHAL
import CamHALConformance
import Testing

/// Which device the checks of several cameras at once (J1-J4) stream beside the one under test:
/// the next device of the listing that is really another device. Would catch vivid's inputs of
/// one node (listed as devices) taken as two cameras: the second would be busy on the first's
/// node and every J check would fail.
@Suite struct SecondDeviceTests {
    static let yuyv = FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRates: [30])

    static func device(_ id: String, node: String?, test: Bool = false, streamable: Bool = true) -> DeviceDescriptor {
        DeviceDescriptor(
            id: id, name: id, backend: "test", facing: .external, lenses: DeviceDescriptor.singleLens(facing: .external),
            formats: streamable ? [yuyv] : [], details: node.map { ["node": $0] } ?? [:], isTestSource: test)
    }

    @Test func nextOtherDeviceWrappingAround() {
        let webcamInput = Self.device("video0#input=0", node: "/dev/video0")
        let hdmiInput = Self.device("video0#input=3", node: "/dev/video0")
        let other = Self.device("video4", node: "/dev/video4")
        let noNode = Self.device("virtual", node: nil)
        let all = [webcamInput, hdmiInput, other, noNode]
        #expect(ConformanceSuite.secondDevice(for: webcamInput, among: all)?.id == "video4")
        #expect(ConformanceSuite.secondDevice(for: hdmiInput, among: all)?.id == "video4")
        #expect(ConformanceSuite.secondDevice(for: other, among: all)?.id == "virtual")
        #expect(ConformanceSuite.secondDevice(for: noNode, among: all)?.id == "video0#input=0")
        #expect(ConformanceSuite.secondDevice(for: webcamInput, among: [webcamInput, hdmiInput]) == nil)
        #expect(ConformanceSuite.secondDevice(for: other, among: [other]) == nil)
        #expect(ConformanceSuite.secondDevice(for: other, among: []) == nil)
    }

    // A camera is paired with a camera, a test source with a test source: GStreamer lists
    // videotestsrc (not live, its own stream time) first, before the webcams.
    @Test func aCameraBesideACameraATestSourceBesideATestSource() {
        let testSource = Self.device("videotestsrc", node: nil, test: true)
        let c920 = Self.device("c920", node: "/dev/video0"), c270 = Self.device("c270", node: "/dev/video2")
        let all = [testSource, c920, c270]
        #expect(ConformanceSuite.secondDevice(for: testSource, among: all) == nil)
        #expect(ConformanceSuite.secondDevice(for: c920, among: all)?.id == "c270")
        #expect(ConformanceSuite.secondDevice(for: c270, among: all)?.id == "c920")
        let back = Self.device("virtual-back", node: nil, test: true), front = Self.device("virtual-front", node: nil, test: true)
        #expect(ConformanceSuite.secondDevice(for: back, among: [back, front])?.id == "virtual-front")
    }

    // A device that lists no format cannot be streamed as listed (PipeWire's node for vimc's
    // media-controlled video node): the next one that can is taken.
    @Test func aDeviceWithNoFormatIsPassedOver() {
        let c920 = Self.device("c920", node: "/dev/video0")
        let vimc = Self.device("vimc-video4", node: "/dev/video4", streamable: false)
        let sensor = Self.device("vimc-sensor-b", node: nil)
        #expect(ConformanceSuite.secondDevice(for: c920, among: [c920, vimc, sensor])?.id == "vimc-sensor-b")
        #expect(ConformanceSuite.secondDevice(for: c920, among: [c920, vimc]) == nil)
    }

    // Every other device that can stream beside the one tested, for J with three or more: the
    // second device first, then the rest in listing order, no two on one node or one media graph
    // (vimc's capture nodes share a sensor pipeline). The listing is v4l2's in the VM's
    // vivid/vimc boot. Would catch vivid's other input of a node taken as a third camera (busy on
    // the node the second streams), or all three vimc nodes fighting over one pipeline.
    @Test func everyOtherDeviceOnANodeAndGraphOfItsOwn() {
        func node(_ id: String, _ node: String, media: String) -> DeviceDescriptor {
            var d = Self.device(id, node: node)
            d.details["media"] = media
            return d
        }
        let vivid0 = node("v0#0", "/dev/video0", media: "/dev/media0"), vivid0b = node("v0#2", "/dev/video0", media: "/dev/media0")
        let raw0 = node("vimc4", "/dev/video4", media: "/dev/media2"), raw1 = node("vimc5", "/dev/video5", media: "/dev/media2")
        let rgb = node("vimc6", "/dev/video6", media: "/dev/media2")
        let vivid1 = node("v10#0", "/dev/video10", media: "/dev/media1"), vivid1b = node("v10#1", "/dev/video10", media: "/dev/media1")
        let all = [vivid0, vivid0b, raw0, raw1, rgb, vivid1, vivid1b]
        #expect(ConformanceSuite.otherDevices(for: vivid0, among: all).map(\.id) == ["vimc4", "v10#0"])
        // The second device is the one `secondDevice(for:among:)` picks, even on the same graph.
        #expect(ConformanceSuite.otherDevices(for: raw1, among: all).map(\.id) == ["vimc6", "v10#0", "v0#0"])
        #expect(ConformanceSuite.otherDevices(for: vivid0, among: [vivid0, vivid0b]).isEmpty)
    }

    // Two devices in all: the second alone, as `secondDevice(for:among:)` (J runs as it did with
    // one other device). Five webcams: the four others, the next one first, wrapping around.
    @Test func twoDevicesGiveTheSecondAloneFiveGiveTheFourOthers() {
        let c920 = Self.device("c920", node: "/dev/video0"), c270 = Self.device("c270", node: "/dev/video2")
        let testSource = Self.device("videotestsrc", node: nil, test: true)
        #expect(ConformanceSuite.otherDevices(for: c920, among: [testSource, c920, c270]).map(\.id) == ["c270"])
        #expect(ConformanceSuite.otherDevices(for: testSource, among: [testSource, c920, c270]).isEmpty)
        let webcams = (0..<5).map { Self.device("w\($0)", node: "/dev/video\(2 * $0)") }
        #expect(ConformanceSuite.otherDevices(for: webcams[2], among: webcams).map(\.id) == ["w3", "w4", "w0", "w1"])
        let vimc = Self.device("vimc-video4", node: "/dev/video4", streamable: false)
        #expect(ConformanceSuite.otherDevices(for: c920, among: [c920, vimc, c270]).map(\.id) == ["c270"])
    }
}
