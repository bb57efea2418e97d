#if LibCamera
import CamHAL
import CamHALV4L2
import CamHALLibcameraShim
import Synchronization

/// What libcamera says about one camera without streaming (properties and control ranges).
struct LibCameraInfo: Sendable, Hashable {
    var id: String
    var model: String?
    /// properties::Location: 0 front, 1 back, 2 external; nil when absent.
    var location: Int?
    var rotation: Int?
    var pixelArraySize: Size?
    /// ScalerCropMaximum when ScalerCrop is a control of the camera; nil otherwise.
    var scalerCropMaximum: SensorRect?
    var scalerCropMinimum: Size?
    /// AfMode values accepted (CAMHAL_LC_AF_*).
    var afModes: Set<Int32>
    var hasAfTrigger: Bool
    var hasAfWindows: Bool
    var hasLensPosition: Bool
    /// Fastest rate from FrameDurationLimits, 0 when absent.
    var maxFrameRate: Double
    /// The camera's ControlInfoMap (raw controls, and what the mapped controls are built on).
    var controls: [LibCameraControlInfo] = []
    /// Whether AeEnable can be switched both ways: false for a UVC webcam whose auto_exposure
    /// menu lacks Manual or Aperture Priority, the entries libcamera 0.0.3's uvcvideo handler
    /// writes for off and on (it refuses the whole request otherwise).
    var aeSwitchable = true

    /// The exposure control CamHAL offers on this camera (E1).
    var exposureCapabilities: ExposureCapabilities? {
        LibCameraControlMapping.exposureCapabilities(controls, aeSwitchable: aeSwitchable)
    }

    /// Whether the camera has the control called `name` (libcamera's ControlId name).
    func hasControl(_ name: String) -> Bool { controls.contains { $0.name == name } }

    var facing: Facing {
        switch location {
        case 0: return .front
        case 1: return .back
        default: return .external
        }
    }

    /// The rectangle focus windows and crops are relative to.
    var cropReference: SensorRect? {
        if let m = scalerCropMaximum { return m }
        if let p = pixelArraySize { return SensorRect(x: 0, y: 0, width: p.width, height: p.height) }
        return nil
    }
}

/// One viewfinder format list: discrete sizes per pixel format plus each format's range.
struct LibCameraFormats: Sendable {
    var sizes: [(fourcc: UInt32, size: Size)] = []
    var rangeMin: [UInt32: Size] = [:]
    var rangeMax: [UInt32: Size] = [:]
}

/// What libcamera answered about a camera's formats, kept while the camera stays in the manager's
/// list. The answers do not change while a camera is connected, and each costs libcamera a
/// configuration and, for validate(), a TRY_FMT that a UVC camera answers with USB control
/// transfers: every listing asked again for every size of every camera, and a listing of five
/// emulated webcams took up to 10 s in the VM. A camera that leaves the list is forgotten, so a
/// different camera plugged in under a reused ID is asked afresh at the listing that sees it.
struct FormatCache: Sendable {
    struct Key: Hashable, Sendable {
        var camera: String
        var fourcc: UInt32
        var size: Size
    }
    struct Answer: Sendable {
        var fourcc: UInt32
        var size: Size
    }
    var formats: [String: LibCameraFormats] = [:]
    /// validate()'s answer per camera, format and size; `.some(nil)` when it was invalid.
    var validated: [Key: Answer?] = [:]

    /// Forgets every camera not in `cameras`.
    mutating func keep(cameras: Set<String>) {
        formats = formats.filter { cameras.contains($0.key) }
        validated = validated.filter { cameras.contains($0.key.camera) }
    }
}

/// The process-wide libcamera CameraManager, reached through the C++ shim. The shim owns the one
/// manager (a second aborts the process); this enum only turns its callbacks into Swift values.
enum LibCameraManager {
    private static let formatCache = Mutex(FormatCache())

    /// Starts the manager if needed; nil when it runs, else the reason it does not.
    static func start() -> String? {
        var err = [CChar](repeating: 0, count: 512)
        let rc = camhal_lc_manager_start(&err, err.count)
        return rc == 0 ? nil : message(err, fallback: "libcamera CameraManager failed to start (\(rc))")
    }

    static func message(_ buffer: [CChar], fallback: String) -> String {
        let s = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return s.isEmpty ? fallback : s
    }

    /// The enumeration callbacks' context: filled on the calling thread, during the call.
    private final class Box<T> {
        var value: T
        init(_ value: T) { self.value = value }
    }

    /// Every camera the manager knows.
    static func cameras() throws(CameraError) -> [LibCameraInfo] {
        let box = Box([LibCameraInfo]())
        var err = [CChar](repeating: 0, count: 512)
        let rc = withExtendedLifetime(box) {
            camhal_lc_enumerate({ ctx, info in
                guard let ctx, let i = info?.pointee else { return }
                let box = Unmanaged<Box<[LibCameraInfo]>>.fromOpaque(ctx).takeUnretainedValue()
                var modes = Set<Int32>()
                for bit in 0..<32 where i.af_modes & (1 << UInt32(bit)) != 0 { modes.insert(Int32(bit)) }
                box.value.append(LibCameraInfo(
                    id: String(cString: i.id),
                    model: i.model.map { String(cString: $0) },
                    location: i.location >= 0 ? Int(i.location) : nil,
                    rotation: i.rotation >= 0 ? Int(i.rotation) : nil,
                    pixelArraySize: i.pixel_array_width > 0
                        ? Size(width: Int(i.pixel_array_width), height: Int(i.pixel_array_height)) : nil,
                    scalerCropMaximum: i.has_scaler_crop != 0
                        ? SensorRect(x: Int(i.crop_max_x), y: Int(i.crop_max_y), width: Int(i.crop_max_width), height: Int(i.crop_max_height))
                        : nil,
                    scalerCropMinimum: i.crop_min_width > 0
                        ? Size(width: Int(i.crop_min_width), height: Int(i.crop_min_height)) : nil,
                    afModes: modes,
                    hasAfTrigger: i.has_af_trigger != 0,
                    hasAfWindows: i.has_af_windows != 0,
                    hasLensPosition: i.has_lens_position != 0,
                    maxFrameRate: i.max_frame_rate))
            }, Unmanaged.passUnretained(box).toOpaque(), &err, err.count)
        }
        if rc < 0 {
            throw CameraError.backendUnavailable(backend: "libcamera", reason: message(err, fallback: "enumeration failed (\(rc))"))
        }
        formatCache.locked { $0.keep(cameras: Set(box.value.map(\.id))) }
        return box.value.map { info in
            var info = info
            info.controls = controls(cameraID: info.id)
            info.aeSwitchable = LibCameraControlMapping.aeSwitchable(
                autoExposureEntries: UVCNode.captureNode(libcameraID: info.id).flatMap(UVCNode.autoExposureEntries(node:)))
            return info
        }
    }

    /// The ControlInfoMap of one camera, in ID order (no acquire); empty when it cannot be read.
    static func controls(cameraID: String) -> [LibCameraControlInfo] {
        let box = Box([LibCameraControlInfo]())
        var err = [CChar](repeating: 0, count: 512)
        _ = withExtendedLifetime(box) {
            camhal_lc_controls(cameraID, { ctx, info in
                guard let ctx, let i = info?.pointee else { return }
                let values = i.value_count > 0 && i.values != nil ? Array(UnsafeBufferPointer(start: i.values, count: Int(i.value_count))) : []
                Unmanaged<Box<[LibCameraControlInfo]>>.fromOpaque(ctx).takeUnretainedValue().value.append(LibCameraControlInfo(
                    id: i.id, name: i.name.map { String(cString: $0) } ?? "Control \(i.id)",
                    type: LibCameraControlType(rawValue: i.type) ?? .none, elements: i.elements, numeric: i.numeric != 0,
                    minimum: i.minimum, maximum: i.maximum, defaultValue: i.default_value, values: values))
            }, Unmanaged.passUnretained(box).toOpaque(), &err, err.count)
        }
        return box.value
    }

    /// The current numbers of control `id`: from the newest completed request's metadata, else
    /// the value stored for the camera; nil when neither is known.
    static func controlValue(cameraID: String, id: UInt32) -> [Double]? {
        var values = [Double](repeating: 0, count: 16)
        var count: UInt32 = 0
        let rc = camhal_lc_control_value(cameraID, id, &values, UInt32(values.count), &count)
        return rc > 0 ? Array(values.prefix(Int(min(count, 16)))) : nil
    }

    /// What libcamera really configures for `fourcc` at `size` (validate(), no acquire); nil when
    /// the combination is invalid.
    static func validated(cameraID: String, fourcc: UInt32, size: Size) -> (fourcc: UInt32, size: Size)? {
        let key = FormatCache.Key(camera: cameraID, fourcc: fourcc, size: size)
        if let known = formatCache.locked({ $0.validated[key] }) { return known.map { ($0.fourcc, $0.size) } }
        let answer = validatedUncached(cameraID: cameraID, fourcc: fourcc, size: size)
        formatCache.locked { $0.validated[key] = .some(answer.map { FormatCache.Answer(fourcc: $0.fourcc, size: $0.size) }) }
        return answer
    }

    private static func validatedUncached(cameraID: String, fourcc: UInt32, size: Size) -> (fourcc: UInt32, size: Size)? {
        var f: UInt32 = 0, w: UInt32 = 0, h: UInt32 = 0
        let rc = camhal_lc_validate(cameraID, fourcc, UInt32(size.width), UInt32(size.height), &f, &w, &h, nil, 0)
        guard rc >= 0, w > 0, h > 0 else { return nil }
        return (f, Size(width: Int(w), height: Int(h)))
    }

    /// The viewfinder formats of one camera (no acquire, no streaming).
    static func formats(cameraID: String) throws(CameraError) -> LibCameraFormats {
        if let known = formatCache.locked({ $0.formats[cameraID] }) { return known }
        let formats = try formatsUncached(cameraID: cameraID)
        formatCache.locked { $0.formats[cameraID] = formats }
        return formats
    }

    private static func formatsUncached(cameraID: String) throws(CameraError) -> LibCameraFormats {
        let box = Box(LibCameraFormats())
        var err = [CChar](repeating: 0, count: 512)
        let rc = withExtendedLifetime(box) {
            camhal_lc_formats(
                cameraID,
                { ctx, fourcc, w, h in
                    guard let ctx else { return }
                    Unmanaged<Box<LibCameraFormats>>.fromOpaque(ctx).takeUnretainedValue()
                        .value.sizes.append((fourcc, Size(width: Int(w), height: Int(h))))
                },
                { ctx, fourcc, w, h in
                    guard let ctx else { return }
                    Unmanaged<Box<LibCameraFormats>>.fromOpaque(ctx).takeUnretainedValue()
                        .value.rangeMin[fourcc] = Size(width: Int(w), height: Int(h))
                },
                { ctx, fourcc, w, h in
                    guard let ctx else { return }
                    Unmanaged<Box<LibCameraFormats>>.fromOpaque(ctx).takeUnretainedValue()
                        .value.rangeMax[fourcc] = Size(width: Int(w), height: Int(h))
                },
                Unmanaged.passUnretained(box).toOpaque(), &err, err.count)
        }
        if rc < 0 {
            throw CameraError.configurationFailed("formats of libcamera camera '\(cameraID)': \(message(err, fallback: "error \(rc)"))")
        }
        return box.value
    }
}
#endif
