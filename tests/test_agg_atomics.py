"""Warp-aggregated integer atomic adds (backends/llvm/ops/atomic_aggregate.py)
against the lane loop they replace (PTXC_AGG_ATOMICS=0) and against values
derived by hand: lanes a branch leaves out, partial warps, several CTAs,
32- and 64-bit counters (a 64-bit sum that carries past 2^32), a
__device__ counter, results used and unused, and warps whose lanes add to
different words. Kernels: tests/cuda/agg_atomics.cu (nvcc PTX).

The old values follow from the executor's order (METRICS.md: CTAs in linear
order when their atomics return values, warps of a CTA in order, lanes in
lane order): thread t receives the sum of the additions of the threads
before it."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import jit
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.backends.llvm.runtime import ModuleMemory
from ptxc.launcher.api import launch_segments
from switches import each_setting

PTX = Path(__file__).parent / "cuda" / "agg_atomics.sm90.ptx"


def both(monkeypatch, run):
    """[aggregated result, lane-loop result] of ``run()`` (a fresh module each)."""
    return each_setting(monkeypatch, "PTXC_AGG_ATOMICS", ("1", "0"), run)


def test_switch_changes_code(monkeypatch):
    def text():
        m = ptxc.load(str(PTX))
        k = next(f for f in m.kernels if f.name == "tickets")
        return jit.compile_kernel(m, k, "full", 0, keep_ir=True).ir_text
    agg, loop = both(monkeypatch, text)
    assert agg.count("llvm.vector.reduce.add.v32i32(") >= 3 and "llvm.vector.reduce.add" not in loop


@pytest.mark.parametrize("grid, block", [(1, 32), (3, 48), (2, 100)])
def test_tickets(monkeypatch, grid, block):
    n = grid * block
    seg_ctr, seg_out = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 1

    def run():
        m = ptxc.load(str(PTX))
        memory = ModuleMemory.for_module(m)
        ctr, out = np.zeros(2, np.int32), np.zeros(n, np.int32)
        prof = launch_segments(m, "tickets", grid, block, struct.pack("<QQ", seg_ctr << 32, seg_out << 32),
                               {seg_ctr: ctr.view(np.uint8), seg_out: out.view(np.uint8)}, mode="full",
                               memory=memory, memory_counters=True)
        hits = struct.unpack_from("<I", memory.globals, 0)[0]
        return ctr.tolist(), out.tolist(), hits, prof.counters(), prof.memory
    agg, loop = both(monkeypatch, run)
    assert agg == loop
    t = np.arange(n)
    takes = t % 3 != 0
    adds = np.where(takes, t % 5 + 1, 0)
    before = np.cumsum(adds) - adds
    assert agg[1] == np.where(takes, before, -1).tolist()
    assert agg[0] == [int(adds.sum()), 2 * n] and agg[2] == n


@pytest.mark.parametrize("n", [1, 31, 33, 64])
def test_tickets_64_bit(monkeypatch, n):
    start = (1 << 32) - 5                       # the sums carry into the high word

    def run():
        ctr, out = np.array([start], np.uint64), np.zeros(64, np.uint64)
        prof = ptxc.launch(ptxc.load(str(PTX)), "tickets64", (2,), (32,), [ctr, out, n], mode="full")
        return ctr.tolist(), out.tolist(), prof.counters()
    agg, loop = both(monkeypatch, run)
    assert agg == loop
    t = np.arange(64, dtype=np.uint64)
    want = np.where(t < n, start + t * (t + 1) // 2, 0)
    assert agg[1] == want.tolist() and agg[0] == [start + n * (n + 1) // 2]


@pytest.mark.parametrize("k", [1, 2, 3, 32])
def test_spread(monkeypatch, k):
    """ctr[t % k]: one word per warp for k = 1, the lane loop otherwise;
    thread t sees the threads before it with the same t % k."""
    def run():
        ctr, out = np.zeros(32, np.int32), np.zeros(80, np.int32)
        prof = ptxc.launch(ptxc.load(str(PTX)), "spread", (2,), (40,), [ctr, out, k], mode="full",
                           memory_counters=True)
        return ctr.tolist(), out.tolist(), prof.counters(), prof.memory
    agg, loop = both(monkeypatch, run)
    assert agg == loop
    t = np.arange(80)
    assert agg[1] == (t // k).tolist()
    assert agg[0][:k] == np.bincount(t % k, minlength=k).tolist()
