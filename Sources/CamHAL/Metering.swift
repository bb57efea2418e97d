import FoundationEssentials

/// Which auto loops a metering region steers (A1–A6), as the `FLAG_AF`, `FLAG_AE` and
/// `FLAG_AWB` of CameraX's `FocusMeteringAction`.
public struct MeteringModes: OptionSet, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The modes as bits: af 1, ae 2, awb 4.
    public let rawValue: Int

    /// The modes whose bits are set in `rawValue` (af 1, ae 2, awb 4).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Autofocus: the region is where to focus (AVFoundation's `focusPointOfInterest`).
    public static let af = MeteringModes(rawValue: 1)
    /// Auto exposure: the region is what to expose for (`exposurePointOfInterest`).
    public static let ae = MeteringModes(rawValue: 2)
    /// Auto white balance: the region is where to measure the light's colour.
    public static let awb = MeteringModes(rawValue: 4)
    /// AF, AE and AWB together (CameraX's default flags).
    public static let all: MeteringModes = [.af, .ae, .awb]

    public var description: String {
        let names = [(MeteringModes.af, "af"), (.ae, "ae"), (.awb, "awb")].filter { contains($0.0) }.map(\.1)
        return names.isEmpty ? "none" : names.joined(separator: "+")
    }
}

/// A region of the view that AF, AE and/or AWB meter (A1–A6), as a CameraX `MeteringPoint` with
/// its flags. The rectangle is view-normalized ((0,0) top-left, (1,1) bottom-right of what the
/// app shows), so one region means the same part of the picture at every zoom: the session maps
/// it through the live zoom crop to the lens, as it does a focus point (F1).
public struct MeteringRegion: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The region, view-normalized.
    public var rect: NormalizedRect
    /// The loops this region steers.
    public var modes: MeteringModes

    /// The side of a point's region, as a fraction of the view: CameraX's default
    /// `MeteringPointFactory` point size.
    public static let defaultPointSize = 0.15

    /// A region covering `rect` (view-normalized) for `modes`.
    public init(rect: NormalizedRect, modes: MeteringModes = .all) {
        self.rect = rect
        self.modes = modes
    }

    /// A square region of side `size` (a fraction of the view) centred on the view-normalized
    /// `point`, for `modes`; where it spills over the view's edge the session clips it.
    public init(point: NormalizedPoint, size: Double = MeteringRegion.defaultPointSize, modes: MeteringModes = .all) {
        self.init(rect: NormalizedRect(x: point.x - size / 2, y: point.y - size / 2, width: size, height: size), modes: modes)
    }

    /// The centre of the region.
    public var center: NormalizedPoint { NormalizedPoint(x: rect.x + rect.width / 2, y: rect.y + rect.height / 2) }

    public var description: String { "\(modes) \(rect)" }
}

/// What a device can meter, known before any session (A1). A device without any metering
/// region has none (`DeviceDescriptor.metering` is nil) and meters the whole frame its own way.
public struct MeteringCapabilities: Sendable, Hashable, Codable {
    /// The loops that take a region.
    public var modes: MeteringModes
    /// The most regions of one mode the device meters at once (CameraX's `getMaxRegionCount`).
    public var maxRegions: Int

    /// The capabilities of a device whose `modes` take up to `maxRegions` regions each.
    public init(modes: MeteringModes, maxRegions: Int = 1) {
        self.modes = modes
        self.maxRegions = max(1, maxRegions)
    }

    /// The part of `regions` this device can meter: each region's modes cut to the supported
    /// ones, regions left with none dropped, and at most `maxRegions` per mode (the first ones
    /// asked for). `dropped` names what was left out, for the `controlUnsupported` warning.
    public func supported(_ regions: [MeteringRegion]) -> (regions: [MeteringRegion], dropped: MeteringModes) {
        var dropped: MeteringModes = []
        var counts: [Int: Int] = [:]
        var kept: [MeteringRegion] = []
        for region in regions {
            var r = region
            dropped.formUnion(r.modes.subtracting(modes))
            r.modes.formIntersection(modes)
            for mode in [MeteringModes.af, .ae, .awb] where r.modes.contains(mode) {
                guard counts[mode.rawValue, default: 0] < maxRegions else {
                    r.modes.remove(mode)
                    dropped.insert(mode)
                    continue
                }
                counts[mode.rawValue, default: 0] += 1
            }
            if !r.modes.isEmpty { kept.append(r) }
        }
        return (kept, dropped)
    }
}

/// Whether an auto loop has reached its target (A5), as AVFoundation's `isAdjustingExposure` and
/// CameraX's `FocusMeteringResult` tell it.
public enum ConvergenceState: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The device does not say (most V4L2 drivers, GStreamer sources), or the session is not bound.
    case unknown
    /// The loop is still moving towards its target.
    case adjusting
    /// The loop has reached its target (or holds a locked or manual value).
    case converged

    public var description: String { rawValue }
}

/// The auto loops' convergence as a device reports it (A5): exposure and focus.
public struct Convergence: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Auto exposure.
    public var exposure: ConvergenceState
    /// Autofocus.
    public var focus: ConvergenceState

    /// Convergence of `exposure` and `focus`.
    public init(exposure: ConvergenceState, focus: ConvergenceState) {
        self.exposure = exposure
        self.focus = focus
    }

    /// Neither loop reports: what a device without convergence reports says.
    public static let unknown = Convergence(exposure: .unknown, focus: .unknown)

    public var description: String { "ae \(exposure) af \(focus)" }
}

/// Validation and mapping of metering regions, shared by the core and the backends (pure, unit-tested).
package enum MeteringMath {
    /// `region` clipped to the view, or nil when it is refused (A2): a NaN or infinite number, a
    /// centre outside the view, a side not in (0, 1], or no mode.
    package static func validated(_ region: MeteringRegion) -> MeteringRegion? {
        let r = region.rect, c = region.center
        guard [r.x, r.y, r.width, r.height].allSatisfy(\.isFinite), !region.modes.isEmpty else { return nil }
        guard (0...1).contains(c.x), (0...1).contains(c.y), r.width > 0, r.width <= 1, r.height > 0, r.height <= 1 else { return nil }
        let x0 = max(0, r.x), y0 = max(0, r.y), x1 = min(1, r.x + r.width), y1 = min(1, r.y + r.height)
        guard x0 != r.x || y0 != r.y || x1 != r.x + r.width || y1 != r.y + r.height else { return region }  // inside: as given
        return MeteringRegion(rect: NormalizedRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), modes: region.modes)
    }

    /// View-normalized regions mapped to the lens through the live zoom crop (A3), with the
    /// same crop rectangle a focus point goes through (F1).
    package static func toLens(_ regions: [MeteringRegion], crop: NormalizedRect) -> [MeteringRegion] {
        regions.map { MeteringRegion(rect: crop.map($0.rect), modes: $0.modes) }
    }
}
