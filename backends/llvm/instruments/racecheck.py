"""racecheck: shared-memory hazards between the threads of a CTA.

The model (docs/check.md, "racecheck"; CUDA Compute Sanitizer documentation,
"Racecheck Tool"): two accesses to the same shared-memory byte by different
threads of one CTA, at least one of them a write, form a hazard unless they
are ordered:

* by a CTA barrier (``bar.sync 0``/``barrier.sync 0``/``bar.red``) that both
  threads' warps passed between them: each warp counts the barriers it
  passed (``ep``), and an access of warp ``a`` is ordered before one of
  another warp ``b`` when ``ep`` of ``a`` then was lower than ``ep`` of
  ``b`` now (the executor releases a barrier only when every unfinished
  warp waits at one, so the counts of all warps advance together);
* inside one warp, by a ``bar.warp.sync`` or a CTA barrier between them
  (``wep``: the warp's barriers plus its ``bar.warp.sync``\\ s);
* by an mbarrier (PTX ISA 9.7.13.15; racecheck_mbar.py): an arrive
  releases what its warp did before it into the record of the phase it
  arrives in, and a ``test_wait``/``try_wait`` true for a lane acquires the
  record of the phase it waited on for the lane's warp. Per warp ``w``: a
  clock ``clk[w]`` (each access record keeps it; an arrive advances it) and
  ``know[w][a]``: an access of warp ``a`` (another warp or ``w`` itself)
  with clock ``c`` is ordered before the accesses of ``w`` now when
  ``c < know[w][a]``. Records join (element-wise max) what each arriving
  warp knew, so the ordering is transitive. ``ep`` is the CTA barrier's
  clock in the same sense (every warp passes each barrier), so the two
  combine with an or;
* by a named barrier (``bar.arrive 1, 64`` / ``bar.sync 1, 64``: an arrive,
  an id other than 0 or a thread count), with the same clocks: an arrive
  or sync releases into the record of the barrier's phase, a sync acquires
  it when the warp resumes (racecheck_mbar.NamedBarriers);
* or by being one warp instruction: the lanes of one ``st.shared`` (or one
  ``ld``) never race with each other.

Two atomics (``atom``/``red``) never race; an atomic and a plain access do
(the atomic counts as a write). Hazards between different warps are errors;
between lanes of one warp they are warnings (compute-sanitizer's severity
for warp-synchronous programming that assumes lock step, a real race on
sm_70+ without ``__syncwarp``); a write-after-write whose later ``st``
writes the value the byte already holds (the earlier write's) is info, the
lowest level (:func:`same_value`). ``RAW``: an earlier write and a later read;
``WAR``: an earlier read and a later write; ``WAW``: two writes, in the
executor's order (warps of a CTA run in index order between barriers).

Shadow memory, per CTA and shared byte: the last write (thread, instruction,
warp instruction sequence number, ``ep``, ``wep``, ``clk``, atomic) and the last two
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

Implementation: the shadow memory lives in the kernel's own code
(racecheck_ir.py, the racecheck variant of check_hooks.py), one per worker
(:class:`RaceShadow`, reached through the CTA state), cleared when the
worker starts another CTA; Python is called only for a warp access that met
hazards, to aggregate them (:meth:`RaceChecker.access`).
tests/race_reference.py keeps the NumPy model this replaced, and
tests/test_racecheck_native.py runs both on random access streams and on
kernels.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass

import numpy as np

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments import racecheck_ir as R
from ptxc.backends.llvm.instruments.memcheck import KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.instruments.racecheck_mbar import MbarOrder, NamedBarriers

ERROR, WARNING, INFO = "error", "warning", "info"


def same_value(sh: "RaceShadow", rows, nbytes: int) -> set:
    """The (lane, earlier instruction) pairs of a store's write-after-write
    rows where the lane writes, to every byte it shares with the earlier
    write, the value the byte holds (the earlier write's): compute-sanitizer
    reports those at INFO level. Needs the store's values and the shared
    memory (racecheck_ir.py, H_DATA); none without them."""
    data = int(sh.head[R.H_DATA // 8])
    if not data or not sh.shared:
        return set()
    addrs = struct.unpack("<32Q", ctypes.string_at(int(sh.head[R.H_ADDRS // 8]), 256))
    low = int(sh.head[R.H_LOWMASK // 8]) & 0xFFFFFFFFFFFFFFFF
    shared = ctypes.string_at(sh.shared, max(sh.size, 1))
    size = int(sh.head[R.H_ESIZE // 8])
    if size <= 0:
        return set()
    vals = ctypes.string_at(data, 32 * nbytes)
    equal, differ = set(), set()
    for cat, lane, fiid, _, off, _ in rows.tolist():
        if cat:
            continue
        j = off - (addrs[lane] & low)
        i, b = divmod(j, size)
        new = vals[i * 32 * size + lane * size + b]
        (equal if off < len(shared) and shared[off] == new else differ).add((lane, fiid))
    return equal - differ


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
    linear = callbacks.cta_linear(cta)
    return (x, y, z), linear


def warp_of(ws) -> int:
    return struct.unpack("<i", ctypes.string_at(ws + Lo.WS_WARP, 4))[0]


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


class RaceShadow:
    """The shadow memory of one worker (racecheck_ir.py's layouts): NumPy
    arrays, zeroed lazily by the OS, so bytes a kernel never touches cost
    no memory."""

    def __init__(self, size: int, nwarps: int, shared: int = 0):
        self.shared, self.size = shared, size      # the worker's shared memory (0: unknown)
        self.bytes = np.zeros(max(size, 1) * R.BYTE, np.uint8)
        self.ep = np.zeros(max(nwarps, 1), np.int32)
        self.wep = np.zeros(max(nwarps, 1), np.int32)
        self.nwarps = max(nwarps, 1)
        self.clk = np.zeros(self.nwarps, np.int32)
        self.know = np.zeros((self.nwarps, self.nwarps), np.int32)
        self.mbar = MbarOrder(self.clk, self.know)
        self.named = NamedBarriers(self.clk, self.know)
        self.rows = np.zeros(R.ROW_CAP * R.ROW // 4, np.int32)
        self.head = np.zeros(R.H_BYTES_TOTAL // 8, np.int64)
        for off, v in ((R.H_LINEAR, -1), (R.H_SIZE, size), (R.H_BYTES, self.bytes.ctypes.data),
                       (R.H_EP, self.ep.ctypes.data), (R.H_WEP, self.wep.ctypes.data),
                       (R.H_NWARPS, nwarps), (R.H_ROWS, self.rows.ctypes.data),
                       (R.H_CAP, R.ROW_CAP), (R.H_CLK, self.clk.ctypes.data),
                       (R.H_KNOW, self.know.ctypes.data)):
            self.head[off // 8] = v
        self.address = self.head.ctypes.data

    def found(self) -> np.ndarray:
        """The hazard rows of the current access, (n, 6) int32."""
        n = int(self.head[R.H_NROWS // 8])
        if n > R.ROW_CAP:
            raise RuntimeError(f"racecheck: {n} hazard rows for one access (room for {R.ROW_CAP})")
        return self.rows[:n * 6].reshape(n, 6).copy()


class RaceChecker:
    """The racecheck of one launch: a shadow memory per worker (attach),
    the hazards found (``log``)."""

    def __init__(self, shift: int):
        self.shift = shift          # generic address = segment << shift | offset
        self.log = HazardLog()
        self.shadows: dict[int, RaceShadow] = {}
        self.lock = threading.Lock()

    def attach(self, size: int, nwarps: int, shared: int = 0) -> int:
        """A new worker's shadow for ``size`` shared bytes (at host address
        ``shared``, 0: unknown); its address."""
        sh = RaceShadow(size, nwarps, shared)
        with self.lock:
            self.shadows[sh.address] = sh
        return sh.address

    def access(self, L, cta, ws, iid, kind, nbytes, h) -> None:
        """Record the hazards the generated code found at one warp access
        (the rows of shadow ``h``): one per (later thread, earlier
        instruction, kind), first occurrence its smallest lane."""
        sh = self.shadows[h]
        rows = sh.found()
        rows = rows[np.argsort(rows[:, 0], kind="stable")]     # write record, r1, r2
        ctaid, linear = cta_info(cta)
        warp = warp_of(ws)
        first = "WAW" if kind != KIND_LOAD else "RAW"
        unchanged = same_value(sh, rows, nbytes) if kind == KIND_STORE else set()
        keys: dict = {}
        for cat, lane, fiid, ftid, off, same in rows.tolist():
            sev = INFO if not cat and (lane, fiid) in unchanged else WARNING if same else ERROR
            key = ("WAR" if cat else first, fiid, sev)
            keys.setdefault(key, {}).setdefault(lane, (ftid, off))
        for (name, fiid, sev), lanes in keys.items():
            lane = min(lanes)
            tid = warp * 32 + lane
            ftid, off = lanes[lane]
            self.log.record((name, fiid, iid, sev), (linear, tid), len(lanes),
                            lambda: Hazard(name, fiid, iid, sev, 0, ctaid, ftid, tid, off, nbytes,
                                           (linear, tid)))

    def mbarrier(self, event, lanes, ptrs, vals, counts, ws, h) -> None:
        """An ``mbarrier`` arrive (event 0) or successful wait (event 1) of
        the warp at ``ws`` (racecheck_mbar.py); ``h``: its shadow."""
        sh = self.shadows[h]
        sh.mbar.event(int(sh.head[R.H_LINEAR // 8]), warp_of(ws), event, lanes,
                      ctypes.string_at(ptrs, 256), ctypes.string_at(vals, 256),
                      ctypes.string_at(counts, 128) if counts else None)

    def barrier(self, event, bid, count, L, ws, h) -> None:
        """A named barrier's arrive (event 0), sync (1) or the warp's resume
        after its sync (2), racecheck_mbar.NamedBarriers."""
        sh = self.shadows[h]
        nthreads, = struct.unpack("<I", ctypes.string_at(L + Lo.L_NTHREADS, 4))
        valid, = struct.unpack("<I", ctypes.string_at(ws + Lo.WS_VALID, 4))
        sh.named.event(int(sh.head[R.H_LINEAR // 8]), warp_of(ws), event, bid, count, nthreads,
                       bin(valid).count("1"))

    def finish(self) -> None:
        with self.lock:
            self.shadows.clear()

    def hazards(self) -> list[Hazard]:
        return self.log.entries()
