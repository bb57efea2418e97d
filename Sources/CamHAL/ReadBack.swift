/// What the device reads back after a setting was written, against what was written: a device
/// that refuses a write (a failed UVC control transfer, a control the driver rejects in its
/// current mode) keeps its old value, and the snapshot, which shows the read-back, would otherwise
/// change to something the app never asked for without saying why. Each function answers the
/// `ignored` warning naming what was asked and what the device kept, or nil when it took it.
///
/// Values are compared with a tolerance: a device rounds to its own units and steps (100 µs for
/// a V4L2 exposure, a temperature step of 10 K or more), and a refused write keeps a value that
/// is usually far from the one asked for.
enum ReadBack {
    /// A mode (focus, anti-flicker) or switch (torch) the device was asked to take.
    static func mode<Mode: Equatable>(_ name: String, asked: Mode, got: Mode) -> CameraWarning? {
        asked == got ? nil : refused("\(name) \(asked)", kept: "\(got)")
    }

    /// Exposure: the mode, and in manual the duration and gain where the device reports them.
    static func exposure(asked: ExposureSettings, got: ExposureSettings) -> CameraWarning? {
        if asked.mode != got.mode { return refused("exposure mode \(asked.mode)", kept: "\(got.mode)") }
        guard asked.mode == .manual else { return nil }
        if let a = asked.duration, let g = got.duration {
            let wanted = Seconds.of(a), read = Seconds.of(g)
            if abs(wanted - read) > max(100e-6, 0.05 * wanted) {
                return refused("exposure duration \(ZoomMath.format(wanted * 1000)) ms", kept: "\(ZoomMath.format(read * 1000)) ms")
            }
        }
        if let a = asked.gain, let g = got.gain, abs(a - g) > max(1, 0.05 * abs(a)) {
            return refused("exposure gain \(ZoomMath.format(a))", kept: ZoomMath.format(g))
        }
        return nil
    }

    /// White balance: the mode, and in preset and manual the temperature where the device
    /// reports it.
    static func whiteBalance(asked: WhiteBalanceSettings, got: WhiteBalanceSettings) -> CameraWarning? {
        if asked.mode != got.mode { return refused("white-balance mode \(asked.mode)", kept: "\(got.mode)") }
        guard asked.mode == .manual || asked.mode == .preset else { return nil }
        if let a = asked.temperature, let g = got.temperature, abs(a - g) > max(100, 0.05 * a) {
            return refused("white-balance temperature \(ZoomMath.format(a)) K", kept: "\(ZoomMath.format(g)) K")
        }
        return nil
    }

    private static func refused(_ what: String, kept: String) -> CameraWarning {
        .ignored(name: what, reason: "the device did not take it and reads back \(kept)")
    }
}
