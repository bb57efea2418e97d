import CV4L2
import Glibc

/// The V4L2 side of a USB webcam another backend drives (libcamera's uvcvideo pipeline handler):
/// which auto-exposure modes its `auto_exposure` menu really has. libcamera 0.0.3 maps
/// `AeEnable` on to Aperture Priority and off to Manual, whatever the menu offers, and a
/// webcam without those entries refuses the request.
package enum UVCNode {
    /// The capture node (index 0) of the USB video interface libcamera 0.0.3 names `cameraID`:
    /// "<controller>-<usb id>-<idVendor>:<idProduct>", the USB ID being the interface's sysfs
    /// name without its bus ("2.4:1.0" for "3-2.4:1.0"; its uvcvideo handler's generateId). Nil
    /// when no node matches (not a UVC camera).
    package static func captureNode(libcameraID cameraID: String, sysfsClass: String = "/sys/class/video4linux") -> String? {
        for name in listDirectory(sysfsClass).sorted() where name.hasPrefix("video") {
            guard readTextFile("\(sysfsClass)/\(name)/index")?.trimmingSpaces == "0",
                  let interface = resolvedPath("\(sysfsClass)/\(name)/device"),
                  let usb = V4L2Discovery.usbDeviceDirectory(nodeName: name, sysfsClass: sysfsClass),
                  let vid = readTextFile("\(usb)/idVendor")?.trimmingSpaces,
                  let pid = readTextFile("\(usb)/idProduct")?.trimmingSpaces
            else { continue }
            if let usbID = usbID(interfacePath: interface), cameraID.hasSuffix("-\(usbID)-\(vid):\(pid)") { return "/dev/\(name)" }
        }
        return nil
    }

    /// libcamera's USB ID of an interface's sysfs path: its name without the bus ("…/3-2.4:1.0"
    /// gives "2.4:1.0").
    static func usbID(interfacePath: String) -> String? {
        guard let base = interfacePath.split(separator: "/").last, let dash = base.firstIndex(of: "-") else { return nil }
        let id = base[base.index(after: dash)...]
        return id.isEmpty ? nil : String(id)
    }

    /// The `auto_exposure` menu entries (V4L2_EXPOSURE_*: 0 auto, 1 manual, 2 shutter priority,
    /// 3 aperture priority) of `node`; nil when it cannot be opened or has no such control.
    package static func autoExposureEntries(node: String) -> [Int32]? {
        guard let fd = try? DeviceFD(path: node) else { return nil }
        defer { fd.close() }
        guard let menu = fd.queryControl(V4L2ImageControls.exposureAutoID) else { return nil }
        return V4L2ImageControls.menuEntries(fd, menu, 0...3)
    }

    /// The current `auto_exposure` value (V4L2_EXPOSURE_*) of `node`; nil when it cannot be read.
    package static func autoExposure(node: String) -> Int32? {
        guard let fd = try? DeviceFD(path: node) else { return nil }
        defer { fd.close() }
        return try? fd.getControl(V4L2ImageControls.exposureAutoID)
    }
}
