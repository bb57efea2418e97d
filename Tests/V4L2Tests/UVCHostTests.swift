@_spi(Backend) import CamHAL
import CamHALTestSupport
@testable import CamHALV4L2
import Foundation
import Glibc
import Testing

/// A throw-away directory, removed when the test ends.
final class TempDir: @unchecked Sendable {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-v4l2-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: "\(path)/\(relative)")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)
    }
    func link(_ relative: String, to target: String) throws {
        let url = URL(fileURLWithPath: "\(path)/\(relative)")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: target)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("V4L2 host: UVC zoom/focus mapping, stable USB IDs, hot-plug, unplug detection")
struct V4L2UVCHostTests {
    // MARK: zoom_absolute → zoom ratio

    @Test func zoomAbsoluteMinimumIsOneXAndRatioIsValueOverMinimum() {
        let m = ZoomControlMapping(minimum: 100, maximum: 500, ceiling: 8)
        #expect(m.isFocalLength)
        #expect(m.factor(forValue: 100) == 1)
        #expect(m.factor(forValue: 300) == 3)
        #expect(m.maximumFactor == 5)
        #expect(m.value(forFactor: 1) == 100)
        #expect(m.value(forFactor: 2.5) == 250)
        // Beyond the device's reach: the control saturates; the core crops the rest.
        #expect(m.value(forFactor: 8) == 500)
        #expect(m.value(forFactor: .nan) == 100)
        #expect(m.value(forFactor: 0.5) == 100)
        // Out-of-range readings (another process, a driver rounding) stay inside the range.
        #expect(m.factor(forValue: 900) == 5)
    }

    @Test func zoomAbsoluteWithoutAPositiveMinimumMapsLinearlyOntoTheCeiling() {
        let m = ZoomControlMapping(minimum: 0, maximum: 10, ceiling: 4)
        #expect(!m.isFocalLength)
        #expect(m.factor(forValue: 0) == 1)
        #expect(m.factor(forValue: 10) == 4)
        #expect(m.value(forFactor: 2.5) == 5)
        #expect(ZoomControlMapping(minimum: 0, maximum: 0, ceiling: 4).factor(forValue: 0) == 1)
    }

    @Test func zoomDetailsStateTheMapping() {
        let z = ControlInfo(id: ControlID.zoomAbsolute, name: "Zoom, Absolute", type: 1, minimum: 100, maximum: 500, step: 1, defaultValue: 100, flags: 0)
        #expect(V4L2Discovery.zoomDescription(z) == "ZOOM_ABSOLUTE 100...500 (ratio = value / 100: 1x...5x)")
    }

    // MARK: control events

    @Test func controlEventsMapToZoomFactorAndFocusMode() {
        let m = ZoomControlMapping(minimum: 100, maximum: 500, ceiling: 8)
        #expect(V4L2ControlSemantics.controlChange(id: ControlID.zoomAbsolute, value: 200, zoom: m, hasFocusAbsolute: true) == (2, nil))
        #expect(V4L2ControlSemantics.controlChange(id: ControlID.zoomAbsolute, value: 200, zoom: nil, hasFocusAbsolute: true) == (nil, nil))
        #expect(V4L2ControlSemantics.controlChange(id: ControlID.focusAuto, value: 1, zoom: m, hasFocusAbsolute: true) == (nil, .continuous))
        #expect(V4L2ControlSemantics.controlChange(id: ControlID.focusAuto, value: 0, zoom: m, hasFocusAbsolute: true) == (nil, .manual))
        #expect(V4L2ControlSemantics.controlChange(id: ControlID.focusAuto, value: 0, zoom: m, hasFocusAbsolute: false) == (nil, .locked))
        #expect(V4L2ControlSemantics.controlChange(id: ControlID.flashLEDMode, value: 2, zoom: m, hasFocusAbsolute: true) == (nil, nil))
    }

    @Test func frameTimesNeverStepBack() {
        #expect(V4L2Binding.increasingTimestamp(480.690004, after: -.infinity) == 480.690004)
        #expect(V4L2Binding.increasingTimestamp(480.72, after: 480.690004) == 480.72)
        // The step back seen on an emulated webcam's uvcvideo timestamps.
        #expect(V4L2Binding.increasingTimestamp(480.635343, after: 480.690004) == 480.690004 + 1e-6)
        #expect(V4L2Binding.increasingTimestamp(480.690004, after: 480.690004) > 480.690004)
    }

    /// Would catch: vivid's `wrap_timestamp` (64-bit nanoseconds wrapping: tv_sec 9223372035 then
    /// -9223372036) pinning every later frame 1 µs after the last one, so time stopped at the wrap.
    @Test func aTimestampWrapPassesThroughToTheCore() {
        let before = 9_223_372_035.602390, after = -9_223_372_036.782980
        let stamp = V4L2Binding.increasingTimestamp(after, after: before)
        #expect(stamp == after, "the wrap reaches the core raw")
        // The frames after it keep the driver's pace, not 1 µs apart.
        #expect(V4L2Binding.increasingTimestamp(after + 0.2, after: stamp) == after + 0.2)
    }

    // MARK: stable USB IDs (/dev/v4l/by-id names without udevd)

    /// A sysfs tree: class/video4linux/video<N> → a USB interface under a USB device.
    private func fakeSysfs(_ dir: TempDir, node: String = "video0", index: String = "0", attributes: [String: String]) throws -> String {
        let usb = "devices/pci0000:00/usb1/1-1"
        for (name, value) in attributes { try dir.write("\(usb)/\(name)", value + "\n") }
        try dir.write("\(usb)/1-1:1.0/video4linux/\(node)/index", index + "\n")
        try dir.link("class/video4linux/\(node)", to: "\(dir.path)/\(usb)/1-1:1.0/video4linux/\(node)")
        try dir.link("\(usb)/1-1:1.0/video4linux/\(node)/device", to: "\(dir.path)/\(usb)/1-1:1.0")
        return "\(dir.path)/class/video4linux"
    }

    @Test func usbNodesGetTheByIDNameUdevWouldGive() throws {
        let dir = try TempDir()
        let cls = try fakeSysfs(dir, attributes: [
            "idVendor": "046d", "idProduct": "082d", "manufacturer": "  Acme  Corp ", "product": "HD Pro Webcam C920", "serial": "CAMHAL-c920-p0",
        ])
        #expect(V4L2Discovery.usbByIDName(nodeName: "video0", sysfsClass: cls) == "usb-Acme_Corp_HD_Pro_Webcam_C920_CAMHAL-c920-p0-video-index0")
    }

    /// Opening one camera by ID describes only its node (faster open). Would catch a USB ID matched
    /// to the wrong node, a `<bus>/<node>#input=N` ID not reduced to its node, or an unknown ID
    /// narrowed to nothing instead of left to full discovery (which names it unknown).
    @Test func anIDNamesTheOneNodeToDescribe() throws {
        let dir = try TempDir()
        let cls = try fakeSysfs(dir, node: "video3", attributes: [
            "idVendor": "046d", "idProduct": "082d", "manufacturer": "Logitech", "product": "HD Pro Webcam C920", "serial": "S1",
        ])
        let usb = "usb-Logitech_HD_Pro_Webcam_C920_S1-video-index0"
        #expect(V4L2Discovery.candidateNodes(forID: usb, sysfs: cls, dev: dir.path).map(\.node) == ["video3"])
        #expect(V4L2Discovery.candidateNodes(forID: "usb-Logitech_Other-video-index0", sysfs: cls, dev: dir.path).isEmpty)
        #expect(V4L2Discovery.candidateNodes(forID: "platform:vivid-000/video10#input=3", sysfs: cls, dev: dir.path).map(\.node) == ["video10"])
        #expect(V4L2Discovery.candidateNodes(forID: "platform:vimc/video6", sysfs: cls, dev: dir.path).map(\.node) == ["video6"])
        for other in ["pci-0000:00:14.0-usb-0:1:1.0-video-index0", "platform:vimc/videoX", "video0", "a/media0"] {
            #expect(V4L2Discovery.candidateNodes(forID: other, sysfs: cls, dev: dir.path).isEmpty, "\(other)")
        }
    }

    /// A USB ID goes straight to the node its /dev/v4l/by-id link names when sysfs agrees, and
    /// to the sysfs comparison when it does not: would catch a stale link (a replug gave the
    /// name's node to another camera) trusted without the check, or the scan skipped after one.
    @Test func aByIDLinkIsTakenOnlyWhenSysfsAgrees() throws {
        let dir = try TempDir()
        let cls = try fakeSysfs(dir, node: "video3", attributes: [
            "idVendor": "046d", "idProduct": "082d", "manufacturer": "Logitech", "product": "HD Pro Webcam C920", "serial": "S1",
        ])
        let usb = "usb-Logitech_HD_Pro_Webcam_C920_S1-video-index0"
        try dir.write("video3", "")
        try dir.write("video7", "")
        try dir.link("v4l/by-id/\(usb)", to: "\(dir.path)/video3")
        #expect(V4L2Discovery.candidateNodes(forID: usb, sysfs: cls, dev: dir.path).map(\.node) == ["video3"])
        // A stale link to a node sysfs gives another name: the scan finds the camera's node.
        let stale = try TempDir()
        let staleClass = try fakeSysfs(stale, node: "video3", attributes: [
            "idVendor": "046d", "idProduct": "082d", "manufacturer": "Logitech", "product": "HD Pro Webcam C920", "serial": "S1",
        ])
        try stale.write("video7", "")
        try stale.link("v4l/by-id/\(usb)", to: "\(stale.path)/video7")
        #expect(V4L2Discovery.candidateNodes(forID: usb, sysfs: staleClass, dev: stale.path).map(\.node) == ["video3"])
    }

    @Test func usbNodesWithoutStringsFallBackToVendorAndProductIDs() throws {
        let dir = try TempDir()
        let cls = try fakeSysfs(dir, node: "video2", index: "1", attributes: ["idVendor": "046d", "idProduct": "0825"])
        #expect(V4L2Discovery.usbByIDName(nodeName: "video2", sysfsClass: cls) == "usb-046d_0825-video-index1")
    }

    @Test func platformNodesHaveNoUSBName() throws {
        let dir = try TempDir()
        try dir.write("devices/platform/vivid.0/video4linux/video0/index", "0\n")
        try dir.link("class/video4linux/video0", to: "\(dir.path)/devices/platform/vivid.0/video4linux/video0")
        try dir.link("devices/platform/vivid.0/video4linux/video0/device", to: "\(dir.path)/devices/platform/vivid.0")
        #expect(V4L2Discovery.usbByIDName(nodeName: "video0", sysfsClass: "\(dir.path)/class/video4linux") == nil)
        #expect(V4L2Discovery.usbByIDName(nodeName: "video9", sysfsClass: "\(dir.path)/class/video4linux") == nil)
    }

    @Test func udevSanitizingCollapsesWhitespaceAndReplacesOddCharacters() {
        #expect(V4L2Discovery.udevSanitized("  HD Pro\tWebcam  C920\n") == "HD_Pro_Webcam_C920")
        #expect(V4L2Discovery.udevSanitized("A/B (2)") == "A_B__2_")
        #expect(V4L2Discovery.udevSanitized("v1.0:x=y@z#+-") == "v1.0:x=y@z#+-")
        // udev works on bytes: UTF-8 outside ASCII is kept, only ASCII white space separates.
        #expect(V4L2Discovery.udevSanitized("Caméra\u{00A0}Ünïcode 4K ") == "Caméra\u{00A0}Ünïcode_4K")
        #expect(V4L2Discovery.udevSanitized(" \t\n") == "")
    }

    /// The IDs' parts and the sysfs paths are read on bytes (no _StringProcessing on the way to a
    /// first frame); these are the answers the Character-based code gave.
    @Test func idPartsAndPathsReadOnBytes() {
        #expect(V4L2Discovery.input(inID: "platform:vivid-000/video0#input=2") == 2)
        #expect(V4L2Discovery.input(inID: "a#input=1#input=3") == 3)
        #expect(V4L2Discovery.input(inID: "platform:vimc/video6") == nil && V4L2Discovery.input(inID: "x#input=") == nil)
        #expect(V4L2Discovery.isUSBID("usb-Caméra_Ü-video-index12") && !V4L2Discovery.isUSBID("usb--video-index1"))
        #expect(lexicallyNormalized("/sys/class/video4linux/../../devices/./platform//vivid.0/") == "/sys/devices/platform/vivid.0")
        #expect(lexicallyNormalized("") == "/" && lexicallyNormalized("/..") == "/" && lexicallyNormalized("a/b/..") == "/a")
        #expect(lexicallyNormalized("/dev/v4l/by-id/../../vidéo0") == "/dev/vidéo0")
        #expect(lexicallyNormalized("/a/.../b") == "/a/.../b")
    }

    // MARK: hot-plug

    @Test func inotifyRecordsAreParsed() {
        func record(mask: UInt32, name: String, padded: Int) -> [UInt8] {
            var r: [UInt8] = []
            for v in [UInt32(1), mask, 0, UInt32(padded)] { withUnsafeBytes(of: v.littleEndian) { r += $0 } }
            var n = Array(name.utf8)
            n += [UInt8](repeating: 0, count: padded - n.count)
            return r + n
        }
        let bytes = record(mask: UInt32(IN_CREATE), name: "video3", padded: 16) + record(mask: UInt32(IN_DELETE), name: "media1", padded: 16)
            + record(mask: UInt32(IN_MOVED_TO), name: "video4", padded: 8)
        #expect(DirectoryWatch.parse(bytes[...]) == [.created("video3"), .deleted("media1"), .created("video4")])
        // A truncated record is ignored, not read past.
        #expect(DirectoryWatch.parse(bytes.prefix(20)) == [])
    }

    @Test func videoNodeNamesAreRecognised() {
        #expect(V4L2DeviceWatch.isVideoNode("video0") && V4L2DeviceWatch.isVideoNode("video12"))
        #expect(!V4L2DeviceWatch.isVideoNode("video") && !V4L2DeviceWatch.isVideoNode("videox") && !V4L2DeviceWatch.isVideoNode("media0"))
    }

    @Test func nodesAppearingAndDisappearingAreAddedAndRemovedDevices() async throws {
        let dir = try TempDir()
        let events = Locked([DeviceEvent]())
        let fake: @Sendable (String) -> [DeviceDescriptor] = { name in
            // video7 is a camera, video8 a metadata node (no device).
            name == "video7" ? [DeviceDescriptor(id: "usb-Acme_Cam_1-video-index0", name: "Cam", backend: "v4l2", facing: .external,
                                                 lenses: DeviceDescriptor.singleLens(facing: .external), formats: [])] : []
        }
        let watch = try V4L2DeviceWatch(directory: dir.path, initial: ["video3": ["platform:vivid-000/video3"]], settleSeconds: 0.2, describe: fake) { e in
            events.withLock { $0.append(e) }
        }
        defer { watch.cancel() }
        try dir.write("video8", "")
        try dir.write("notes", "")
        try dir.write("video7", "")
        #expect(await eventually { events.value.count == 1 })
        #expect(events.value.first == .added(fake("video7")[0]))
        try FileManager.default.removeItem(atPath: "\(dir.path)/video7")
        #expect(await eventually { events.value.count == 2 })
        #expect(events.value.last == .removed(id: "usb-Acme_Cam_1-video-index0"))
        // A node listed at the start is removed under the ID it was listed with.
        try dir.write("video3", "")
        try FileManager.default.removeItem(atPath: "\(dir.path)/video3")
        #expect(await eventually { events.value.contains(.removed(id: "platform:vivid-000/video3")) })
        // Nothing was reported for the metadata node or the other file.
        #expect(!events.value.contains { if case .added(let d) = $0 { return d.id != "usb-Acme_Cam_1-video-index0" }; return false })
    }

    @Test func watchOnAMissingDirectoryFailsWithItsName() {
        #expect(throws: V4L2Errno.self) {
            _ = try DirectoryWatch(directory: "/nonexistent-camhal-dir") { _ in }
        }
        do {
            _ = try DirectoryWatch(directory: "/nonexistent-camhal-dir") { _ in }
        } catch {
            #expect(error.description.contains("/nonexistent-camhal-dir"))
        }
    }

    // MARK: unplug detection

    @Test func aNodeWhoseSysfsEntryVanishedIsGone() throws {
        let dir = try TempDir()
        try dir.write("file", "x")
        try dir.write("sys/81:0", "")
        let fd = try DeviceFD(path: "\(dir.path)/file")
        // QUERYCAP on a plain file is ENOTTY: no verdict from the ioctl, the sysfs entry decides.
        #expect(!NodePresence(sysfsEntry: "\(dir.path)/sys/81:0").isGone(fd))
        #expect(NodePresence(sysfsEntry: "\(dir.path)/sys/81:1").isGone(fd))
        #expect(NodePresence(sysfsEntry: "\(dir.path)/sys/81:1").waitGone(fd, seconds: 0.5))
        #expect(!NodePresence(sysfsEntry: nil).isGone(fd))
        fd.close()
        #expect(NodePresence(sysfsEntry: nil).isGone(fd), "a closed descriptor is a gone device")
    }
}

/// A backend whose one binding hands its sink to the test, so the test can report driver events.
private final class EventBackend: CameraBackend, @unchecked Sendable {
    let identifier = "event-test"
    let sink = Locked<DriverSink?>(nil)
    let device = DeviceDescriptor(
        id: "cam", name: "Cam", backend: "event-test", facing: .external, lenses: DeviceDescriptor.singleLens(facing: .external),
        focusModes: [.continuous, .locked, .manual], formats: [FormatDescription(pixelFormat: .yuyv, size: Size(width: 64, height: 48), frameRates: [30])],
        zoomMethod: .optical)
    func availability() -> BackendAvailability { .available }
    func devices() throws(CameraError) -> [DeviceDescriptor] { [device] }
    func bind(_ request: BindRequest, sink: DriverSink) throws(CameraError) -> any DriverBinding {
        self.sink.set(sink)
        return EventBinding()
    }
}

private final class EventBinding: DriverBinding, @unchecked Sendable {
    let format = StreamFormat(pixelFormat: .yuyv, width: 64, height: 48, frameRate: 30)
    func applyZoom(lens: Lens, factor: Double) -> ZoomApplication { .device(factor: factor) }
    func applyTorch(_ on: Bool) -> Bool { false }
    func applyFocusMode(_ mode: FocusMode) -> FocusMode { mode }
    func applyFocusPoint(_ point: NormalizedPoint) -> Bool { false }
    func close() {}
}

@Suite("Control changes from another process reach the state snapshot")
struct ExternalControlChangeTests {
    @Test func zoomAndFocusChangedElsewhereShowInTheNextSnapshot() async throws {
        let backend = EventBackend()
        let camera = Camera(backend: backend, device: backend.device)
        let states = StateLog(camera)
        camera.start()
        #expect(await states.wait { $0.status == .running } != nil)
        let sink = try #require(backend.sink.value)
        let mark = states.value.count
        // `v4l2-ctl -c zoom_absolute=300` on a 100...500 control: factor 3.
        sink.report(.controlsChanged(zoomFactor: 3, focusMode: .manual))
        #expect(await states.wait(after: mark) { $0.zoomRatio == 3 && $0.focusMode == .manual } != nil)
        let again = states.value.count
        sink.report(.controlsChanged(zoomFactor: nil, focusMode: .continuous))
        #expect(await states.wait(after: again) { $0.focusMode == .continuous && $0.zoomRatio == 3 } != nil)
        await camera.stop()
    }
}
