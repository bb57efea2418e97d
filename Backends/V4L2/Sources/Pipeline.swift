import CamHAL
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

    /// Codes the last stage can hand to the capture node.
    var outputCodes: [UInt32] {
        guard let last = stages.last else { return [] }
        return Self.mbusCodes(node: last.node, pad: last.sourcePad)
    }

    struct PadFormat: Equatable, CustomStringConvertible {
        var code: UInt32
        var width: UInt32
        var height: UInt32
        var description: String { "0x\(String(code, radix: 16))/\(width)x\(height)" }
    }

    private static func setFormat(_ fd: DeviceFD, pad: UInt32, _ want: PadFormat) throws(V4L2Errno) -> PadFormat {
        var f = v4l2_subdev_format()
        f.which = UInt32(V4L2_SUBDEV_FORMAT_ACTIVE.rawValue)
        f.pad = pad
        try fd.ioctl(UInt(CAMHAL_VIDIOC_SUBDEV_G_FMT), &f, "VIDIOC_SUBDEV_G_FMT(pad \(pad))")
        f.format.code = want.code
        f.format.width = want.width
        f.format.height = want.height
        f.format.field = UInt32(V4L2_FIELD_NONE.rawValue)
        try fd.ioctl(UInt(CAMHAL_VIDIOC_SUBDEV_S_FMT), &f, "VIDIOC_SUBDEV_S_FMT(pad \(pad), \(want))")
        return PadFormat(code: f.format.code, width: f.format.width, height: f.format.height)
    }

    /// Sets every pad along the path so the last stage outputs `code` at `width`x`height`
    /// (or the nearest size the stages allow). Returns the format the last stage really outputs.
    /// EBUSY (another capture node of the graph is streaming) is thrown as is.
    func configure(code: UInt32, width: UInt32, height: UInt32) throws(V4L2Errno) -> PadFormat {
        var fds: [DeviceFD] = []
        for s in stages { fds.append(try DeviceFD(path: s.node)) }
        let sensorCodes = Self.mbusCodes(node: stages[0].node, pad: stages[0].sourcePad)
        // Try the wanted code at the sensor first, then every other code it offers (a debayer
        // stage wants Bayer in and gives RGB out).
        let order = (sensorCodes.contains(code) ? [code] : []) + sensorCodes.filter { $0 != code }
        var lastError: V4L2Errno?
        candidates: for sensorCode in order {
            do {
                var upstream = try Self.setFormat(
                    fds[0], pad: stages[0].sourcePad, PadFormat(code: stages.count == 1 ? code : sensorCode, width: width, height: height))
                for i in stages.indices.dropFirst() {
                    let stage = stages[i]
                    let sink = try Self.setFormat(fds[i], pad: stage.sinkPad ?? 0, upstream)
                    guard sink == upstream else { continue candidates }
                    let isLast = i == stages.count - 1
                    upstream = try Self.setFormat(
                        fds[i], pad: stage.sourcePad, PadFormat(code: isLast ? code : sink.code, width: width, height: height))
                }
                if upstream.code == code { return upstream }
            } catch {
                if error.code == EBUSY { throw error }
                lastError = error
            }
        }
        throw lastError ?? V4L2Errno(EINVAL, "configuring media pipeline \(summary) for code 0x\(String(code, radix: 16))")
    }
}
