import CamHAL
#if LibCamera
import CamHALLibCamera
#endif
#if PipeWire
import CamHALPipeWire
#endif
import CamHALV4L2
#if GStreamer
import CamHALGStreamer
#endif
import CamHALVirtual

/// The backends CamHAL ships, in the default order of preference.
///
/// V4L2 and the virtual camera are always built; the others are package traits (`LibCamera`,
/// `PipeWire`, `GStreamer`), on by default. A build without one lists it in ``missing``.
public enum Backends {
    /// Every backend linked into this build.
    ///
    /// PipeWire comes after v4l2 and libcamera: on a desktop its camera nodes are usually the same
    /// cameras those backends open directly, and the direct path has the device's controls (zoom,
    /// focus, torch) and one hop less. It comes before GStreamer, whose PipeWire provider lists the
    /// same nodes through one more layer. Inside a sandbox (Flatpak) v4l2 and libcamera see no
    /// device, so PipeWire, the only way in there, is the first that has one.
    public static func all() -> [any CameraBackend] {
        var backends: [any CameraBackend] = [V4L2Backend()]
        #if LibCamera
        backends.append(LibCameraBackend.shared)
        #endif
        #if PipeWire
        backends.append(PipeWireBackend.shared)
        #endif
        #if GStreamer
        backends.append(GStreamerBackend.shared)
        #endif
        backends.append(VirtualBackend.shared)
        return backends
    }

    /// A registry of every backend, honouring `CAMHAL_BACKENDS`.
    public static func registry() -> BackendRegistry { BackendRegistry(all()) }

    /// A backend CamHAL has but this build left out, and how to build it in.
    public struct Missing: Sendable, Hashable {
        /// The backend's identifier (`libcamera`, `gstreamer`).
        public let identifier: String
        /// The package trait that builds it in.
        public let trait: String
        /// The Debian packages its C library needs.
        public let packages: [String]
    }

    /// The backends left out of this build by its package traits (empty with the default traits).
    public static var missing: [Missing] {
        var missing: [Missing] = []
        #if !LibCamera
        missing.append(Missing(identifier: "libcamera", trait: "LibCamera", packages: ["libcamera-dev"]))
        #endif
        #if !PipeWire
        missing.append(Missing(identifier: "pipewire", trait: "PipeWire", packages: ["libpipewire-0.3-dev", "libglib2.0-dev"]))
        #endif
        #if !GStreamer
        missing.append(Missing(
            identifier: "gstreamer", trait: "GStreamer",
            packages: ["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"]))
        #endif
        return missing
    }
}
