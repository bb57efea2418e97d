import CamHAL
import CamHALVirtual
import Testing

/// Raw device controls (X1–X7): names, validation and the v4l2-ctl layout, without a device; then
/// the virtual camera's controls end to end.
@Suite("Raw device controls")
struct DeviceControlsTests {
    @Test("names are derived exactly as v4l2-ctl derives them", arguments: [
        ("Brightness", "brightness"),
        ("White Balance, Automatic", "white_balance_automatic"),
        ("Exposure Time, Absolute", "exposure_time_absolute"),
        ("Zoom, Absolute", "zoom_absolute"),
        ("Focus, Automatic Continuous", "focus_automatic_continuous"),
        ("Integer 32 Bits", "integer_32_bits"),
        ("U8 2x3x4x5 Array", "u8_2x3x4x5_array"),
        ("  Leading -- and trailing!! ", "leading_and_trailing"),
        ("Limited RGB Range (16-235)", "limited_rgb_range_16_235"),
        ("3A Lock", "3a_lock"),
        ("Ünïcode Näme", "n_code_n_me"),
        ("", ""),
    ])
    func names(display: String, expected: String) {
        #expect(DeviceControl.name(derivedFrom: display) == expected)
    }

    @Test("integers are clamped and stepped as the V4L2 core's ROUND_TO_RANGE does")
    func rounding() {
        // min, max, step, value -> stored
        let cases: [(Int64, Int64, UInt64, Int64, Int64)] = [
            (0, 255, 1, 300, 255), (0, 255, 1, -1, 0), (0, 255, 1, 77, 77),
            (-64, 64, 4, 7, 8), (-64, 64, 4, 5, 4), (-64, 64, 4, 6, 8), (-64, 64, 4, -63, -64), (-64, 64, 4, 63, 64),
            (0, 10, 3, 10, 9), (0, 10, 3, 9, 9), (0, 10, 3, 8, 9), (0, 10, 3, 7, 6),  // 10 is off the step: rounded down to 9
            (1, 100, 10, 100, 91), (1, 100, 10, 94, 91), (1, 100, 10, 85, 81),
            (Int64.min, Int64.max, 1, Int64.max, Int64.max), (Int64.min, Int64.max, 1, Int64.min, Int64.min),
            (Int64.min, Int64.max, 2, 3, 4), (-10, -2, 4, -3, -2),
        ]
        for (lo, hi, step, v, want) in cases {
            #expect(DeviceControl.roundToRange(v, minimum: lo, maximum: hi, step: step) == want, "\(v) in \(lo)...\(hi) step \(step)")
        }
    }

    static let menu = DeviceControl(
        id: 0x0098_F904, displayName: "Menu", type: .menu, typeCode: 3, minimum: 1, maximum: 4, step: 1, defaultValue: 3,
        menu: [.init(index: 1, name: "Menu Item 1"), .init(index: 3, name: "Menu Item 3"), .init(index: 4, name: "Menu Item 4")],
        value: .integer(3))

    @Test("validation refuses what the driver would, naming the control and the value")
    func validation() throws {
        func refusal(_ c: DeviceControl, _ v: DeviceControlValue) -> (name: String, value: String)? {
            do {
                _ = try c.validated(v)
                return nil
            } catch {
                if case .invalidArgument(let name, let value, _) = error { return (name, value) }
                return ("?", "?")
            }
        }
        #expect(refusal(Self.menu, .integer(2))! == ("menu", "2"))
        #expect(refusal(Self.menu, .integer(5))! == ("menu", "5"))
        #expect(try Self.menu.validated(.integer(4)) == .integer(4))
        #expect(refusal(Self.menu, .string("x")) != nil)

        let ro = DeviceControl(id: 1, displayName: "Read Only", type: .integer, maximum: 9, step: 1, flags: .readOnly)
        #expect(refusal(ro, .integer(1))! == ("read_only", "1"))

        let owned = DeviceControl(id: 2, displayName: "Zoom, Absolute", type: .integer, minimum: 100, maximum: 500, step: 1, ownedBy: "setZoomRatio")
        #expect(refusal(owned, .integer(200))! == ("zoom_absolute", "200"))

        let bits = DeviceControl(id: 3, displayName: "Bitmask", type: .bitmask, maximum: 0x8040_2010)
        #expect(try bits.validated(.integer(0x8000_2000)) == .integer(0x8000_2000))
        #expect(refusal(bits, .integer(1))! == ("bitmask", "1"))
        #expect(refusal(bits, .integer(-1)) != nil)

        let string = DeviceControl(id: 4, displayName: "String", type: .string, minimum: 2, maximum: 4, step: 1)
        #expect(try string.validated(.string("abc")) == .string("abc"))
        #expect(refusal(string, .string("a"))! == ("string", "a"))
        #expect(refusal(string, .string("abcde"))! == ("string", "abcde"))
        let stepped = DeviceControl(id: 5, displayName: "Even", type: .string, minimum: 0, maximum: 8, step: 2)
        #expect(refusal(stepped, .string("abc")) != nil)

        let bool = DeviceControl(id: 6, displayName: "Mute", type: .boolean, maximum: 1, step: 1)
        #expect(try bool.validated(.integer(7)) == .integer(1))
        let array = DeviceControl(id: 7, displayName: "U8 Array", type: .u8, maximum: 255, step: 1, dimensions: [2, 3], flags: .hasPayload)
        #expect(refusal(array, .integer(1)) != nil)
        let button = DeviceControl(id: 8, displayName: "Button", type: .button, flags: [.writeOnly, .executeOnWrite])
        #expect(try button.validated(.none) == .none)
    }

    @Test("text values: integers, hex, booleans and menu entry names; bad text named")
    func parsing() throws {
        let int = DeviceControl(id: 1, displayName: "Brightness", type: .integer, maximum: 255, step: 1)
        #expect(try int.parse("42") == .integer(42))
        #expect(try int.parse("-0x10") == .integer(-16))
        #expect(try Self.menu.parse("menu item 4") == .integer(4))
        let bool = DeviceControl(id: 2, displayName: "Mute", type: .boolean, maximum: 1, step: 1)
        #expect(try bool.parse("true") == .integer(1))
        #expect(try bool.parse("off") == .integer(0))
        #expect(throws: CameraError.self) { try int.parse("bright") }
        // One sign, then digits: the second sign UInt64's parser takes is refused.
        for bad in ["0x+5", "++5", "-+5", "0x-10", "0x", "5_000"] {
            #expect(throws: CameraError.self, "'\(bad)'") { try int.parse(bad) }
        }
        do {
            _ = try Self.menu.parse("Menu Item 2")
            Issue.record("a menu entry name the menu lacks was parsed")
        } catch {
            guard case .invalidArgument(let name, let value, _) = error else { Issue.record("\(error)"); return }
            #expect(name == "menu" && value == "Menu Item 2")
        }
    }

    @Test("the listing is v4l2-ctl -L's layout, byte for byte (lines from vivid)")
    func listing() {
        let controls = [
            DeviceControl(
                id: 0x0098_0900, displayName: "Brightness", type: .integer, typeCode: 1, minimum: 0, maximum: 255, step: 1,
                defaultValue: 128, flags: .slider, value: .integer(128)),
            DeviceControl(
                id: 0x0098_0913, displayName: "Gain", type: .integer, typeCode: 1, minimum: 0, maximum: 255, step: 1,
                defaultValue: 100, flags: [.inactive, .volatile], value: .integer(62)),
            Self.menu,
            DeviceControl(
                id: 0x0098_F905, displayName: "String", type: .string, typeCode: 7, minimum: 2, maximum: 4, step: 1,
                flags: .hasPayload, value: .string("  ")),
            DeviceControl(
                id: 0x0098_F906, displayName: "Bitmask", type: .bitmask, typeCode: 8, maximum: 0x8040_2010,
                defaultValue: 0x8000_2000, value: .integer(0x8000_2000)),
            DeviceControl(
                id: 0x0098_F907, displayName: "Integer Menu", type: .integerMenu, typeCode: 9, minimum: 1, maximum: 8, step: 1,
                defaultValue: 4, menu: [.init(index: 4, value: 5), .init(index: 8, value: 42)], value: .integer(4)),
            DeviceControl(
                id: 0x0098_F90D, displayName: "U32 Dynamic Array", type: .u32, typeCode: 0x102, minimum: 10, maximum: 90, step: 1,
                defaultValue: 50, dimensions: [100], flags: [.hasPayload, .dynamicArray]),
            DeviceControl(id: 0x0098_F90B, displayName: "Area", type: .area, typeCode: 0x106, flags: .hasPayload, value: .area(width: 1000, height: 2000)),
            DeviceControl(
                id: 0x00F0_F041, displayName: "Disconnect", type: .button, typeCode: 4, flags: [.writeOnly, .executeOnWrite],
                group: "Vivid Controls"),
        ]
        let expected = """

            User Controls

                                 brightness 0x00980900 (int)    : min=0 max=255 step=1 default=128 value=128 flags=slider
                                       gain 0x00980913 (int)    : min=0 max=255 step=1 default=100 value=62 flags=inactive, volatile
                                       menu 0x0098f904 (menu)   : min=1 max=4 default=3 value=3 (Menu Item 3)
            \t\t\t\t1: Menu Item 1
            \t\t\t\t3: Menu Item 3
            \t\t\t\t4: Menu Item 4
                                     string 0x0098f905 (str)    : min=2 max=4 step=1 value='  ' flags=has-payload
                                    bitmask 0x0098f906 (bitmask): max=0x80402010 default=0x80002000 value=-2147475456
                               integer_menu 0x0098f907 (intmenu): min=1 max=8 default=4 value=4 (5 0x5)
            \t\t\t\t4: 5 (0x5)
            \t\t\t\t8: 42 (0x2a)
                          u32_dynamic_array 0x0098f90d (u32)    : min=10 max=90 step=1 default=50 dims=[100] flags=has-payload, 0x00000800
                                       area 0x0098f90b (area)   : value=1000x2000 flags=has-payload

            Vivid Controls

                                 disconnect 0x00f0f041 (button) : value=0 flags=write-only, execute-on-write

            """
        #expect(DeviceControls.listing(controls) == expected)
    }

    @Test("the virtual camera: brightness is stepped, lifts the image, and every change is observed")
    func virtualEndToEnd() async throws {
        let backend = VirtualBackend()
        let device = try backend.device(id: "virtual-front")
        let controls = try backend.deviceControls(for: device)
        #expect(try controls.list().map(\.name) == ["brightness", "color_effects", "frames_rendered"])
        let changes = controls.changes()
        #expect(try controls.set("brightness", to: .integer(7)) == .integer(8))
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        #expect(change?.name == "brightness" && change?.control.value == .integer(8))

        let camera = Camera(backend: backend, device: device)
        camera.start()
        defer { camera.stop {} }
        func centreLuma(_ f: Frame) -> UInt8 { f.planes[0].bytes[(f.height / 2) * f.planes[0].bytesPerRow + f.width] }
        let liftedLuma = centreLuma(try await camera.frame(atGeneration: 0))
        try #require(camera.streamFormat?.pixelFormat == .yuyv)
        try controls.set("brightness", to: .integer(0))
        var plainLuma = liftedLuma
        for _ in 0..<30 where plainLuma == liftedLuma {
            // Frames rendered after the set show it; no sleep, at most 30 frames.
            plainLuma = centreLuma(try await camera.frame(atGeneration: 0))
        }
        #expect(Int(liftedLuma) - Int(plainLuma) == 8)
    }
}

/// Float controls (libcamera's Brightness, Contrast, AnalogueGain): clamped, NaN refused, no step.
@Suite("Raw float controls")
struct DeviceFloatControlTests {
    static var brightness: DeviceControl {
        var c = DeviceControl(id: 9, displayName: "Brightness", type: .float, group: "libcamera Controls", value: .float(0))
        c.floatRange = -1...1
        c.floatDefault = 0
        return c
    }

    @Test func clampedIntoTheRange() throws {
        let c = Self.brightness
        #expect(try c.validated(.float(3)) == .float(1))
        #expect(try c.validated(.float(-3)) == .float(-1))
        #expect(try c.validated(.float(0.25)) == .float(0.25))
        #expect(try c.validated(.integer(1)) == .float(1))
        #expect(throws: CameraError.self) { try c.validated(.float(.nan)) }
        #expect(throws: CameraError.self) { try c.validated(.string("x")) }
    }

    @Test func parsedAndListed() throws {
        let c = Self.brightness
        #expect(try c.parse("0.5") == .float(0.5))
        #expect(throws: CameraError.self) { try c.parse("bright") }
        #expect(throws: CameraError.self) { try c.parse("nan") }
        let line = DeviceControls.listing([c])
        #expect(line.contains("brightness 0x00000009 (float)  : min=-1.0 max=1.0 default=0.0 value=0.0"))
    }
}
