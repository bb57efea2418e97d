import CV4L2
import Glibc

/// Whether an open capture node's device still exists (S7).
///
/// USB webcams do not say "disconnected" in one clear way: after an unplug uvcvideo answers
/// DQBUF and QBUF with EINVAL (its queue was cancelled), not ENODEV, and poll() gives POLLERR.
/// Those answers also have other causes, so the binding asks here before choosing between
/// `disconnected` and a stream failure: the V4L2 core answers ENODEV to every ioctl once the
/// video device is unregistered (vivid's `disconnect` control does only this), and the node's
/// character device leaves /sys/dev/char when the driver lets go of it (USB disconnect).
struct NodePresence: Sendable {
    /// `/sys/dev/char/<major>:<minor>` of the node, taken when it was opened.
    let sysfsEntry: String?

    /// The presence of the node open as `fd` (its device number is read now, while it exists).
    init(fd: DeviceFD, sysfsRoot: String = "/sys/dev/char") {
        var st = stat()
        if fstat(fd.raw, &st) == 0 {
            self.init(deviceNumber: UInt64(st.st_rdev), sysfsRoot: sysfsRoot)
        } else {
            self.init(sysfsEntry: nil)
        }
    }

    /// The presence of the node with device number `deviceNumber` (`st_rdev`), read while it existed.
    init(deviceNumber: UInt64, sysfsRoot: String = "/sys/dev/char") {
        sysfsEntry = "\(sysfsRoot)/\(camhal_major(deviceNumber)):\(camhal_minor(deviceNumber))"
    }

    init(sysfsEntry: String?) { self.sysfsEntry = sysfsEntry }

    /// True when the device behind `fd` is gone: VIDIOC_QUERYCAP fails with ENODEV (or the
    /// descriptor is closed), or the node's sysfs entry has disappeared.
    func isGone(_ fd: DeviceFD) -> Bool {
        var cap = v4l2_capability()
        do {
            try fd.ioctl(UInt(CAMHAL_VIDIOC_QUERYCAP), &cap, "VIDIOC_QUERYCAP")
        } catch {
            if error.code == ENODEV || error.code == EBADF { return true }
        }
        if let sysfsEntry, access(sysfsEntry, F_OK) != 0, errno == ENOENT { return true }
        return false
    }

    /// Waits up to `seconds` for the device to turn out gone (uvcvideo cancels the queue a moment
    /// before it unregisters the node). Returns at once when it is gone.
    func waitGone(_ fd: DeviceFD, seconds: Double) -> Bool {
        let steps = max(1, Int(seconds / 0.02))
        for i in 0...steps {
            if isGone(fd) { return true }
            // No event says when the driver unregisters the node (a moment after it cancels the
            // queue): checked every 20 ms, bounded by `seconds`.
            if i < steps { usleep(20_000) }
        }
        return false
    }
}
