#if LibCamera
import CamHAL
@testable import CamHALLibCamera
import Testing

/// The libcamera ControlInfoMap → raw-control descriptors and exposure / white-balance
/// capabilities, and the unit conversions: pure, no camera needed. The maps are the ones
/// libcamera 0.0.3's vimc and uvcvideo pipeline handlers build (uvcvideo on the c920 profile).
@Suite("libcamera controls")
struct LibCameraControlTests {
    /// vimc (0.0.3): Brightness -1...1 (0), Contrast 0...2 (1), Saturation 0...2 (1), all floats.
    static let vimc: [LibCameraControlInfo] = [
        .init(id: 9, name: "Brightness", type: .float, minimum: -1, maximum: 1, defaultValue: 0),
        .init(id: 10, name: "Contrast", type: .float, minimum: 0, maximum: 2, defaultValue: 1),
        .init(id: 17, name: "Saturation", type: .float, minimum: 0, maximum: 2, defaultValue: 1),
    ]
    /// uvcvideo (0.0.3) on a C920: exposure_time_absolute 3...2047 (100 µs) as ExposureTime in µs,
    /// gain 0...255 (default 0) as AnalogueGain 1...4, auto_exposure as AeEnable.
    static let uvc: [LibCameraControlInfo] = [
        .init(id: 1, name: "AeEnable", type: .bool, minimum: 0, maximum: 1, defaultValue: 1),
        .init(id: 7, name: "ExposureTime", type: .int32, minimum: 300, maximum: 204_700, defaultValue: 25_000),
        .init(id: 8, name: "AnalogueGain", type: .float, minimum: 1, maximum: 4, defaultValue: 1),
        .init(id: 9, name: "Brightness", type: .float, minimum: -1, maximum: 127.0 / 128, defaultValue: 0),
    ]

    @Test func vimcListsThreeFloatControlsAndNoMappedOnes() {
        let owners = LibCameraControlMapping.owners(Self.vimc, exposure: nil, whiteBalance: nil)
        let controls = Self.vimc.map { LibCameraControlMapping.descriptor($0, value: nil, owner: owners[$0.name]) }
        #expect(controls.map(\.name) == ["brightness", "contrast", "saturation"])
        #expect(controls.allSatisfy { $0.type == .float && $0.step == 0 && $0.ownedBy == nil && $0.isWritable })
        #expect(controls.allSatisfy { $0.group == LibCameraControlMapping.group && $0.dimensions.isEmpty })
        #expect(controls[0].floatRange == -1...1 && controls[0].floatDefault == 0 && controls[0].value == .float(0))
        #expect(controls[1].floatRange == 0...2 && controls[1].value == .float(1))
        #expect(LibCameraControlMapping.exposureCapabilities(Self.vimc) == nil)
        #expect(LibCameraControlMapping.whiteBalanceCapabilities(Self.vimc) == nil)
    }

    @Test func storedValuesReadBackAsLibcameraHoldsThem() {
        let b = LibCameraControlMapping.descriptor(Self.vimc[0], value: [0.1], owner: nil)
        #expect(b.value == .float(Double(Float(0.1))))
        #expect(LibCameraControlMapping.numbers(.float(0.1)) == [Double(Float(0.1))])
        #expect(LibCameraControlMapping.numbers(.integer(-3)) == [-3])
        #expect(LibCameraControlMapping.numbers(.string("x")) == nil)
        let ae = LibCameraControlMapping.descriptor(Self.uvc[0], value: [0], owner: nil)
        #expect(ae.type == .boolean && ae.minimum == 0 && ae.maximum == 1 && ae.defaultValue == 1 && ae.value == .integer(0))
    }

    @Test func uvcvideoExposureIsContinuousAutoAndManualInSecondsAndAMultiplier() throws {
        let caps = try #require(LibCameraControlMapping.exposureCapabilities(Self.uvc))
        #expect(caps.modes == [.continuousAuto, .manual])
        #expect(caps.durationRange == .microseconds(300) ... .microseconds(204_700))
        #expect(caps.gainRange == 1...4 && caps.gainUnit == .multiplier)
        #expect(caps.biasRange == nil && caps.biasStep == 0)
        let owners = LibCameraControlMapping.owners(Self.uvc, exposure: caps, whiteBalance: nil)
        #expect(owners == ["AeEnable": "setExposureMode", "ExposureTime": "setExposureDuration", "AnalogueGain": "setExposureGain"])
        let time = LibCameraControlMapping.descriptor(Self.uvc[1], value: nil, owner: owners["ExposureTime"])
        #expect(time.type == .integer && time.minimum == 300 && time.maximum == 204_700 && time.defaultValue == 25_000)
        #expect(time.ownedBy == "setExposureDuration" && !time.isWritable)
    }

    /// libcamera 0.0.3's uvcvideo handler writes Aperture Priority for AeEnable on and Manual for
    /// off: a webcam whose menu lacks either (the ELP 4K: Auto and Shutter Priority only) is
    /// offered continuous auto alone, with no duration or gain to set. Fails if such a webcam is
    /// advertised a manual exposure the pipeline refuses.
    @Test func aWebcamWithoutManualOrAperturePriorityOffersContinuousAutoOnly() throws {
        #expect(LibCameraControlMapping.aeSwitchable(autoExposureEntries: nil))
        #expect(LibCameraControlMapping.aeSwitchable(autoExposureEntries: [1, 3]))
        #expect(!LibCameraControlMapping.aeSwitchable(autoExposureEntries: [0, 2]))
        #expect(!LibCameraControlMapping.aeSwitchable(autoExposureEntries: [0, 1]))
        let caps = try #require(LibCameraControlMapping.exposureCapabilities(Self.uvc, aeSwitchable: false))
        #expect(caps.modes == [.continuousAuto] && caps.durationRange == nil && caps.gainRange == nil)
    }

    @Test func exposureValueGivesABiasInSixthsOfAnEV() throws {
        let map = Self.uvc + [.init(id: 6, name: "ExposureValue", type: .float, minimum: -8, maximum: 8, defaultValue: 0)]
        let caps = try #require(LibCameraControlMapping.exposureCapabilities(map))
        #expect(caps.biasRange == -8...8 && caps.biasStep == 1.0 / 6)
        // Without AeEnable there is nothing to switch: no exposure control, the rest stay raw.
        #expect(LibCameraControlMapping.exposureCapabilities(Array(map.dropFirst())) == nil)
    }

    @Test func awbModeValuesBecomePresets() throws {
        let map: [LibCameraControlInfo] = [
            .init(id: 11, name: "AwbEnable", type: .bool, minimum: 0, maximum: 1, defaultValue: 1),
            .init(id: 12, name: "AwbMode", type: .int32, minimum: 0, maximum: 7, defaultValue: 0, values: [0, 1, 2, 3, 5, 6, 7]),
        ]
        let caps = try #require(LibCameraControlMapping.whiteBalanceCapabilities(map))
        #expect(caps.modes == [.auto, .preset] && caps.temperatureRange == nil)
        #expect(caps.presets == [.incandescent, .fluorescent, .daylight, .cloudy])
        let mode = LibCameraControlMapping.descriptor(map[1], value: nil, owner: nil)
        #expect(mode.type == .integerMenu && mode.menu.map(\.index) == [0, 1, 2, 3, 5, 6, 7] && mode.minimum == 0 && mode.maximum == 7)
        let bare = try #require(LibCameraControlMapping.whiteBalanceCapabilities([map[0]]))
        #expect(bare.modes == [.auto] && bare.presets.isEmpty)
    }

    @Test func arraysAreListedNotSettable() {
        let gains = LibCameraControlInfo(id: 13, name: "ColourGains", type: .float, elements: 2, minimum: 0, maximum: 32, defaultValue: 1)
        let c = LibCameraControlMapping.descriptor(gains, value: [1.5, 2], owner: nil)
        #expect(c.name == "colourgains" && c.dimensions == [2] && !c.isWritable && c.value == .none)
    }

    @Test func unitConversions() {
        let range = 300.0...204_700
        #expect(LibCameraControlMapping.microseconds(.milliseconds(10), range: range) == 10_000)
        #expect(LibCameraControlMapping.microseconds(.seconds(1e9), range: range) == 204_700)
        #expect(LibCameraControlMapping.microseconds(.zero, range: range) == 300)
        #expect(LibCameraControlMapping.microseconds(.seconds(Int64.max), range: range) == 204_700)
        #expect(LibCameraControlMapping.duration(microseconds: 25_000) == .milliseconds(25))
        #expect(LibCameraControlMapping.frameDurationLimits(rate: 30) == [33_333, 33_333])
    }
}
#endif
