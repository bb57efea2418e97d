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
}
