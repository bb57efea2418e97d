#if !GStreamer
// Built without the GStreamer package trait this module is empty. The backend's name stays,
// unavailable, so the compiler says which trait builds it in instead of "cannot find in scope".

/// The GStreamer backend: available with the package trait GStreamer (libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev).
@available(
    *, unavailable,
    message: "GStreamerBackend needs the package trait GStreamer (libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev); it is on by default, turned off in this build")
public final class GStreamerBackend {}

/// A GStreamer source description: available with the package trait GStreamer.
@available(
    *, unavailable,
    message: "GStreamerSource needs the package trait GStreamer (libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev); it is on by default, turned off in this build")
public struct GStreamerSource {}
#endif
