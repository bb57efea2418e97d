import CamHAL
import CV4L2
import Glibc

/// Format enumeration (ENUM_FMT, ENUM_FRAMESIZES, ENUM_FRAMEINTERVALS) and negotiation helpers.
enum V4L2Formats {
    /// Common sizes offered from a stepwise/continuous frame-size range when they lie on its
    /// grid (its maximum when none does); a binding honours any other size inside the range
    /// exactly too (the driver's TRY_FMT says which). Up to 1080p, so a "highest quality" pick
    /// does not jump to a range's 4K maximum unasked.
    static let standardSizes: [Size] = [
        Size(width: 160, height: 120), Size(width: 176, height: 144), Size(width: 320, height: 180),
        Size(width: 320, height: 240), Size(width: 352, height: 288), Size(width: 640, height: 360),
        Size(width: 640, height: 480), Size(width: 800, height: 600), Size(width: 1024, height: 768),
        Size(width: 1280, height: 720), Size(width: 1280, height: 960), Size(width: 1600, height: 1200),
        Size(width: 1920, height: 1080),
    ]
    /// Common frame rates offered from a stepwise/continuous interval range (with its fastest
    /// and slowest).
    static let standardRates: [Double] = [120, 60, 50, 30, 25, 24, 20, 15, 10, 5]
    /// A guard against a driver that never ends an enumeration (real webcams list up to ~40
    /// sizes per format and ~10 rates per size; every one of them is kept).
    static let enumerationLimit: UInt32 = 1024

    static let captureType = UInt32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)

    /// Pixel formats of a capture node; with `mbusCode` only those the node makes from that media-bus code;
    /// with `stop`, the listing ends at that format when the driver lists it.
    static func pixelFormats(_ fd: DeviceFD, mbusCode: UInt32 = 0, stoppingAt stop: UInt32? = nil) -> [UInt32] {
        var result: [UInt32] = []
        var index: UInt32 = 0
        while index < 256 {
            var d = v4l2_fmtdesc()
            d.index = index
            d.type = captureType
            d.mbus_code = mbusCode
            guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_ENUM_FMT), &d, "VIDIOC_ENUM_FMT")) != nil else { break }
            if !result.contains(d.pixelformat) { result.append(d.pixelformat) }
            if d.pixelformat == stop { break }
            index += 1
        }
        return result
    }

    /// Sizes for `pixelFormat`: every size of the discrete list, in the driver's order (what
    /// `v4l2-ctl --list-formats-ext` lists), or the common sizes inside a range, or nil when the
    /// driver does not enumerate sizes.
    static func sizes(_ fd: DeviceFD, pixelFormat: UInt32) -> [Size]? {
        var e = v4l2_frmsizeenum()
        e.index = 0
        e.pixel_format = pixelFormat
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_ENUM_FRAMESIZES), &e, "VIDIOC_ENUM_FRAMESIZES")) != nil else { return nil }
        if e.type == UInt32(V4L2_FRMSIZE_TYPE_DISCRETE.rawValue) {
            var sizes = [Size(width: Int(e.discrete.width), height: Int(e.discrete.height))]
            var i: UInt32 = 1
            while i < enumerationLimit {
                var d = v4l2_frmsizeenum()
                d.index = i
                d.pixel_format = pixelFormat
                guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_ENUM_FRAMESIZES), &d, "VIDIOC_ENUM_FRAMESIZES")) != nil,
                      d.type == UInt32(V4L2_FRMSIZE_TYPE_DISCRETE.rawValue) else { break }
                sizes.append(Size(width: Int(d.discrete.width), height: Int(d.discrete.height)))
                i += 1
            }
            return sizes
        }
        let s = e.stepwise
        return stepwiseSizes(
            minWidth: Int(s.min_width), maxWidth: Int(s.max_width), stepWidth: Int(s.step_width),
            minHeight: Int(s.min_height), maxHeight: Int(s.max_height), stepHeight: Int(s.step_height))
    }

    /// The standard sizes on a stepwise range's grid, smallest first (its maximum when none is).
    static func stepwiseSizes(minWidth: Int, maxWidth: Int, stepWidth: Int, minHeight: Int, maxHeight: Int, stepHeight: Int) -> [Size] {
        let sizes = standardSizes.filter {
            onGrid($0.width, minWidth, maxWidth, stepWidth) && onGrid($0.height, minHeight, maxHeight, stepHeight)
        }
        return sizes.isEmpty ? [Size(width: maxWidth, height: maxHeight)] : sizes
    }

    /// Whether `v` lies in `lo...hi` on the grid `lo + k * step`.
    static func onGrid(_ v: Int, _ lo: Int, _ hi: Int, _ step: Int) -> Bool {
        v >= lo && v <= hi && (step <= 1 || (v - lo) % step == 0)
    }

    /// The rates a stepwise/continuous interval range offers in a list: its fastest and slowest
    /// and the standard rates between them.
    static func stepwiseRates(fastest: Double, slowest: Double) -> [Double] {
        [fastest, slowest] + standardRates.filter { $0 < fastest && $0 > slowest }
    }

    /// Frame rates at one size (highest first); empty when the driver does not say.
    static func frameRates(_ fd: DeviceFD, pixelFormat: UInt32, size: Size) -> [Double] {
        var rates: [Double] = []
        var i: UInt32 = 0
        while i < enumerationLimit {
            var e = v4l2_frmivalenum()
            e.index = i
            e.pixel_format = pixelFormat
            e.width = UInt32(size.width)
            e.height = UInt32(size.height)
            guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_ENUM_FRAMEINTERVALS), &e, "VIDIOC_ENUM_FRAMEINTERVALS")) != nil else { break }
            if e.type == UInt32(V4L2_FRMIVAL_TYPE_DISCRETE.rawValue) {
                if let r = rate(e.discrete) { rates.append(r) }
                i += 1
            } else {
                // Stepwise/continuous: the fastest, the slowest, and the common rates between.
                rates = stepwiseRates(fastest: rate(e.stepwise.min) ?? 0, slowest: rate(e.stepwise.max) ?? 0)
                break
            }
        }
        return Array(Set(rates.filter { $0 > 0 })).sorted(by: >)
    }

    static func rate(_ f: v4l2_fract) -> Double? {
        guard f.numerator > 0, f.denominator > 0 else { return nil }
        return (Double(f.denominator) / Double(f.numerator) * 1000).rounded() / 1000
    }

    /// The current capture format (G_FMT).
    static func current(_ fd: DeviceFD) throws(V4L2Errno) -> v4l2_pix_format {
        var f = v4l2_format()
        f.type = captureType
        try fd.ioctl(UInt(CAMHAL_VIDIOC_G_FMT), &f, "VIDIOC_G_FMT")
        return f.fmt.pix
    }

    /// The current frame rate (G_PARM), 0 when unknown.
    static func currentRate(_ fd: DeviceFD) -> Double {
        var p = v4l2_streamparm()
        p.type = captureType
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_G_PARM), &p, "VIDIOC_G_PARM")) != nil else { return 0 }
        return rate(p.parm.capture.timeperframe) ?? 0
    }

    /// Sets the fastest frame rate the driver offers for the format set, with one VIDIOC_S_PARM
    /// asking for 1,000 frames a second: a driver answers the nearest interval it has (the V4L2
    /// rule for S_PARM), the shortest. The rate the listed rates start with (`listedRates`),
    /// without listing them: a webcam lists five to eight rates per size, each a driver call on
    /// the way to the first frame. The rate set, or 0 when the driver refuses.
    static func setFastestRate(_ fd: DeviceFD) -> Double {
        setRate(fd, interval: v4l2_fract(numerator: 1, denominator: 1000))
    }

    /// Asks the driver for the frame interval `interval` (VIDIOC_S_PARM), which answers the
    /// interval it set, as G_PARM would. The rate set, or 0 when the driver refuses.
    static func setRate(_ fd: DeviceFD, interval: v4l2_fract) -> Double {
        var p = v4l2_streamparm()
        p.type = captureType
        p.parm.capture.timeperframe = interval
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_S_PARM), &p, "VIDIOC_S_PARM")) != nil else { return 0 }
        return rate(p.parm.capture.timeperframe) ?? 0
    }

    /// Every format of the node's current input. `mbusCodes` restricts a media-controller node
    /// to what its upstream pipeline can produce.
    static func describe(_ fd: DeviceFD, mbusCodes: [UInt32]? = nil) -> [FormatDescription] {
        let pixfmts: [UInt32]
        if let mbusCodes {
            var seen: [UInt32] = []
            for code in mbusCodes { for p in pixelFormats(fd, mbusCode: code) where !seen.contains(p) { seen.append(p) } }
            pixfmts = seen
        } else {
            pixfmts = pixelFormats(fd)
        }
        let cur = try? current(fd)
        var result: [FormatDescription] = []
        for p in pixfmts {
            for size in listedSizes(fd, pixelFormat: p, current: cur) {
                result.append(FormatDescription(pixelFormat: PixelFormat(rawValue: p), size: size,
                                                frameRates: listedRates(fd, pixelFormat: p, size: size, current: cur)))
            }
        }
        return result
    }

    /// The sizes `describe` lists for `p`: the driver's enumeration, or, when it has none
    /// (analog/HDMI inputs), what TRY_FMT gives at the current size.
    static func listedSizes(_ fd: DeviceFD, pixelFormat p: UInt32, current cur: v4l2_pix_format?) -> [Size] {
        if let sizes = sizes(fd, pixelFormat: p) { return sizes }
        var f = v4l2_format()
        f.type = captureType
        f.fmt.pix.pixelformat = p
        f.fmt.pix.width = cur?.width ?? 640
        f.fmt.pix.height = cur?.height ?? 480
        if (try? fd.ioctl(UInt(CAMHAL_VIDIOC_TRY_FMT), &f, "VIDIOC_TRY_FMT")) != nil, f.fmt.pix.pixelformat == p {
            return [Size(width: Int(f.fmt.pix.width), height: Int(f.fmt.pix.height))]
        }
        return []
    }

    /// The rates `describe` lists for `p` at `size`: the driver's enumeration, or the current
    /// rate when the driver does not say and `p` is the current format.
    static func listedRates(_ fd: DeviceFD, pixelFormat p: UInt32, size: Size, current cur: v4l2_pix_format?) -> [Double] {
        let rates = frameRates(fd, pixelFormat: p, size: size)
        if rates.isEmpty, cur?.pixelformat == p {
            let r = currentRate(fd)
            if r > 0 { return [r] }
        }
        return rates
    }

    /// `request.choose(from: describe(fd))` without listing every format: the pixel formats
    /// (ENUM_FMT), then the sizes of the one chosen, then the rates of the size chosen, as
    /// v4l2-ctl asks for one format. About 20 driver calls where the full list takes hundreds
    /// to thousands (vivid: about 2,000), on the path to the first frame. The same stream as the
    /// full list by construction: the pixel format is chosen by the same rule among those listed,
    /// a size asked for that the driver takes exactly is streamed either way, and when the pixel
    /// format chosen turns out to have no size (so the full list would not contain it), nil: the
    /// caller falls back to the full list.
    /// `listingRates` false: the rates are left out (`frameRates` empty), for a caller that sets
    /// the fastest without them (`setFastestRate`).
    /// A size asked for is tried with S_FMT, not TRY_FMT: when the driver takes it as it is, the
    /// format is set already (`QuickChoice.set`), and the bind's own S_FMT, a second USB transfer
    /// on a webcam, is not needed. When it does not, the bind's S_FMT sets what was chosen.
    static func quickChoice(_ fd: DeviceFD, request: StreamRequest, listingRates: Bool = true) -> QuickChoice? {
        // A pixel format the request names is the one `choose` picks once it is listed: the
        // listing stops there (vivid lists 83, YUYV first) instead of asking for every one.
        let want = request.pixelFormat?.rawValue
        let listed = pixelFormats(fd, stoppingAt: want)
        let pixfmts = want != nil && listed.last == want ? [want ?? 0] : listed
        // One stand-in per listed pixel format: `choose` picks the pixel format from these by
        // the same rule it applies to the full list.
        let standIns = pixfmts.map { FormatDescription(pixelFormat: PixelFormat(rawValue: $0), size: Size(width: 0, height: 0), frameRates: []) }
        guard let pixel = request.choose(from: standIns)?.pixelFormat else { return nil }
        let cur = try? current(fd)
        let size: Size
        var set: v4l2_pix_format?
        if let want = request.size, holds(cur, pixfmt: pixel.rawValue, size: want) {
            // A size asked for that the device holds already: taken with no call.
            size = want
        } else if let want = request.size, let answered = setExactly(fd, pixfmt: pixel.rawValue, size: want) {
            // A size asked for that the driver takes as it is: what the bind streams whatever the
            // list holds (it streams any size S_FMT answers unchanged), found and set with one
            // call instead of every size listed (a webcam lists up to ~40 per format).
            size = want
            set = answered
        } else {
            let sizes = listedSizes(fd, pixelFormat: pixel.rawValue, current: cur)
            guard !sizes.isEmpty else { return nil }
            let candidates = sizes.map { FormatDescription(pixelFormat: pixel, size: $0, frameRates: []) }
            guard let chosen = request.choose(from: candidates)?.size else { return nil }
            size = chosen
        }
        let format = FormatDescription(pixelFormat: pixel, size: size,
                                       frameRates: listingRates ? listedRates(fd, pixelFormat: pixel.rawValue, size: size, current: cur) : [])
        return QuickChoice(format: format, set: set)
    }

    /// What `quickChoice(_:request:listingRates:)` chose, and the capture format it set on the
    /// way (S_FMT's answer), when it set the one chosen.
    struct QuickChoice {
        var format: FormatDescription
        var set: v4l2_pix_format?
    }

    /// `request.choose(from:)` over the formats a media pipeline gives its capture node (what
    /// `describe(fd, mbusCodes: pipeline.outputCodes)` lists), without trying every code the
    /// pipeline might produce: the pixel formats are tried in `choose`'s order, each through
    /// `outputs` (the first code that gives it, found out once), then the sizes of the one
    /// chosen. When none of those is produced, `choose` takes the list's first format: the first
    /// pixel format with a size, in the list's order (`Outputs.firstListed`). Nil when the
    /// pipeline produces nothing with a size (the list is empty).
    static func quickChoice(_ outputs: inout MediaPipeline.Outputs, request: StreamRequest, listingRates: Bool = true) -> FormatDescription? {
        let fd = outputs.capture
        let cur = try? current(fd)
        // A pixel format without a size is not in the list: `choose` goes on to the next.
        func sizes(_ p: UInt32) -> [Size]? {
            let s = listedSizes(fd, pixelFormat: p, current: cur)
            return s.isEmpty ? nil : s
        }
        let order = (request.pixelFormat.map { [$0] } ?? []) + StreamRequest.preferredPixelFormats
        var found: (pixel: UInt32, sizes: [Size])?
        for pixel in order where outputs.code(giving: pixel.rawValue) != nil {
            if let s = sizes(pixel.rawValue) { found = (pixel.rawValue, s); break }
        }
        guard let (pixel, listed) = found ?? outputs.firstListed(where: sizes) else { return nil }
        let format = PixelFormat(rawValue: pixel)
        guard let size = request.choose(from: listed.map { FormatDescription(pixelFormat: format, size: $0, frameRates: []) })?.size else { return nil }
        return FormatDescription(pixelFormat: format, size: size,
                                 frameRates: listingRates ? listedRates(fd, pixelFormat: pixel, size: size, current: cur) : [])
    }

    /// Whether `current` (G_FMT's answer) is `pixfmt` at `size`, progressive: a format the driver
    /// holds is one it takes as it is, so `exactlyAccepted` need not ask. An app that opens its
    /// camera again with the same request finds it so; on a UVC webcam the TRY_FMT saved is a
    /// USB transfer (1.9 ms on the emulated C920, where v4l2-ctl makes none).
    static func holds(_ current: v4l2_pix_format?, pixfmt: UInt32, size: Size) -> Bool {
        guard let c = current else { return false }
        return c.pixelformat == pixfmt && Int(c.width) == size.width && Int(c.height) == size.height
            && c.field == UInt32(V4L2_FIELD_NONE.rawValue)
    }

    /// Whether the driver takes `size` in `pixfmt` as it is (TRY_FMT changes nothing); false for
    /// a size no V4L2 field can hold.
    static func exactlyAccepted(_ fd: DeviceFD, pixfmt: UInt32, size: Size) -> Bool {
        exactly(fd, CAMHAL_VIDIOC_TRY_FMT, "VIDIOC_TRY_FMT", pixfmt: pixfmt, size: size) != nil
    }

    /// Sets `size` in `pixfmt`, progressive (S_FMT), and answers the format set when the driver
    /// took it as it is; nil when it adjusted it (the device then holds the adjusted format), or
    /// refused it.
    static func setExactly(_ fd: DeviceFD, pixfmt: UInt32, size: Size) -> v4l2_pix_format? {
        exactly(fd, CAMHAL_VIDIOC_S_FMT, "VIDIOC_S_FMT", pixfmt: pixfmt, size: size)
    }

    /// TRY_FMT or S_FMT (`request`) of `size` in `pixfmt`, progressive: the driver's answer when
    /// it is that pixel format and size, else nil (and nil for a size no V4L2 field can hold).
    private static func exactly(_ fd: DeviceFD, _ request: UInt, _ name: String, pixfmt: UInt32, size: Size) -> v4l2_pix_format? {
        guard let w = UInt32(exactly: size.width), let h = UInt32(exactly: size.height), w > 0, h > 0 else { return nil }
        var f = v4l2_format()
        f.type = captureType
        f.fmt.pix.pixelformat = pixfmt
        f.fmt.pix.width = w
        f.fmt.pix.height = h
        f.fmt.pix.field = UInt32(V4L2_FIELD_NONE.rawValue)
        guard (try? fd.ioctl(request, &f, name)) != nil else { return nil }
        return f.fmt.pix.pixelformat == pixfmt && f.fmt.pix.width == w && f.fmt.pix.height == h ? f.fmt.pix : nil
    }
}
