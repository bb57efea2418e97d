@_spi(Backend) import CamHAL
import CV4L2
import Glibc

/// A simple media-controller pipeline (sensor → [ISP stages] → capture node) that CamHAL
/// configures itself, the way vimc needs (STREAMON fails with EPIPE until every pad along the
/// linked path agrees on the format).
struct MediaPipeline: Sendable {
    let graph: MediaGraph
    let stages: [MediaGraph.Stage]

    var summary: String { stages.map(\.entity.name).joined(separator: " -> ") }

    /// The pipeline feeding the video node `major:minor`, if it sits in a media graph with
    /// sub-devices upstream.
    static func find(major: UInt32, minor: UInt32, graphs: [MediaGraph]) -> (MediaGraph, MediaGraph.Entity, MediaPipeline?)? {
        for g in graphs {
            guard let e = g.entity(major: major, minor: minor) else { continue }
            let stages = g.upstream(of: e)
            return (g, e, stages.isEmpty ? nil : MediaPipeline(graph: g, stages: stages))
        }
        return nil
    }

    /// Media-bus codes a sub-device pad offers.
    static func mbusCodes(node: String, pad: UInt32) -> [UInt32] {
        guard let fd = try? DeviceFD(path: node) else { return [] }
        var codes: [UInt32] = []
        var i: UInt32 = 0
        while i < 128 {
            var e = v4l2_subdev_mbus_code_enum()
            e.pad = pad
            e.index = i
            e.which = UInt32(V4L2_SUBDEV_FORMAT_ACTIVE.rawValue)
            guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_SUBDEV_ENUM_MBUS_CODE), &e, "VIDIOC_SUBDEV_ENUM_MBUS_CODE")) != nil else { break }
            codes.append(e.code)
            i += 1
        }
        return codes
    }

    /// Codes the last stage can hand to the capture node. When its source pad also feeds other
    /// sub-devices (vimc's sensor feeds both the raw capture node and the debayer), only codes all
    /// of them accept: the kernel validates every enabled link of the connected graph at STREAMON.
    var outputCodes: [UInt32] {
        let candidates = sensorCandidates()
        return listedCodes.filter { produces($0, sensorCodes: candidates) }
    }

    /// The pipeline feeding the capture node open as `fd`, from the media graph at `mediaPath`
    /// (loaded again: the graph discovery read may be stale); nil when none feeds it.
    static func feeding(_ fd: DeviceFD, mediaPath: String) throws(V4L2Errno) -> MediaPipeline? {
        var st = stat()
        guard fstat(fd.raw, &st) == 0 else { throw V4L2Errno(errno, "fstat \(fd.path)") }
        let graph = try MediaGraph.load(path: mediaPath)
        guard case let (_, _, pipeline?)? = find(major: camhal_major(UInt64(st.st_rdev)), minor: camhal_minor(UInt64(st.st_rdev)), graphs: [graph])
        else { return nil }
        return pipeline
    }

    /// What the path outputs when each stage after the sensor is asked to pass on what it
    /// receives, from the first of `sensorCodes` (TRY formats only: no effect on the device).
    fileprivate func naturalCode(sensorCodes: [UInt32]) -> UInt32? {
        guard stages.count > 1, let first = sensorCodes.first else { return nil }
        return try? pass(openStages(), sensorCode: first, lastCode: nil, width: 640, height: 480, trying: true)?.code
    }

    /// A descriptor of each stage's sub-device, in path order.
    private func openStages() throws(V4L2Errno) -> [DeviceFD] {
        var fds: [DeviceFD] = []
        for s in stages { fds.append(try DeviceFD(path: s.node)) }
        return fds
    }

    /// One pass down the path: `sensorCode` on the sensor's source pad, then each later stage's
    /// sink pad given what the stage before it gives, and its source pad asked for the same code,
    /// or `lastCode` on the last stage (nil: the same code there too). Returns what the last stage
    /// gives; nil when a stage's sink pad takes something else than it is given.
    private func pass(
        _ fds: [DeviceFD], sensorCode: UInt32, lastCode: UInt32?, width: UInt32, height: UInt32, trying: Bool
    ) throws(V4L2Errno) -> PadFormat? {
        var upstream = try Self.setFormat(fds[0], pad: stages[0].sourcePad, PadFormat(code: sensorCode, width: width, height: height), trying: trying)
        for i in stages.indices.dropFirst() {
            let stage = stages[i]
            let sink = try Self.setFormat(fds[i], pad: stage.sinkPad ?? 0, upstream, trying: trying)
            guard sink == upstream else { return nil }
            let asked = i == stages.count - 1 ? lastCode ?? sink.code : sink.code
            upstream = try Self.setFormat(fds[i], pad: stage.sourcePad, PadFormat(code: asked, width: width, height: height), trying: trying)
        }
        return upstream
    }

    /// The codes `configure` tries at the sensor: those the next stage's sink pad lists (a
    /// debayer takes only Bayer codes; trying vimc's 32 sensor codes on it cost two calls each
    /// per trial), or all of the sensor's when the next stage lists none.
    func sensorCandidates() -> [UInt32] {
        let sensor = Self.mbusCodes(node: stages[0].node, pad: stages[0].sourcePad)
        guard stages.count > 1 else { return sensor }
        let accepted = Self.mbusCodes(node: stages[1].node, pad: stages[1].sinkPad ?? 0)
        let usable = sensor.filter(accepted.contains)
        return usable.isEmpty ? sensor : usable
    }

    /// Codes the last stage lists that every other sub-device its source pad feeds accepts.
    fileprivate var listedCodes: [UInt32] {
        guard let last = stages.last else { return [] }
        var codes = Self.mbusCodes(node: last.node, pad: last.sourcePad)
        for c in graph.consumers(of: last.entity, pad: last.sourcePad) where !graph.isVideoNode(c.entity) {
            guard let node = graph.node(of: c.entity) else { continue }
            let accepted = Self.mbusCodes(node: node, pad: c.pad)
            if !accepted.isEmpty { codes = codes.filter(accepted.contains) }
        }
        return codes
    }

    /// A multi-stage path may not convert every code its last stage lists (vimc's scaler passes
    /// on what the debayer gives): whether a trial configuration really produces `code`.
    fileprivate func produces(_ code: UInt32, sensorCodes: [UInt32]) -> Bool {
        stages.count == 1 || (try? configure(code: code, width: 640, height: 480, trying: true, sensorCodes: sensorCodes)) != nil
    }

    struct PadFormat: Equatable, CustomStringConvertible {
        var code: UInt32
        var width: UInt32
        var height: UInt32
        var description: String { "0x\(String(code, radix: 16))/\(width)x\(height)" }
    }

    private static func setFormat(_ fd: DeviceFD, pad: UInt32, _ want: PadFormat, trying: Bool = false) throws(V4L2Errno) -> PadFormat {
        var f = v4l2_subdev_format()
        f.which = UInt32(trying ? V4L2_SUBDEV_FORMAT_TRY.rawValue : V4L2_SUBDEV_FORMAT_ACTIVE.rawValue)
        f.pad = pad
        try fd.ioctl(UInt(CAMHAL_VIDIOC_SUBDEV_G_FMT), &f, "VIDIOC_SUBDEV_G_FMT(pad \(pad))")
        f.format.code = want.code
        f.format.width = want.width
        f.format.height = want.height
        f.format.field = UInt32(V4L2_FIELD_NONE.rawValue)
        try fd.ioctl(UInt(CAMHAL_VIDIOC_SUBDEV_S_FMT), &f, "VIDIOC_SUBDEV_S_FMT(pad \(pad), \(want))")
        return PadFormat(code: f.format.code, width: f.format.width, height: f.format.height)
    }

    /// Makes the rest of the connected graph agree with the configured path: every enabled link
    /// leaving a stage's source pad towards something outside the path gets the same format on its
    /// sink pad, downstream sub-devices propagate further, and other capture nodes get the matching
    /// pixel format and size (vimc validates the whole connected graph at STREAMON). Mismatches
    /// that cannot be fixed (a node busy streaming) are left; STREAMON then reports them.
    private func propagate(from fds: [DeviceFD]) throws(V4L2Errno) {
        var queue: [(MediaGraph.Entity, DeviceFD, UInt32)] = []  // (entity, its fd, source pad)
        var visited = Set(stages.map(\.entity.id))
        for (i, s) in stages.enumerated() { queue.append((s.entity, fds[i], s.sourcePad)) }
        var opened: [DeviceFD] = []
        defer { for fd in opened { fd.close() } }
        while !queue.isEmpty {
            let (entity, fd, pad) = queue.removeFirst()
            var f = v4l2_subdev_format()
            f.which = UInt32(V4L2_SUBDEV_FORMAT_ACTIVE.rawValue)
            f.pad = pad
            try fd.ioctl(UInt(CAMHAL_VIDIOC_SUBDEV_G_FMT), &f, "VIDIOC_SUBDEV_G_FMT(pad \(pad))")
            let fmt = PadFormat(code: f.format.code, width: f.format.width, height: f.format.height)
            for c in graph.consumers(of: entity, pad: pad) where !visited.contains(c.entity.id) {
                guard let node = graph.node(of: c.entity) else { continue }
                visited.insert(c.entity.id)
                guard let cfd = try? DeviceFD(path: node) else { continue }
                opened.append(cfd)
                if graph.isVideoNode(c.entity) {
                    // Another capture node: give it the pixel format of this code, at this size.
                    guard let pix = V4L2Formats.pixelFormats(cfd, mbusCode: fmt.code).first else { continue }
                    var vf = v4l2_format()
                    vf.type = V4L2Formats.captureType
                    vf.fmt.pix.pixelformat = pix
                    vf.fmt.pix.width = fmt.width
                    vf.fmt.pix.height = fmt.height
                    vf.fmt.pix.field = UInt32(V4L2_FIELD_NONE.rawValue)
                    _ = try? cfd.ioctl(UInt(CAMHAL_VIDIOC_S_FMT), &vf, "VIDIOC_S_FMT")
                } else {
                    _ = try Self.setFormat(cfd, pad: c.pad, fmt)
                    for sp in graph.sourcePads(of: c.entity) { queue.append((c.entity, cfd, sp)) }
                }
            }
        }
    }

    /// Sets every pad along the path so the last stage outputs `code` at `width`x`height`
    /// (or the nearest size the stages allow). Returns the format the last stage really outputs.
    /// EBUSY (another capture node of the graph is streaming) is thrown as is.
    /// With `trying`, only V4L2_SUBDEV_FORMAT_TRY formats are set (private to this call's file
    /// handles: no effect on the device), to learn whether the path can produce `code`.
    /// `sensorCodes`: `sensorCandidates()`, when the caller has them already.
    func configure(code: UInt32, width: UInt32, height: UInt32, trying: Bool = false, sensorCodes: [UInt32]? = nil) throws(V4L2Errno) -> PadFormat {
        let fds = try openStages()
        let sensorCodes = sensorCodes ?? sensorCandidates()
        // Try the wanted code at the sensor first, then every other code it offers (a debayer
        // stage wants Bayer in and gives RGB out).
        let order = (sensorCodes.contains(code) ? [code] : []) + sensorCodes.filter { $0 != code }
        var lastError: V4L2Errno?
        for sensorCode in order {
            do {
                let given = try pass(fds, sensorCode: stages.count == 1 ? code : sensorCode, lastCode: code, width: width, height: height, trying: trying)
                guard let upstream = given, upstream.code == code else { continue }
                if !trying { try propagate(from: fds) }
                return upstream
            } catch {
                if error.code == EBUSY { throw error }
                lastError = error
            }
        }
        throw lastError ?? V4L2Errno(EINVAL, "configuring media pipeline \(summary) for code 0x\(String(code, radix: 16))")
    }
}

extension MediaPipeline {
    /// The codes a bind may ask of the path for a capture node's pixel format, each found out at
    /// most once: the pixel formats the capture node maps a code to (one listing per code), and
    /// whether a trial configuration really produces the code (dozens of sub-device calls on
    /// vimc). A bind needs one pixel format and one code: finding every code the path produces
    /// first (`outputCodes`, what the descriptor's format list needs) was about 1,400 sub-device
    /// calls on vimc on the way to the first frame.
    ///
    /// Codes are tried in the order the last stage lists them, the one the path gives by itself
    /// first: vimc's scaler lists 12 codes but passes on only the debayer's RGB, and a capture
    /// node that ignores ENUM_FMT's mbus filter accepts them all.
    struct Outputs {
        let pipeline: MediaPipeline
        /// The capture node the path feeds.
        let capture: DeviceFD
        /// The codes the last stage lists, in its order, and in the order they are tried.
        private let listed: [UInt32], codes: [UInt32]
        private let sensorCodes: [UInt32]
        private var produced: [UInt32: Bool] = [:]
        private var pixelFormats: [UInt32: [UInt32]] = [:]

        init(_ pipeline: MediaPipeline, capture: DeviceFD) {
            self.pipeline = pipeline
            self.capture = capture
            sensorCodes = pipeline.sensorCandidates()
            listed = pipeline.listedCodes
            var codes = listed
            if let own = pipeline.naturalCode(sensorCodes: sensorCodes), let i = codes.firstIndex(of: own) {
                codes.insert(codes.remove(at: i), at: 0)
            }
            self.codes = codes
        }

        /// The first code that the capture node maps to `pixelFormat` and the path produces;
        /// nil when none does.
        mutating func code(giving pixelFormat: UInt32) -> UInt32? {
            for code in codes where formats(of: code).contains(pixelFormat) && produces(code) { return code }
            return nil
        }

        /// The first pixel format, in the order the descriptor's list has them (the codes the
        /// path produces in the last stage's order, each code's pixel formats in the capture
        /// node's order), for which `accept` gives a value, and that value.
        mutating func firstListed<T>(where accept: (UInt32) -> T?) -> (UInt32, T)? {
            var seen: [UInt32] = []
            for code in listed where produces(code) {
                for p in formats(of: code) where !seen.contains(p) {
                    seen.append(p)
                    if let value = accept(p) { return (p, value) }
                }
            }
            return nil
        }

        /// The pixel formats the capture node maps `code` to, listed once.
        private mutating func formats(of code: UInt32) -> [UInt32] {
            if let known = pixelFormats[code] { return known }
            let found = V4L2Formats.pixelFormats(capture, mbusCode: code)
            pixelFormats[code] = found
            return found
        }

        /// `MediaPipeline.configure` with the sensor codes found already.
        func configure(code: UInt32, width: UInt32, height: UInt32) throws(V4L2Errno) -> PadFormat {
            try pipeline.configure(code: code, width: width, height: height, sensorCodes: sensorCodes)
        }

        /// Whether a trial configuration produces `code`, tried once.
        private mutating func produces(_ code: UInt32) -> Bool {
            if let known = produced[code] { return known }
            let works = pipeline.produces(code, sensorCodes: sensorCodes)
            produced[code] = works
            return works
        }
    }
}
