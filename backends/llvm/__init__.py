"""The JIT SIMT executor: the IR -> LLVM IR -> native code (llvmlite), and
the native state a launch runs on (docs/executor.md).

The core: plan (a kernel's code segments, inlined calls, state slots),
codegen and simt (``run_warp``: one warp, SIMT control flow), values
(masked register reads and writes), irtext (LLVM IR text), layout (state
layouts, the address map, status codes), jit and pipeline (compiling,
overlapped), objcache (compiled kernels on disk), runtime and runtime_ir
(memory, the CTA thread pool, the native CTA loop), launch_wait,
callbacks, reg_writes.

ops/: the lowering of each instruction family. instruments/: code that a
tool adds to the generated kernel (checks, counters, profiles, injection).
"""
