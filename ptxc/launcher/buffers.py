"""The byte buffers a launch runs on: in place on the caller's arrays where
that is what a GPU would do, copies where a hybrid run could change them,
overlapping arrays copied together so that the copies overlap as the
originals do.
"""
from __future__ import annotations

import numpy as np


def private_buffers(c, mode: str, buffers: list, arrays: list) -> list:
    """The byte buffers the kernel runs on. A full run works in place on
    contiguous writeable arrays (what a GPU does); a hybrid run never changes
    the caller's arrays: it copies a buffer only when the slice may store to
    global memory. Buffers whose memory overlaps (one array bound to two
    parameters, overlapping views) are copied together, so that the copies
    overlap as the originals do."""
    need = []
    for buf, (_, orig) in zip(buffers, arrays):
        shared = np.shares_memory(buf, orig) and not isinstance(orig, Scratch)
        need.append(shared and ((mode == "hybrid" and c.writes_global) or
                                (mode == "full" and not orig.flags.writeable)))
    out = list(buffers)
    for group in overlap_groups(buffers):
        if any(need[k] for k in group):
            for k, copy in zip(group, copy_together([buffers[k] for k in group])):
                out[k] = copy
    return out


class Scratch(np.ndarray):
    """A buffer ptxc made for a launch itself (module_profile.lazy_zeros: the
    zero-filled placeholders of a full run or --zero-fill): no caller sees
    it, so a run works on it in place and never copies it (4 GiB)."""


def byte_span(buf: np.ndarray) -> tuple[int, int]:
    lo = buf.__array_interface__["data"][0]
    return lo, lo + buf.nbytes


def overlap_groups(buffers: list) -> list[list[int]]:
    """Indices of contiguous uint8 buffers grouped by overlapping memory
    (merging of sorted intervals); empty buffers are alone."""
    order = sorted((byte_span(b), k) for k, b in enumerate(buffers))
    groups: list[list[int]] = []
    hi = None
    for (lo, end), k in order:
        if buffers[k].nbytes and groups and hi is not None and lo < hi:
            groups[-1].append(k)
            hi = max(hi, end)
        else:
            groups.append([k])
            hi = end if buffers[k].nbytes else None
    return groups


def copy_together(bufs: list) -> list:
    """Copies of overlapping contiguous buffers that overlap in one new array
    (the union of overlapping intervals has no gap, so only their bytes are read)."""
    if len(bufs) == 1:
        return [bufs[0].copy()]
    import ctypes
    from ptxc.backends.llvm.runtime import aligned
    spans = [byte_span(b) for b in bufs]
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    whole = aligned(hi - lo)
    whole[:] = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
    return [whole[s[0] - lo:s[1] - lo] for s in spans]
