import CamHAL
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `camhal probe` adds for planning several cameras: who has each device node open, the USB
/// bus and port of a USB camera, and each uncompressed format's bus bandwidth.
enum ProbeUSB {
    /// A USB camera's place on the bus, from sysfs.
    struct Port: Codable, Equatable {
        /// The bus number (`lsusb`'s "Bus 001").
        var bus: Int
        /// The port path on that bus (`1`, `1.4` behind a hub).
        var port: String
        /// The link speed in Mbit/s (480 high speed), when sysfs says.
        var speedMbps: Double?

        var description: String {
            "USB bus \(bus) port \(port)" + (speedMbps.map { " (\(ZoomMath.format($0)) Mbit/s)" } ?? "")
        }
    }

    /// The USB port of the capture node `node` (`/dev/video2`): its sysfs device is a USB
    /// interface whose parent is the USB device with `busnum` and `devpath`. Nil when the node is
    /// not on USB.
    static func port(node: String, sysfs: String = "/sys/class/video4linux") -> Port? {
        let name = URL(fileURLWithPath: node).lastPathComponent
        guard let resolved = realpath("\(sysfs)/\(name)/device", nil) else { return nil }
        defer { free(resolved) }
        let interface = String(cString: resolved)
        let usbDevice = URL(fileURLWithPath: interface).deletingLastPathComponent().path
        func read(_ file: String) -> String? {
            (try? String(contentsOfFile: "\(usbDevice)/\(file)", encoding: .utf8)).map { trimmingWhitespace($0) }
        }
        guard let bus = read("busnum").flatMap(Int.init), let devpath = read("devpath"), !devpath.isEmpty else { return nil }
        return Port(bus: bus, port: devpath, speedMbps: read("speed").flatMap(Double.init))
    }

    /// The device node a descriptor names (`details["node"]` of V4L2 and libcamera devices).
    static func node(_ details: [String: String]) -> String? {
        guard let n = details["node"], n.hasPrefix("/dev/") else { return nil }
        return n
    }
}
