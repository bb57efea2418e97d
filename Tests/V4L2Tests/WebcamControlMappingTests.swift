import CV4L2
import Synchronization
import Testing
@testable import CamHAL
@testable import CamHALV4L2

/// The V4L2 control semantics on the control sets of real webcams (the emulator profiles'
/// Tests/Webcam/profiles/elp4k and c270), as uvcvideo presents them: a menu with only the
/// entries the camera's UVC AE mode mask has, exposure_time_absolute refused while the menu is
/// on an automatic entry, white_balance_temperature in the camera's own range. The VM lanes run
/// the same code against uvcvideo itself (scripts/vm-conformance with CAMHAL_VM_WEBCAMS).
@Suite("V4L2 exposure and white balance on real webcams' control sets")
struct WebcamControlMappingTests {
    /// A UVC camera's controls in memory: `menu` the auto_exposure entries offered.
    final class UVCControls: V4L2ControlAccess, Sendable {
        let menu: [Int32]
        let infos: [UInt32: ControlInfo]
        let values: Mutex<[UInt32: Int32]>
        /// VIDIOC_G_CTRL calls made, by control: each is a round trip to the driver.
        let reads = Mutex<[UInt32: Int]>([:])
        /// Every write fails with EIO, as a webcam's failed control transfer does.
        let refusing = Mutex(false)
        init(menu: [Int32], controls: [(UInt32, Int64, Int64, Int64)]) {
            self.menu = menu
            var infos: [UInt32: ControlInfo] = [:], values: [UInt32: Int32] = [:]
            for (id, lo, hi, def) in controls {
                infos[id] = ControlInfo(id: id, name: "\(id)", type: 1, minimum: lo, maximum: hi, step: 1, defaultValue: def, flags: 0)
                values[id] = Int32(def)
            }
            self.infos = infos
            self.values = Mutex(values)
        }
        func queryControl(_ id: UInt32) -> ControlInfo? { infos[id] }
        func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool { id == V4L2ImageControls.exposureAutoID && menu.contains(Int32(index)) }
        func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 {
            reads.locked { $0[id, default: 0] += 1 }
            guard let v = values.locked({ $0[id] }) else { throw V4L2Errno(EINVAL, "VIDIOC_G_CTRL") }
            return v
        }
        func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
            if refusing.locked({ $0 }) { throw V4L2Errno(EIO, "VIDIOC_S_CTRL") }
            guard let info = infos[id] else { throw V4L2Errno(EINVAL, "VIDIOC_S_CTRL") }
            if id == V4L2ImageControls.exposureAutoID, !menu.contains(value) { throw V4L2Errno(EINVAL, "VIDIOC_S_CTRL") }
            // uvcvideo (uvc_ctrl_is_accessible): the exposure time is refused unless the menu is Manual,
            // Shutter Priority included.
            if id == V4L2ImageControls.exposureAbsoluteID, values.locked({ $0[V4L2ImageControls.exposureAutoID] }) != 1 {
                throw V4L2Errno(EACCES, "VIDIOC_S_CTRL")
            }
            let v = Int32(min(max(Int64(value), info.minimum), info.maximum))
            values.locked { $0[id] = v }
            return v
        }
    }

    /// The C920 profile's exposure and white-balance controls: auto_exposure Manual (1) and
    /// Aperture Priority (3), exposure 3..2047, gain, auto white balance, 2000..6500 K.
    static func c920() -> UVCControls {
        UVCControls(menu: [1, 3], controls: [
            (V4L2ImageControls.exposureAutoID, 0, 3, 3), (V4L2ImageControls.exposureAbsoluteID, 3, 2047, 250),
            (V4L2ImageControls.gainID, 0, 255, 0), (V4L2ImageControls.autoWhiteBalanceID, 0, 1, 1),
            (V4L2ImageControls.temperatureID, 2000, 6500, 4000),
        ])
    }

    /// The ELP 4K profile: auto_exposure Auto (0) and Shutter Priority (2), exposure 1..5000.
    static func elp() -> UVCControls {
        UVCControls(menu: [0, 2], controls: [
            (V4L2ImageControls.exposureAutoID, 0, 3, 0), (V4L2ImageControls.exposureAbsoluteID, 1, 5000, 157),
            (V4L2ImageControls.gainID, 0, 100, 0),
        ])
    }

    /// uvcvideo takes exposure_time_absolute only in Manual: a menu of Auto and Shutter Priority
    /// (the ELP 4K) has continuous auto and nothing manual to offer. Seen in the VM: advertising
    /// manual through Shutter Priority left the duration where it was (E2-E4 failed on uvcvideo).
    @Test("a menu without Manual (Auto + Shutter Priority) offers continuous auto only")
    func shutterPriorityGivesNoSettableDuration() throws {
        let fd = Self.elp()
        let controls = V4L2ImageControls(fd)
        let caps = try #require(controls.exposureCapabilities)
        #expect(caps.modes == [.continuousAuto] && caps.durationRange == nil && caps.gainRange == nil, "\(caps)")
        let auto = controls.applyExposure(ExposureSettings(mode: .continuousAuto), fd: fd)
        #expect(try fd.getControl(V4L2ImageControls.exposureAutoID) == 0)
        #expect(auto.mode == .continuousAuto)
    }

    @Test("a menu with Manual keeps using Manual, with gain")
    func manualEntryWins() throws {
        let fd = UVCControls(menu: [1, 2, 3], controls: [
            (V4L2ImageControls.exposureAutoID, 0, 3, 3), (V4L2ImageControls.exposureAbsoluteID, 1, 10000, 166),
            (V4L2ImageControls.gainID, 0, 255, 128),
        ])
        let controls = V4L2ImageControls(fd)
        #expect(controls.exposureCapabilities?.gainRange == 0...255)
        _ = controls.applyExposure(ExposureSettings(mode: .manual, duration: .milliseconds(20), gain: 7), fd: fd)
        #expect(try fd.getControl(V4L2ImageControls.exposureAutoID) == 1)
        #expect(try fd.getControl(V4L2ImageControls.exposureAbsoluteID) == 200)
        _ = controls.applyExposure(ExposureSettings(mode: .continuousAuto), fd: fd)
        #expect(try fd.getControl(V4L2ImageControls.exposureAutoID) == 3)
    }

    /// An apply reads each control once: the mode it compares before writing is the mode it
    /// reports, and a value it wrote is what the device stored (on a webcam each read is a
    /// round trip to uvcvideo, on the way to the first frame). Would catch an apply reading its
    /// mode controls again to report them (the C920 paid two extra reads per start).
    @Test("an exposure or white-balance apply reads each control once, and reports what the device holds")
    func appliesReadEachControlOnce() throws {
        let c920 = Self.c920()
        let controls = V4L2ImageControls(c920)
        func once(_ apply: () -> Void) -> [UInt32: Int] {
            c920.reads.locked { $0 = [:] }
            apply()
            return c920.reads.locked { $0 }
        }
        var reported = ExposureSettings()
        var reads = once { reported = controls.applyExposure(ExposureSettings(mode: .continuousAuto), fd: c920) }
        #expect(reads.values.allSatisfy { $0 == 1 }, "\(reads)")
        #expect(reported.mode == .continuousAuto && reported.duration == .microseconds(25_000))
        reads = once { reported = controls.applyExposure(ExposureSettings(mode: .manual, duration: .milliseconds(20), gain: 7), fd: c920) }
        #expect(reads.values.allSatisfy { $0 == 1 }, "\(reads)")
        #expect(reported.mode == .manual && reported.duration == .milliseconds(20) && reported.gain == 7, "\(reported)")
        #expect(try c920.getControl(V4L2ImageControls.exposureAutoID) == 1 && c920.getControl(V4L2ImageControls.gainID) == 7)
        var balance = WhiteBalanceSettings()
        reads = once { balance = controls.applyWhiteBalance(WhiteBalanceSettings(mode: .manual, temperature: 5000), fd: c920) }
        #expect(reads.values.allSatisfy { $0 == 1 }, "\(reads)")
        #expect(balance.mode == .manual && balance.temperature == 5000, "\(balance)")
        reads = once { balance = controls.applyWhiteBalance(WhiteBalanceSettings(mode: .auto), fd: c920) }
        #expect(reads.values.allSatisfy { $0 == 1 }, "\(reads)")
        #expect(balance.mode == .auto && (try? c920.getControl(V4L2ImageControls.autoWhiteBalanceID)) == 1)
    }

    @Test("white balance offers the plausible Kelvin part of a device's range (C270: 0...10000)")
    func kelvinRangeIsThePlausiblePart() throws {
        let c270 = UVCControls(menu: [], controls: [
            (V4L2ImageControls.autoWhiteBalanceID, 0, 1, 1), (V4L2ImageControls.temperatureID, 0, 10000, 4000),
        ])
        let caps = try #require(V4L2ImageControls(c270).whiteBalanceCapabilities)
        #expect(caps.temperatureRange == 1000...10000)
        #expect(caps.presets.allSatisfy { (1000...10000).contains($0.kelvin) } && !caps.presets.isEmpty)
        #expect(V4L2ImageControls.kelvinRange(minimum: 2800, maximum: 6500) == 2800...6500)
        #expect(V4L2ImageControls.kelvinRange(minimum: 0, maximum: 100_000) == 1000...20000)
        #expect(V4L2ImageControls.kelvinRange(minimum: 0, maximum: 255) == nil)
    }

    @Test("the card name gives way to the USB product string only when it is a cut copy of it")
    func displayNameUsesTheWholeProduct() {
        #expect(V4L2Discovery.displayName(card: "ELP 4K USB Camera: ELP 4K USB C", usbProduct: "ELP 4K USB Camera\n") == "ELP 4K USB Camera")
        #expect(V4L2Discovery.displayName(card: "A camera whose name is far too l", usbProduct: "A camera whose name is far too long") == "A camera whose name is far too long")
        #expect(V4L2Discovery.displayName(card: "C270 HD WEBCAM: C270 HD WEBCAM", usbProduct: "C270 HD WEBCAM") == "C270 HD WEBCAM: C270 HD WEBCAM")
        #expect(V4L2Discovery.displayName(card: "vivid", usbProduct: nil) == "vivid")
        #expect(V4L2Discovery.displayName(card: "Integrated Camera: Integrated C", usbProduct: "Other") == "Integrated Camera: Integrated C")
    }

    @Test("libcamera's USB ID of an interface: its sysfs name without the bus")
    func libcameraUSBID() {
        #expect(UVCNode.usbID(interfacePath: "/sys/devices/pci0000:00/0000:00:14.0/usb3/3-2/3-2.4/3-2.4:1.0") == "2.4:1.0")
        #expect(UVCNode.usbID(interfacePath: "/sys/devices/platform/vhci_hcd.0/usb1/1-1/1-1:1.0") == "1:1.0")
        #expect(UVCNode.usbID(interfacePath: "/sys/devices/platform/vivid.0") == nil)
    }

    /// Locking focus turns autofocus off first; when the device refuses that write (a failed UVC
    /// control transfer), the mode in effect is continuous autofocus, and that is what is
    /// answered. Would catch `.locked` answered while autofocus still runs (the snapshot lying).
    @Test("a refused FOCUS_AUTO write leaves the answer continuous, not locked")
    func refusedAutofocusOffIsNotLocked() {
        final class RefusingFocus: V4L2ControlAccess, Sendable {
            func queryControl(_ id: UInt32) -> ControlInfo? {
                guard id == ControlID.focusAuto || id == ControlID.focusAbsolute else { return nil }
                return ControlInfo(id: id, name: "\(id)", type: 1, minimum: 0, maximum: 255, step: 1, defaultValue: 1, flags: 0)
            }
            func hasMenuEntry(_ id: UInt32, _ index: UInt32) -> Bool { false }
            func getControl(_ id: UInt32) throws(V4L2Errno) -> Int32 { id == ControlID.focusAuto ? 1 : 0 }
            func setControl(_ id: UInt32, _ value: Int32) throws(V4L2Errno) -> Int32 {
                if id == ControlID.focusAuto { throw V4L2Errno(EIO, "VIDIOC_S_CTRL") }
                return value
            }
        }
        let present = FocusControls(auto: true, start: false, absolute: true)
        #expect(V4L2ControlSemantics.applyFocusMode(.locked, RefusingFocus(), present: present) == .continuous)
        #expect(V4L2ControlSemantics.applyFocusMode(.manual, RefusingFocus(), present: present) == .continuous)
        #expect(V4L2ControlSemantics.applyFocusMode(.continuous, RefusingFocus(), present: present) == .continuous)
    }

    /// Writes a webcam refuses (a failed UVC control transfer) leave its values as they were:
    /// exposure and white balance answer what the device reads back, and the core's read-back
    /// comparison turns the difference into the snapshot's warning. Would catch a manual
    /// exposure answered while the camera still exposes automatically.
    @Test("refused exposure and white-balance writes answer the device's values, and are warned")
    func refusedWritesAnswerTheDevice() throws {
        let c920 = Self.c920()
        let controls = V4L2ImageControls(c920)
        c920.refusing.locked { $0 = true }
        let manual = ExposureSettings(mode: .manual, duration: .milliseconds(10), gain: 20)
        let exposure = controls.applyExposure(manual, fd: c920)
        #expect(exposure.mode == .continuousAuto)
        #expect(ReadBack.exposure(asked: manual, got: exposure) == .ignored(
            name: "exposure mode manual", reason: "the device did not take it and reads back continuousAuto"))
        let warm = WhiteBalanceSettings(mode: .manual, temperature: 3000)
        let whiteBalance = controls.applyWhiteBalance(warm, fd: c920)
        #expect(whiteBalance.mode == .auto && whiteBalance.temperature == 4000)
        #expect(ReadBack.whiteBalance(asked: warm, got: whiteBalance)?.code == "ignored")
        // Taken: nothing to warn about.
        c920.refusing.locked { $0 = false }
        let taken = controls.applyExposure(manual, fd: c920)
        #expect(taken.mode == .manual && ReadBack.exposure(asked: manual, got: taken) == nil, "\(taken)")
        let takenWB = controls.applyWhiteBalance(warm, fd: c920)
        #expect(ReadBack.whiteBalance(asked: warm, got: takenWB) == nil, "\(takenWB)")
    }
}
