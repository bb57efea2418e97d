import CamHAL
import CamHALBackends
import FoundationEssentials

/// `camhal probe`: every registered backend, its availability, devices and capabilities.
enum ProbeCommand {
    static let verb = Verb(
        name: "probe", summary: "list backends, devices and their capabilities",
        usage: """
            usage: camhal probe [--backend B] [--json]
              --backend B   only this backend (v4l2, libcamera, pipewire, gstreamer, virtual)
              --json        one JSON document instead of the table
            Backends are listed in preference order (CAMHAL_BACKENDS=v4l2,gstreamer overrides it).
            Backends this build left out (package traits turned off) are listed last, with how to
            build them in.
            """,
        run: run)

    /// The JSON document: stable keys, one entry per backend.
    struct Report: Codable {
        struct BackendEntry: Codable {
            var identifier: String
            var available: Bool
            var reason: String?
            var devices: [DeviceEntry]
            /// Set when this build lacks the backend: the package trait that builds it in.
            var missingTrait: String? = nil
        }
        struct DeviceEntry: Codable {
            var id: String
            var name: String
            var facing: Facing
            var lenses: [Lens]
            var zoomRange: [Double]
            var zoomStops: [Double]
            var zoomMethod: ZoomMethod
            var hasTorch: Bool
            var supportsFocusPoint: Bool
            var focusModes: [FocusMode]
            var formats: [FormatEntry]
            var details: [String: String]
            /// The raw device controls (X1), as `camhal controls` lists them.
            var controls: [DeviceControl] = []
            /// Exposure, white balance and anti-flicker (E1, W1, N1); absent when the device lacks them.
            var exposure: ExposureCapabilities? = nil
            var whiteBalance: WhiteBalanceCapabilities? = nil
            var antiFlickerModes: [AntiFlickerMode]? = nil
            /// Metering regions (A1); absent when the device meters the whole frame only.
            var metering: MeteringCapabilities? = nil
            /// Processes that have the device node open (as `fuser`); absent without a node.
            var holders: DeviceHolders? = nil
            /// The USB bus and port of a USB camera.
            var usb: ProbeUSB.Port? = nil
        }
        struct FormatEntry: Codable {
            var pixelFormat: String
            var width: Int
            var height: Int
            var frameRates: [Double]
            /// Bytes per second on the bus at each rate (uncompressed formats only).
            var bytesPerSecond: [Double]? = nil
        }
        var backends: [BackendEntry]
    }

    static func run(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, options: ["backend"], booleans: ["json"])
        let registry = try CLI.registry()
        var entries: [(String, (any CameraBackend)?)] = registry.ordered.map { ($0.identifier, $0.backend) }
        var missing = Backends.missing
        if let only = a["backend"] {
            missing = missing.filter { $0.identifier == only.lowercased() }
            entries = missing.isEmpty ? [(only, try registry.backend(only))] : []
        }

        var report = Report(backends: [])
        for (name, backend) in entries {
            guard let backend else {
                report.backends.append(.init(identifier: name, available: false, reason: "not a registered backend (CAMHAL_BACKENDS names it)", devices: []))
                continue
            }
            var entry = Report.BackendEntry(identifier: name, available: true, reason: nil, devices: [])
            if case .unavailable(let reason) = backend.availability() {
                entry.available = false
                entry.reason = reason
            } else {
                do {
                    entry.devices = try backend.devices().map { d in
                        var e = describe(d)
                        e.controls = (try? backend.deviceControls(for: d).list()) ?? []
                        return e
                    }
                } catch {
                    entry.available = false
                    entry.reason = "\(error)"
                }
            }
            report.backends.append(entry)
        }
        for m in missing {
            report.backends.append(.init(
                identifier: m.identifier, available: false,
                reason: "not in this build: install \(m.packages.joined(separator: " ")) and build with the default "
                    + "package traits (swift build) or --traits \(m.trait)",
                devices: [], missingTrait: m.trait))
        }

        if a.has("json") {
            print(try CLI.json(report, pretty: true))
        } else {
            printTable(report)
        }
        return 0
    }

    static func describe(_ d: DeviceDescriptor) -> Report.DeviceEntry {
        let caps = CameraCapabilities(device: d)
        let range = caps.zoomRange(for: d.facing) ?? 1...1
        return Report.DeviceEntry(
            id: d.id, name: d.name, facing: d.facing, lenses: d.lenses,
            zoomRange: [range.lowerBound, range.upperBound], zoomStops: caps.zoomStops(for: d.facing),
            zoomMethod: d.zoomMethod, hasTorch: d.hasTorch, supportsFocusPoint: d.supportsFocusPoint,
            focusModes: caps.focusModes(for: d.facing),
            formats: d.formats.map { f in
                let estimates = f.frameRates.compactMap { Bandwidth.bytesPerSecond(f.pixelFormat, size: f.size, frameRate: $0) }
                return .init(
                    pixelFormat: f.pixelFormat.fourCC, width: f.size.width, height: f.size.height, frameRates: f.frameRates,
                    bytesPerSecond: estimates.isEmpty ? nil : estimates)
            },
            details: d.details, exposure: d.exposure, whiteBalance: d.whiteBalance, antiFlickerModes: d.antiFlickerModes,
            metering: d.metering,
            holders: ProbeUSB.node(d.details).map { DeviceHolders.scan(path: $0) },
            usb: ProbeUSB.node(d.details).flatMap { ProbeUSB.port(node: $0) })
    }

    /// One line for exposure, white balance, anti-flicker and metering, in real units (E1, W1, N1, A1).
    static func imageControlsLine(_ d: Report.DeviceEntry) -> String {
        func range(_ r: ClosedRange<Double>, _ scale: Double = 1, _ unit: String) -> String {
            "\(ZoomMath.format(r.lowerBound * scale))...\(ZoomMath.format(r.upperBound * scale))\(unit)"
        }
        var parts: [String] = []
        if let e = d.exposure {
            var s = "exposure \(e.modes.map(\.rawValue).joined(separator: "/"))"
            if let r = e.durationRange { s += " \(range(Seconds.of(r.lowerBound)...Seconds.of(r.upperBound), 1000, " ms"))" }
            if let r = e.gainRange { s += " gain \(range(r, 1, " (\(e.gainUnit))"))" }
            if let r = e.biasRange { s += " bias \(range(r, 1, " EV")) step \(ZoomMath.format(e.biasStep))" }
            parts.append(s)
        } else { parts.append("exposure no") }
        if let w = d.whiteBalance {
            var s = "white balance \(w.modes.map(\.rawValue).joined(separator: "/"))"
            if let r = w.temperatureRange { s += " \(range(r, 1, " K"))" }
            if !w.presets.isEmpty { s += " presets \(w.presets.map(\.rawValue).joined(separator: ","))" }
            parts.append(s)
        } else { parts.append("white balance no") }
        parts.append("anti-flicker " + (d.antiFlickerModes.map { $0.map(\.rawValue).joined(separator: "/") } ?? "no"))
        parts.append("metering " + (d.metering.map { "\($0.modes) x\($0.maxRegions)" } ?? "no"))
        return parts.joined(separator: "; ")
    }

    static func printTable(_ report: Report) {
        for b in report.backends {
            print("backend \(b.identifier): " + (b.available ? "available, \(b.devices.count) device(s)" : "unavailable: \(b.reason ?? "?")"))
            for d in b.devices {
                print("  device \(d.id)  '\(d.name)'  facing \(d.facing)")
                for (k, v) in d.details.sorted(by: { $0.key < $1.key }) { print("    \(k): \(v)") }
                if let holders = d.holders { print("    \(holders)") }
                if let usb = d.usb { print("    \(usb.description)") }
                print("    zoom \(ZoomMath.format(d.zoomRange[0]))x...\(ZoomMath.format(d.zoomRange[1]))x by \(d.zoomMethod); stops \(d.zoomStops.map { ZoomMath.format($0) }.joined(separator: ", "))")
                print("    torch \(d.hasTorch ? "yes" : "no"); focus point \(d.supportsFocusPoint ? "yes" : "no"); focus modes \(d.focusModes.isEmpty ? "none (fixed focus)" : d.focusModes.map(\.rawValue).joined(separator: ", "))")
                print("    " + imageControlsLine(d))
                print("    lenses:")
                for l in d.lenses {
                    print("      \(padded(l.id, to: 16)) \(padded(l.kind.rawValue, to: 10)) \(ZoomMath.format(l.minZoomRatio))x...\(ZoomMath.format(l.maxZoomRatio))x  flash \(l.hasFlash ? "yes" : "no")  pinnable \(l.isPinnable ? "yes" : "no")")
                }
                print("    formats (\(d.formats.count)):")
                var byFormat: [String: [String]] = [:]
                var order: [String] = []
                for f in d.formats {
                    if byFormat[f.pixelFormat] == nil { order.append(f.pixelFormat) }
                    // Every size and every rate, as `v4l2-ctl --list-formats-ext` lists them.
                    let rates = f.frameRates.map { ZoomMath.format($0) }.joined(separator: "/")
                    byFormat[f.pixelFormat, default: []].append("\(f.width)x\(f.height)" + (rates.isEmpty ? "" : "@\(rates)"))
                }
                for pf in order {
                    let sizes = byFormat[pf] ?? []
                    for (row, start) in stride(from: 0, to: sizes.count, by: 6).enumerated() {
                        let label = row == 0 ? pf : ""
                        print("      \(padded(label, to: 5)) \(sizes[start..<min(start + 6, sizes.count)].joined(separator: " "))")
                    }
                }
                let bandwidth = d.formats.compactMap { f -> String? in
                    guard let b = f.bytesPerSecond?.first, let rate = f.frameRates.first else { return nil }
                    return "\(f.pixelFormat) \(f.width)x\(f.height)@\(ZoomMath.format(rate)) \(ZoomMath.format((b / 1e5).rounded() / 10)) MB/s"
                }
                if !bandwidth.isEmpty {
                    print("    bus bandwidth, uncompressed (bytes/frame x fps, at each size's fastest rate):")
                    for start in stride(from: 0, to: bandwidth.count, by: 4) {
                        print("      " + bandwidth[start..<min(start + 4, bandwidth.count)].joined(separator: "; "))
                    }
                }
                if !d.controls.isEmpty {
                    print("    raw controls (\(d.controls.count); camhal controls --backend \(b.identifier) --device \(d.id) for ranges and menus):")
                    for c in d.controls {
                        let range = c.type.isRangedInteger ? " \(c.minimum)...\(c.maximum)" : ""
                        let flags = c.flags.rawValue == 0 ? "" : " [\(c.flags.listing)]"
                        print("      \(c.name) (\(c.type)\(range)) = \(c.value)\(flags)")
                    }
                }
            }
        }
    }
}
