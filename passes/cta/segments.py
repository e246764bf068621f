"""A launch's buffer segments and the executor's address check on them (CTA
equivalence, rule 6: fault checks; docs/cta-equivalence.md, "Classes of a
launch", a fault check).

:class:`SegmentSizes` is the segment table of a launch; :func:`bad_lanes`
is the executor's verdict for exact addresses, :func:`clean_ctas` the
per-CTA test over the range of a separable address, :func:`home_segment`
the segment an address must lie in by its provenance
(passes/memory/provenance.py). passes/cta/classes.py (``fault_signature``)
and passes/cta/fault_loops.py classify fault checks with them.
"""
from __future__ import annotations

import numpy as np

from ptxc.passes.cta.values import Unclassifiable


class SegmentSizes:
    """The sizes (bytes) of the segments >= layout.SEG_GLOBALS of a launch
    (the module's .global variables, its buffers), as the executor's segment
    table holds them; ``shift``: bits of offset in an address."""

    def __init__(self, sizes: dict, shift: int, first: int = 5):
        self.shift, self.first = shift, first
        n = max([first, *sizes]) + 1
        self.table = np.zeros(n, dtype=np.int64)
        for seg, size in sizes.items():
            self.table[seg] = size

    def key(self) -> tuple:
        return self.shift, tuple(self.table.tolist())


def clean_ctas(F, G, nbytes: int, segments: SegmentSizes, home) -> np.ndarray:
    """CTAs (bool per row of F) whose every address F + G(t) lies, aligned,
    within one buffer segment (its home segment when it has one)."""
    lo, hi = F + int(G.min()), F + int(G.max())
    seg = np.where(lo >= 0, lo, 0) >> segments.shift
    n = len(segments.table)
    size = segments.table[np.minimum(seg, n - 1)]
    ok = (lo >= 0) & (seg == (np.where(hi >= 0, hi, 0) >> segments.shift)) & \
        (seg >= segments.first) & (seg < n) & \
        ((hi & ((1 << segments.shift) - 1)) + nbytes <= size)
    if home is not None:
        ok &= seg == home
    if np.any(G % nbytes):
        return np.zeros_like(ok)
    return ok & (F % nbytes == 0)


def bad_lanes(x: np.ndarray, nbytes: int, segments: SegmentSizes, home) -> np.ndarray:
    """The executor's verdict (True: the access fails) for addresses ``x``
    (uint64)."""
    seg = x >> np.uint64(segments.shift)
    if np.any((seg >= 1) & (seg < segments.first)):
        raise Unclassifiable("an address checked for faults lies in a state-space window")
    off = (x & np.uint64((1 << segments.shift) - 1)).astype(np.int64)
    n = len(segments.table)
    size = np.where(seg < n, segments.table[np.minimum(seg, n - 1).astype(np.int64)], 0)
    bad = (off + nbytes > size) | ((x & np.uint64(nbytes - 1)) != 0)
    if home is not None:
        bad |= seg != np.uint64(home)
    return bad


def home_segment(ev, check, segments: SegmentSizes, nsegs: int):
    """The segment the address must lie in (passes/memory/provenance.py, as
    backends/llvm/instruments/provenance_ir.py decides it at run time), or None."""
    homes = []
    for cand in check.origins:
        if cand[0] == "globals":
            homes.append(segments.first)
            continue
        seg = (ev._param(cand[1], cand[3], cand[2]) % (1 << 64)) >> segments.shift
        if segments.first <= seg < nsegs:
            homes.append(seg)
    return homes[0] if len(homes) == 1 else None
