#if !PipeWire
// Built without the PipeWire package trait this module is empty. The backend's name stays,
// unavailable, so the compiler says which trait builds it in instead of "cannot find in scope".

/// The PipeWire backend: available with the package trait PipeWire (libpipewire-0.3-dev, libglib2.0-dev).
@available(
    *, unavailable,
    message: "PipeWireBackend needs the package trait PipeWire (libpipewire-0.3-dev, libglib2.0-dev); it is on by default, turned off in this build")
public final class PipeWireBackend {}
#endif
