@_spi(Backend) import CamHAL
@testable import CamHALV4L2
import CV4L2
import Foundation
import Glibc
import CamHALTestSupport
import Testing

/// Tests against real V4L2 drivers. On a machine without /dev/video* they are skipped (the
/// reason says so); in the VM (`scripts/vm-run`) they run against vivid and vimc.
private let hasDevices = !V4L2Discovery.videoNodeNames().isEmpty
private let skipReason: Comment = "needs /dev/video* (vivid and vimc: scripts/vm-device-tests runs the suite in the VM)"

/// Collects delivered frames; optionally keeps them (holding driver buffers).
final class Collector: @unchecked Sendable {
    let lock = NSCondition()
    var frames: [Frame] = []
    var sequences: [UInt64] = []
    var events: [DriverEvent] = []
    var keep: Int
    init(keep: Int = 0) { self.keep = keep }
    var sink: DriverSink {
        DriverSink(frame: { [self] f in
            lock.lock(); sequences.append(f.sequence); if frames.count < keep { frames.append(f) }; lock.broadcast(); lock.unlock()
        }, event: { [self] e in lock.lock(); events.append(e); lock.unlock() })
    }
    func wait(frames n: Int, timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock(); defer { lock.unlock() }
        while sequences.count < n { if !lock.wait(until: deadline) { return false } }
        return true
    }
}

/// Where asking the driver for the fastest rate (`V4L2Formats.setFastestRate`, one S_PARM, what
/// the bind does when no rate is asked for) gives another rate than the first of those listed
/// for that size (what the bind chose from the list before): one line per format and size of
/// `formats` that lists rates, set on `fd` with S_FMT first. Empty when they all agree.
func fastestRateDisagreements(_ fd: DeviceFD, _ formats: [FormatDescription]) -> [String] {
    var out: [String] = []
    for f in formats {
        guard let listed = f.frameRates.first else { continue }
        var set = v4l2_format()
        set.type = V4L2Formats.captureType
        set.fmt.pix.pixelformat = f.pixelFormat.rawValue
        set.fmt.pix.width = UInt32(f.size.width)
        set.fmt.pix.height = UInt32(f.size.height)
        set.fmt.pix.field = UInt32(V4L2_FIELD_NONE.rawValue)
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_S_FMT), &set, "VIDIOC_S_FMT")) != nil else {
            out.append("\(f.pixelFormat) \(f.size): S_FMT refused")
            continue
        }
        let asked = V4L2Formats.setFastestRate(fd)
        if abs(asked - listed) > 0.01 { out.append("\(f.pixelFormat) \(f.size): the driver set \(asked) fps, the list starts with \(listed)") }
    }
    return out
}

private func device(_ match: (DeviceDescriptor) -> Bool) -> DeviceDescriptor? {
    (try? V4L2Backend().devices())?.first(where: match)
}

private func bind(_ d: DeviceDescriptor, _ c: Collector, _ req: StreamRequest = .init()) throws -> any DriverBinding {
    try V4L2Backend().bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: req), sink: c.sink)
}

@Suite("V4L2Device (vivid, vimc)", .enabled(if: hasDevices, skipReason), .serialized)
struct V4L2DeviceTests {
    @Test func discoveryListsCaptureNodesOnly() throws {
        let devices = try V4L2Backend().devices()
        let nodes = Set(devices.compactMap { $0.details["node"] })
        for d in devices { print("device \(d.id) '\(d.name)' zoom \(d.zoomMethod) focus \(d.focusModes) formats \(d.formats.count) \(d.details)") }
        #expect(V4L2Backend().availability() == .available)
        for d in devices {
            #expect(!d.formats.isEmpty, "\(d.id) lists no formats")
            #expect(d.facing == .external && d.lenses.count == 1 && d.lenses[0].kind == .external)
            #expect(!d.hasTorch, "vivid/vimc have no flash")
        }
        // vivid's output (video1) and metadata (video2/3) nodes are not cameras.
        if listDirectory("/dev").contains("video1") { #expect(!nodes.contains("/dev/video1") && !nodes.contains("/dev/video2") && !nodes.contains("/dev/video3")) }
        #expect(Set(devices.map(\.id)).count == devices.count, "ids are unique")
    }

    /// Opening a camera for its first frame lists no formats: discovery leaves them to be listed
    /// when first read, and the binding asks the driver for the one format the request picks.
    /// Neither may change an answer: the list read later equals a full enumeration done now, and
    /// the quick choice equals the choice made from the full list, for every offered format and
    /// size and for requests nothing offers; on a media pipeline (vimc) too, where the quick
    /// choice tries the pixel formats through the codes the pads produce instead of listing them.
    @Test func lazyFormatsEqualTheFullListAndQuickChoiceEqualsTheListsChoice() throws {
        let devices = try V4L2Backend().devices()
        #expect(!devices.isEmpty)
        for d in devices where d.details["error"] == nil {
            #expect(d.formatsIfLoaded == nil, "\(d.id): discovery listed the formats")
            let node = try #require(d.details["node"])
            let fd = try DeviceFD(path: node)
            defer { fd.close() }
            if let input = d.details["input"].flatMap(UInt32.init) { try V4L2Discovery.selectInput(fd, input) }
            // A media-controller pipeline's list is restricted to what its pads produce: its
            // quick choice goes through the pipeline's outputs.
            var outputs = try d.details["media"].flatMap { try MediaPipeline.feeding(fd, mediaPath: $0) }.map { MediaPipeline.Outputs($0, capture: fd) }
            #expect((outputs != nil) == (d.details["pipeline"] != nil), "\(d.id): pipeline \(d.details["pipeline"] ?? "none") not found again")
            let full = outputs == nil ? V4L2Formats.describe(fd, mbusCodes: nil) : d.formats
            if outputs == nil {
                #expect(d.formats == full, "\(d.id): lazily listed formats differ from a full enumeration")
            } else {
                #expect(!d.formats.isEmpty, "\(d.id): pipeline lists no formats")
            }
            var requests: [StreamRequest] = [StreamRequest(), StreamRequest(size: Size(width: 7, height: 5)),
                                             StreamRequest(size: Size(width: 40000, height: 30000)),
                                             StreamRequest(pixelFormat: PixelFormat(rawValue: 0x5A5A_5A5A))]
            for f in full {
                requests.append(StreamRequest(pixelFormat: f.pixelFormat, size: f.size))
                requests.append(StreamRequest(pixelFormat: f.pixelFormat))
                requests.append(StreamRequest(size: f.size))
            }
            for r in requests {
                let quick: FormatDescription?
                if var o = outputs {
                    quick = V4L2Formats.quickChoice(&o, request: r)
                    outputs = o
                } else {
                    quick = V4L2Formats.quickChoice(fd, request: r)?.format
                }
                let listed = r.choose(from: full)
                // Strict: nil (the binding's fall-back to the list) only where the list has no answer either.
                #expect(quick == listed, "\(d.id) \(r): quick \(String(describing: quick)), from the list \(String(describing: listed))")
            }
        }
    }

    /// A bind with no rate asked for streams at the fastest rate the size has, set with one
    /// S_PARM instead of listing the rates first: for every listed format and size of every
    /// device that lists rates, the driver's answer equals the list's fastest. Would catch a
    /// driver whose S_PARM does not pick the nearest interval (it would stream slower than the
    /// list's fastest), or a request of 1,000 fps it refuses instead of clamping.
    @Test func theFastestRateAskedOfTheDriverIsTheListsFastest() throws {
        var checked = 0
        for d in try V4L2Backend().devices() where d.details["error"] == nil && d.details["pipeline"] == nil {
            let fd = try DeviceFD(path: try #require(d.details["node"]))
            defer { fd.close() }
            if let input = d.details["input"].flatMap(UInt32.init) { try V4L2Discovery.selectInput(fd, input) }
            let formats = V4L2Formats.describe(fd, mbusCodes: nil)
            checked += formats.filter { !$0.frameRates.isEmpty }.count
            let disagreements = fastestRateDisagreements(fd, formats)
            #expect(disagreements.isEmpty, "\(d.id): \(disagreements.prefix(5))")
        }
        #expect(checked > 0, "no device lists a frame rate: nothing was compared")
    }

    /// Opening a camera by its ID opens its node once: the node discovery opened to describe
    /// the device is the one the bind streams, and only the descriptor `device(id:)` returns
    /// holds it (a second bind, or a listing, opens its own). Would catch the node closed after
    /// its description and opened again (a close and an open on the way to the first frame; on
    /// a webcam its status transfer stopped and started), or a listing that kept every node open.
    @Test func aCameraOpenedByItsIDStreamsTheNodeItsDescriptionOpened() throws {
        let fds0 = openFDs()
        let listed = try #require(device { $0.details["error"] == nil && $0.details["pipeline"] == nil })
        #expect(openFDs() == fds0, "a listing left nodes open")
        let backend = V4L2Backend()
        let d = try backend.device(id: listed.id)
        #expect(openFDs() == fds0 + 1, "device(id:) holds its node open for the bind")
        let c = Collector()
        let b = try backend.bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: c.sink)
        #expect(openFDs() == fds0 + 2, "the bind opened the node again (one node, one eventfd expected)")
        #expect(c.wait(frames: 2))
        b.close()
        #expect(openFDs() == fds0, "descriptors left open after close")
        // Taken once: a second bind of the same descriptor opens its own node and streams.
        let again = Collector()
        let b2 = try backend.bindStreaming(BindRequest(device: d, lens: d.lenses[0], stream: .init()), sink: again.sink)
        #expect(again.wait(frames: 2))
        b2.close()
        #expect(openFDs() == fds0)
        // Never bound: the node closes with the descriptor.
        do { _ = try backend.device(id: listed.id) }
        #expect(openFDs() == fds0, "an unbound descriptor's node outlived it")
    }

    @Test func everyDeviceStreamsAndReleasesCleanly() throws {
        let fds0 = openFDs()
        for d in try V4L2Backend().devices() {
            for cycle in 0..<2 {
                let c = Collector()
                let b = try bind(d, c)
                let ok = c.wait(frames: 3 + cycle * 4)
                b.close()
                #expect(ok, "\(d.id): no frames (\(c.events))")
                let seq = c.lock.withLock { c.sequences }
                #expect(zip(seq, seq.dropFirst()).allSatisfy { $0 < $1 }, "\(d.id): sequences \(seq)")
                #expect(c.events.isEmpty, "\(d.id): \(c.events)")
            }
        }
        #expect(openFDs() == fds0, "file descriptors leaked")
    }

    @Test func framesAreZeroCopyAndNotBlack() throws {
        let d = try #require(device { $0.details["node"] == "/dev/video0" && $0.details["input"] == "0" } ?? device { _ in true })
        let c = Collector(keep: 2)
        let b = try bind(d, c)
        #expect(c.wait(frames: 2))
        let f = try #require(c.lock.withLock { c.frames.first })
        #expect(f.width == b.format.width && f.height == b.format.height && f.format == b.format.pixelFormat)
        #expect(f.planes[0].bytes.contains { $0 > 32 }, "frame is all black")
        b.close()
        // A frame held after close stays readable (its buffer is unmapped only when released).
        #expect(f.planes[0].bytes.reduce(0) { $0 &+ Int($1) } > 0)
        c.lock.withLock { c.frames.removeAll() }
    }

    @Test func secondStreamIsBusyWithinASecond() throws {
        let d = try #require(device { $0.details["node"] == "/dev/video0" } ?? device { _ in true })
        let c = Collector()
        let b = try bind(d, c)
        defer { b.close() }
        let t0 = Date()
        do {
            let b2 = try bind(d, Collector())
            b2.close()
            Issue.record("second bind of \(d.id) succeeded")
        } catch {
            #expect((error as? CameraError)?.code == "busy", "\(error)")
        }
        #expect(Date().timeIntervalSince(t0) < 1)
    }

    @Test func selectionCropZoomsOnTheCropCapableInput() throws {
        let d = try #require(device { $0.zoomMethod == .sensorCrop }, "no crop-capable input")
        let c = Collector(keep: 0)
        let b = try bind(d, c)
        defer { b.close() }
        #expect(c.wait(frames: 1))
        let applied = b.applyZoom(lens: d.lenses[0], factor: 2)
        guard case .device(let f) = applied else { Issue.record("\(d.id): crop zoom gave \(applied)"); return }
        #expect(abs(f - 2) < 0.05, "\(d.id): applied \(f)")
        // Frames delivered after the crop carry it.
        let n = c.lock.withLock { c.sequences.count }
        #expect(c.wait(frames: n + 3))
        #expect(b.applyZoom(lens: d.lenses[0], factor: 1) == .device(factor: 1))
    }

    @Test func webcamInputZoomsInTheFramePath() throws {
        let d = try #require(device { $0.details["driver"] == "vivid" && $0.zoomMethod == .frameCrop })
        let c = Collector()
        let b = try bind(d, c)
        defer { b.close() }
        #expect(b.applyZoom(lens: d.lenses[0], factor: 2) == .none)
    }

    @Test func vimcLensIsFoundThroughTheMediaGraph() throws {
        let d = try #require(device { $0.details["driver"] == "vimc" && $0.details["pipeline"]?.hasPrefix("Sensor A") == true })
        #expect(d.details["lensSubdev"] != nil, "\(d.details)")
        #expect(d.focusModes.contains(.manual))
        let c = Collector()
        let b = try bind(d, c)
        defer { b.close() }
        #expect(c.wait(frames: 2))
        #expect(b.applyFocusMode(.manual) == .manual)
        #expect(b.applyFocusMode(.continuous) != .continuous)
    }
}
