@_spi(Backend) import CamHAL
import Foundation
@testable import CamHALV4L2
import CV4L2
import Glibc
import Testing

/// The kernel's _IOC computation (include/uapi/asm-generic/ioctl.h), independently of the C header.
private func ioc(_ dir: UInt, _ type: Character, _ nr: UInt, _ size: Int) -> UInt {
    (dir << 30) | (UInt(size) << 16) | (UInt(type.asciiValue!) << 8) | nr
}
private let read: UInt = 2, write: UInt = 1, readWrite: UInt = 3

@Suite("V4L2 host: request codes, fourcc, formats, errors")
struct V4L2HostTests {
    @Test func requestCodesMatchTheKernelsIOCComputation() {
        #expect(UInt(CAMHAL_VIDIOC_QUERYCAP) == ioc(read, "V", 0, MemoryLayout<v4l2_capability>.size))
        #expect(UInt(CAMHAL_VIDIOC_ENUM_FMT) == ioc(readWrite, "V", 2, MemoryLayout<v4l2_fmtdesc>.size))
        #expect(UInt(CAMHAL_VIDIOC_S_FMT) == ioc(readWrite, "V", 5, MemoryLayout<v4l2_format>.size))
        #expect(UInt(CAMHAL_VIDIOC_REQBUFS) == ioc(readWrite, "V", 8, MemoryLayout<v4l2_requestbuffers>.size))
        #expect(UInt(CAMHAL_VIDIOC_QBUF) == ioc(readWrite, "V", 15, MemoryLayout<v4l2_buffer>.size))
        #expect(UInt(CAMHAL_VIDIOC_DQBUF) == ioc(readWrite, "V", 17, MemoryLayout<v4l2_buffer>.size))
        #expect(UInt(CAMHAL_VIDIOC_STREAMON) == ioc(write, "V", 18, MemoryLayout<Int32>.size))
        #expect(UInt(CAMHAL_VIDIOC_S_SELECTION) == ioc(readWrite, "V", 95, MemoryLayout<v4l2_selection>.size))
        #expect(UInt(CAMHAL_VIDIOC_QUERY_EXT_CTRL) == ioc(readWrite, "V", 103, MemoryLayout<v4l2_query_ext_ctrl>.size))
        #expect(UInt(CAMHAL_VIDIOC_SUBDEV_S_FMT) == ioc(readWrite, "V", 5, MemoryLayout<v4l2_subdev_format>.size))
        #expect(UInt(CAMHAL_MEDIA_IOC_G_TOPOLOGY) == ioc(readWrite, "|", 4, MemoryLayout<media_v2_topology>.size))
        // Values v4l2-ctl and strace print on x86-64.
        #expect(UInt(CAMHAL_VIDIOC_QUERYCAP) == 0x8068_5600)
        #expect(UInt(CAMHAL_VIDIOC_S_FMT) == 0xc0d0_5605)
        #expect(UInt(CAMHAL_VIDIOC_DQBUF) == 0xc058_5611)
        #expect(UInt(CAMHAL_VIDIOC_STREAMON) == 0x4004_5612)
    }

    @Test func fourCCMatchesCamHALPixelFormats() {
        #expect(camhal_fourcc(0x59, 0x55, 0x59, 0x56) == 0x5659_5559)  // 'YUYV'
        #expect(PixelFormat(rawValue: camhal_fourcc(0x59, 0x55, 0x59, 0x56)) == .yuyv)
        #expect(PixelFormat(rawValue: camhal_fourcc(0x4e, 0x56, 0x31, 0x32)) == .nv12)
        #expect(PixelFormat(rawValue: camhal_fourcc(0x52, 0x47, 0x42, 0x33)) == .rgb24)
        #expect(PixelFormat(rawValue: camhal_fourcc(0x4d, 0x4a, 0x50, 0x47)) == .mjpeg)
    }

    @Test func stepwiseRangesListTheCommonSizesOnTheirGrid() {
        let s = V4L2Formats.stepwiseSizes(minWidth: 16, maxWidth: 4096, stepWidth: 1, minHeight: 16, maxHeight: 2160, stepHeight: 1)
        #expect(s.map(\.description) == [
            "160x120", "176x144", "320x180", "320x240", "352x288", "640x360", "640x480", "800x600", "1024x768", "1280x720",
            "1280x960", "1600x1200", "1920x1080",
        ])
        let small = V4L2Formats.stepwiseSizes(minWidth: 16, maxWidth: 400, stepWidth: 2, minHeight: 16, maxHeight: 300, stepHeight: 2)
        #expect(small.map(\.description) == ["160x120", "176x144", "320x180", "320x240", "352x288"])
        // A grid of 64 from 64: only the sizes on it.
        let grid = V4L2Formats.stepwiseSizes(minWidth: 64, maxWidth: 1920, stepWidth: 64, minHeight: 64, maxHeight: 1080, stepHeight: 8)
        #expect(grid.map(\.description) == ["320x240", "640x360", "640x480", "1024x768", "1280x720", "1280x960", "1920x1080"])
        #expect(V4L2Formats.stepwiseRates(fastest: 60, slowest: 1) == [60, 1, 50, 30, 25, 24, 20, 15, 10, 5])
        let narrow = V4L2Formats.stepwiseSizes(minWidth: 100, maxWidth: 200, stepWidth: 1, minHeight: 100, maxHeight: 150, stepHeight: 1)
        #expect(narrow.map(\.description) == ["160x120", "176x144"])
        let none = V4L2Formats.stepwiseSizes(minWidth: 100, maxWidth: 150, stepWidth: 1, minHeight: 100, maxHeight: 110, stepHeight: 1)
        #expect(none.map(\.description) == ["150x110"])
        #expect(V4L2Formats.rate(v4l2_fract(numerator: 1, denominator: 30)) == 30)
        #expect(V4L2Formats.rate(v4l2_fract(numerator: 2, denominator: 25)) == 12.5)
        #expect(V4L2Formats.rate(v4l2_fract(numerator: 0, denominator: 25)) == nil)
    }

    @Test func formatChoiceOnAWebcamLikeList() {
        let formats = [
            FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1280, height: 720), frameRates: [30]),
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 360), frameRates: [40, 30]),
            FormatDescription(pixelFormat: .yuyv, size: Size(width: 1280, height: 720), frameRates: [12.5]),
        ]
        #expect(StreamRequest().choose(from: formats)?.size == Size(width: 640, height: 360))
        #expect(StreamRequest(pixelFormat: .mjpeg).choose(from: formats)?.pixelFormat == .mjpeg)
        #expect(StreamRequest(size: Size(width: 1280, height: 720)).choose(from: formats)?.frameRates == [12.5])
    }

    @Test func errnoMapsToTypedCameraErrors() {
        let denied = V4L2Errno(EACCES, "open /dev/video0").cameraError(device: "cam0")
        guard case .permissionDenied(let device, let remedy) = denied else { Issue.record("\(denied)"); return }
        #expect(device == "cam0")
        #expect(remedy.contains("'video' group") && remedy.contains("usermod -aG video"))
        #expect(V4L2Errno(EBUSY, "VIDIOC_S_FMT").cameraError(device: "cam0").code == "busy")
        #expect(V4L2Errno(ENODEV, "VIDIOC_DQBUF").cameraError(device: "cam0") == .disconnected(device: "cam0"))
        #expect(V4L2Errno(EIO, "VIDIOC_DQBUF").cameraError(device: "cam0") == .disconnected(device: "cam0"))
        let other = V4L2Errno(EINVAL, "VIDIOC_S_FMT(YUYV 1x1) on /dev/video0").cameraError(device: "cam0")
        #expect(other.code == "configurationFailed")
        #expect(other.description.contains("cam0") && other.description.contains("VIDIOC_S_FMT(YUYV 1x1)"))
        #expect(V4L2Errno(EINVAL, "x").cameraError(device: "d", fallback: CameraError.streamFailed).code == "streamFailed")
    }

    // A USB camera's stable ID that no node carries (the camera is unplugged) is `disconnected`
    // at once, read from sysfs alone; any other unknown ID stays `unknownDevice`.
    // Would catch: "unknown device" after opening every other node (2.5 s in the VM).
    @Test func anUnpluggedUSBCameraIsNotConnected() throws {
        #expect(V4L2Discovery.isUSBID("usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index0"))
        for id in ["usb-", "usb--video-index0", "usb-x-video-indexA", "platform:vivid-000/video0", "no-such-device"] {
            #expect(!V4L2Discovery.isUSBID(id), "\(id)")
        }
        let absent = "usb-CamHAL_Test_No_Such_Camera_0000-video-index0"
        #expect(throws: CameraError.disconnected(device: absent)) { try V4L2Backend().device(id: absent) }
        #expect(CameraError.disconnected(device: absent).description.contains("not connected"))
        #expect(throws: CameraError.disconnected(device: absent)) {
            try BackendRegistry([V4L2Backend()], environment: [:]).open(backend: "v4l2", device: absent)
        }
        do {
            _ = try V4L2Backend().device(id: "no-such-device")
            Issue.record("no-such-device found")
        } catch {
            #expect(error.code == "unknownDevice", "\(error)")
        }
    }

    @Test func focusModesFollowTheControls() {
        #expect(V4L2Discovery.focusModes(auto: false, absolute: false, start: false) == [])
        #expect(V4L2Discovery.focusModes(auto: false, absolute: true, start: false) == [.locked, .manual])
        // A UVC webcam: focus_automatic_continuous + focus_absolute, no one-shot trigger.
        #expect(V4L2Discovery.focusModes(auto: true, absolute: true, start: false) == [.continuous, .locked, .manual])
        #expect(V4L2Discovery.focusModes(auto: true, absolute: true, start: true) == [.continuous, .auto, .locked, .manual])
        #expect(V4L2Discovery.focusModes(auto: false, absolute: false, start: true) == [.auto, .locked])
    }

    @Test(.enabled(if: V4L2Discovery.videoNodeNames().isEmpty, "this machine has /dev/video* nodes; the no-device path is checked on hosts without them"))
    func unavailableWithAReasonWithoutDevices() throws {
        let b = V4L2Backend()
        guard case .unavailable(let reason) = b.availability() else { Issue.record("available without /dev/video*"); return }
        #expect(reason.contains("/dev/video"))
        #expect(try b.devices().isEmpty)
    }
}

@Test func alternateFieldsGetDistinctIncreasingSequences() {
    var top = v4l2_buffer(), bottom = v4l2_buffer(), progressive = v4l2_buffer()
    top.sequence = 7; top.field = UInt32(V4L2_FIELD_TOP.rawValue)
    bottom.sequence = 7; bottom.field = UInt32(V4L2_FIELD_BOTTOM.rawValue)
    progressive.sequence = 7; progressive.field = UInt32(V4L2_FIELD_NONE.rawValue)
    #expect(V4L2Binding.sequence(of: top) == 14)
    #expect(V4L2Binding.sequence(of: bottom) == 15)
    #expect(V4L2Binding.sequence(of: progressive) == 7)
}

/// A descriptor a caller built by hand cannot route the backend: `details["node"]` names a file
/// (here a plain one; it could be `/dev/mem`) under an ID no capture node has. The backend
/// routes with its own discovery only, so both entry points answer `unknownDevice`; before,
/// `bind` opened the named file and failed on its ioctls instead.
@Test func forgedDescriptorCannotRouteToAnotherFile() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-forged-\(getpid())").path
    #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 64)))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let forged = DeviceDescriptor(
        id: "forged:\(path)", name: "forged", backend: "v4l2", facing: .external,
        lenses: DeviceDescriptor.singleLens(facing: .external), formats: [], details: ["node": path, "input": "0"])
    let backend = V4L2Backend()
    let sink = DriverSink(frame: { _ in }, event: { _ in })
    #expect(throws: CameraError.unknownDevice(id: forged.id, backend: "v4l2")) {
        _ = try backend.bind(BindRequest(device: forged, lens: forged.lenses[0], stream: .default), sink: sink)
    }
    #expect(throws: CameraError.unknownDevice(id: forged.id, backend: "v4l2")) {
        _ = try backend.controlDriver(for: forged)
    }
}
