import CamHAL
import CV4L2
import Glibc

/// Device discovery (D2, K1): every /sys/class/video4linux node that captures video with
/// streaming I/O, as one CamHAL device per (node, non-tuner input).
///
/// Inputs: a node with several inputs (vivid: webcam, S-Video, HDMI) is listed once per input,
/// with id `<node-id>#input=N` and the input's name in the device name, because inputs differ in
/// what they can do (vivid crops on HDMI, not on its webcam input). TV-tuner inputs are skipped:
/// a tuner is not a camera. A node with one input keeps the plain id.
package enum V4L2Discovery {
    /// Keys of `DeviceDescriptor.details` this backend sets and reads back in `bind`.
    package enum Key {
        static let node = "node", input = "input", inputName = "inputName", driver = "driver", card = "card"
        static let bus = "bus", media = "media", pipeline = "pipeline", lens = "lensSubdev", flash = "flashSubdev"
        package static let zoomControl = "zoomControl", focusControls = "focusControls"
        static let error = "error"
        package static let panTilt = "panTilt"
    }

    /// Capture nodes in `/dev` by kernel name, sorted by number (`video0`, `video10`...).
    static func videoNodeNames(sysfs: String = "/sys/class/video4linux", dev: String = "/dev") -> [String] {
        var names = listDirectory(sysfs).filter { $0.hasPrefix("video") }
        if names.isEmpty { names = listDirectory(dev).filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil } }
        return names.sorted { (Int($0.dropFirst(5)) ?? 0, $0) < (Int($1.dropFirst(5)) ?? 0, $1) }
    }

    /// The capture nodes that can carry the device `id`, found without opening any node: a USB
    /// ID (`usb-...-video-index<N>`) is matched against its by-id link's node, else each node's sysfs name, a
    /// `<bus_info>/<node>[#input=N]` ID names its node, a udev link's name the node it points
    /// at. Empty for any other ID: the caller discovers every node then. A node matched by its USB ID comes
    /// with the USB facts read to match it, which describing the node needs again.
    static func candidateNodes(forID id: String, sysfs: String = "/sys/class/video4linux", dev: String = "/dev") -> [(node: String, usb: USBIdentity?)] {
        if id.hasPrefix("usb-") {
            // udev's by-id link of that name points at the node: checked against sysfs (a link
            // can be stale after a replug), it spares reading every other node's USB ancestry
            // (about a hundred system calls in the VM, with vivid's eleven nodes beside a webcam).
            // Without udevd, or when the link is wrong, every node's sysfs name is compared.
            if let target = linkTarget("\(dev)/v4l/by-id/\(id)"), let slash = target.lastIndex(of: "/") {
                let node = String(target[target.index(after: slash)...])
                if node.hasPrefix("video"), let usb = usbIdentity(nodeName: node, sysfsClass: sysfs), usb.byIDName == id { return [(node, usb)] }
            }
            return videoNodeNames(sysfs: sysfs, dev: dev).compactMap { node in
                usbIdentity(nodeName: node, sysfsClass: sysfs).flatMap { $0.byIDName == id ? (node, $0) : nil }
            }
        }
        let base = id.split(separator: "#", maxSplits: 1).first.map(String.init) ?? id
        guard let slash = base.lastIndex(of: "/") else {
            // A udev link's name (a platform camera's by-path link): the node it points at, which
            // describing checks (the ID is made from the links again).
            for dir in ["by-path", "by-id"] {
                if let target = linkTarget("\(dev)/v4l/\(dir)/\(base)"), let end = target.lastIndex(of: "/") {
                    let node = String(target[target.index(after: end)...])
                    if node.hasPrefix("video"), Int(node.dropFirst(5)) != nil { return [(node, nil)] }
                }
            }
            return []
        }
        let node = String(base[base.index(after: slash)...])
        guard node.hasPrefix("video"), Int(node.dropFirst(5)) != nil else { return [] }
        return [(node, nil)]
    }

    /// The input an ID names (`...#input=N`), nil for an ID without one.
    static func input(inID id: String) -> UInt32? {
        afterLast("#input=", in: id).flatMap { UInt32($0.rest) }
    }

    /// What follows the last `marker` in `s`, and how many bytes precede the marker; nil when `s`
    /// has none. On UTF-8 bytes: `ranges(of:)` is _StringProcessing's, whose first use costs a
    /// process about 300,000 instructions, on the way to the first frame of a camera opened by ID.
    static func afterLast(_ marker: String, in s: String) -> (bytesBefore: Int, rest: Substring)? {
        let hay = Array(s.utf8), needle = Array(marker.utf8)
        guard !needle.isEmpty, hay.count >= needle.count else { return nil }
        for i in stride(from: hay.count - needle.count, through: 0, by: -1) where hay[i..<(i + needle.count)].elementsEqual(needle) {
            return (i, s[s.utf8.index(s.utf8.startIndex, offsetBy: i + needle.count)...])
        }
        return nil
    }

    /// Whether `id` has the form of a USB camera's stable ID (`usb-<vendor>_<model>[_<serial>]-video-index<N>`).
    static func isUSBID(_ id: String) -> Bool {
        guard id.hasPrefix("usb-"), let (before, index) = afterLast("-video-index", in: id) else { return false }
        return !index.isEmpty && index.allSatisfy(\.isNumber) && before > 4
    }

    /// A stable id. A USB camera: the name udev gives its /dev/v4l/by-id link, built from sysfs
    /// (`usbIdentity`), so the ID survives a replug where the node number may change, needs no
    /// udevd, and is the same in a hot-plug event that arrives before udev made the link. Else the
    /// /dev/v4l/by-id or by-path link naming the node; else `<bus_info>/<node>` (platform devices
    /// such as vivid and vimc, whose bus info never changes). `usb`: the node's USB facts (nil:
    /// not on USB).
    static func stableID(nodePath: String, nodeName: String, busInfo: String, usb: USBIdentity?) -> String {
        if let usb { return usb.byIDName }
        for dir in ["/dev/v4l/by-id", "/dev/v4l/by-path"] {
            for link in listDirectory(dir).sorted() where linkTarget("\(dir)/\(link)") == nodePath {
                return link
            }
        }
        return busInfo.isEmpty ? nodeName : "\(busInfo)/\(nodeName)"
    }

    /// What sysfs says of a USB video node, read once for its ID and its name.
    struct USBIdentity: Equatable {
        /// The /dev/v4l/by-id link name udev's 60-persistent-v4l.rules gives the node.
        let byIDName: String
        /// The USB product string as sysfs holds it, for `displayName`.
        let product: String?
    }

    /// The /dev/v4l/by-id link name udev's 60-persistent-v4l.rules gives a USB video node:
    /// `usb-<vendor>_<model>[_<serial>]-video-index<index>`, where vendor is the USB manufacturer
    /// string (else idVendor in hex), model the product string (else idProduct), serial the
    /// serial string when there is one, each with whitespace runs turned into one `_` and other
    /// characters outside `0-9A-Za-z#+-.:=@_` turned into `_` (udev's usb_id). Nil for a node not
    /// on USB (no ancestor with `idVendor`).
    static func usbByIDName(nodeName: String, sysfsClass: String = "/sys/class/video4linux") -> String? {
        usbIdentity(nodeName: nodeName, sysfsClass: sysfsClass)?.byIDName
    }

    /// The node's `usbByIDName` and product string, each sysfs attribute read once; nil for a
    /// node not on USB.
    static func usbIdentity(nodeName: String, sysfsClass: String = "/sys/class/video4linux") -> USBIdentity? {
        guard let index = readTextFile("\(sysfsClass)/\(nodeName)/index")?.trimmingSpaces,
              let dir = usbDeviceDirectory(nodeName: nodeName, sysfsClass: sysfsClass) else { return nil }
        let product = readTextFile("\(dir)/product")
        func attribute(_ name: String) -> String? {
            guard let v = readTextFile("\(dir)/\(name)").map(udevSanitized), !v.isEmpty else { return nil }
            return v
        }
        guard let vendor = attribute("manufacturer") ?? attribute("idVendor"),
              let model = product.map(udevSanitized).flatMap({ $0.isEmpty ? nil : $0 }) ?? attribute("idProduct") else { return nil }
        let serial = attribute("serial").map { "_\($0)" } ?? ""
        return USBIdentity(byIDName: "usb-\(vendor)_\(model)\(serial)-video-index\(index)", product: product)
    }

    /// The sysfs directory of the device a video node belongs to (its `device` link, followed:
    /// a USB interface, a platform device): two link reads, the class entry then its `device`.
    static func sysfsDevice(nodeName: String, sysfsClass: String = "/sys/class/video4linux") -> String? {
        guard let node = linkTarget("\(sysfsClass)/\(nodeName)", leadsToLink: false) else { return nil }
        return linkTarget("\(node)/device", leadsToLink: false)
    }

    /// The sysfs directory of the USB device a video node belongs to (the ancestor of its
    /// interface with `idVendor`); nil for a node not on USB.
    static func usbDeviceDirectory(nodeName: String, sysfsClass: String = "/sys/class/video4linux") -> String? {
        guard var dir = sysfsDevice(nodeName: nodeName, sysfsClass: sysfsClass) else { return nil }
        while access("\(dir)/idVendor", F_OK) != 0 {
            guard let slash = dir.lastIndex(of: "/"), slash != dir.startIndex else { return nil }
            dir = String(dir[..<slash])
        }
        return dir
    }

    /// The name to show for a node: the V4L2 card name, or the USB product string when the card
    /// is a cut copy of it. The card field holds 31 bytes, and uvcvideo fills it with
    /// "<product>: <interface name>", so a longer one ends mid-word ("ELP 4K USB Camera: ELP 4K
    /// USB C") while sysfs keeps the product whole (udev's ID_MODEL is the same string with
    /// spaces turned into `_`).
    static func displayName(card: String, usbProduct: String?) -> String {
        guard let product = usbProduct?.trimmingSpaces, !product.isEmpty, product != card,
              card.utf8.count >= 31, product.hasPrefix(card) || card.hasPrefix(product + ":")
        else { return card }
        return product
    }

    /// `displayName(card:usbProduct:)` with the product string read from sysfs for the node
    /// `nodeName` ("video2"); the card when the node is not on USB. Any backend that lists a
    /// V4L2 node by its card (GStreamer's v4l2 device provider) names it the same way.
    package static func displayName(card: String, nodeName: String) -> String {
        displayName(card: card, usbProduct: usbDeviceDirectory(nodeName: nodeName).flatMap { readTextFile("\($0)/product") })
    }

    /// udev's `udev_replace_whitespace` then `udev_replace_chars` on a sysfs string, on its bytes
    /// as udev works: runs of ASCII white space (udev's `isspace`) become one `_` and go at either
    /// end, ASCII outside `0-9A-Za-z#+-.:=@_` becomes `_`, other UTF-8 is kept. (A `Set` of
    /// `Character`s cost 45,000 instructions a call, on the way to a webcam's first frame.)
    static func udevSanitized(_ raw: String) -> String {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
        func isAllowed(_ b: UInt8) -> Bool {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): true
            case UInt8(ascii: "#"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "="),
                 UInt8(ascii: "@"), UInt8(ascii: "_"): true
            default: b >= 0x80
            }
        }
        var out: [UInt8] = []
        var pendingSpace = false
        for b in raw.utf8 {
            if isSpace(b) {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(UInt8(ascii: "_")) }
            pendingSpace = false
            out.append(isAllowed(b) ? b : UInt8(ascii: "_"))
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct Capabilities {
        let driver: String, card: String, bus: String, deviceCaps: UInt32
        var isVideoCapture: Bool {
            deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0
                && deviceCaps & UInt32(V4L2_CAP_STREAMING) != 0
        }
        var isSinglePlanar: Bool { deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
        var isMediaControlled: Bool { deviceCaps & UInt32(V4L2_CAP_IO_MC) != 0 }
    }

    static func queryCapabilities(_ fd: DeviceFD) throws(V4L2Errno) -> Capabilities {
        var cap = v4l2_capability()
        try fd.ioctl(UInt(CAMHAL_VIDIOC_QUERYCAP), &cap, "VIDIOC_QUERYCAP")
        let caps = cap.capabilities & UInt32(bitPattern: Int32(truncatingIfNeeded: V4L2_CAP_DEVICE_CAPS)) != 0 ? cap.device_caps : cap.capabilities
        return Capabilities(driver: cString(cap.driver), card: cString(cap.card), bus: cString(cap.bus_info), deviceCaps: caps)
    }

    struct Input { let index: UInt32; let name: String; let type: UInt32 }

    static func inputs(_ fd: DeviceFD) -> [Input] {
        var result: [Input] = []
        var i: UInt32 = 0
        while i < 64 {
            var e = v4l2_input()
            e.index = i
            guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_ENUMINPUT), &e, "VIDIOC_ENUMINPUT")) != nil else { break }
            result.append(Input(index: i, name: cString(e.name), type: e.type))
            i += 1
        }
        return result
    }

    static func currentInput(_ fd: DeviceFD) -> UInt32? {
        var i: Int32 = 0
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_G_INPUT), &i, "VIDIOC_G_INPUT")) != nil else { return nil }
        return UInt32(i)
    }

    static func selectInput(_ fd: DeviceFD, _ index: UInt32) throws(V4L2Errno) {
        var i = Int32(index)
        try fd.ioctl(UInt(CAMHAL_VIDIOC_S_INPUT), &i, "VIDIOC_S_INPUT(\(index))")
    }

    /// The selection target's rectangle, or nil when the device has no such selection.
    static func selection(_ fd: DeviceFD, target: Int32) -> v4l2_rect? {
        var s = v4l2_selection()
        s.type = V4L2Formats.captureType
        s.target = UInt32(target)
        guard (try? fd.ioctl(UInt(CAMHAL_VIDIOC_G_SELECTION), &s, "VIDIOC_G_SELECTION")) != nil else { return nil }
        return s.r
    }

    /// The zoom control and its mapping, for the device details.
    package static func zoomDescription(_ z: ControlInfo) -> String {
        let m = ZoomControlMapping(minimum: z.minimum, maximum: z.maximum, ceiling: ZoomMath.cap)
        let mapping = m.isFocalLength
            ? "ratio = value / \(z.minimum): 1x...\(ZoomMath.format(m.maximumFactor))x"
            : "linear, \(z.minimum) = 1x, \(z.maximum) = \(ZoomMath.format(ZoomMath.cap))x"
        return "ZOOM_ABSOLUTE \(z.minimum)...\(z.maximum) (\(mapping))"
    }

    /// Focus modes a set of focus controls allows (F2). `auto` (one sweep, then hold) needs
    /// AUTO_FOCUS_START: UVC webcams have only FOCUS_AUTO (focus_automatic_continuous), which is
    /// continuous focus, so they do not list it.
    package static func focusModes(auto: Bool, absolute: Bool, start: Bool) -> [FocusMode] {
        var modes: [FocusMode] = []
        if auto { modes.append(.continuous) }
        if start { modes.append(.auto) }
        if auto || absolute || start { modes.append(.locked) }
        if absolute { modes.append(.manual) }
        return modes
    }

    /// Every capture device. Nodes that cannot be opened for lack of permission are still listed
    /// (their primary node only), so that binding them reports the remedy (R4).
    static func devices(backend: String) -> [DeviceDescriptor] {
        let graphs = MediaGraph.all()
        var result: [DeviceDescriptor] = []
        for name in videoNodeNames() {
            let path = "/dev/\(name)"
            result += describeNode(path: path, name: name, graphs: graphs, backend: backend)
        }
        return result
    }

    /// Every format of `path` (on `input`, when the node has several): what a descriptor's
    /// `formats` holds, listed when first read rather than when the device is described, so
    /// opening a camera for its first frame never waits for it (vivid answers about 2,000
    /// enumeration calls). The input is selected for the listing and the node's current one
    /// restored; an input that cannot be selected (another process streams the node) lists nothing.
    static func listFormats(path: String, input: UInt32?, mbusCodes: [UInt32]?) -> [FormatDescription] {
        guard let fd = try? DeviceFD(path: path) else { return [] }
        defer { fd.close() }
        let original = input == nil ? nil : currentInput(fd)
        if let input, input != original {
            guard (try? selectInput(fd, input)) != nil else { return [] }
        }
        defer { if let input, let original, input != original { try? selectInput(fd, original) } }
        return V4L2Formats.describe(fd, mbusCodes: mbusCodes)
    }

    /// The devices of the node at `path`: one per camera input (`#input=N` IDs) when it has
    /// several, else one. `onlyInput` describes that input alone (an ID naming it is being
    /// opened: selecting and querying the others would only delay its first frame).
    /// `usb`: the node's USB facts when the caller has read them (finding a node by its USB ID
    /// does), else read here. `handOff`: the descriptors carry the node, left open for their
    /// bind (`OpenedNode`), for a device being opened; else it is closed here.
    static func describeNode(
        path: String, name: String, graphs: [MediaGraph], backend: String, onlyInput: UInt32? = nil, usb known: USBIdentity? = nil,
        handOff: Bool = false
    ) -> [DeviceDescriptor] {
        let fd: DeviceFD
        do {
            fd = try DeviceFD(path: path)
        } catch {
            guard error.code == EACCES || error.code == EPERM,
                  readTextFile("/sys/class/video4linux/\(name)/index")?.trimmingSpaces == "0" else { return [] }
            let card = readTextFile("/sys/class/video4linux/\(name)/name")?.trimmingSpaces ?? name
            return [DeviceDescriptor(
                id: stableID(nodePath: path, nodeName: name, busInfo: "", usb: known ?? usbIdentity(nodeName: name)), name: card, backend: backend, facing: .external,
                lenses: DeviceDescriptor.singleLens(facing: .external), formats: [],
                details: [Key.node: path, Key.error: error.cameraError(device: path).description])]
        }
        var opened: OpenedNode?
        defer { if opened == nil { fd.close() } }
        guard let caps = try? queryCapabilities(fd), caps.isVideoCapture, caps.isSinglePlanar else { return [] }
        var st = stat()
        guard fstat(fd.raw, &st) == 0 else { return [] }
        if handOff { opened = OpenedNode(fd, deviceNumber: UInt64(st.st_rdev)) }
        let major = camhal_major(UInt64(st.st_rdev)), minor = camhal_minor(UInt64(st.st_rdev))
        let usb = known ?? usbIdentity(nodeName: name)
        let baseID = stableID(nodePath: path, nodeName: name, busInfo: caps.bus, usb: usb)

        var details: [String: String] = [Key.node: path, Key.driver: caps.driver, Key.card: caps.card, Key.bus: caps.bus]
        // Media controller: the upstream pipeline (vimc), the sensor's lens and flash.
        var pipeline: MediaPipeline?
        var lensNode: String?, flashNode: String?
        if let (graph, _, p) = MediaPipeline.find(major: major, minor: minor, graphs: graphs) {
            details[Key.media] = graph.path
            pipeline = p
            if let p {
                details[Key.pipeline] = p.summary
                let sensor = p.stages[0].entity
                lensNode = graph.ancillary(of: sensor, function: UInt32(MEDIA_ENT_F_LENS)).first.flatMap(graph.node(of:))
                flashNode = graph.ancillary(of: sensor, function: UInt32(MEDIA_ENT_F_FLASH)).first.flatMap(graph.node(of:))
            }
        }
        if let lensNode { details[Key.lens] = lensNode }
        let flash = flashNode.flatMap { try? DeviceFD(path: $0) }
        defer { flash?.close() }
        let torchOnFlash = flash?.queryControl(ControlID.flashLEDMode).map { $0.maximum >= Int64(V4L2_FLASH_LED_MODE_TORCH.rawValue) } ?? false
        if torchOnFlash, let flashNode { details[Key.flash] = flashNode }

        let allInputs = caps.isMediaControlled ? [] : inputs(fd)
        let cameraInputs = allInputs.filter { $0.type != UInt32(V4L2_INPUT_TYPE_TUNER) }
        let original = currentInput(fd)
        defer { if let original, allInputs.count > 1 { try? selectInput(fd, original) } }
        var perInput: [Input?] = cameraInputs.count > 1 ? cameraInputs : [nil]
        if let onlyInput, cameraInputs.count > 1 { perInput = cameraInputs.filter { $0.index == onlyInput } }

        var result: [DeviceDescriptor] = []
        for input in perInput {
            var d = details
            var id = baseID
            var displayName = Self.displayName(card: caps.card, usbProduct: usb?.product)
            if let input {
                // Another process streaming the node refuses S_INPUT: list the current input only.
                if input.index != original {
                    guard (try? selectInput(fd, input.index)) != nil else { continue }
                }
                id += "#input=\(input.index)"
                displayName += " (\(input.name))"
                d[Key.input] = String(input.index)
                d[Key.inputName] = input.name
            } else if let only = cameraInputs.first ?? allInputs.first {
                d[Key.inputName] = only.name
            }
            let lens = lensNode.flatMap { try? DeviceFD(path: $0) }
            let controls = lens.map { V4L2CameraControls(node: fd, focus: $0, focusOnSubdevice: true) }
                ?? V4L2CameraControls(node: fd, focus: fd, focusOnSubdevice: false)
            lens?.close()
            d.merge(controls.details) { _, new in new }
            let zoomMethod: ZoomMethod
            if controls.zoom != nil {
                zoomMethod = .optical
            } else if let bounds = selection(fd, target: V4L2_SEL_TGT_CROP_BOUNDS), selection(fd, target: V4L2_SEL_TGT_CROP) != nil {
                // uvcvideo answers CROP_BOUNDS/CROP_DEFAULT but has no CROP target (no S_SELECTION):
                // only a driver that reports its current crop can be cropped.
                zoomMethod = .sensorCrop
                d[Key.zoomControl] = "selection crop, bounds \(bounds.width)x\(bounds.height)"
            } else {
                zoomMethod = .frameCrop
            }
            let image = controls.image
            var descriptor = DeviceDescriptor(
                id: id, name: displayName, backend: backend, facing: .external,
                lenses: DeviceDescriptor.singleLens(facing: .external),
                hasTorch: torchOnFlash || controls.torchOnNode, supportsFocusPoint: false,
                focusModes: controls.focusModes,
                formats: [], zoomMethod: zoomMethod, isExclusive: true, details: d,
                exposure: image.exposureCapabilities, whiteBalance: image.whiteBalanceCapabilities,
                antiFlickerModes: image.antiFlickerModes.isEmpty ? nil : image.antiFlickerModes)
                // The pipeline's output codes with the formats, when first read: finding them
                // tries each code through the pipeline (vimc: about 5,000 sub-device calls), which
                // listing the devices need not pay.
                .withFormats(loadedBy: { [pipeline, index = input?.index] in
                    listFormats(path: path, input: index, mbusCodes: pipeline?.outputCodes)
                })
            // The bind maps these same controls: it reuses them instead of asking again.
            descriptor.backendContext = BackendContext(DescribedNode(controls: controls, opened: opened))
            result.append(descriptor)
        }
        return result
    }
}

/// What a node's camera controls make of it (K1), found through any `V4L2ControlAccess` (a V4L2
/// node, or the pipewire backend's v4l2 node): ZOOM_ABSOLUTE (optical zoom), the focus modes its
/// focus controls allow, a torch on FLASH_LED_MODE, pan/tilt listed in the details, and the
/// exposure, white-balance and anti-flicker controls.
package struct V4L2CameraControls: Sendable {
    /// ZOOM_ABSOLUTE, when the node has it.
    package let zoom: ControlInfo?
    package let focusModes: [FocusMode]
    /// FLASH_LED_MODE on the node itself reaches TORCH.
    package let torchOnNode: Bool
    /// `zoomControl`, `focusControls` and `panTilt` entries for `DeviceDescriptor.details`.
    package let details: [String: String]
    package let image: V4L2ImageControls
    /// FOCUS_AUTO and FOCUS_ABSOLUTE where they were found, and whether that is a lens
    /// sub-device rather than the node.
    package let focusAuto: Bool
    package let focusAbsolute: ControlInfo?
    /// AUTO_FOCUS_START, where the focus controls were found.
    package let focusStart: Bool
    package let focusOnSubdevice: Bool

    /// The controls of `node`, its focus controls on `focus` (a lens sub-device, or the node).
    package init(node: some V4L2ControlAccess, focus: some V4L2ControlAccess, focusOnSubdevice: Bool) {
        var d: [String: String] = [:]
        let fAuto = focus.queryControl(ControlID.focusAuto) != nil
        let fAbs = focus.queryControl(ControlID.focusAbsolute)
        let fStart = focus.queryControl(ControlID.autoFocusStart) != nil
        if fAuto || fAbs != nil || fStart {
            let found = [fAuto ? "FOCUS_AUTO" : nil, fAbs.map { "FOCUS_ABSOLUTE \($0.minimum)...\($0.maximum)" }, fStart ? "AUTO_FOCUS_START" : nil]
            d[V4L2Discovery.Key.focusControls] = joinedText(found.compactMap { $0 }, separator: ", ") + (focusOnSubdevice ? " (lens sub-device)" : "")
        }
        focusModes = V4L2Discovery.focusModes(auto: fAuto, absolute: fAbs != nil, start: fStart)
        focusAuto = fAuto
        focusStart = fStart
        focusAbsolute = fAbs
        self.focusOnSubdevice = focusOnSubdevice
        zoom = node.queryControl(ControlID.zoomAbsolute)
        if let z = zoom { d[V4L2Discovery.Key.zoomControl] = V4L2Discovery.zoomDescription(z) }
        // PTZ: pan/tilt have no place in the zoom/focus model; listed so apps can see them.
        let ptz = ControlID.panTilt.compactMap { c in
            node.queryControl(c.id).map { "\(c.name) \($0.minimum)...\($0.maximum) (\(c.unit))" }
        }
        if !ptz.isEmpty { d[V4L2Discovery.Key.panTilt] = joinedText(ptz, separator: ", ") }
        torchOnNode = node.queryControl(ControlID.flashLEDMode).map { $0.maximum >= Int64(V4L2_FLASH_LED_MODE_TORCH.rawValue) } ?? false
        image = V4L2ImageControls(node)
        details = d
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
