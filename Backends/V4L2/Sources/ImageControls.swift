import CamHAL
import CV4L2
import Glibc

/// The V4L2 controls behind exposure, white balance and anti-flicker (E1–E6, W1–W5, N1), found
/// once per node: `exposure_auto`/`auto_exposure` (menu), `exposure_time_absolute` (100 µs
/// units), `gain` (unitless) and `gain_automatic` (vivid, sensors without an AE menu), `3a_lock`, `white_balance_automatic`, `white_balance_temperature`
/// (Kelvin) and `power_line_frequency` (menu). The core clamps; this only maps and applies.
///
/// Metering regions (A1) are not among them: the V4L2 UAPI has no control that places an AE, AWB
/// or AF region. `V4L2_CID_EXPOSURE_METERING` (average, center-weighted, spot, matrix; on a few
/// sensor drivers, not on UVC or vivid) chooses a method whose spot is the frame's centre, so a
/// V4L2 device's `DeviceDescriptor.metering` stays nil and `setMetering` is answered with
/// `controlUnsupported`; the menu stays reachable as the raw control `exposure_metering_mode`.
package struct V4L2ImageControls: Sendable {
    static let exposureAutoID = UInt32(V4L2_CID_EXPOSURE_AUTO)
    static let exposureAbsoluteID = UInt32(V4L2_CID_EXPOSURE_ABSOLUTE)
    static let gainID = UInt32(V4L2_CID_GAIN)
    static let autoGainID = UInt32(V4L2_CID_AUTOGAIN)
    static let lockID = UInt32(V4L2_CID_3A_LOCK)
    static let autoWhiteBalanceID = UInt32(V4L2_CID_AUTO_WHITE_BALANCE)
    static let temperatureID = UInt32(V4L2_CID_WHITE_BALANCE_TEMPERATURE)
    package static let powerLineID = UInt32(V4L2_CID_POWER_LINE_FREQUENCY)
    /// The anti-flicker mode of each power_line_frequency menu entry (V4L2_CID_POWER_LINE_FREQUENCY_*).
    static let antiFlickerByEntry: [AntiFlickerMode] = [.off, .hz50, .hz60, .auto]

    static let manualEntry = Int32(V4L2_EXPOSURE_MANUAL.rawValue)
    /// The white-balance temperatures the API offers: the device's range is in Kelvin by the
    /// V4L2 UAPI, but some report more than the plausible part (the Logitech C270: 0...10000);
    /// the capabilities keep the part inside this, the core clamps to it.
    package static let plausibleKelvin = 1000.0...20000.0
    static let lockExposure = Int32(V4L2_LOCK_EXPOSURE)
    static let lockWhiteBalance = Int32(V4L2_LOCK_WHITE_BALANCE)

    /// The `exposure_auto` entry meaning "automatic": AUTO where offered, else APERTURE_PRIORITY
    /// (UVC webcams with a fixed aperture, such as the C920, offer only Manual and Aperture
    /// Priority, which is their full auto exposure).
    var exposureAutoEntry: Int32?
    var hasManualEntry = false
    /// The `exposure_auto` entry a manual duration is written under: MANUAL, and only MANUAL.
    /// A menu of Auto and Shutter Priority alone (the ELP 4K modules) gives no settable duration:
    /// by the UVC spec Shutter Priority takes the host's exposure time, but uvcvideo refuses
    /// exposure_time_absolute with EACCES unless auto_exposure is Manual (its master/slave check,
    /// uvc_ctrl_is_accessible), so the camera stays in its own auto exposure (E2-E5 not supported).
    var durationEntry: Int32?
    /// `gain_automatic`: auto exposure by gain alone; off means manual gain.
    var hasAutoGain = false
    var duration: ControlInfo?
    var gain: ControlInfo?
    /// The 3a_lock bits the device has.
    var lockBits: Int32 = 0
    var hasAutoWhiteBalance = false
    var temperature: ControlInfo?
    /// power_line_frequency menu entries offered, as anti-flicker modes.
    package var antiFlickerModes: [AntiFlickerMode] = []

    package init(_ fd: some V4L2ControlAccess) {
        if let menu = fd.queryControl(Self.exposureAutoID) {
            let entries = Self.menuEntries(fd, menu, 0...3)
            exposureAutoEntry = entries.contains(Int32(V4L2_EXPOSURE_AUTO.rawValue)) ? Int32(V4L2_EXPOSURE_AUTO.rawValue)
                : entries.contains(Int32(V4L2_EXPOSURE_APERTURE_PRIORITY.rawValue)) ? Int32(V4L2_EXPOSURE_APERTURE_PRIORITY.rawValue) : nil
            hasManualEntry = entries.contains(Self.manualEntry)
            durationEntry = hasManualEntry ? Self.manualEntry : nil
        }
        duration = fd.queryControl(Self.exposureAbsoluteID)
        gain = fd.queryControl(Self.gainID)
        hasAutoGain = fd.queryControl(Self.autoGainID) != nil
        lockBits = fd.queryControl(Self.lockID).map { Int32(truncatingIfNeeded: $0.maximum) } ?? 0
        hasAutoWhiteBalance = fd.queryControl(Self.autoWhiteBalanceID) != nil
        temperature = fd.queryControl(Self.temperatureID)
        if let menu = fd.queryControl(Self.powerLineID) {
            antiFlickerModes = Self.menuEntries(fd, menu, 0...3).map { Self.antiFlickerByEntry[Int($0)] }
        }
    }

    /// The controls the applies below read that this device has (what a binding reads in one
    /// call before the first applies: `ControlSnapshot`).
    var readIDs: [UInt32] {
        var ids: [UInt32] = []
        if exposureAutoEntry != nil || durationEntry != nil { ids.append(Self.exposureAutoID) }
        if hasAutoGain { ids.append(Self.autoGainID) }
        if lockBits != 0 { ids.append(Self.lockID) }
        if let duration { ids.append(duration.id) }
        if let gain { ids.append(gain.id) }
        if hasAutoWhiteBalance { ids.append(Self.autoWhiteBalanceID) }
        if let temperature { ids.append(temperature.id) }
        if !antiFlickerModes.isEmpty { ids.append(Self.powerLineID) }
        return ids
    }

    /// The entries of `range` that menu control `menu` offers: each asked for (a menu may skip
    /// indices), but only inside the control's own minimum...maximum, which no entry is outside
    /// (the C920's power_line_frequency ends at 2: one query fewer).
    static func menuEntries(_ fd: some V4L2ControlAccess, _ menu: ControlInfo, _ range: ClosedRange<UInt32>) -> [Int32] {
        let low = max(menu.minimum, Int64(range.lowerBound)), high = min(menu.maximum, Int64(range.upperBound))
        guard low <= high else { return [] }
        return (UInt32(low)...UInt32(high)).filter { fd.hasMenuEntry(menu.id, $0) }.map { Int32($0) }
    }

    /// A settable duration needs the MANUAL entry of the menu (the manual-exposure handshake:
    /// uvcvideo refuses exposure_time_absolute while the menu is on any other entry).
    private var canSetDuration: Bool { duration != nil && durationEntry != nil }
    /// A settable gain needs a way to turn automatic gain off (the menu's MANUAL, or gain_automatic).
    private var canSetGain: Bool { gain != nil && (hasManualEntry || hasAutoGain) }
    private var canManual: Bool { canSetDuration || canSetGain }

    /// What the capabilities say (E1); nil without an automatic-exposure control to switch (a
    /// bare gain or exposure value with no auto is a raw device control, not exposure control).
    package var exposureCapabilities: ExposureCapabilities? {
        guard exposureAutoEntry != nil || hasAutoGain else { return nil }
        var modes: [ExposureMode] = [.continuousAuto]
        if lockBits & Self.lockExposure != 0 { modes.append(.locked) }
        if canManual { modes.append(.manual) }
        return ExposureCapabilities(
            modes: modes,
            durationRange: canSetDuration ? duration.map { ExposureMath.duration(v4l2Units: max(1, $0.minimum))...ExposureMath.duration(v4l2Units: max(1, $0.maximum)) } : nil,
            gainRange: canSetGain ? gain.map { Double($0.minimum)...Double($0.maximum) } : nil,
            gainUnit: .deviceUnits)
    }

    package var whiteBalanceCapabilities: WhiteBalanceCapabilities? {
        guard hasAutoWhiteBalance || temperature != nil else { return nil }
        var modes: [WhiteBalanceMode] = [.auto]
        if lockBits & Self.lockWhiteBalance != 0 { modes.append(.locked) }
        let range = temperature.flatMap { Self.kelvinRange(minimum: $0.minimum, maximum: $0.maximum) }
        if range != nil { modes += [.preset, .manual] }
        return WhiteBalanceCapabilities(modes: modes, presets: range.map(WhiteBalanceCapabilities.presets(within:)) ?? [], temperatureRange: range)
    }

    /// The part of a device's white_balance_temperature range the API offers (nil when none of
    /// it is plausible Kelvin).
    static func kelvinRange(minimum: Int64, maximum: Int64) -> ClosedRange<Double>? {
        let lo = max(Double(minimum), plausibleKelvin.lowerBound), hi = min(Double(maximum), plausibleKelvin.upperBound)
        return lo <= hi ? lo...hi : nil
    }

    // MARK: Applying (on the session's queue)

    /// Applies `request`; for manual, MANUAL is selected before the duration and gain are written,
    /// as V4L2 refuses exposure_time_absolute while auto is on (E3). Returns what the device reads back.
    package func applyExposure(_ request: ExposureSettings, fd device: some V4L2ControlAccess) -> ExposureSettings {
        let fd = RememberedControls(device)
        let locks = lockBits != 0 ? (try? fd.getControl(Self.lockID)) ?? 0 : 0
        switch request.mode {
        case .continuousAuto:
            if locks & Self.lockExposure != 0 { _ = try? fd.updateControl(Self.lockID, locks & ~Self.lockExposure) }
            if let auto = exposureAutoEntry { _ = try? fd.updateControl(Self.exposureAutoID, auto) }
            if hasAutoGain { _ = try? fd.updateControl(Self.autoGainID, 1) }
        case .locked:
            _ = try? fd.updateControl(Self.lockID, locks | Self.lockExposure)
        case .manual:
            if let entry = durationEntry { _ = try? fd.updateControl(Self.exposureAutoID, entry) }
            if hasAutoGain { _ = try? fd.updateControl(Self.autoGainID, 0) }
            if let d = duration, let wanted = request.duration {
                _ = try? fd.updateControl(d.id, Int32(clamping: ExposureMath.v4l2Units(wanted, minimum: d.minimum, maximum: d.maximum)))
            }
            if let g = gain, let value = request.gain {
                _ = try? fd.updateControl(g.id, Int32(clamping: min(max(Int64(value.rounded()), g.minimum), g.maximum)))
            }
        }
        return readExposure(fd: fd)
    }

    func readExposure(fd: some V4L2ControlAccess) -> ExposureSettings {
        var s = ExposureSettings()
        if exposureAutoEntry != nil || durationEntry != nil, let v = try? fd.getControl(Self.exposureAutoID) {
            s.mode = v == durationEntry ? .manual : .continuousAuto
        } else if hasAutoGain, let v = try? fd.getControl(Self.autoGainID) {
            s.mode = v == 0 ? .manual : .continuousAuto
        }
        if s.mode == .continuousAuto, lockBits & Self.lockExposure != 0, let l = try? fd.getControl(Self.lockID), l & Self.lockExposure != 0 {
            s.mode = .locked
        }
        s.duration = duration.flatMap { try? fd.getControl($0.id) }.map { ExposureMath.duration(v4l2Units: Int64($0)) }
        s.gain = gain.flatMap { try? fd.getControl($0.id) }.map(Double.init)
        return s
    }

    /// Applies white balance: a preset or a temperature turns white_balance_automatic off first,
    /// then writes white_balance_temperature (inactive, and refused by some drivers, while auto is on).
    package func applyWhiteBalance(_ request: WhiteBalanceSettings, fd device: some V4L2ControlAccess) -> WhiteBalanceSettings {
        let fd = RememberedControls(device)
        let locks = lockBits != 0 ? (try? fd.getControl(Self.lockID)) ?? 0 : 0
        switch request.mode {
        case .auto:
            if locks & Self.lockWhiteBalance != 0 { _ = try? fd.updateControl(Self.lockID, locks & ~Self.lockWhiteBalance) }
            if hasAutoWhiteBalance { _ = try? fd.updateControl(Self.autoWhiteBalanceID, 1) }
        case .locked:
            _ = try? fd.updateControl(Self.lockID, locks | Self.lockWhiteBalance)
        case .preset, .manual:
            if hasAutoWhiteBalance { _ = try? fd.updateControl(Self.autoWhiteBalanceID, 0) }
            if let t = temperature, let k = request.temperature {
                _ = try? fd.updateControl(t.id, Int32(clamping: min(max(Int64(k.rounded()), t.minimum), t.maximum)))
            }
        }
        var s = WhiteBalanceSettings()
        let auto = hasAutoWhiteBalance ? ((try? fd.getControl(Self.autoWhiteBalanceID)) ?? 1) != 0 : temperature == nil
        if auto {
            let locked = lockBits & Self.lockWhiteBalance != 0 && ((try? fd.getControl(Self.lockID)) ?? 0) & Self.lockWhiteBalance != 0
            s.mode = locked ? .locked : .auto
        } else {
            s.mode = request.mode == .preset ? .preset : .manual
            s.preset = request.mode == .preset ? request.preset : nil
        }
        s.temperature = temperature.flatMap { try? fd.getControl($0.id) }.map(Double.init)
        return s
    }

    /// Writes power_line_frequency (nil: leaves it) and reads it back.
    package func applyAntiFlicker(_ mode: AntiFlickerMode?, fd: some V4L2ControlAccess) -> AntiFlickerMode? {
        guard !antiFlickerModes.isEmpty else { return nil }
        let modes = Self.antiFlickerByEntry
        if let mode, let index = modes.firstIndex(of: mode) { _ = try? fd.updateControl(Self.powerLineID, Int32(index)) }
        guard let v = try? fd.getControl(Self.powerLineID), modes.indices.contains(Int(v)) else { return nil }
        return modes[Int(v)]
    }

    /// The anti-flicker mode of power_line_frequency's default entry: what a device whose current
    /// value cannot be read (the pipewire backend's v4l2 nodes) is set to rather than guessed.
    package func defaultAntiFlicker(fd: some V4L2ControlAccess) -> AntiFlickerMode? {
        guard let d = fd.queryControl(Self.powerLineID)?.defaultValue, Self.antiFlickerByEntry.indices.contains(Int(d)) else { return nil }
        return Self.antiFlickerByEntry[Int(d)]
    }
}
