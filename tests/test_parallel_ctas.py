"""CTAs run on two worker threads give exactly what one thread gives.

tests/cuda/parallel_ctas.cu (nvcc -O3, sm_90): a tiled matrix multiply, a
tiled transpose, a shared-memory histogram, a reduction whose loop trip
counts depend on the data, a global-atomics histogram and integer max/or
atomics (which commute: backends/llvm/atomic_order.py), and atomics that
must run on one worker in CTA order: a ticket whose value is used, a float
sum (runtime.Launch, Compiled.in_order). For each, a launch with
``threads=1`` and one with ``threads=2`` (full and hybrid) must give output
buffers equal to numpy's, identical to each other byte for byte, and every
counter identical: totals, per basic block, per branch and per CTA (the raw
per-CTA array of the launch). A spy on runtime.Launch records how many
workers each run used, so that the parallel case is known to be parallel.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import runtime

PTX = Path(__file__).parent / "cuda" / "parallel_ctas.sm90.ptx"


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


@pytest.fixture
def spy(monkeypatch):
    """[(workers, per-CTA counter array)] of each launch run in this test."""
    seen = []
    parallel, run = runtime.Launch._run_parallel, runtime.Launch.run

    def run_parallel(self, workers):
        seen.append([len(workers), None])
        return parallel(self, workers)

    def run_spy(self, classes=None):
        out = run(self, classes)
        if seen and seen[-1][1] is None:
            seen[-1][1] = None if self.per_cta is None else self.per_cta.copy()
        return out

    monkeypatch.setattr(runtime.Launch, "_run_parallel", run_parallel)
    monkeypatch.setattr(runtime.Launch, "run", run_spy)
    return seen


def counters(prof) -> dict:
    d = asdict(prof)
    d.pop("timings")
    return d


def rng(seed=0):
    return np.random.default_rng(seed)


def case_matmul():
    n = 64
    a = rng(1).integers(0, 4, (n, n)).astype(np.float32)      # small integers: exact sums
    b = rng(2).integers(0, 4, (n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    return "matmul_tiled", (n // 16, n // 16, 1), (16, 16, 1), [a, b, c, n], [2], [a @ b]


def case_transpose():
    rows, cols = 80, 100
    x = rng(3).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros((cols, rows), np.float32)
    return ("transpose_tiled", (-(-cols // 32), -(-rows // 32), 1), (32, 8, 1),
            [x, out, rows, cols], [1], [x.T])


def case_histogram_shared():
    n, grid, block = 20000, 24, 128
    data = rng(4).integers(0, 256, n).astype(np.uint8)
    hist = np.zeros((grid, 64), np.uint32)
    want = np.zeros((grid, 64), np.uint32)
    idx = np.arange(n)
    owner = (idx // block) % grid                          # the grid-stride loop's CTA of element i
    np.add.at(want, (owner, data & 63), 1)
    return "histogram_shared", (grid, 1, 1), (block, 1, 1), [data, hist, n], [1], [want]


def case_reduce_varying():
    grid = 40
    src = rng(5).integers(0, 1 << 20, grid * 128).astype(np.int32)
    out = np.zeros(grid, np.int32)
    terms = np.array([sum(int(v) >> k for k in range(int(v) & 7)) for v in src], np.int64)
    want = terms.reshape(grid, 128).sum(axis=1).astype(np.int32)
    return "reduce_varying", (grid, 1, 1), (128, 1, 1), [src, out], [1], [want]


def case_histogram_global():
    n = 10000
    data = rng(6).integers(0, 256, n).astype(np.uint8)
    hist = np.zeros(256, np.uint32)
    want = np.bincount(data, minlength=256).astype(np.uint32)
    return "histogram_global", (16, 1, 1), (128, 1, 1), [data, hist, n], [1], [want]


def case_max_or():
    x = rng(7).integers(-1 << 30, 1 << 30, 20 * 96).astype(np.int32)
    mx, bits = np.full(1, -(1 << 31), np.int32), np.zeros(1, np.uint32)
    want_bits = np.bitwise_or.reduce((np.uint32(1) << (x & 31).astype(np.uint32)).astype(np.uint32))
    return "max_or", (20, 1, 1), (96, 1, 1), [x, mx, bits], [1, 2], [x.max(keepdims=True),
                                                                        np.array([want_bits])]


def case_ticket_slots():
    count, slots = np.zeros(1, np.uint32), np.zeros(12 * 64, np.uint32)
    # in linear CTA order and lane order, thread g takes ticket g
    return ("ticket_slots", (12, 1, 1), (64, 1, 1), [count, slots], [0, 1],
            [np.array([768], np.uint32), np.arange(768, dtype=np.uint32)])


def case_float_sum():
    x = rng(8).standard_normal(16 * 128).astype(np.float32)
    s = np.zeros(1, np.float32)
    want = np.zeros(1, np.float32)
    for v in x:                          # the float adds in linear thread order, rounded each time
        want[0] = np.float32(want[0] + v)
    return "float_sum", (16, 1, 1), (128, 1, 1), [x, s], [1], [want]


CASES = {f.__name__[5:]: f for f in (case_matmul, case_transpose, case_histogram_shared,
                                     case_reduce_varying, case_histogram_global, case_max_or,
                                     case_ticket_slots, case_float_sum)}
IN_ORDER = {"ticket_slots", "float_sum"}     # full runs: one worker


def run_case(module, name: str, mode: str, threads: int):
    kernel, grid, block, args, outs, wants = CASES[name]()
    prof = ptxc.launch(module, kernel, grid, block, args, mode=mode, threads=threads)
    got = [args[k] for k in outs]
    if mode == "full":
        for g, w in zip(got, wants):
            np.testing.assert_array_equal(g, w)
    return prof, got


@pytest.mark.parametrize("mode", ["full", "hybrid"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_two_threads_equal_one(module, spy, name, mode):
    one, got1 = run_case(module, name, mode, threads=1)
    two, got2 = run_case(module, name, mode, threads=2)
    assert counters(one) == counters(two)
    assert one.inst_executed > 0 and one.per_cta
    for a, b in zip(got1, got2):
        assert a.tobytes() == b.tobytes()
    if spy:                                # hybrid runs may run one CTA per class instead
        (w1, cta1), (w2, cta2) = spy[0], spy[-1]
        assert w1 == 1
        # order-dependent atomics run in CTA order; the hybrid slice leaves out the float sum
        # (nothing reads it) but keeps the ticket (it addresses a store, checked for faults)
        assert w2 == (1 if name in IN_ORDER and (mode == "full" or name == "ticket_slots") else 2)
        assert np.array_equal(cta1, cta2)
    else:
        assert mode == "hybrid"


def test_per_cta_counts_differ(module):
    """The data-dependent loop gives CTAs different counts: the per-CTA
    comparison above does not compare equal numbers by construction."""
    prof, _ = run_case(module, "reduce_varying", "full", threads=2)
    stats = prof.per_cta["inst_executed"]
    assert prof.per_cta["ctas"] == 40 and stats["min"] < stats["max"]


@pytest.mark.parametrize("kernel, in_order", [
    ("histogram_global", False), ("max_or", False), ("histogram_shared", False),
    ("ticket_slots", True), ("float_sum", True)])
def test_which_atomics_commute(module, kernel, in_order):
    from ptxc.backends.llvm import jit
    c = jit.compile_kernel(module, module.function(kernel), "full", 0)
    assert c.in_order == in_order
