"""The control block of error injection (``ptxc inject``; SASSI section 8,
NVBitFI): one per process, at a fixed address that the injection variant of
a kernel (inject_ir.py) reaches as the external global ``ptxc_inject_ctl``.

Layout (little-endian, offsets in bytes):

    0   ptr  counts[3]   per-thread i64 counters of eligible dynamic
                         instructions, one array per target (TARGETS order),
                         indexed by (linear CTA * warps per CTA + warp) * 32 + lane
    24  i64  site_warp   the global warp of the site (-1: no site this launch)
    32  i32  site_lane
    36  i32  site_target index in TARGETS
    40  i64  site_instance  the thread's 0-based eligible instance to hit
    48  i64  site_rand   a random u64: the flipped bit is site_rand mod the
                         instruction's destination bits
    56  i32  hit         1 once the flip happened
    60  i32  hit_iid     the instruction id (plan.instr_id) flipped
    64  i32  hit_bit     the bit flipped among the destination bits
    68  i32  hit_bits    how many destination bits that instruction has

Only one launch runs at a time in a process (the CUDA runtime serialises
launches; the API runs one launch per call), so one block suffices; the
worker threads of a launch write disjoint counters, and only the one lane
of the site writes the hit fields.
"""
from __future__ import annotations

import ctypes
import struct

from ptxc.backends.llvm import callbacks

TARGETS = ("register", "memory", "predicate")
OFF_COUNTS, OFF_WARP, OFF_LANE, OFF_TARGET, OFF_INSTANCE, OFF_RAND = 0, 24, 32, 36, 40, 48
OFF_HIT, OFF_HIT_IID, OFF_HIT_BIT, OFF_HIT_BITS = 56, 60, 64, 68
SIZE = 128
SYMBOL = "ptxc_inject_ctl"

_block = (ctypes.c_uint8 * SIZE)()
_arrays: list = []          # keep the counter arrays alive while a launch runs


def register_symbols(binding) -> None:
    """Make ``ptxc_inject_ctl`` resolvable by the JIT (llvmlite.binding)."""
    callbacks.add_symbols(binding, {SYMBOL: _block})


def arm(nslots: int, site=None) -> list:
    """Before a launch: fresh zeroed counters (``nslots`` lanes, numpy i64
    arrays) and the site (warp, lane, target index, instance, rand) or None."""
    import numpy as np              # not at import: the CLI imports TARGETS
    global _arrays
    _arrays = [np.zeros(max(nslots, 1), np.int64) for _ in TARGETS]
    warp, lane, target, instance, rand = site if site is not None else (-1, 0, 0, -1, 0)
    ctypes.memset(_block, 0, SIZE)
    struct.pack_into("<3Qqiiq", _block, 0, *(a.ctypes.data for a in _arrays), warp, lane,
                     target, instance)
    struct.pack_into("<Q", _block, OFF_RAND, rand & (2 ** 64 - 1))
    return _arrays


def hit() -> tuple | None:
    """(instruction id, bit, destination bits) of the flip, or None."""
    flag, iid, bit, bits = struct.unpack_from("<4i", _block, OFF_HIT)
    return (iid, bit, bits) if flag else None


def disarm() -> None:
    """After a launch: no counters, no site."""
    global _arrays
    ctypes.memset(_block, 0, SIZE)
    struct.pack_into("<q", _block, OFF_WARP, -1)
    _arrays = []
