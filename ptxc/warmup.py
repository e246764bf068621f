"""Start-up work of `ptxc profile` done beside parsing, in a second thread.

A profile needs numpy, the launcher and LLVM with its CTA loop (the
executor's run_ctas, backends/llvm/jit.py ``runtime()``) whatever the
module holds. :func:`start` begins that work in a background thread while
the main thread parses; :func:`finish` waits for it before anything else
uses LLVM (llvmlite's own lock makes LLVM calls safe from several threads,
but ``jit.runtime()`` compiles once per process and must not race with
itself). Part of it releases the GIL (loading libllvmlite with ctypes, LLVM's
initialisation and code generation), so on a machine with two or more cores
it overlaps the parse; with one core it costs nothing extra. The work is
the same the main thread would do: an error in it is ignored here and
raised by the main thread when it repeats the step.
"""
from __future__ import annotations

import threading


def _warm() -> None:
    try:
        import numpy  # noqa: F401

        from . import launcher  # noqa: F401
        from .backends.llvm import jit
        jit.runtime()
    except Exception:  # noqa: BLE001 - the main thread repeats the step and reports
        pass


def start() -> threading.Thread:
    thread = threading.Thread(target=_warm, name="ptxc-warmup", daemon=True)
    thread.start()
    return thread


def finish(thread: threading.Thread | None) -> None:
    if thread is not None:
        thread.join()
