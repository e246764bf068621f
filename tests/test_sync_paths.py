"""Barriers, atomics, arrive/wait barriers and clocks run in generated code:
no call into Python in a launch (callbacks.calls(), hand count 0), outputs
derived with numpy from the documented order (docs/launch.md: warps of a
CTA run in order between barriers, atomics of a warp in lane order, CTAs
with global atomics in linear order), and hybrid counters equal to full
ones. docs/performance-sync.md lists what still calls Python.

Kernels from nvcc (`nvcc -ptx -arch=sm_90 -O3 X.cu -o X.sm90.ptx`):
tests/cuda/shared_atomics.cu, tests/cuda/clock_delta.cu,
tests/cuda/mbarrier.cu, bench/kernels/sync_paths.cu (`-o sync_paths.ptx`).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm import callbacks

HERE = os.path.dirname(__file__)
CU = os.path.join(HERE, "cuda")
SYNC = os.path.join(HERE, "..", "bench", "kernels", "sync_paths.ptx")
NOPS = 12


def run(path, kernel, grid, block, args, mode="full"):
    """The profile and the Python callbacks of one launch."""
    m = ptxc.load(path)
    callbacks.reset_calls()
    prof = ptxc.launch(m, kernel, grid, block, args, mode=mode)
    return prof, sum(callbacks.calls().values())


# ------------------------------------------------------------ shared atomics
def model_shared_ops(a, init, n):
    """Sequential model: lanes t < n in order (one warp after the other;
    each operation has its own two words, so only the order within an
    operation matters)."""
    s = [int(x) for x in init]
    old = np.zeros((len(a), NOPS), np.int64)
    f = [np.float32(0.0), np.float32(0.5)]
    fold = np.zeros(len(a), np.float32)
    ll = [0, 1000]
    lold = np.zeros(len(a), np.uint64)
    u32 = lambda x: x & 0xFFFFFFFF                                  # noqa: E731
    s32 = lambda x: x - (1 << 32) if x & 0x80000000 else x           # noqa: E731
    for t in range(n):
        v = int(a[t])
        k, u = v & 1, u32(v)
        ops = [lambda o: s32(u32(o + v)), lambda o: min(o, v), lambda o: max(o, v),
               lambda o: s32(min(u32(o), u)), lambda o: s32(max(u32(o), u)),
               lambda o: 0 if u32(o) >= 17 else o + 1,
               lambda o: 13 if (o == 0 or u32(o) > 13) else o - 1,
               lambda o: v, lambda o: v if o == (v & 3) else o,
               lambda o: o & v, lambda o: o | v, lambda o: o ^ v]
        for j, op in enumerate(ops):
            o = s[2 * j + k]
            old[t, j] = o
            s[2 * j + k] = op(o)
        fold[t] = f[k]
        f[k] = np.float32(f[k] + np.float32(np.float32(v) * np.float32(0.1)))
        lold[t] = ll[k]
        ll[k] = (ll[k] + u * 3) % (1 << 64)
    return old.astype(np.int32), np.array(s, np.int32), fold, np.array(f, np.float32), lold, \
        np.array(ll, np.uint64)


@pytest.mark.parametrize("n", [1, 23, 32, 45, 64])
def test_shared_atomics_lane_order_partial_warps(n):
    rng = np.random.default_rng(n)
    a = rng.integers(-50, 50, 64).astype(np.int32)
    a[:4] = [3, -7, 2**31 - 1, -2**31]
    init = rng.integers(-20, 20, 2 * NOPS).astype(np.int32)
    init[10:14] = [16, 17, 0, 14]                        # inc wraps, dec wraps
    outs = [np.zeros(64 * NOPS, np.int32), np.zeros(2 * NOPS, np.int32), np.zeros(64, np.float32),
            np.zeros(2, np.float32), np.zeros(64, np.uint64), np.zeros(2, np.uint64)]
    prof, calls = run(os.path.join(CU, "shared_atomics.sm90.ptx"), "shared_ops", 1, 64,
                      [a, init, outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], n])
    old, fin, fold, ffin, lold, lfin = model_shared_ops(a, init, n)
    np.testing.assert_array_equal(outs[0].reshape(64, NOPS)[:n], old[:n])
    np.testing.assert_array_equal(outs[0].reshape(64, NOPS)[n:], 0)
    np.testing.assert_array_equal(outs[1], fin)
    np.testing.assert_array_equal(outs[2][:n].view(np.uint32), fold[:n].view(np.uint32))
    np.testing.assert_array_equal(outs[3].view(np.uint32), ffin.view(np.uint32))
    np.testing.assert_array_equal(outs[4][:n], lold[:n])
    np.testing.assert_array_equal(outs[5], lfin)
    assert calls == 0
    hyb, _ = run(os.path.join(CU, "shared_atomics.sm90.ptx"), "shared_ops", 1, 64,
                 [a, init] + [np.zeros_like(o) for o in outs] + [n], mode="hybrid")
    assert hyb.counters() == prof.counters()


# ------------------------------------------------------------ bench kernels
def test_histogram_shared_atomics():
    n = 5000                                             # the last warp is partial
    data = np.random.default_rng(1).integers(0, 1 << 30, n).astype(np.uint32)
    hist = np.zeros(256, np.uint32)
    prof, calls = run(SYNC, "hist_shared", 3, 128, [data, hist, n])
    np.testing.assert_array_equal(hist, np.bincount(data & 255, minlength=256))
    assert calls == 0
    hyb, _ = run(SYNC, "hist_shared", 3, 128, [data, np.zeros(256, np.uint32), n], mode="hybrid")
    assert hyb.counters() == prof.counters()


def test_reduction_with_syncthreads():
    """The kernel's order: v = in[i] + in[i + 256], then s[t] += s[t + k]
    for k = 128, 64, ... 1 (float32, numpy in the same order)."""
    n = 4 * 512 - 100
    x = np.random.default_rng(2).uniform(-1, 1, n).astype(np.float32)
    out = np.zeros(4, np.float32)
    prof, calls = run(SYNC, "reduce_sync", 4, 256, [x, out, n])
    pad = np.zeros(4 * 512, np.float32)
    pad[:n] = x
    for b in range(4):
        s = pad[b * 512:b * 512 + 256] + pad[b * 512 + 256:b * 512 + 512]
        k = 128
        while k:
            s[:k] = s[:k] + s[k:2 * k]
            k //= 2
        assert out[b].view(np.uint32) == s[0].view(np.uint32)
    assert calls == 0


def test_global_atomics_tickets_in_order():
    """CTAs of a kernel with global atomics run in linear order, warps in
    order, lanes in lane order: thread i gets ticket i."""
    n = 1000
    ctr, ticket = np.zeros(65, np.int32), np.full(1024, -1, np.int32)
    prof, calls = run(SYNC, "atom_global", 4, 256, [ctr, ticket, n])
    i = np.arange(n)
    np.testing.assert_array_equal(ctr[:64], np.bincount(i & 63, weights=i & 7, minlength=64))
    assert ctr[64] == n
    np.testing.assert_array_equal(ticket[:n], i)
    assert (ticket[n:] == -1).all() and calls == 0


def test_mbarrier_arrive_wait_without_python():
    x = np.random.default_rng(3).uniform(-1, 1, 3 * 96).astype(np.float32)
    out = np.zeros_like(x)
    prof, calls = run(os.path.join(CU, "mbarrier.sm90.ptx"), "neighbour", 3, 96, [out, x])
    want = 2 * x.reshape(3, 96)[:, (np.arange(96) + 1) % 96]
    np.testing.assert_array_equal(out.reshape(3, 96), want)
    assert calls == 0


# ------------------------------------------------------------ clocks
CLOCK = os.path.join(CU, "clock_delta.sm90.ptx")


# (entry block, loop block, exit block) sizes; the start read has 9
# instructions before it in each kernel, the loop's read is its 2nd.
SHAPES = {"spin64": (11, 6, 8), "spin32": (12, 7, 10), "spin_timer": (11, 6, 8)}


@pytest.mark.parametrize("kernel", sorted(SHAPES))
@pytest.mark.parametrize("cycles", [0, 3, 4, 1000, 20_000_000])
def test_spin_ends_after_cycles_instructions(kernel, cycles):
    """One warp alone in its CTA (hand count of clock_delta.sm90.ptx; spin32:
    nvcc reads %clock64 and truncates, one more instruction per block, two
    in the exit). With entry E, loop L and exit X instructions: in
    iteration k (from 0) the loop's read has E + L k + 1 before it, so
    delta = E - 8 + L k; the loop leaves at the first k with delta >=
    cycles: delta >= cycles, delta < cycles + L (when cycles > E - 8),
    iterations k + 1, and the warp executes E + L (k + 1) + X instructions.
    20e6 cycles: 10 ms of a 2 GHz SM, as simpleHyperQ's clock_block spins."""
    E, L, X = SHAPES[kernel]
    k = max(0, -(-(cycles - (E - 8)) // L))
    delta, iters = np.zeros(32, np.int64), np.zeros(32, np.int32)
    prof, calls = run(CLOCK, kernel, 1, 32, [cycles, delta, iters])
    assert (delta == E - 8 + L * k).all() and (iters == k + 1).all()
    assert (delta >= cycles).all()
    if cycles > E - 8:
        assert (delta < cycles + L).all()
    assert prof.inst_executed == E + L * (k + 1) + X
    assert calls == 0


def test_spin_two_warps_same_delta():
    delta, iters = np.zeros(64, np.int64), np.zeros(64, np.int32)
    run(CLOCK, "spin64", 1, 64, [5000, delta, iters])
    k = -(-(5000 - 3) // 6)
    assert (delta == 3 + 6 * k).all() and (iters == k + 1).all()
