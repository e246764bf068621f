"""A process's first-use work of compiling, done in a background thread.

The first kernel a process compiles also pays for LLVM's initialisation
(importing llvmlite, the native target, the symbols of the runtime hooks),
the host CPU's features, the code generator's imports and the CTA loop
(runtime_ir.py): about 0.15-0.3 s a process (docs/performance.md, "Compile
time"), which a short application run sees as compile time of its first
launch. ``ptxc run`` starts this thread when it starts the application, so
the work overlaps the application's own start-up (process start, CUDA
setup, host initialisation) instead. It then compiles the helper-library
entries most kernels call (jit.precompile_helpers: the segment-table lookup
``ptxc_resolve``, the memory fast path's shape test of 4-byte accesses
and, when the launches count memory accesses, under
``--clock model``, the default, the counters' helpers of a global and of a
4-byte shared access), which helper_lib.py then holds for every kernel,
until the application's first kernel compile begins (the rest is then
left to the kernels that call it). The thread holds the JIT lock
(jit._lock) throughout: a compile that comes first waits for it, as it
would have done the same work itself. Its imports cannot deadlock with the
main thread's: the package has no import circles (tests/test_layout.py).
A failure is left to the first compile, which does the work again and
reports it. ``PTXC_JIT_WARMUP=0`` turns it off (benches compare the two:
bench/app_rates.py --switch PTXC_JIT_WARMUP=0,1).
"""
from __future__ import annotations

import os
import threading


def start(counters: int = 0):
    """Start the warm-up thread; returns it (None when turned off).
    ``counters``: the memory counters' bank width when the launches will
    count (0: they will not)."""
    if os.environ.get("PTXC_JIT_WARMUP", "1") == "0":
        return None
    t = threading.Thread(target=_work, args=(counters,), name="ptxc-jit-warm-up", daemon=True)
    t.start()
    return t


def _work(counters: int) -> None:
    from ptxc.backends.llvm import jit
    before = jit.kernel_compiles()
    try:
        with jit._lock:
            jit.llvm()
            jit.host()
            from ptxc.backends.llvm import codegen, plan   # noqa: F401  (the lowerings)
            jit.runtime()
        jit.precompile_helpers(counters,    # outside the JIT lock: code generation may go on
                               stop=lambda: jit.kernel_compiles() != before)
    except Exception:       # noqa: BLE001  (the first compile does it again and reports it)
        pass


def finish(t) -> None:
    """Wait for the thread (before the process exits: LLVM must not be in
    the middle of a call when its static destructors run)."""
    if t is not None:
        t.join()
