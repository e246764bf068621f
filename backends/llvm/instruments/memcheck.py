"""memcheck: record invalid memory accesses and let the launch continue.

Without memcheck a lane whose access is out of bounds or misaligned ends the
launch (ops/resolve.py reports the first failing lane). A memcheck launch runs a
compiled variant of its own (jit.compile_kernel(memcheck=True)) in which the
cold error branch of every ld/st/atom/red/cp.async calls this module's ctypes
callback instead, and the access goes on with the failing lanes masked out:
a load gives them 0, a store or atomic is dropped for them (compute-
sanitizer's memcheck reports the access instead of faulting; CUDA Compute
Sanitizer documentation, "Memcheck Tool"). A variant rather than a launch
flag: the flag's masked access (a data-dependent gather mask) made the
default code 8-9% slower on bench/kernels/memory.ptx; the default code is
unchanged.

    void ptxc_memcheck(ptr L, ptr cta, ptr ws, i64 bad, i32 id, ptr addrs,
                       i32 kind, i32 space, i32 nbytes)

``bad``: out-of-bounds lanes in its low 32 bits, misaligned lanes in its high
32 bits (a lane counts once: out of bounds first); ``addrs``: the 32 lane
addresses; ``kind``: KIND_LOAD / KIND_STORE / KIND_ATOMIC; ``space``: the
index of the instruction's state space in SPACE_NAMES.

Errors are aggregated per (instruction, kind, error): a count of failing
lane-accesses and the first occurrence, the smallest (linear CTA, warp,
lane), the earliest in execution order when a thread fails twice at one
instruction (a CTA runs on one worker). The result is therefore the same for
any number of worker threads.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm import layout as Lo

KIND_LOAD, KIND_STORE, KIND_ATOMIC = 0, 1, 2
KIND_NAMES = ("load", "store", "atomic")
SPACE_NAMES = ("global", "shared", "local", "const", "param", "generic")
CODE_NAMES = {Lo.ERR_OOB: "out-of-bounds", Lo.ERR_MISALIGNED: "misaligned"}

ARGTYPES = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int32,
            ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)   # ptxc_memcheck's, void


@dataclass
class MemError:
    """One distinct error: an instruction, its access kind, the error code."""
    instr_id: int
    kind: str            # load / store / atomic
    space: str           # the instruction's state space (generic resolved by address later)
    code: int            # layout.ERR_OOB or ERR_MISALIGNED
    size: int            # bytes per lane access
    count: int           # failing lane-accesses
    cta: tuple           # (x, y, z) of the first occurrence
    thread: tuple        # (x, y, z)
    warp: int
    lane: int
    address: int
    order: tuple         # (linear CTA, warp, lane) of the first occurrence
    shadow: dict | None = None   # its lane's provenance shadow slots: warp-state offset -> value


class MemcheckLog:
    """The errors of one launch (filled by the callback, read after the run)."""

    def __init__(self):
        self.by_key: dict[tuple, MemError] = {}
        self.lock = threading.Lock()
        self.shadow_offsets: tuple = ()     # provenance shadow slots to keep (provenance_ir.py)

    def record(self, key, order, make) -> None:
        with self.lock:
            e = self.by_key.get(key)
            if e is None:
                self.by_key[key] = make()
                return
            e.count += 1
            if order < e.order:
                fresh = make()
                fresh.count = e.count
                self.by_key[key] = fresh

    def errors(self) -> list[MemError]:
        """Distinct errors, by first occurrence."""
        return sorted(self.by_key.values(), key=lambda e: (e.order, e.instr_id))

    def total(self) -> int:
        return sum(e.count for e in self.by_key.values())


_logs: dict[int, MemcheckLog] = {}


class active:
    """``with active(L address, log):`` the launch's memcheck records go to ``log``."""

    def __init__(self, L: int, log: MemcheckLog):
        self.L, self.log = L, log

    def __enter__(self):
        _logs[self.L] = self.log
        return self.log

    def __exit__(self, *exc):
        _logs.pop(self.L, None)


def thread_state(cta: int, ws: int) -> tuple:
    """(ctaid, linear CTA index, warp, [tid.x, tid.y, tid.z lanes]) read
    from the CTA and warp state the generated code passes (layout.py)."""
    ctaid = struct.unpack("<3i", ctypes.string_at(cta, 12))
    linear = callbacks.cta_linear(cta)
    warp, = struct.unpack("<i", ctypes.string_at(ws + Lo.WS_WARP, 4))
    tids = [struct.unpack("<32i", ctypes.string_at(ws + Lo.WS_TID + 128 * d, 128)) for d in range(3)]
    return ctaid, linear, warp, tids


def _record(L, cta, ws, bad, iid, addrs, kind, space, nbytes) -> None:
    log = _logs.get(L)
    if log is None:
        return
    oob, mis = bad & 0xFFFFFFFF, (bad >> 32) & ~bad & 0xFFFFFFFF
    ctaid, linear, warp, tids = thread_state(cta, ws)
    lane_addrs = struct.unpack("<32Q", ctypes.string_at(addrs, 256))
    for code, lanes in ((Lo.ERR_OOB, oob), (Lo.ERR_MISALIGNED, mis)):
        for lane in range(32):
            if lanes >> lane & 1:
                order = (linear, warp, lane)
                log.record((iid, kind, code), order, lambda lane=lane, code=code, order=order: MemError(
                    iid, KIND_NAMES[kind], SPACE_NAMES[space], code, nbytes, 1, tuple(ctaid),
                    (tids[0][lane], tids[1][lane], tids[2][lane]), warp, lane, lane_addrs[lane], order,
                    shadow_values(log, ws, lane)))


def shadow_values(log, ws: int, lane: int):
    """The lane's provenance shadow slots (ptxc/launcher/provenance_message.py names
    the allocation a loaded pointer pointed into), or None."""
    if not log.shadow_offsets:
        return None
    return {o: struct.unpack("<Q", ctypes.string_at(ws + o + 8 * lane, 8))[0]
            for o in log.shadow_offsets}


_callback = callbacks.c_function(callbacks.guarded(_record), None, *ARGTYPES)


def register_symbols(binding) -> None:
    """Make ``ptxc_memcheck`` resolvable by the JIT (llvmlite.binding)."""
    callbacks.add_symbols(binding, {"ptxc_memcheck": _callback})
