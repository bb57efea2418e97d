import CamHAL
import CamHALGStreamer
import CamHALVirtual

/// The backends CamHAL ships, in the default order of preference.
public enum Backends {
    /// Every backend linked into this build.
    public static func all() -> [any CameraBackend] {
        // Order: v4l2, libcamera, gstreamer, virtual (the others land from their own branches).
        [GStreamerBackend.shared, VirtualBackend.shared]
    }

    /// A registry of every backend, honouring `CAMHAL_BACKENDS`.
    public static func registry() -> BackendRegistry { BackendRegistry(all()) }
}
