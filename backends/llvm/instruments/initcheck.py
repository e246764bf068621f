"""initcheck: report global-memory reads of bytes that nothing wrote.

compute-sanitizer's initcheck (CUDA Compute Sanitizer documentation,
"Initcheck Tool") reports a device read of global memory that no host copy,
memset or kernel store initialised. Here the record of what was written is a
:class:`Shadow`: one byte per byte (0 = never written) for each tracked
allocation, kept by the caller across the launches of one application run.

An initcheck launch runs a compiled variant of its own (jit.compile_kernel(
initcheck=True); the default code is unchanged): every ld/st/atom/red and
cp.async source of a global or generic address checks and marks the shadow
bytes in generated code (initcheck_ops.FAST: a load checks that its
``nbytes`` are written, a store marks them, an atomic or reduction, a
read-modify-write, does both, lane by lane in lane order), and only an
access with unwritten reads calls

    void ptxc_initcheck(ptr L, ptr cta, ptr ws, i32 id, ptr addrs, i32 mask,
                        i32 kind, i32 nbytes)

with those lanes (``mask``) and the 32 addresses, to record them. The shadow
arrays reach the code through the 4th field of the segment table (install).
Addresses outside a tracked allocation (module variables, shared / local
windows, managed and host allocations) are not checked. Errors are
aggregated per instruction as memcheck.MemcheckLog does.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm.instruments.memcheck import KIND_NAMES, MemcheckLog, MemError, thread_state

ERR_UNINIT = 100            # the MemError code of an uninitialised read

ARGTYPES = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p,
            ctypes.c_uint32, ctypes.c_int32, ctypes.c_int32)      # ptxc_initcheck's, returns void


class Shadow:
    """Which bytes of each tracked allocation were written (segment -> uint8
    array, 1 = written). Arrays are zeroed lazily by the OS (np.zeros), so an
    untouched allocation costs no memory."""

    def __init__(self):
        self.by_seg: dict[int, np.ndarray] = {}

    def track(self, seg: int, size: int) -> None:
        self.by_seg[seg] = np.zeros(size, np.uint8)

    def forget(self, seg: int) -> None:
        self.by_seg.pop(seg, None)

    def mark(self, seg: int, off: int, n: int, pitch: int = 0, rows: int = 1) -> None:
        """``rows`` rows of ``n`` bytes, ``pitch`` apart, were written."""
        s = self.by_seg.get(seg)
        if s is None:
            return
        for r in range(rows):
            s[off + r * pitch:off + r * pitch + n] = 1

    def copy(self, dseg: int, doff: int, sseg: int, soff: int, n: int,
             dpitch: int = 0, spitch: int = 0, rows: int = 1) -> None:
        """A device-to-device copy: the destination is as initialised as
        its source (an untracked source counts as initialised)."""
        d = self.by_seg.get(dseg)
        if d is None:
            return
        src = self.by_seg.get(sseg)
        for r in range(rows):
            dst = slice(doff + r * dpitch, doff + r * dpitch + n)
            d[dst] = 1 if src is None else src[soff + r * spitch:soff + r * spitch + n]

    def written(self, seg: int, off: int, n: int) -> bool:
        s = self.by_seg.get(seg)
        return s is None or bool(s[off:off + n].all())


_active: dict[int, tuple] = {}


class active:
    """``with active(L address, shadow, log):`` the launch's uninitialised
    reads go to ``log`` (the generated code reads ``shadow`` through the
    segment table: install)."""

    def __init__(self, L: int, shadow: Shadow, log: MemcheckLog):
        self.L, self.state = L, (shadow, log)

    def __enter__(self):
        _active[self.L] = self.state
        return self.state[1]

    def __exit__(self, *exc):
        _active.pop(self.L, None)


def _access(L, cta, ws, iid, addrs, mask, kind, nbytes) -> None:
    """ptxc_initcheck: the lanes of ``mask`` read unwritten bytes
    (initcheck_ops.FAST found them, and marked what the access writes)."""
    state = _active.get(L)
    if state is None or not mask:
        return
    a = np.frombuffer(ctypes.string_at(addrs, 256), dtype="<u8")
    record(state[1], cta, ws, iid, a, [lane for lane in range(32) if mask >> lane & 1], kind, nbytes)


def install(seg_table: np.ndarray, shadow: Shadow) -> None:
    """Put the shadow arrays in the 4th field of their segment-table entries
    (layout.SEG_ENTRY_BYTES) for the generated code."""
    for seg, arr in shadow.by_seg.items():
        if seg < len(seg_table) and arr.size:
            seg_table[seg, 3] = arr.ctypes.data


def record(log: MemcheckLog, cta, ws, iid, addrs, bad, kind, nbytes) -> None:
    ctaid, linear, warp, tids = thread_state(cta, ws)
    for lane in bad:
        order = (linear, warp, lane)
        log.record((iid, kind, ERR_UNINIT), order, lambda lane=lane, order=order: MemError(
            iid, KIND_NAMES[kind], "global", ERR_UNINIT, nbytes, 1, tuple(ctaid),
            (tids[0][lane], tids[1][lane], tids[2][lane]), warp, lane, int(addrs[lane]), order))


_callback = callbacks.c_function(callbacks.guarded(_access), None, *ARGTYPES)


def register_symbols(binding) -> None:
    """Make ``ptxc_initcheck`` resolvable by the JIT (llvmlite.binding)."""
    callbacks.add_symbols(binding, {"ptxc_initcheck": _callback})
