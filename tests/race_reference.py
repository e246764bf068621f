"""The NumPy model of racecheck that backends/llvm/instruments/racecheck_ir.py replaced
(ptxc at 2c61e35, backends/llvm/instruments/racecheck.py: CtaShadow and the per-access
aggregation of RaceChecker), kept as the reference of
tests/test_racecheck_native.py. One change: the aggregation of one access
now pools the hazards against both readers before counting, as the rule
"one hazard per (later thread-access, earlier instruction, kind)" says
(2c61e35 counted a later write twice when both readers of its byte came
from one earlier instruction). The model is racecheck.py's module
docstring; here it runs vectorised over the lanes and bytes of one warp
access, with every check made against the state before the access.

:class:`Reference` plays one worker: it keeps the shadow of the CTA it
runs and starts a fresh one when the CTA changes.
"""
from __future__ import annotations

import numpy as np

from ptxc.backends.llvm.instruments.check_hooks import EV_BARRIER
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_LOAD
from ptxc.backends.llvm.instruments.racecheck import ERROR, WARNING, Hazard, HazardLog

TID, IID, SEQ, EP, WEP, ATOM, NAR = range(7)   # NAR: the warp's arrives before the access


def lane_array(mask: int) -> np.ndarray:
    return np.nonzero((np.uint64(mask) >> np.arange(32, dtype=np.uint64)) & np.uint64(1))[0]


class CtaShadow:
    """The shadow memory of one CTA's shared memory (see module doc)."""

    def __init__(self, size: int, nwarps: int):
        self.size = size
        self.w = np.full((7, size), -1, dtype=np.int64)
        self.r1 = np.full((7, size), -1, dtype=np.int64)
        self.r2 = np.full((7, size), -1, dtype=np.int64)
        self.ep = np.zeros(nwarps, dtype=np.int64)
        self.wep = np.zeros(nwarps, dtype=np.int64)
        self.seq = 0
        self.iid = -1
        self.mbar = Mbarriers(nwarps)

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
        sub = rec[:, idx]
        t = sub[TID]
        same = (t // 32) == warp
        ordered = np.where(same, sub[WEP] < self.wep[warp], sub[EP] < self.ep[warp])
        ordered |= self.mbar.released(warp, t // 32, sub[NAR])
        bad = (t >= 0) & (t != tid) & (sub[SEQ] != self.seq) & ~ordered
        return bad, same

    def stamp(self, rec, idx, tid, warp, iid) -> None:
        """Record this access (thread ``tid``, per byte) in ``rec`` at ``idx``."""
        buf = np.empty((WEP + 1, len(idx)), dtype=np.int64)
        buf[TID], buf[IID], buf[SEQ], buf[EP], buf[WEP] = tid, iid, self.seq, self.ep[warp], \
            self.wep[warp]
        rec[:WEP + 1, idx] = buf
        rec[NAR, idx] = self.mbar.arrives[warp]

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



class Mbarriers:
    """mbarrier ordering as explicit events (an independent formulation of
    racecheck_mbar.py's clocks): warp ``a``'s k-th arrive instruction is
    the event (a, k); a phase carries the set of events its arrivals knew
    (their own and what their warps had acquired); a wait true on a
    completed phase adds the phase's set to the warp's ``known`` events. An
    access made after ``n`` arrives of its warp ``a`` is ordered before a
    later access of warp ``b`` when ``b`` knows an event (a, k), k >= n.
    Phases are counted here from init, count and arrivals (PTX ISA
    mbarrier: the phase completes when its pending count reaches zero), and
    a wait on parity p when c phases have completed is true when c % 2 != p
    and then waited on phase c - 1 (none when c = 0)."""

    def __init__(self, nwarps: int):
        self.arrives = np.zeros(nwarps, dtype=np.int64)
        self.known = [set() for _ in range(nwarps)]
        self.bars: dict = {}        # bar -> [pending, expected, completed phase sets, open set]

    def init(self, bar, count: int) -> None:
        self.bars[bar] = [count, count, [], set()]

    def arrive(self, warp: int, nlanes: int, bar, count: int) -> None:
        st = self.bars[bar]
        for _ in range(nlanes):
            st[3] |= self.known[warp] | {(warp, int(self.arrives[warp]))}
            st[0] -= count
            if st[0] <= 0:
                st[2].append(st[3])
                st[0], st[3] = st[1], set()
        self.arrives[warp] += 1

    def wait(self, warp: int, bar, parity: int) -> bool:
        done = self.bars[bar][2]
        if len(done) % 2 == parity:
            return False
        if done:
            self.known[warp] |= done[-1]
        return True

    def released(self, warp: int, first_warps, nar):
        """Per record: warp ``first_warps``' access after ``nar`` arrives is
        known to ``warp``."""
        top = {}
        for a, k in self.known[warp]:
            top[a] = max(top.get(a, -1), k)
        best = np.array([top.get(int(a), -1) for a in first_warps], dtype=np.int64)
        return (best >= nar) & (nar >= 0)


class Reference:
    """One worker's racecheck: the CTA it runs (``linear``) and its shadow."""

    def __init__(self, size: int, nwarps: int, shift: int):
        self.size, self.nwarps, self.shift = size, nwarps, shift
        self.log = HazardLog()
        self.linear, self.shadow = None, None

    def cta(self, linear: int) -> CtaShadow:
        if linear != self.linear:
            self.linear, self.shadow = linear, CtaShadow(self.size, self.nwarps)
        return self.shadow

    def sync(self, ctaid, linear: int, warp: int, event: int) -> None:
        self.cta(linear).sync(warp, event)

    def mbar_init(self, ctaid, linear, warp, bar, count) -> None:
        self.cta(linear).mbar.init(bar, count)

    def mbar_arrive(self, ctaid, linear, warp, lanes, bar, count) -> None:
        self.cta(linear).mbar.arrive(warp, bin(lanes).count("1"), bar, count)

    def mbar_wait(self, ctaid, linear, warp, lanes, bar, parity) -> bool:
        return self.cta(linear).mbar.wait(warp, bar, parity)

    def access(self, ctaid, linear, warp, iid, addrs, lanes, kind, nbytes, generic) -> None:
        st = self.cta(linear)
        lane = lane_array(lanes)
        a = np.asarray(addrs, dtype=np.uint64)[lane]
        if generic:
            a = a & np.uint64((1 << self.shift) - 1)
        found = st.access(warp, lane, a.astype(np.int64), kind, nbytes, iid)
        self._record(found, iid, ctaid, linear, warp, lane, nbytes)

    def _record(self, found, iid, ctaid, linear, warp, lane, nbytes) -> None:
        keys = {}
        for name, first_iid, same, row, first_tid, off in found:
            for k in range(len(row)):   # one hazard per (later thread, earlier instruction, kind)
                key = (name, int(first_iid[k]), ERROR if not same[k] else WARNING)
                keys.setdefault(key, {}).setdefault(int(row[k]), (int(first_tid[k]), int(off[k])))
        for (kind, fiid, sev), rows in keys.items():
            r = min(rows)
            tid = warp * 32 + int(lane[r])
            ftid, o = rows[r]
            self.log.record((kind, fiid, iid, sev), (linear, tid), len(rows),
                            lambda: Hazard(kind, fiid, iid, sev, 0, ctaid, ftid, tid, o, nbytes,
                                           (linear, tid)))
