"""How a ``ptxc`` process runs: as the program (``ptxc``, ``python -m
ptxc.cli``: ``main()`` without arguments) or in-process (``main(argv)``,
the tests). As the program it may fork for the kernels of a module, pause
the cyclic garbage collector and end without tearing down its objects.
"""
from __future__ import annotations

import gc
import os
import sys


AS_PROGRAM = False        # main() runs as the program and ends with fast_exit


def kernel_jobs(jobs: int | None) -> int:
    """Processes for the kernels of one module (ptxc/profile/fork.py): --jobs,
    else every core; 1 (no fork) when the CLI runs in-process (main(argv))."""
    if not AS_PROGRAM:
        return 1
    if jobs:
        return jobs
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def pause_gc() -> None:
    """No cyclic garbage collection for the rest of a command that builds a
    large IR and then ends (``ptxc profile``), when the CLI runs as the
    program. The parser pauses the collector (parser.py); the first
    allocation after it resumes sets off a pass over every object the parse
    made (~0.03 s of CPU for the XLA module of the corpus), and the later
    ones find nothing to free either: the IR lives until the process ends
    and the rest is freed by reference counting. Called in-process
    (``main(argv)``, the tests) it does nothing."""
    if AS_PROGRAM:
        gc.disable()


def fast_exit(code: int) -> None:
    """End the process without freeing every object one by one: tearing down
    the IR of a large module costs as much as slicing it (~0.12 s of CPU for
    the XLA module of the corpus). atexit handlers still run and the standard
    streams are flushed; nothing else is left to write."""
    import atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
