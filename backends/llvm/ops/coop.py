"""Cooperative launches: every CTA of the grid is resident at once, so a
kernel may wait for the others (``cg::this_grid().sync()``,
``cudaLaunchCooperativeKernel``; CUDA C++ Programming Guide, "Grid
Synchronization").

A grid-wide wait is a spin loop on global memory: cooperative groups'
``sync_grids`` has one thread per CTA add to a counter in the grid
workspace (``%envreg1:%envreg2``) with ``atom.add.release.gpu`` and spin on
``ld.acquire.gpu`` until the last CTA flips its top bit. Executing CTAs one
after the other would spin forever, so a cooperative launch gives every CTA
its own thread (and worker memory) and lets exactly one run at a time: a
*baton* passes between them in linear CTA order. A warp hands the baton on
at every *spin point*, a global or generic load with ``.acquire``,
``.relaxed`` or ``.volatile``, or ``nanosleep`` (the generated code calls
``ptxc_yield``), and a CTA hands it on when it finishes. (Atomics are not
spin points: a grid-wide wait on ``atomicCAS`` alone is not supported.) The interleaving, and with it every counter, is
therefore deterministic and the same in hybrid and full runs (spin points
yield whether or not the slice keeps them).

A grid whose CTAs all keep spinning would never end: after ``MAX_YIELDS``
hand-overs in which every CTA yielded at the spin point it yielded at the
time before and none finished, the launch stops with an error; a CTA that
fails stops the others at their next spin point.
"""
from __future__ import annotations

import ctypes
import threading

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm.launch_wait import POLL, poll_watch

MAX_YIELDS = 5_000_000          # idle hand-overs (see above) before the launch stops

_lock = threading.RLock()
_active: "Baton | None" = None


class Baton:
    """Which CTA of a cooperative launch may run."""

    def __init__(self, nctas: int):
        self.n = nctas
        self.live = [True] * nctas
        self.go = [threading.Event() for _ in range(nctas)]
        self.idle_yields = 0
        self.last_point = [-1] * nctas          # the spin point each CTA last yielded at
        self.abort: str | None = None         # why the launch stops
        self.go[0].set() if nctas else None

    def wait(self, cta: int) -> None:
        self.go[cta].wait()

    def _next(self, cta: int) -> int | None:
        for k in range(1, self.n + 1):
            other = (cta + k) % self.n
            if self.live[other]:
                return other
        return None

    def hand_on(self, cta: int, point: int) -> bool:
        """Spin point ``point`` (an instruction id) of CTA ``cta``: let the
        next live CTA run, wait for the baton to come back. False: the
        launch is stopping."""
        if point == self.last_point[cta]:
            self.idle_yields += 1
        else:
            self.idle_yields, self.last_point[cta] = 0, point
        if self.idle_yields > MAX_YIELDS and self.abort is None:
            self.abort = (f"no CTA of the cooperative launch finished in {MAX_YIELDS} hand-overs "
                          "at spin points: a grid-wide wait that never ends")
        if self.abort is not None:
            return False
        nxt = self._next(cta)
        if nxt is None or nxt == cta:
            return True
        self.go[cta].clear()
        self.go[nxt].set()
        self.go[cta].wait()
        return self.abort is None

    def finish(self, cta: int, error: str | None = None) -> None:
        """CTA ``cta`` ended (``error``: it failed): pass the baton on."""
        self.live[cta] = False
        self.idle_yields = 0
        if error is not None and self.abort is None:
            self.abort = error
        nxt = self._next(cta)
        if nxt is not None:
            self.go[nxt].set()


def _yield(cta: int, point: int) -> int:
    baton = _active
    if baton is None:
        return 0
    return 0 if baton.hand_on(int(cta), int(point)) else 1


_callback = callbacks.c_function(_yield, ctypes.c_int32, ctypes.c_int64, ctypes.c_int32)


def register_symbols(binding) -> None:
    """Make ``ptxc_yield`` resolvable by the JIT (llvmlite.binding)."""
    callbacks.add_symbols(binding, {"ptxc_yield": _callback})


def run_cooperative(launch, workers) -> None:
    """Run CTA c of ``launch`` on ``workers[c]``, one OS thread each, under
    a baton (one cooperative launch at a time in the process)."""
    global _active
    baton = Baton(len(workers))

    def body(c: int) -> None:
        baton.wait(c)
        try:
            if baton.abort is None:
                w = workers[c]
                w.run_range(c, c + 1)
                err = w.error
                baton.finish(c, None if err is None else "a CTA failed")
                return
        except BaseException:                 # never leave the other threads waiting
            baton.finish(c, "a CTA failed")
            raise
        baton.finish(c, baton.abort)

    with _lock:
        _active = baton
        try:
            from ptxc.backends.llvm.stacks import stack_bytes, start_threads
            from ptxc.ir.names import short
            launch.thread_stack = stack_bytes(launch.c.frame_bytes)     # tier_up.fits
            try:
                threads = start_threads(body, len(workers), launch.c.frame_bytes,
                                        f"kernel {short(launch.c.plan.kernel.name)}")
            except BaseException:
                baton.abort = "the threads could not be made"    # the started ones end
                raise
            for t in threads:
                while t.is_alive():            # Ctrl-C, launch_wait.watching stop the wait
                    t.join(POLL)
                    poll_watch()
        finally:
            _active = None
    launch.coop_abort = baton.abort
