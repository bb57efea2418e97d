import CamHAL
import CamHALLibCamera
import CamHALPipeWire
import CamHALV4L2
import CamHALGStreamer
import CamHALVirtual

/// The backends CamHAL ships, in the default order of preference.
public enum Backends {
    /// Every backend linked into this build.
    ///
    /// PipeWire comes after v4l2 and libcamera: on a desktop its camera nodes are usually the same
    /// cameras those backends open directly, and the direct path has the device's controls (zoom,
    /// focus, torch) and one hop less. It comes before GStreamer, whose PipeWire provider lists the
    /// same nodes through one more layer. Inside a sandbox (Flatpak) v4l2 and libcamera see no
    /// device, so PipeWire, the only way in there, is the first that has one.
    public static func all() -> [any CameraBackend] {
        [V4L2Backend(), LibCameraBackend.shared, PipeWireBackend.shared, GStreamerBackend.shared, VirtualBackend.shared]
    }

    /// A registry of every backend, honouring `CAMHAL_BACKENDS`.
    public static func registry() -> BackendRegistry { BackendRegistry(all()) }
}
