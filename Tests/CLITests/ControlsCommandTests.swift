@_spi(Backend) import CamHAL
import CamHALTestSupport
import Foundation
import Testing

@testable import camhal

/// A device's control table as vivid and a UVC webcam lay out the cases `camhal controls --set`
/// must word well: `gain` inactive while `gain_automatic` is on (vivid), `exposure_time_absolute`
/// refused with EACCES while `auto_exposure` is in an automatic mode (uvcvideo on the C920), a
/// bitmask, and `zoom_absolute` owned by setZoomRatio. Not a backend: the driver side of
/// `DeviceControls` for the command's own logic, counting writes (the VM runs the same cases on
/// vivid and the emulated C920: scripts/vm-controls-check).
final class ControlTable: DeviceControlDriver, @unchecked Sendable {
    let state = Locked<(values: [String: Int64], writes: [String])>((
        ["gain": 45, "gain_automatic": 1, "bitmask": 0x8000_0002, "exposure_time_absolute": 250, "auto_exposure": 3, "zoom_absolute": 100, "brightness": 0], []
    ))

    func controls() throws(CameraError) -> [DeviceControl] {
        let v = state.value.values
        return [
            DeviceControl(id: 1, displayName: "Brightness", type: .integer, minimum: -64, maximum: 64, step: 4, value: .integer(v["brightness"] ?? 0)),
            DeviceControl(id: 2, displayName: "Gain Automatic", type: .boolean, maximum: 1, step: 1, value: .integer(v["gain_automatic"] ?? 0)),
            DeviceControl(id: 3, displayName: "Gain", type: .integer, maximum: 255, step: 1,
                          flags: v["gain_automatic"] == 1 ? [.inactive, .volatile] : [.volatile], value: .integer(v["gain"] ?? 0)),
            DeviceControl(id: 4, displayName: "Bitmask", type: .bitmask, maximum: 0x8000_0F0F, value: .integer(v["bitmask"] ?? 0)),
            DeviceControl(id: 5, displayName: "Auto Exposure", type: .menu, maximum: 3, menu: [
                .init(index: 1, name: "Manual Mode"), .init(index: 3, name: "Aperture Priority Mode"),
            ], group: "Camera Controls", value: .integer(v["auto_exposure"] ?? 0)),
            // uvcvideo's exposure: no inactive flag here, the write itself is refused (EACCES).
            DeviceControl(id: 6, displayName: "Exposure Time, Absolute", type: .integer, minimum: 3, maximum: 2047, step: 1,
                          group: "Camera Controls", value: .integer(v["exposure_time_absolute"] ?? 0)),
            DeviceControl(id: 7, displayName: "Zoom, Absolute", type: .integer, minimum: 100, maximum: 500, step: 1,
                          group: "Camera Controls", value: .integer(v["zoom_absolute"] ?? 0), ownedBy: "setZoomRatio"),
        ]
    }

    func refresh(_ control: DeviceControl) throws(CameraError) -> DeviceControl {
        try controls().first { $0.id == control.id } ?? control
    }

    func write(_ control: DeviceControl, _ value: DeviceControlValue) throws(CameraError) -> DeviceControlValue {
        if control.name == "exposure_time_absolute", state.value.values["auto_exposure"] != 1 {
            throw CameraError.invalidArgument(name: control.name, value: value.description, reason: "the driver refuses writing it (Permission denied)")
        }
        state.withLock {
            $0.values[control.name] = value.integer ?? 0
            $0.writes.append(control.name)
        }
        return value
    }

    func watch(
        _ controls: [DeviceControl], _ handler: @escaping @Sendable (DeviceControlChange) -> Void, ended: @escaping @Sendable () -> Void
    ) -> (any DeviceWatch)? { nil }
}

@Suite("camhal controls --set: checked all first, errors name the value typed")
struct ControlAssignmentTests {
    let table = ControlTable()
    var controls: DeviceControls {
        DeviceControls(device: DeviceDescriptor(id: "table", name: "table", backend: "test", facing: .external, lenses: [], formats: []), driver: table)
    }

    func apply(_ sets: [(String, String)]) throws -> [String] {
        var lines: [String] = []
        try ControlAssignments.apply(sets, to: controls) { lines.append($0) }
        return lines
    }

    func usageError(_ sets: [(String, String)]) -> String? {
        do {
            _ = try apply(sets)
            return nil
        } catch let e as UsageError {
            return e.message
        } catch {
            return "not a usage error: \(error)"
        }
    }

    @Test("a bad value names the text typed, never the number it became", arguments: [
        ("bitmask", "0xffffffff", "'0xffffffff' sets bits outside the mask 0x80000f0f"),
        ("brightness", "99999999999999999999", "'99999999999999999999' is out of range (-64...64)"),
        ("brightness", "-0x99999999999999999999", "is out of range (-64...64)"),
        ("brightness", "bright", "'bright' expected an integer"),
        ("auto_exposure", "2", "'2' not an entry of the menu"),
        ("zoom_absolute", "200", "driven by setZoomRatio"),
        ("no_such", "1", "unknown control 'no_such'"),
    ])
    func badValues(name: String, text: String, message: String) {
        let error = usageError([(name, text)])
        #expect(error?.contains(message) == true, "\(name)=\(text): \(error ?? "accepted")")
        #expect(error?.contains("\(name)=\(text)") == true, "\(error ?? "")")
        #expect(table.state.value.writes.isEmpty)
    }

    @Test("every --set is checked before any is written")
    func validateAll() {
        let error = usageError([("brightness", "8"), ("bitmask", "0x10000")])
        #expect(error?.contains("'0x10000'") == true, "\(error ?? "accepted")")
        #expect(table.state.value.writes.isEmpty, "wrote \(table.state.value.writes) before refusing a later --set")
    }

    @Test("clamping and stepping are reported with the value typed")
    func clamped() throws {
        #expect(try apply([("brightness", "999")]) == ["brightness = 64 (999 clamped to -64...64)"])
        #expect(try apply([("brightness", "13")]) == ["brightness = 12 (13 rounded to the step 4)"])
        #expect(try apply([("brightness", "-8")]) == ["brightness = -8"])
        #expect(try apply([("bitmask", "0x80000001")]) == ["bitmask = 2147483649"])
    }

    @Test("an inactive control (vivid) and a refused one (UVC's EACCES) read the same, naming what drives them")
    func inactive() throws {
        for (name, text, driver) in [("gain", "10", "gain_automatic = 1"), ("exposure_time_absolute", "5000", "auto_exposure = 3 (Aperture Priority Mode)")] {
            do {
                _ = try apply([(name, text)])
                Issue.record("\(name)=\(text) accepted while inactive")
            } catch let e as InactiveControlError {
                #expect(e.message.hasPrefix("\(name)=\(text) not written: the control is inactive, under automatic control (\(driver))"), "\(e)")
                #expect(!e.message.contains("2047"), "names the clamped value: \(e)")
            }
        }
        #expect(table.state.value.writes.isEmpty)
        // Switched to manual in the same command, the control is written.
        #expect(try apply([("gain_automatic", "0"), ("gain", "10")]) == ["gain_automatic = 0", "gain = 10"])
        #expect(try apply([("auto_exposure", "Manual Mode"), ("exposure_time_absolute", "5000")])
            == ["auto_exposure = 1", "exposure_time_absolute = 2047 (5000 clamped to 3...2047)"])
    }

    @Test("the listing marks controls a session setter owns")
    func ownedMarked() throws {
        let listing = ControlsCommand.listing(try controls.list())
        let zoom = listing.split(separator: "\n").filter { $0.contains("zoom_absolute") }
        #expect(zoom.count == 1 && zoom[0].hasSuffix(" [owned by setZoomRatio]"), "\(zoom)")
        #expect(listing.components(separatedBy: "[owned by").count == 2, "\(listing)")
    }
}
