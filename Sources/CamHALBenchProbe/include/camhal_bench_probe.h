#pragma once
/// camhal-bench's LD_PRELOAD probe (probe.c): this version number, so the library has a symbol of
/// its own besides the interposed calls.
int camhal_bench_probe_version(void);
