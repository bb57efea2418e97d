import CamHAL
import CamHALLibCamera
import CamHALV4L2
import CamHALGStreamer
import CamHALVirtual

/// The backends CamHAL ships, in the default order of preference.
public enum Backends {
    /// Every backend linked into this build.
    public static func all() -> [any CameraBackend] {
        [V4L2Backend(), LibCameraBackend.shared, GStreamerBackend.shared, VirtualBackend.shared]
    }

    /// A registry of every backend, honouring `CAMHAL_BACKENDS`.
    public static func registry() -> BackendRegistry { BackendRegistry(all()) }
}
