@_spi(Testing) import CamHAL
import FoundationEssentials

/// Discovery and capabilities: D1–D3, K1–K3.
let discoveryArea = Area(name: "Discovery and capabilities", checks: [
    // D1: a backend answers availability without crashing, and CAMHAL_BACKENDS reorders and
    // filters the registry. Catches: an env override ignored, or an unknown name in it crashing.
    Check("D1", "backend chosen at run time, CAMHAL_BACKENDS honoured") { ctx in
        let id = ctx.backend.identifier
        try expect(ctx.backend.availability().isAvailable, "backend \(id) under test reports \(ctx.backend.availability())")
        let reg = BackendRegistry([ctx.backend], environment: ["CAMHAL_BACKENDS": "no-such-backend, \(id)"])
        try expect(reg.preference == ["no-such-backend", id], "preference \(reg.preference) ignores CAMHAL_BACKENDS")
        try expect(reg.ordered.first?.backend == nil, "unknown backend name resolved to a backend")
        try expect(reg.firstAvailable()?.0.identifier == id, "firstAvailable skipped the available backend")
        return .ok
    },
    // D2a: listing is fast, starts no stream, and each device has an ID, a name, its backend,
    // a facing and lenses. Catches: a listing that opens streams (slow, or the device busy after).
    Check("D2a", "device listing is fast and complete") { ctx in
        let t0 = ContinuousClock.now
        let devices = try ctx.backend.devices()
        let elapsed = ContinuousClock.now - t0
        try expect(elapsed < ctx.timeout(.seconds(2)), "listing took \(String.num(Seconds.of(elapsed))) s")
        guard let d = devices.first(where: { $0.id == ctx.device.id }) else {
            throw CheckFailure(reason: "device \(ctx.device.id) missing from the listing")
        }
        try expect(!d.id.isEmpty && !d.name.isEmpty, "empty id or name: \(d)")
        try expect(d.backend == ctx.backend.identifier, "device says backend \(d.backend)")
        try expect(!d.lenses.isEmpty, "device has no lens")
        try expect(!d.formats.isEmpty, "device lists no format")
        return .ok
    },
    // D2b: IDs are unique and stable across listings. Catches: IDs built from enumeration order.
    Check("D2b", "device IDs unique and stable") { ctx in
        let a = try ctx.backend.devices().map(\.id)
        let b = try ctx.backend.devices().map(\.id)
        try expect(Set(a).count == a.count, "duplicate IDs in \(a)")
        try expect(Set(a) == Set(b), "IDs changed between listings: \(a) vs \(b)")
        return .ok
    },
    // D3: hot-plug is reported: a device that disappears gives `removed`, and coming back gives
    // `added` with the same ID (a stable ID survives the replug). Catches: a watch that never
    // fires, an ID built from the node number that changes on replug. Needs a fault injector.
    Check("D3", "hot-plug events") { ctx in
        let events = EventLog<DeviceEvent>()
        guard let watch = ctx.backend.watchDevices({ e in events.append(e) }) else {
            return .notSupported("backend cannot watch for devices")
        }
        defer { watch.cancel() }
        guard let faults = ctx.injector(for: .unplug, .replug) else { return .skip("no way to unplug this device from a test (no fault injector)") }
        let id = ctx.device.id
        let isAdded: (DeviceEvent) -> Bool = { if case .added(let d) = $0 { return d.id == id }; return false }
        try await faults.inject(.unplug)
        guard await events.first(until: .now + ctx.timeout(.seconds(5)), where: { $0 == .removed(id: id) }) != nil else {
            throw CheckFailure(reason: "no removed event for \(id) after \(faults.name) unplugged it: \(events.events)")
        }
        let mark = events.count
        try await faults.inject(.replug)
        guard await events.first(from: mark, until: .now + ctx.timeout(.seconds(10)), where: isAdded) != nil else {
            throw CheckFailure(reason: "no added event for \(id) after the replug: \(events.events)")
        }
        _ = try await ctx.waitForDeviceListed(timeout: ctx.timeout(.seconds(5)))
        return .ok
    },
    // K1a: the capabilities snapshot answers every question before any session: lenses, zoom
    // stops, torch, focus point, focus modes, formats. Catches: stops outside the zoom range.
    Check("K1a", "capabilities snapshot is complete") { ctx in
        let caps = try ctx.backend.capabilities()
        let f = ctx.device.facing
        try expect(!caps.lenses(for: f).isEmpty, "no lenses for \(f)")
        guard let range = caps.zoomRange(for: f) else { throw CheckFailure(reason: "no zoom range for \(f)") }
        let stops = caps.zoomStops(for: f)
        try expect(!stops.isEmpty && stops.allSatisfy(range.contains), "zoom stops \(stops) outside \(range)")
        _ = caps.hasTorch(for: f)
        _ = caps.supportsFocusPoint(for: f)
        try expect(caps.focusModes(for: f).allSatisfy { $0 != .fixed }, "fixed listed as a requestable mode")
        let formats = caps.formats(for: f)
        try expect(!formats.isEmpty, "no formats")
        try expect(formats.allSatisfy { $0.size.width > 0 && $0.size.height > 0 && $0.frameRates.allSatisfy { $0 > 0 } }, "degenerate format in \(formats.prefix(5))")
        return .ok
    },
    // K1b: reading capabilities costs no streaming: a session binds right after. Catches: a
    // capabilities query that leaves the device open (busy).
    Check("K1b", "capabilities leave the device free") { ctx in
        _ = try ctx.backend.capabilities()
        let cam = ctx.openCamera()
        try await ctx.startAndWaitForPreview(cam)
        return .ok
    },
    // K2a: lens equality and hashing use id, kind and facing only. Catches: a lens from the
    // capabilities snapshot not comparing equal to state.activeLens because a range differs.
    Check("K2a", "lens equality over id, kind, facing") { ctx in
        guard let lens = ctx.device.lenses.first else { throw CheckFailure(reason: "no lens") }
        let sameGlass = Lens(id: lens.id, kind: lens.kind, facing: lens.facing, minZoomRatio: lens.minZoomRatio * 2, maxZoomRatio: 99, hasFlash: !lens.hasFlash, isPinnable: !lens.isPinnable)
        let other = Lens(id: lens.id + "-other", kind: lens.kind, facing: lens.facing, minZoomRatio: lens.minZoomRatio, maxZoomRatio: lens.maxZoomRatio)
        try expect(lens == sameGlass && lens.hashValue == sameGlass.hashValue, "equal glass compares unequal")
        try expect(lens != other, "different ids compare equal")
        try expect(Set([lens, sameGlass, other]).count == 2, "set deduplication wrong")
        return .ok
    },
    // K2b: every lens is sane: 0 < min <= max, facing matches the device, kinds are ordered by
    // framing (ultra-wide below 1, telephoto above). Catches: a telephoto reported at 1x.
    Check("K2b", "lens fields are consistent") { ctx in
        for lens in ctx.device.lenses {
            try expect(lens.minZoomRatio > 0 && lens.minZoomRatio <= lens.maxZoomRatio, "\(lens) has a bad range")
            try expect(lens.facing == ctx.device.facing, "\(lens) faces \(lens.facing), device \(ctx.device.facing)")
            if lens.kind == .ultraWide { try expect(lens.minZoomRatio < 1, "ultra-wide \(lens.id) starts at \(lens.minZoomRatio)") }
            if lens.kind == .telephoto { try expect(lens.minZoomRatio > 1, "telephoto \(lens.id) starts at \(lens.minZoomRatio)") }
        }
        return .ok
    },
    // K3: on an automatic binding the running state's zoom range equals the capabilities' range
    // for that facing. Catches: a state range not capped at 8, or computed from one lens only.
    Check("K3", "capabilities and state agree on the zoom range") { ctx in
        let caps = CameraCapabilities(device: ctx.device)
        guard let range = caps.zoomRange(for: ctx.device.facing) else { throw CheckFailure(reason: "no range") }
        let cam = ctx.openCamera()
        let s = try await ctx.startAndWaitForPreview(cam)
        try expect(close(s.minZoomRatio, range.lowerBound) && close(s.maxZoomRatio, range.upperBound),
                   "state \(s.minZoomRatio)...\(s.maxZoomRatio) vs capabilities \(range)")
        return .ok
    },
])
