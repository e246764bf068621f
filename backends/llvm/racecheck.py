"""racecheck: shared-memory hazards between the threads of a CTA.

The model (docs/check.md, "racecheck"; CUDA Compute Sanitizer documentation,
"Racecheck Tool"): two accesses to the same shared-memory byte by different
threads of one CTA, at least one of them a write, form a hazard unless they
are ordered:

* by a CTA barrier (``bar.sync``/``barrier.sync``/``bar.red``) that both
  threads' warps passed between them: each warp counts the barriers it
  passed (``ep``), and an access of warp ``a`` is ordered before one of
  another warp ``b`` when ``ep`` of ``a`` then was lower than ``ep`` of
  ``b`` now (the executor releases a barrier only when every unfinished
  warp waits at one, so the counts of all warps advance together);
* inside one warp, by a ``bar.warp.sync`` or a CTA barrier between them
  (``wep``: the warp's barriers plus its ``bar.warp.sync``\\ s);
* or by being one warp instruction: the lanes of one ``st.shared`` (or one
  ``ld``) never race with each other.

Two atomics (``atom``/``red``) never race; an atomic and a plain access do
(the atomic counts as a write). Hazards between different warps are errors;
between lanes of one warp they are warnings (compute-sanitizer's severity
for warp-synchronous programming that assumes lock step, a real race on
sm_70+ without ``__syncwarp``). ``RAW``: an earlier write and a later read;
``WAR``: an earlier read and a later write; ``WAW``: two writes, in the
executor's order (warps of a CTA run in index order between barriers).

Shadow memory, per CTA and shared byte: the last write (thread, instruction,
warp instruction sequence number, ``ep``, ``wep``, atomic) and the last two
reads by different threads since that write. A read checks the last write;
a write checks the last write and both reads, then clears the reads. Keeping
two readers is what makes a write-after-read hazard found whatever order the
warps ran in, but with three or more readers of one byte a write is checked
against the two latest only.

Counting: one hazard per (later thread-access, earlier instruction, kind):
a thread whose 4-byte write meets one earlier write of another thread counts
once, not 4 times. Hazards are aggregated per (kind, earlier instruction,
later instruction, severity) with the first occurrence, the smallest (linear
CTA, later thread), so the result is the same for any number of workers.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass

import numpy as np

from . import layout as Lo
from .check_hooks import EV_BARRIER
from .memcheck import KIND_ATOMIC, KIND_LOAD

TID, IID, SEQ, EP, WEP, ATOM = range(6)
ERROR, WARNING = "error", "warning"


@dataclass
class Hazard:
    """One distinct hazard: an ordered pair of instructions and its kind."""
    kind: str            # RAW / WAR / WAW
    first_iid: int       # the earlier access's instruction
    second_iid: int      # the later access's instruction
    severity: str        # error (different warps) / warning (one warp)
    count: int
    cta: tuple           # first occurrence: CTA (x, y, z)
    first_thread: int    # linear thread ids of the two accesses
    second_thread: int
    offset: int          # shared-memory byte offset
    size: int            # bytes the later thread accesses
    order: tuple


class HazardLog:
    """Distinct entries with counts, first occurrence kept (thread-safe)."""

    def __init__(self):
        self.by_key: dict = {}
        self.lock = threading.Lock()

    def record(self, key, order, n: int, make) -> None:
        with self.lock:
            e = self.by_key.get(key)
            if e is None:
                e = self.by_key[key] = make()
                e.count = 0
            elif order < e.order:
                fresh = make()
                fresh.count = e.count
                e = self.by_key[key] = fresh
            e.count += n

    def entries(self) -> list:
        return [self.by_key[k] for k in sorted(self.by_key, key=lambda k: (self.by_key[k].order, k))]


def cta_info(cta) -> tuple[tuple, int]:
    """((x, y, z), linear id) of the CTA state at address ``cta``."""
    x, y, z = struct.unpack("<3i", ctypes.string_at(cta, 12))
    linear, = struct.unpack("<i", ctypes.string_at(cta + Lo.CTA_LINEAR, 4))
    return (x, y, z), linear


def warp_of(ws) -> int:
    return struct.unpack("<i", ctypes.string_at(ws + Lo.WS_WARP, 4))[0]


def lane_array(mask: int) -> np.ndarray:
    return np.nonzero((np.uint64(mask) >> np.arange(32, dtype=np.uint64)) & np.uint64(1))[0]


class PerCta:
    """Per-CTA state kept while one worker runs the CTA: a CTA runs to its
    end on one worker, so a worker's next CTA ends the state of its last."""

    def __init__(self, make):
        self.make = make
        self.keep = False           # keep every CTA's state (a cooperative launch interleaves CTAs)
        self.states: dict[int, object] = {}
        self.current: dict[int, int] = {}
        self.lock = threading.Lock()

    def get(self, L, linear: int):
        me = threading.get_ident()
        with self.lock:
            prev = self.current.get(me)
            if prev != linear:
                if prev is not None and not self.keep:
                    self.finish(self.states.pop(prev, None))
                self.current[me] = linear
            st = self.states.get(linear)
            if st is None:
                st = self.states[linear] = self.make(L, linear)
            return st

    def finish(self, st) -> None:
        if st is not None and hasattr(st, "close"):
            st.close()

    def finish_all(self) -> None:
        with self.lock:
            for st in self.states.values():
                self.finish(st)
            self.states.clear()
            self.current.clear()


class CtaShadow:
    """The shadow memory of one CTA's shared memory (see module doc)."""

    def __init__(self, size: int, nwarps: int):
        self.size = size
        self.w = np.full((6, size), -1, dtype=np.int64)
        self.r1 = np.full((5, size), -1, dtype=np.int64)
        self.r2 = np.full((5, size), -1, dtype=np.int64)
        self.ep = np.zeros(nwarps, dtype=np.int64)
        self.wep = np.zeros(nwarps, dtype=np.int64)
        self.seq = 0
        self.iid = -1

    def sync(self, warp: int, event: int) -> None:
        if event == EV_BARRIER:
            self.ep[warp] += 1
        self.wep[warp] += 1

    def access(self, warp: int, lanes: np.ndarray, offsets: np.ndarray, kind: int, nbytes: int,
               iid: int):
        """Check and record one warp access; returns the hazards as
        (kind, earlier iid, severity, lane index, earlier thread, byte offset)
        arrays (one row per conflicting byte)."""
        self.seq += 1
        self.iid = iid
        per = np.arange(nbytes, dtype=np.int64)
        idx = (offsets[:, None].astype(np.int64) + per).ravel()
        row = np.repeat(np.arange(len(lanes)), nbytes)
        keep = (idx >= 0) & (idx < self.size)
        idx, row = idx[keep], row[keep]
        tid = (warp * 32 + lanes[row]).astype(np.int64)
        found = []
        write = kind != KIND_LOAD
        atomic = kind == KIND_ATOMIC
        w_bad, w_same = self.unordered(self.w, idx, tid, warp)
        if write and atomic:
            w_bad &= self.w[ATOM, idx] != 1
        found.append(("WAW" if write else "RAW", self.w, w_bad, w_same))
        if write:
            for r in (self.r1, self.r2):
                bad, same = self.unordered(r, idx, tid, warp)
                found.append(("WAR", r, bad, same))
        hazards = []
        for name, src, bad, same in found:
            k = np.nonzero(bad)[0]
            if len(k):
                hazards.append((name, src[IID, idx[k]], same[k], row[k], src[TID, idx[k]], idx[k]))
        if write:
            self.store(idx, tid, int(atomic), warp)
        else:
            self.load(idx, tid, warp)
        return hazards

    def unordered(self, rec, idx, tid, warp):
        """(hazard, same warp) per byte: ``rec``'s access is by another
        thread, another warp instruction, and not ordered before this one."""
        sub = rec[:WEP + 1, idx]
        t = sub[TID]
        same = (t // 32) == warp
        ordered = np.where(same, sub[WEP] < self.wep[warp], sub[EP] < self.ep[warp])
        bad = (t >= 0) & (t != tid) & (sub[SEQ] != self.seq) & ~ordered
        return bad, same

    def stamp(self, rec, idx, tid, warp, iid) -> None:
        """Record this access (thread ``tid``, per byte) in ``rec`` at ``idx``."""
        buf = np.empty((WEP + 1, len(idx)), dtype=np.int64)
        buf[TID], buf[IID], buf[SEQ], buf[EP], buf[WEP] = tid, iid, self.seq, self.ep[warp], \
            self.wep[warp]
        rec[:WEP + 1, idx] = buf

    def store(self, idx, tid, atomic: int, warp: int) -> None:
        self.stamp(self.w, idx, tid, warp, self.iid)
        self.w[ATOM, idx] = atomic
        self.r1[TID, idx] = -1
        self.r2[TID, idx] = -1

    def load(self, idx, tid, warp: int) -> None:
        """The last two readers by different threads: r1 the latest."""
        uniq, first = np.unique(idx, return_index=True)
        last = len(idx) - 1 - np.unique(idx[::-1], return_index=True)[1]
        t_first, t_last = tid[first], tid[last]
        multi = t_first != t_last
        old = self.r1[TID, uniq]
        shift = ~multi & (old >= 0) & (old != t_last)
        s = uniq[shift]
        self.r2[:, s] = self.r1[:, s]
        m = uniq[multi]
        self.stamp(self.r2, m, t_first[multi], warp, self.iid)
        self.stamp(self.r1, uniq, t_last, warp, self.iid)


class RaceChecker:
    """The racecheck of one launch: shadow memory per running CTA, the
    hazards found (``log``)."""

    def __init__(self, shift: int):
        self.shift = shift          # generic address = segment << shift | offset
        self.log = HazardLog()
        self.ctas = PerCta(self._new)

    def _new(self, L, linear):
        shared, = struct.unpack("<i", ctypes.string_at(L + Lo.L_SHARED, 4))
        nwarps, = struct.unpack("<i", ctypes.string_at(L + Lo.L_NWARPS, 4))
        return CtaShadow(shared, nwarps)

    def sync(self, L, cta, ws, iid, event, lanes, masks, sp) -> None:
        _, linear = cta_info(cta)
        self.ctas.get(L, linear).sync(warp_of(ws), event)

    def access(self, L, cta, ws, iid, addrs, lanes, kind, nbytes, generic) -> None:
        ctaid, linear = cta_info(cta)
        st = self.ctas.get(L, linear)
        warp = warp_of(ws)
        lane = lane_array(lanes)
        a = np.frombuffer(ctypes.string_at(addrs, 256), dtype=np.uint64)[lane]
        if generic:
            a = a & np.uint64((1 << self.shift) - 1)
        found = st.access(warp, lane, a.astype(np.int64), kind, nbytes, iid)
        for name, first_iid, same, row, first_tid, off in found:
            self._record(name, iid, ctaid, linear, warp, lane, first_iid, same, row, first_tid,
                         off, nbytes)

    def _record(self, name, iid, ctaid, linear, warp, lane, first_iid, same, row, first_tid, off,
                nbytes) -> None:
        keys = {}
        for k in range(len(row)):       # one hazard per (later thread, earlier instruction, kind)
            key = (name, int(first_iid[k]), ERROR if not same[k] else WARNING)
            keys.setdefault(key, {}).setdefault(int(row[k]), (int(first_tid[k]), int(off[k])))
        for (kind, fiid, sev), rows in keys.items():
            r = min(rows)
            tid = warp * 32 + int(lane[r])
            ftid, o = rows[r]
            self.log.record((kind, fiid, iid, sev), (linear, tid), len(rows),
                            lambda: Hazard(kind, fiid, iid, sev, 0, ctaid, ftid, tid, o, nbytes,
                                           (linear, tid)))

    def finish(self) -> None:
        self.ctas.finish_all()

    def hazards(self) -> list[Hazard]:
        return self.log.entries()
