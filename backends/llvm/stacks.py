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

The threads are pooled (PooledThread): a launch hands its workers to idle
threads of the same stack size left by earlier launches, and makes new ones
only when there are none; making them cost ~0.1-0.4 ms per launch, more
than running the CTAs of a small launch (tests/apps/nw: 255 launches of
1-128 CTAs of 16 threads). A forked child starts with an empty pool.
"""
from __future__ import annotations

import os
import queue
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
    """Run ``target(k)`` for k < n on pooled daemon threads whose stacks fit
    ``frame`` (module doc); ``label`` names the kernel in errors. Returns
    one Job per k, joined like a thread (raises PtxcError when threads
    cannot be made)."""
    from ptxc.backends.llvm import crash
    crash.install()
    size = stack_bytes(frame)
    asked = size if size > default_stack() else 0
    jobs = []
    for k in range(n):
        try:
            worker = _idle_worker(asked) or PooledThread(asked)
        except (RuntimeError, ValueError, MemoryError, OverflowError) as e:
            raise PtxcError(f"{label}: its compiled code needs a native stack of {size // MIB} MiB "
                            f"per executor thread, and the system refused to reserve it for thread "
                            f"{len(jobs) + 1} of {n} ({e}); fewer threads (--threads) or more "
                            f"virtual memory may help") from None
        jobs.append(worker.run(target, k))
    return jobs


class Job:
    """``target(k)`` given to a pooled thread; ``join``/``is_alive`` as a Thread's."""

    def __init__(self, target, k: int):
        self.target, self.k = target, k
        self.done = threading.Event()

    def join(self, timeout: float | None = None) -> None:
        self.done.wait(timeout)

    def is_alive(self) -> bool:
        return not self.done.is_set()


class PooledThread:
    """A daemon thread with its alternate signal stack (crash.altstack),
    running one Job after another. Starting a thread (and its signal stack)
    cost about 0.1 ms per launch, as long as running a small CTA; after a
    job the thread waits in the pool of its stack size for the next
    launch's, up to KEEP_IDLE of them (an extra one ends, and so does a
    thread whose stack is over KEEP_STACK: a huge kernel's reservation is
    not kept standing, and its launches are long anyway). A job that raises
    ends its thread (threading prints the exception, as before the pool)."""

    def __init__(self, asked: int):
        self.asked = asked
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        with _lock:
            old = threading.stack_size()
            try:
                threading.stack_size(asked)
                threading.Thread(target=self._serve, daemon=True).start()
            finally:
                threading.stack_size(old)

    def run(self, target, k: int) -> Job:
        job = Job(target, k)
        self.jobs.put(job)
        return job

    def _serve(self) -> None:
        from ptxc.backends.llvm import crash
        with crash.altstack():
            while True:
                job = self.jobs.get()
                try:
                    crash.test_trigger()
                    job.target(job.k)
                except BaseException:
                    job.done.set()
                    raise
                kept = _park(self)
                job.done.set()
                if not kept:
                    return


KEEP_IDLE = 2 * (os.cpu_count() or 1)    # idle pooled threads kept per stack size
KEEP_STACK = 64 * MIB                    # larger stacks end with their job (no standing reservation)
_idle: dict = {}                         # asked stack size -> [PooledThread]
_pool_lock = threading.Lock()


def _idle_worker(asked: int):
    with _pool_lock:
        idle = _idle.get(asked)
        return idle.pop() if idle else None


def _park(worker: PooledThread) -> bool:
    if worker.asked > KEEP_STACK:
        return False
    with _pool_lock:
        idle = _idle.setdefault(worker.asked, [])
        if len(idle) >= KEEP_IDLE:
            return False
        idle.append(worker)
        return True


def _forget_pool() -> None:
    """In a forked child the pooled threads do not exist."""
    global _pool_lock
    _idle.clear()
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)
