// Placeholder header for the CLibcamera system-library module: its job is the pkg-config flags.
// The C++ API is reached only through Backends/LibCamera/Shim (extern "C").
#pragma once
