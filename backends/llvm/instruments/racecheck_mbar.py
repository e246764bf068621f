"""racecheck: the ordering that mbarriers and named barriers give
(racecheck.py has the model).

PTX ISA 9.7.13.15 (mbarrier): a phase completes when its pending arrival
count reaches zero; ``mbarrier.test_wait``/``try_wait`` is true once the
phase it names completed, and the memory accesses a thread made before its
``mbarrier.arrive`` (release semantics by default) are visible to a thread
whose wait on that phase returned true (acquire semantics by default).

Clocks, per warp ``w`` of the CTA (arrays of racecheck.RaceShadow, read by
the native check of racecheck_ir.py):

* ``clk[w]``: every access record of warp ``w`` carries ``clk[w]`` as it was
  then; an ``arrive`` by any lane of ``w`` adds 1 after the arrive, so the
  accesses after it are not released by it;
* ``know[b][a]``: warp ``b`` is ordered after every access of warp ``a``
  whose clock is lower than ``know[b][a]``.

An arrive joins (element-wise max) the arriving warp's release vector,
``know[w]`` with ``know[w][w] = clk[w] + 1``, into the record of the phase
it arrives in; the arrive that completes the phase files that record under
the phase's parity (a wait names a phase by its parity: the latest
completed phase of that parity is the one it waited for). A wait true for
a lane joins the record of the phase it waited on into ``know`` of the
lane's warp; a wait on a phase no arrive completed (the parity of the phase
before the first) gives no ordering. Transitivity follows from the join of
``know``: a warp that waited and then arrives passes on what it knew.

The arrivals are replayed here lane by lane in ascending order, as
ops/mbarrier.py's arrive executes them, from each lane's token (the state
before its arrive) and count; ``mbarrier.init`` of a barrier drops its
records.

Named barriers (PTX ISA 9.7.13.1, ``bar``/``barrier``: ``bar.arrive a,
b`` / ``bar.sync a, b`` with barrier ``a`` and thread count ``b``, default
every thread of the CTA) use the same clocks (:class:`NamedBarriers`): an
arrive or sync joins the warp's release vector into the record of the
barrier's current phase and counts the warp's threads; the phase completes
when the count reaches ``b``; a warp that synced acquires the record of the
phase it arrived in when it resumes (the arrive-only form does not wait:
what a warp does after ``bar.arrive`` is not released to anyone). So a
producer that writes, then ``bar.arrive 1, 64``, is ordered before a
consumer after its ``bar.sync 1, 64``; one that writes after its arrive is
not. The plain CTA barrier ``bar.sync 0`` keeps the cheaper barrier counts.
"""
from __future__ import annotations

import struct

import numpy as np

EV_ARRIVE, EV_WAIT, EV_INIT = 0, 1, 2
BAR_ARRIVE, BAR_SYNC, BAR_RESUME = 0, 1, 2      # named barrier events (check_hooks.py)


class MbarOrder:
    """The mbarrier records of the CTA one worker runs (see module doc)."""

    def __init__(self, clk: np.ndarray, know: np.ndarray):
        self.clk, self.know = clk, know
        self.linear = None
        self.open: dict[int, np.ndarray] = {}       # barrier -> record of its current phase
        self.done: dict[tuple, np.ndarray] = {}     # (barrier, parity) -> its last completed phase

    def event(self, linear: int, warp: int, event: int, lanes: int, ptrs: bytes, vals: bytes,
              counts: bytes | None) -> None:
        if linear != self.linear:           # another CTA: the native state was reset with it
            self.linear = linear
            self.open.clear()
            self.done.clear()
        bars = struct.unpack("<32Q", ptrs)
        words = struct.unpack("<32Q", vals)
        on = [lane for lane in range(32) if lanes >> lane & 1]
        if event == EV_ARRIVE:
            self.arrive(warp, on, bars, words, struct.unpack("<32i", counts))
        elif event == EV_WAIT:
            for lane in on:
                rec = self.done.get((bars[lane], words[lane] & 1))
                if rec is not None:
                    np.maximum(self.know[warp], rec, out=self.know[warp])
        else:
            for lane in on:
                self.open.pop(bars[lane], None)
                self.done.pop((bars[lane], 0), None)
                self.done.pop((bars[lane], 1), None)

    def arrive(self, warp: int, on: list, bars, tokens, counts) -> None:
        if not on:
            return
        release = self.know[warp].copy()
        release[warp] = self.clk[warp] + 1
        for lane in on:
            bar, token = bars[lane], tokens[lane]
            rec = self.open.get(bar)
            self.open[bar] = release.copy() if rec is None else np.maximum(rec, release)
            pending = token & 0xFFFFFFFF
            pending = pending - (1 << 32) if pending >= 1 << 31 else pending
            if pending - counts[lane] <= 0:         # this arrive completes the phase
                self.done[(bar, token >> 63)] = self.open.pop(bar)
        self.clk[warp] += 1


class NamedBarriers:
    """The phases of the named barriers of the CTA one worker runs (module doc)."""

    def __init__(self, clk: np.ndarray, know: np.ndarray):
        self.clk, self.know = clk, know
        self.linear = None
        self.open: dict[int, list] = {}      # barrier id -> [record of its phase, threads arrived]
        self.pending: dict[int, np.ndarray] = {}   # warp -> the record of the phase it waits on

    def event(self, linear: int, warp: int, event: int, bid: int, count: int, nthreads: int,
              warp_threads: int) -> None:
        if linear != self.linear:
            self.linear = linear
            self.open.clear()
            self.pending.clear()
        if event == BAR_RESUME:
            rec = self.pending.pop(warp, None)
            if rec is not None:
                np.maximum(self.know[warp], rec, out=self.know[warp])
            return
        phase = self.open.get(bid)
        if phase is None:
            phase = self.open[bid] = [np.zeros_like(self.know[warp]), 0]
        release = self.know[warp].copy()
        release[warp] = self.clk[warp] + 1
        np.maximum(phase[0], release, out=phase[0])      # in place: waiters see later arrivals
        phase[1] += warp_threads
        if event == BAR_SYNC:
            self.pending[warp] = phase[0]
        self.clk[warp] += 1
        if phase[1] >= (count or nthreads):       # the phase completes: the next starts empty
            del self.open[bid]
