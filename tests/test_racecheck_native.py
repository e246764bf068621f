"""racecheck's native shadow memory (backends/llvm/instruments/racecheck_ir.py) against
the NumPy model it replaced (tests/race_reference.py), on random streams of
warp accesses and barriers.

The native functions are compiled on their own (with two external wrappers)
and called through ctypes with the arguments the kernel code passes them;
the reference gets the same events. Streams have partial last warps,
random subsets of lanes (the inactive lanes hold garbage addresses), loads,
stores and atomics of 1 to 16 bytes, plain and generic addresses (some out
of the shared window: negative or past its end), broadcasts and strided
and random addresses over a small shared memory (so bytes are hit by many
threads), CTA barriers and __syncwarp, and several CTAs one after another
on one worker; a second set adds mbarrier arrives and waits (the native
clocks of racecheck_mbar.py against the reference's explicit arrive
events, race_reference.Mbarriers). The two hazard lists, every field of every entry, must be
equal.

The same on kernels (tests/cuda/racecheck.cu and reduce_shared.cu, whose
.ptx files nvcc made, tests/cuda/build.sh) launched under racecheck with
block sizes that leave the last warp partial: a variant of the native code
also traces each call to Python, and the reference replays the trace.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from race_reference import Reference, lane_array

from ptxc.backends.llvm.instruments import check_hooks
from ptxc.backends.llvm import jit
from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments import racecheck_ir as R
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.instruments.racecheck import RaceChecker
from ptxc.backends.llvm.runtime import aligned, ptr

WRAPPERS = """define void @t_access(ptr %L, ptr %cta, ptr %ws, i32 %iid, ptr %addrs, i32 %lanes, i32 %kind, i32 %nbytes, i64 %lowmask) {
  call void @ptxc_race(ptr %L, ptr %cta, ptr %ws, i32 %iid, ptr %addrs, i32 %lanes, i32 %kind, i32 %nbytes, i64 %lowmask)
  ret void
}

define void @t_sync(ptr %cta, ptr %ws, i32 %event) {
  call void @ptxc_race_sync(ptr %cta, ptr %ws, i32 %event)
  ret void
}

define ptr @t_state(ptr %cta) {
  %h = call ptr @ptxc_race_state(ptr %cta)
  ret ptr %h
}"""

C = ctypes
ACCESS = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_void_p, C.c_int32, C.c_void_p, C.c_uint32,
                     C.c_int32, C.c_int32, C.c_int64)
SYNC = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_int32)
STATE = C.CFUNCTYPE(C.c_void_p, C.c_void_p)
SHIFT = 32


@pytest.fixture(scope="module")
def native():
    text = "\n\n".join([R.TEXT, WRAPPERS, *R.DECLS]) + "\n"
    engine = jit._engine([jit._emit(text, 2, "racecheck_native_test")], 2)
    return (engine, ACCESS(engine.get_function_address("t_access")),
            SYNC(engine.get_function_address("t_sync")),
            STATE(engine.get_function_address("t_state")))


class Native:
    """One worker running the native functions: its launch, CTA and warp
    states, the checker that aggregates what they report."""

    def __init__(self, fns, size: int, nwarps: int):
        _, self.access_fn, self.sync_fn, self.state_fn = fns
        self.L, self.cta, self.ws = aligned(Lo.L_SIZE), aligned(Lo.CTA_SIZE), aligned(64)
        self.addrs = aligned(32 * 8).view(np.uint64)
        self.checker = RaceChecker(SHIFT)
        self.cta.view(np.int64)[Lo.CTA_RACE // 8] = self.checker.attach(size, nwarps)

    def _at(self, ctaid, linear, warp) -> None:
        self.cta.view(np.int32)[:3] = ctaid
        self.cta.view(np.int32)[Lo.CTA_LINEAR // 4] = linear
        self.ws.view(np.int32)[Lo.WS_WARP // 4] = warp

    def sync(self, ctaid, linear, warp, event) -> None:
        self._at(ctaid, linear, warp)
        self.sync_fn(ptr(self.cta), ptr(self.ws), event)

    # mbarriers: what ops/mbarrier.py executes, modelled on ptxc's state
    # encoding (pending | expected << 32 | parity << 63), then the hook the
    # generated code calls (check_hooks.race_mbar_hook)
    def _mbar(self, event, lanes, bar, vals, counts) -> None:
        ptrs = np.full(32, bar, np.uint64)
        vals = np.asarray(vals, np.uint64)
        counts = np.asarray(counts, np.int32)
        h = self.state_fn(ptr(self.cta))
        self.checker.mbarrier(event, lanes, ptr(ptrs), ptr(vals), ptr(counts), ptr(self.ws), h)

    def mbar_init(self, ctaid, linear, warp, bar, count) -> None:
        self._at(ctaid, linear, warp)
        self.bars = getattr(self, "bars", {})
        self.bars[linear, bar] = count | count << 32
        self._mbar(2, 1, bar, np.zeros(32), np.zeros(32))

    def mbar_arrive(self, ctaid, linear, warp, lanes, bar, count) -> None:
        self._at(ctaid, linear, warp)
        tokens = np.zeros(32, np.uint64)
        for lane in lane_array(lanes):
            s = self.bars[linear, bar]
            tokens[lane] = s
            pending, expected, parity = (s & 0xFFFFFFFF) - count, s >> 32 & 0x7FFFFFFF, s >> 63
            if pending <= 0:
                pending, parity = expected, parity ^ 1
            self.bars[linear, bar] = pending | expected << 32 | parity << 63
        self._mbar(0, lanes, bar, tokens, np.full(32, count))

    def mbar_wait(self, ctaid, linear, warp, lanes, bar, parity) -> bool:
        self._at(ctaid, linear, warp)
        done = self.bars[linear, bar] >> 63 != parity
        if done:
            self._mbar(1, lanes, bar, np.full(32, parity), np.zeros(32))
        return done

    def access(self, ctaid, linear, warp, iid, addrs, lanes, kind, nbytes, generic) -> None:
        self._at(ctaid, linear, warp)
        self.addrs[:] = addrs
        low = (1 << SHIFT) - 1 if generic else -1
        with check_hooks.active(ptr(self.L), [self.checker]):
            self.access_fn(ptr(self.L), ptr(self.cta), ptr(self.ws), iid, ptr(self.addrs), lanes,
                           kind, nbytes, low)


def lane_addresses(rng, size: int, nbytes: int) -> np.ndarray:
    """32 shared offsets (int64, some outside 0..size-1) in one of the shapes
    warp accesses have."""
    lanes = np.arange(32)
    shape = rng.integers(4)
    if shape == 0:                                   # every lane the same word
        return np.full(32, rng.integers(-2, size + 2))
    if shape == 1:                                   # strided
        return rng.integers(-8, size) + lanes * int(rng.choice([1, 2, nbytes]))
    if shape == 2:                                   # a few hot bytes
        return rng.integers(0, 4, size=32) * nbytes
    return rng.integers(-4, size + 4, size=32)


def mbar_event(rng, ctaid, linear, warp, valid):
    """An arrive (count 1 or 2) or wait (parity 0 or 1) of random lanes of
    ``warp`` on one of two mbarriers (initialised at the CTA's start)."""
    lanes = int(rng.integers(1, 1 << valid))
    bar = 0x100 + 8 * int(rng.integers(2))
    if rng.random() < 0.5:
        return ("mbar_arrive", ctaid, linear, warp, lanes, bar, int(rng.integers(1, 3)))
    return ("mbar_wait", ctaid, linear, warp, lanes, bar, int(rng.integers(2)))


def stream(seed: int, mbar: bool = False):
    """(size, nwarps, events): one worker's random run of several CTAs
    (``mbar``: with mbarrier arrives and waits)."""
    rng = np.random.default_rng(seed)
    nthreads = int(rng.integers(1, 129))
    nwarps = (nthreads + 31) // 32
    size = int(rng.choice([8, 16, 40, 64]))
    instrs = [(int(rng.choice([KIND_LOAD, KIND_LOAD, KIND_STORE, KIND_ATOMIC])),
               int(rng.choice([1, 2, 4, 8, 16])), bool(rng.integers(2))) for _ in range(6)]
    events = []
    for linear in range(int(rng.integers(1, 4))):
        ctaid = (linear % 2, linear // 2, 0)
        if mbar:
            for bar in (0x100, 0x108):
                events.append(("mbar_init", ctaid, linear, 0, bar, int(rng.integers(1, 40))))
        for _ in range(int(rng.integers(20, 120))):
            warp = int(rng.integers(nwarps))
            if mbar and rng.random() < 0.2:
                events.append(mbar_event(rng, ctaid, linear, warp, min(32, nthreads - 32 * warp)))
                continue
            if rng.random() < 0.1:
                ev = int(rng.integers(2))
                for w in (range(nwarps) if ev == 0 and rng.random() < 0.7 else [warp]):
                    events.append(("sync", ctaid, linear, w, ev))
                continue
            valid = min(32, nthreads - 32 * warp)
            lanes = int(rng.integers(1, 1 << valid)) if rng.random() < 0.6 else (1 << valid) - 1
            iid = int(rng.integers(len(instrs)))
            kind, nbytes, generic = instrs[iid]
            offs = lane_addresses(rng, size, nbytes)
            if generic:
                offs = np.abs(offs)
                addrs = (np.uint64(Lo.SEG_SHARED) << np.uint64(SHIFT)) | offs.astype(np.uint64)
            else:
                addrs = offs.astype(np.uint64)      # a negative offset wraps, as in the kernel
            inactive = ~((lanes >> np.arange(32)) & 1).astype(bool)
            addrs[inactive] = rng.integers(0, 1 << 62, size=int(inactive.sum())).astype(np.uint64)
            events.append(("access", ctaid, linear, warp, iid, addrs, lanes, kind, nbytes, generic))
    return size, nwarps, events


def run_both(fns, seed: int, mbar: bool = False):
    size, nwarps, events = stream(seed, mbar)
    nat, ref = Native(fns, size, nwarps), Reference(size, nwarps, SHIFT)
    for ev in events:
        a = getattr(nat, ev[0])(*ev[1:])
        b = getattr(ref, ev[0])(*ev[1:])
        assert a == b, ev           # both see a wait true or both false
    return nat.checker.hazards(), ref.log.entries()


def test_native_equals_reference_on_random_streams(native):
    seen = set()
    for seed in range(150):
        got, want = run_both(native, seed)
        assert [h.__dict__ for h in got] == [h.__dict__ for h in want], f"seed {seed}"
        seen |= {(h.kind, h.severity) for h in want}
    # the streams exercise every kind and severity, so the comparison can fail
    assert seen == {(k, s) for k in ("RAW", "WAR", "WAW") for s in ("error", "warning")}


def test_native_equals_reference_with_mbarriers(native):
    # The streams above with mbarrier arrives and waits: the native clocks
    # (racecheck_mbar.py) against the reference's explicit arrive events.
    # Without mbarrier ordering, the two differ (the reference orders more):
    # at least one stream must have hazards removed by an mbarrier.
    removed = 0
    for seed in range(120):
        got, want = run_both(native, seed, mbar=True)
        assert [h.__dict__ for h in got] == [h.__dict__ for h in want], f"seed {seed}"
        unordered = Reference(*stream(seed, mbar=True)[:2], SHIFT)
        for ev in stream(seed, mbar=True)[2]:
            if ev[0] in ("sync", "access"):
                getattr(unordered, ev[0])(*ev[1:])
        removed += sum(h.count for h in unordered.log.entries()) > sum(h.count for h in want)
    assert removed > 10


def test_atomics_and_barriers_order_native_checks(native):
    # Hand-made: warp 0 lane 0 and warp 1 lane 0 add to byte 0 (atomics: no
    # race); warp 1 then reads it (RAW against warp 0? no: the last write is
    # warp 1's own lane 0, the same thread); after a CTA barrier warp 0
    # stores it (WAR against warp 1's read? ordered by the barrier: none).
    nat = Native(native, 8, 2)
    zeros = np.zeros(32, np.uint64)
    nat.access((0, 0, 0), 0, 0, 1, zeros, 1, KIND_ATOMIC, 4, False)
    nat.access((0, 0, 0), 0, 1, 1, zeros, 1, KIND_ATOMIC, 4, False)
    nat.access((0, 0, 0), 0, 1, 2, zeros, 1, KIND_LOAD, 4, False)
    assert nat.checker.hazards() == []
    for w in (0, 1):
        nat.sync((0, 0, 0), 0, w, check_hooks.EV_BARRIER)
    nat.access((0, 0, 0), 0, 0, 3, zeros, 1, KIND_STORE, 4, False)
    assert nat.checker.hazards() == []
    # without a barrier: warp 1 lane 0 (thread 32) stores after warp 0's
    # store: one WAW error, first thread 0, later thread 32, byte 0
    nat.access((0, 0, 0), 0, 1, 4, zeros, 1, KIND_STORE, 4, False)
    (h,) = nat.checker.hazards()
    assert (h.kind, h.severity, h.count, h.first_iid, h.second_iid, h.first_thread,
            h.second_thread, h.offset) == ("WAW", "error", 1, 3, 4, 0, 32, 0)


# ------------------------------------------------ the same, on kernels
# The variant's ptxc_race / ptxc_race_sync renamed and wrapped: each call is
# first traced to Python (the events the reference then replays), then runs.
TRACED = R.TEXT.replace("define internal void @ptxc_race(", "define internal void @race_real(") \
    .replace("define internal void @ptxc_race_sync(", "define internal void @race_sync_real(") + """

declare void @test_trace_access(ptr, ptr, ptr, i32, ptr, i32, i32, i32, i64)
declare void @test_trace_sync(ptr, ptr, ptr, i32)

define internal void @ptxc_race(ptr %L, ptr %cta, ptr %ws, i32 %iid, ptr %addrs, i32 %lanes, i32 %kind, i32 %nbytes, i64 %lowmask) noinline {
  call void @test_trace_access(ptr %L, ptr %cta, ptr %ws, i32 %iid, ptr %addrs, i32 %lanes, i32 %kind, i32 %nbytes, i64 %lowmask)
  call void @race_real(ptr %L, ptr %cta, ptr %ws, i32 %iid, ptr %addrs, i32 %lanes, i32 %kind, i32 %nbytes, i64 %lowmask)
  ret void
}

define internal void @ptxc_race_sync(ptr %cta, ptr %ws, i32 %event) noinline {
  call void @test_trace_sync(ptr null, ptr %cta, ptr %ws, i32 %event)
  call void @race_sync_real(ptr %cta, ptr %ws, i32 %event)
  ret void
}"""

TRACE: list = []           # the events of the current launch
SHAPE: dict = {}           # its shared bytes and warps per CTA


def _trace_access(L, cta, ws, iid, addrs, lanes, kind, nbytes, lowmask):
    from ptxc.backends.llvm.instruments.racecheck import cta_info, warp_of
    ctaid, linear = cta_info(cta)
    a = np.frombuffer(ctypes.string_at(addrs, 256), dtype=np.uint64).copy()
    shared = int(np.frombuffer(ctypes.string_at(L + Lo.L_SHARED, 4), np.int32)[0])
    nwarps = int(np.frombuffer(ctypes.string_at(L + Lo.L_NWARPS, 4), np.int32)[0])
    SHAPE.update(size=shared, nwarps=nwarps)
    TRACE.append(("access", ctaid, linear, warp_of(ws), iid, a, lanes, kind, nbytes, lowmask != -1))


def _trace_sync(L, cta, ws, event):
    from ptxc.backends.llvm.instruments.racecheck import cta_info, warp_of
    ctaid, linear = cta_info(cta)
    TRACE.append(("sync", ctaid, linear, warp_of(ws), event))


_CALLBACKS = (C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_void_p, C.c_int32, C.c_void_p,
                          C.c_uint32, C.c_int32, C.c_int32, C.c_int64)(_trace_access),
              C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_void_p, C.c_int32)(_trace_sync))

CUDA = Path(__file__).parent / "cuda"
# (ptx, kernel, grid, block, inputs): partial last warps (48, 100, 50, 40
# threads), branches that leave lanes out, generic shared addresses (-G)
KERNELS = [
    ("racecheck.sm90.lineinfo.ptx", "reverse_nosync", 2, 48, lambda: (np.arange(64, dtype=np.float32),
                                                                     np.zeros(64, np.float32))),
    ("racecheck.sm90.lineinfo.ptx", "reduce_nosync", 3, 100, lambda: (np.ones(300, np.float32),
                                                                      np.zeros(3, np.float32))),
    ("racecheck.sm90.lineinfo.ptx", "reduce_sync", 2, 100, lambda: (np.ones(200, np.float32),
                                                                    np.zeros(2, np.float32))),
    ("racecheck.sm90.lineinfo.ptx", "last_writer", 2, 40, lambda: (np.zeros(1, np.int32),)),
    ("racecheck.sm90.lineinfo.ptx", "histogram", 2, 50, lambda: (np.arange(64, dtype=np.int32),
                                                                 np.zeros(4, np.int32))),
    ("racecheck.sm90.lineinfo.ptx", "warp_exchange", 1, 50, lambda: (np.arange(64, dtype=np.int32),
                                                                     np.zeros(64, np.int32))),
    ("reduce_shared.sm90.G.ptx", "reduce_sum", 3, 64, lambda: (np.arange(192, dtype=np.int32),
                                                               np.zeros(192, np.int32),
                                                               np.zeros(3, np.int32))),
]


@pytest.mark.parametrize("ptx,name,grid,block,inputs", KERNELS, ids=[k[1] for k in KERNELS])
def test_native_equals_reference_on_kernels(monkeypatch, ptx, name, grid, block, inputs):
    import ptxc
    from ptxc.backends.llvm.instruments import racecheck
    from ptxc.launcher.api import launch
    b = jit.llvm()
    b.add_symbol("test_trace_access", C.cast(_CALLBACKS[0], C.c_void_p).value)
    b.add_symbol("test_trace_sync", C.cast(_CALLBACKS[1], C.c_void_p).value)
    monkeypatch.setattr(R, "TEXT", TRACED)
    found = []
    real = racecheck.RaceChecker.hazards
    monkeypatch.setattr(racecheck.RaceChecker, "hazards", lambda self: found.extend(real(self)) or
                        found)
    module = ptxc.load(str(CUDA / ptx))
    k = next(x for x in module.kernels if name in x.name)
    TRACE.clear()
    SHAPE.clear()
    launch(module, k, (grid, 1, 1), (block, 1, 1), inputs(), mode="full", check="racecheck",
           threads=1)
    assert any(e[0] == "access" for e in TRACE)
    ref = Reference(SHAPE["size"], SHAPE["nwarps"], Lo.seg_shift(module))
    for ev in TRACE:
        getattr(ref, ev[0])(*ev[1:])
    assert [h.__dict__ for h in found] == [h.__dict__ for h in ref.log.entries()]
