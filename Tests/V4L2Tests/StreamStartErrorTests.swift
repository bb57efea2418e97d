import CamHAL
import Foundation
@testable import CamHALV4L2
import Glibc
import Testing

/// The errno of a refused VIDIOC_STREAMON becomes the typed error a user can act on: the fault is
/// injected as the errno the ioctl would return (the host has no USB camera).
@Suite("STREAMON errors")
struct StreamStartErrorTests {
    private let offered = [
        FormatDescription(pixelFormat: .yuyv, size: Size(width: 1280, height: 720), frameRates: [10]),
        FormatDescription(pixelFormat: .yuyv, size: Size(width: 640, height: 480), frameRates: [30]),
        FormatDescription(pixelFormat: .mjpeg, size: Size(width: 1280, height: 720), frameRates: [30]),
    ]
    private let asked = StreamFormat(pixelFormat: .yuyv, width: 1280, height: 720, frameRate: 10)

    // ENOSPC (no USB bandwidth left for the alternate setting) names camera, format and what fits.
    @Test func noSpaceIsABandwidthErrorWithAlternatives() {
        let e = V4L2Errno(ENOSPC, "VIDIOC_STREAMON").streamOnError(
            device: "usb-cam", node: "/dev/video2", descriptor: nil, requested: asked, offered: offered, field: 1)
        guard case .insufficientBandwidth(let device, let requested, let alternatives) = e else {
            Issue.record("ENOSPC gave \(e), not insufficientBandwidth")
            return
        }
        #expect(device == "usb-cam (/dev/video2)")
        #expect(requested == asked)
        #expect(alternatives.first == StreamFormat(pixelFormat: .mjpeg, width: 1280, height: 720, frameRate: 30))
        #expect(e.description.contains("not enough USB bandwidth"))
    }

    // EBUSY names who holds the node (a file held by this process stands in for the node).
    @Test func busyNamesTheHolders() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camhal-streamon-\(getpid())").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { unlink(path) }
        let own = open(path, O_RDONLY | O_CLOEXEC)
        var other = open(path, O_RDONLY | O_CLOEXEC)
        try #require(own >= 0 && other >= 0)
        // Each descriptor closed once: a second close of `other` after the one below would close
        // whatever file a test running in parallel had just opened under the same number.
        defer {
            close(own)
            if other >= 0 { close(other) }
        }
        let e = V4L2Errno(EBUSY, "VIDIOC_STREAMON").streamOnError(
            device: "usb-cam", node: path, descriptor: own, requested: asked, offered: offered, field: 1)
        guard case .busy(_, let detail) = e else {
            Issue.record("EBUSY gave \(e)")
            return
        }
        #expect(detail.contains("in use by \(getpid()) ("), "\(detail)")
        #expect(detail.contains("this process"), "\(detail)")
        close(other)
        other = -1
        let alone = V4L2Errno(EBUSY, "VIDIOC_STREAMON").streamOnError(
            device: "usb-cam", node: path, descriptor: own, requested: asked, offered: offered, field: 1)
        #expect(alone.description.contains("not open in any process"), "\(alone)")
    }

    @Test func otherErrnosKeepTheirMapping() {
        let pipe = V4L2Errno(EPIPE, "VIDIOC_STREAMON").streamOnError(
            device: "vimc", node: "/dev/video0", descriptor: nil, requested: asked, offered: offered, field: 1)
        #expect(pipe.code == "configurationFailed")
        let gone = V4L2Errno(ENODEV, "VIDIOC_STREAMON").streamOnError(
            device: "usb-cam", node: "/dev/video2", descriptor: nil, requested: asked, offered: offered, field: 1)
        #expect(gone == .disconnected(device: "usb-cam (/dev/video2)"))
    }
}
