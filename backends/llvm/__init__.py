"""The JIT SIMT executor: the IR -> LLVM IR -> native code (llvmlite), and
the native state a launch runs on (docs/executor.md).

The core: plan (a kernel's code segments, inlined calls, state slots),
codegen with its mixins simt (SIMT control flow), frame (register slots
in the warp state), specials (special registers, symbol addresses) and
lowering_guard (where each instruction's code starts, a failed lowering):
``run_warp``, one warp; values (masked register reads and writes), irtext
(LLVM IR text), layout (state layouts, the address map, status codes),
prelude_ir (what every kernel module carries), jit and pipeline
(compiling, overlapped), guards (the GC paused while compiling, LLVM's
errors placed in the PTX), objcache (compiled kernels on disk), runtime and
runtime_ir (memory, the CTA thread pool, the native CTA loop),
launch_wait, callbacks, reg_writes; frames (the native frame a compiled
kernel needs, read from its object code), stacks (executor threads with
stacks sized for it), crash (a crash in native code reported naming the
kernel).

ops/: the lowering of each instruction family. instruments/: code that a
tool adds to the generated kernel (checks, counters, profiles, injection).
"""
