"""The threads a launch's code runs on: native stacks sized for the compiled
kernel, an alternate signal stack, crash reporting.

Every CTA worker (launch_wait.run_threads, the cooperative launch's threads
in ops/coop.py) runs on a thread made here. Its stack is the measured frame
of the kernel's code (frames.py) plus PYTHON_STACK for what else runs on the
thread (the CTA loop, ctypes callbacks into Python for printf, malloc,
textures), rounded up to a MiB; when that fits in the stack a thread gets by
default (``default_stack``: RLIMIT_STACK, as glibc's pthread_create takes
it, at most 8 MiB) the thread keeps the default, which glibc recycles (a
launch of small kernels costs no mmap). A stack is a reservation of virtual
memory: pages are committed only where the code reaches, so a 2 GiB stack of
a huge unrolled kernel costs what it touches. When the frame is unknown (not
x86-64) UNKNOWN_FRAME is reserved. When the system refuses the reservation
the launch stops with one line naming the kernel and the size.

Each thread also installs an alternate signal stack and runs under
crash.running, so that a fault in native code (a stack overflow all the
same) is reported naming the kernel (crash.py).
"""
from __future__ import annotations

import resource
import threading

from ptxc.errors import PtxcError

MIB = 1 << 20
PYTHON_STACK = 4 * MIB      # the rest of what runs on an executor thread
UNKNOWN_FRAME = 256 * MIB   # reserved when frames.py could not measure the code
_lock = threading.Lock()    # threading.stack_size is process-wide


def stack_bytes(frame: int | None) -> int:
    """The stack of a thread running code whose frames need ``frame`` bytes."""
    need = (UNKNOWN_FRAME if frame is None else frame) + PYTHON_STACK
    return max(default_stack(), -(-need // MIB) * MIB)


def default_stack() -> int:
    """The stack a new thread gets when none is asked for (module doc)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 2 * MIB              # glibc's ARCH_STACK_DEFAULT_SIZE is larger; be safe
    return min(soft, 8 * MIB)


def start_threads(target, n: int, frame: int | None, label: str) -> list:
    """Start ``target(k)`` for k < n on daemon threads whose stacks fit
    ``frame`` (module doc); ``label`` names the kernel in errors. Returns
    the threads (raises PtxcError when they cannot be made)."""
    from ptxc.backends.llvm import crash
    crash.install()
    size = stack_bytes(frame)

    def body(k):
        with crash.altstack():
            crash.test_trigger()
            target(k)

    threads = []
    with _lock:
        old = threading.stack_size()
        try:
            threading.stack_size(size if size > default_stack() else 0)
            for k in range(n):
                t = threading.Thread(target=body, args=(k,), daemon=True)
                t.start()
                threads.append(t)
        except (RuntimeError, ValueError, MemoryError, OverflowError) as e:
            raise PtxcError(f"{label}: its compiled code needs a native stack of {size // MIB} MiB "
                            f"per executor thread, and the system refused to reserve it for thread "
                            f"{len(threads) + 1} of {n} ({e}); fewer threads (--threads) or more "
                            f"virtual memory may help") from None
        finally:
            threading.stack_size(old)
    return threads
