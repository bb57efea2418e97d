#if !LibCamera
// Built without the LibCamera package trait this module is empty. The backend's name stays,
// unavailable, so the compiler says which trait builds it in instead of "cannot find in scope".

/// The LibCamera backend: available with the package trait LibCamera (libcamera-dev).
@available(
    *, unavailable,
    message: "LibCameraBackend needs the package trait LibCamera (libcamera-dev); it is on by default, turned off in this build")
public final class LibCameraBackend {}
#endif
