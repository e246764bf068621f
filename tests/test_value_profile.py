"""Value profiling (docs/value-profile.md): launch(value_profile=True).

The kernels are tests/value_profile/valueprof.cu, compiled by nvcc 13.0 with
``nvcc -ptx -arch=sm_90 -O3 valueprof.cu -o valueprof.sm90.ptx`` (the
README there). Expected masks and counts are derived by hand in the
comments, or computed by a numpy model of the registers' values from the
inputs (``model``), never taken from a ptxc run.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import ptxc
from ptxc.errors import PtxcError
from ptxc.launcher.value_profile import bit_string, constant_bits, rows, summarize

PTX = os.path.join(os.path.dirname(__file__), "value_profile", "valueprof.sm90.ptx")


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


def run(module, kernel, grid, block, args, **kw):
    return ptxc.launch(module, kernel, grid=grid, block=block, args=args, mode="full",
                       value_profile=True, **kw)


def row(prof, opcode, register=None):
    """The one row of ``opcode`` (and ``register``)."""
    hits = [r for r in rows(prof.value_profile) if r["opcode"] == opcode
            and (register is None or r["register"] == register)]
    assert len(hits) == 1, (opcode, register, hits)
    return hits[0]


def expect(r, mask, scalar, writes, lanes):
    assert (r["mask"], r["scalar_writes"], r["writes"], r["lanes"]) == (mask, scalar, writes, lanes)


# ------------------------------------------------------------ by hand
def test_and_mask(module):
    # r = tid.x & 0xF0 over tid 0..255: bits 7..4 take every value (T),
    # bits 31..8 and 3..0 are always 0. Within a warp (32 consecutive tids)
    # bit 4 differs: no write is scalar. 8 warps, 256 lanes.
    p = run(module, "vp_mask", 1, 256, [np.zeros(256, np.uint32)])
    expect(row(p, "and.b32"), "0" * 24 + "TTTT" + "0000", 0, 8, 256)
    assert "scalar writes" in p.summary()
    expect(row(p, "mov.u32"), "0" * 24 + "T" * 8, 0, 8, 256)      # %tid.x itself


def test_block_index_is_scalar(module):
    # b = blockIdx.x * 4: with one CTA it is 0 in every lane (all bits
    # constant 0, both warps scalar); with 3 CTAs it is 0, 4, 8: bits 3..2
    # vary, and each warp lies in one CTA, so all 3 x 2 writes are scalar.
    p = run(module, "vp_scalar", 1, 64, [np.zeros(64, np.uint32)])
    expect(row(p, "shl.b32"), "0" * 32, 2, 2, 64)
    p = run(module, "vp_scalar", 3, 64, [np.zeros(192, np.uint32)])
    expect(row(p, "shl.b32"), "0" * 28 + "TT00", 6, 6, 192)
    expect(row(p, "mov.u32", "%r1"), "0" * 30 + "TT", 6, 6, 192)  # %ctaid.x: 0, 1, 2


def test_loop_counter_is_scalar(module):
    # for (i = 0; i < 5; i++): `add.s32 %r17, %r17, 1` writes 1..5 (001 ..
    # 101: bits 2..0 vary) once per iteration and warp: 5 x 2 = 10 writes,
    # all scalar. The exit test `setp.lt %p2` is true for 1..4, false for 5
    # (T), scalar too. `mov.u32 %r19, 0` of the n <= 0 path never runs: X.
    x = np.arange(5 * 64, dtype=np.uint32)
    p = run(module, "vp_loop", 1, 64, [x, np.zeros(64, np.uint32), 5])
    expect(row(p, "add.s32", "%r17"), "0" * 29 + "TTT", 10, 10, 320)
    expect(row(p, "setp.lt.s32"), "T", 10, 10, 320)
    expect(row(p, "setp.gt.s32"), "1", 2, 2, 64)                   # n > 0
    never = [r for r in rows(p.value_profile) if r["writes"] == 0]
    assert [(r["opcode"], r["register"], r["mask"]) for r in never] == [("mov.u32", "%r19", "X" * 32)]


def test_guarded_write_counts_guard_true_lanes(module):
    # `@p mov.b32 %r1, 0x1234` with p = tid & 1: 16 lanes per warp execute
    # it, all writing 0x1234 (constant bits, scalar); the other lanes keep
    # 255, which must not reach the mask. 2 warps of 64 threads.
    p = run(module, "vp_guard", 1, 64, [np.zeros(64, np.uint32)])
    expect(row(p, "mov.b32"), format(0x1234, "032b"), 2, 2, 32)


def test_summary_definitions():
    # Two registers: a 32-bit one with 4 varying bits, written 8 times by
    # warps (never scalar) and 256 times by threads; a predicate, constant,
    # written twice (scalar both times) by 64 threads.
    a = {"bits": 32, "ones": 0xF0, "zeros": 0xFFFFFFFF, "writes": 8, "scalar_writes": 0, "lanes": 256}
    b = {"bits": 1, "ones": 1, "zeros": 0, "writes": 2, "scalar_writes": 2, "lanes": 64}
    never = {"bits": 64, "ones": 0, "zeros": 0, "writes": 0, "scalar_writes": 0, "lanes": 0}
    assert (constant_bits(a), constant_bits(b), constant_bits(never)) == (28, 1, 0)
    assert bit_string(never) == "X" * 64
    s = summarize([a, b, never])
    assert s["static_const_bits_pct"] == round(100 * 29 / 33, 4)                 # (28 + 1) / (32 + 1)
    assert s["dynamic_const_bits_pct"] == round(100 * (28 * 256 + 64) / (32 * 256 + 64), 4)
    assert s["static_scalar_pct"] == 50.0                                       # b of {a, b}
    assert s["dynamic_scalar_pct"] == 20.0                                      # 2 of 10 writes
    assert (s["registers"], s["register_bits"], s["writes"], s["scalar_writes"]) == (2, 33, 10, 2)


# ------------------------------------------------------------ numpy model
def model(values, active, bits):
    """(ones, zeros, writes, scalar writes, lanes) of one register from its
    per-thread ``values`` (linear thread order, warps of 32) and the threads
    that executed the write."""
    width = (1 << bits) - 1
    v = [int(x) & width for x in np.asarray(values).reshape(-1)]
    act = np.asarray(active).reshape(-1)
    ones = zeros = writes = scalar = lanes = 0
    for w in range(0, len(v), 32):
        got = [v[k] for k in range(w, w + 32) if act[k]]
        if not got:
            continue
        writes += 1
        lanes += len(got)
        scalar += len(set(got)) == 1
        for x in got:
            ones |= x
            zeros |= ~x & width
    return ones, zeros, writes, scalar, lanes


def check(prof, opcode, register, values, active, bits):
    ones, zeros, writes, scalar, lanes = model(values, active, bits)
    e = {"bits": bits, "ones": ones, "zeros": zeros, "writes": writes}
    r = row(prof, opcode, register)
    assert r["bits"] == bits
    expect(r, bit_string(e), scalar, writes, lanes)


def test_xor_numpy_model(module):
    rng = np.random.default_rng(14)
    n, grid, block, c = 1000, 4, 256, 0x0F0F1234
    x = rng.integers(0, 2 ** 32, size=1024, dtype=np.uint32)
    x[64:96] = 7                      # warp 2: every lane loads 7 -> scalar load and xor
    x[128:160] = x[128]               # warp 4 too
    i = np.arange(grid * block)
    active = i < n
    p = run(module, "vp_xor", grid, block, [x, np.zeros(1024, np.uint32), c, n])
    check(p, "mad.lo.s32", "%r1", i, np.ones_like(active), 32)
    check(p, "setp.ge.s32", "%p1", i >= n, np.ones_like(active), 1)
    check(p, "ld.global.u32", "%r7", x, active, 32)
    check(p, "xor.b32", "%r8", x ^ np.uint32(c), active, 32)
    check(p, "mul.wide.s32", "%rd4", i.astype(np.int64) * 4, active, 64)


def test_float_registers_as_bits(module):
    rng = np.random.default_rng(3)
    n = 200
    x = (rng.standard_normal(256) * 100).astype(np.float32)
    x[32:64] = 1.5                    # warp 1: scalar
    active = np.arange(256) < n
    p = run(module, "vp_scale", 1, 256, [x, np.zeros(256, np.float64), n])
    check(p, "ld.global.f32", "%f1", x.view(np.uint32), active, 32)
    check(p, "add.f32", "%f2", (x + x).view(np.uint32), active, 32)
    check(p, "cvt.f64.f32", "%fd1", (x + x).astype(np.float64).view(np.uint64), active, 64)


def test_vector_destinations(module):
    # ld.global.v2.u32 {%r2, %r3}: one entry per register of the vector.
    pairs = np.random.default_rng(8).integers(0, 2 ** 32, size=128, dtype=np.uint32)
    pairs[64:] = 0xFFFF0000           # warp 1: every lane loads (0xFFFF0000, 0xFFFF0000)
    p = run(module, "vp_vec", 1, 64, [pairs, np.zeros(64, np.uint32)])
    every = np.ones(64, bool)
    check(p, "ld.global.v2.u32", "%r2", pairs[0::2], every, 32)
    check(p, "ld.global.v2.u32", "%r3", pairs[1::2], every, 32)
    check(p, "xor.b32", "%r6", pairs[0::2] ^ pairs[1::2], every, 32)


def test_b128_register(module):
    # mov.b128 q, {tid, 0xABCD << 32}: bits 127..64 hold 0x0000ABCD00000000,
    # bits 63..0 the thread index 0..63 (bits 5..0 vary); 2 warps, none
    # scalar. Unpacking q again gives the halves as two 64-bit registers.
    p = run(module, "vp_wide", 1, 64, [np.zeros(64, np.uint64)])
    hi = format(0xABCD << 32, "064b")
    expect(row(p, "mov.b128", "q"), hi + "0" * 58 + "T" * 6, 0, 2, 64)
    expect(row(p, "mov.b128", "%rd1"), "0" * 58 + "T" * 6, 0, 2, 64)
    expect(row(p, "mov.b128", "%rd2"), hi, 2, 2, 64)


def test_inlined_calls_merge_into_the_callee(module):
    # low4(x) = x & 0xF, called with tid (0..63) and blockIdx.x (0): the
    # callee's and.b32 holds tid & 0xF (bits 3..0 vary) at the first call
    # and 0 (scalar) at the second: one entry, 2 calls x 2 warps = 4
    # writes, 2 scalar, 128 lanes.
    p = run(module, "vp_call", 1, 64, [np.zeros(64, np.uint32)])
    r = row(p, "and.b32")
    assert r["function"] == "_Z4low4j"
    expect(r, "0" * 28 + "TTTT", 2, 4, 128)


def test_barrier_reduction_results(module):
    # __syncthreads_count(tid < 40) over 64 threads: bar.red.popc writes 40
    # to every lane after the barrier (constant, both warps scalar);
    # __syncthreads_or(tid == 3): bar.red.or.pred writes true everywhere.
    p = run(module, "vp_bar", 1, 64, [np.zeros(64, np.uint32)])
    expect(row(p, "bar.red.popc.u32"), format(40, "032b"), 2, 2, 64)
    expect(row(p, "bar.red.or.pred"), "1", 2, 2, 64)


def test_mbarrier_wait_that_yields():
    # tests/cuda/mbarrier.sm90.ptx, kernel neighbour (test_mbarrier.py has
    # the schedule): per CTA of 4 warps, warps 0-2 find the phase open at
    # their first try_wait (p false in every lane), save the warp and yield;
    # warp 3 completes the phase (p true); warps 0-2 resume and succeed at
    # the retry. 7 writes per CTA, each uniform (the phase is the CTA's),
    # p seen false and true: mask T, 2 CTAs -> 14 writes, 14 scalar. The
    # write before a yield is counted once, not again at the resumption.
    m = ptxc.load(os.path.join(os.path.dirname(__file__), "cuda", "mbarrier.sm90.ptx"))
    inp = np.random.default_rng(5).random(256, dtype=np.float32)
    p = run(m, "neighbour", 2, 128, [np.zeros_like(inp), inp])
    expect(row(p, "mbarrier.try_wait.shared.b64"), "T", 14, 14, 448)
    plain = ptxc.launch(m, "neighbour", 2, 128, [np.zeros_like(inp), inp], mode="full")
    assert p.counters() == plain.counters()


def test_cooperative_launch():
    # tests/cuda/coop.sm90.ptx, neighbour on 8 CTAs (one worker each; the
    # workers' masks are OR-ed): the grid-sync spin load runs in one lane of
    # one warp per CTA, 7 x 2 + 1 = 15 times (test_cooperative.py derives
    # it): 15 writes of one lane, each trivially scalar.
    m = ptxc.load(os.path.join(os.path.dirname(__file__), "cuda", "coop.sm90.ptx"))
    args = lambda: [np.zeros(1000, np.int32), np.zeros(1000, np.int32), 1000]   # noqa: E731
    p = run(m, "neighbour", 8, 128, args(), cooperative=True)
    r = row(p, "ld.acquire.gpu.u32")
    assert (r["writes"], r["scalar_writes"], r["lanes"]) == (15, 15, 15)
    plain = ptxc.launch(m, "neighbour", 8, 128, args(), mode="full", cooperative=True)
    assert p.counters() == plain.counters()


# ------------------------------------------------------------ properties
def test_any_thread_count_gives_the_same_profile(module):
    x = np.random.default_rng(5).integers(0, 2 ** 32, size=2048, dtype=np.uint32)
    one = run(module, "vp_xor", 16, 128, [x, np.zeros(2048, np.uint32), 99, 2000], threads=1)
    four = run(module, "vp_xor", 16, 128, [x, np.zeros(2048, np.uint32), 99, 2000], threads=4)
    assert one.value_profile == four.value_profile


def test_counters_unchanged_by_value_profiling(module):
    # The variant adds helper calls only: every counter of a value-profiled
    # full run equals an unprofiled full run, and the hybrid run's.
    x = np.random.default_rng(6).integers(0, 2 ** 32, size=1024, dtype=np.uint32)
    args = lambda: [x, np.zeros(1024, np.uint32), 5, 1000]      # noqa: E731
    prof = run(module, "vp_xor", 4, 256, args())
    full = ptxc.launch(module, "vp_xor", grid=4, block=256, args=args(), mode="full")
    hybrid = ptxc.launch(module, "vp_xor", grid=4, block=256, args=args(), mode="hybrid")
    assert full.value_profile is None
    assert prof.counters() == full.counters() == hybrid.counters()


def test_combines_with_memory_counters_and_memcheck(module):
    # Each option is a variant of its own code; together they give what
    # each gives alone.
    x = np.random.default_rng(7).integers(0, 2 ** 32, size=512, dtype=np.uint32)
    args = lambda: [x, np.zeros(512, np.uint32), 3, 500]        # noqa: E731
    alone = run(module, "vp_xor", 2, 256, args())
    mem = ptxc.launch(module, "vp_xor", grid=2, block=256, args=args(), mode="full",
                      memory_counters=True)
    both = run(module, "vp_xor", 2, 256, args(), memory_counters=True)
    checked = run(module, "vp_xor", 2, 256, args(), check="memcheck")
    assert both.value_profile == alone.value_profile == checked.value_profile
    assert both.counters() == mem.counters() and checked.mem_errors == []


def test_hybrid_is_refused(module):
    with pytest.raises(PtxcError, match="value profiling needs a full run"):
        ptxc.launch(module, "vp_mask", grid=1, block=32, args=[np.zeros(32, np.uint32)],
                    mode="hybrid", value_profile=True)


def test_default_code_is_unchanged(module):
    # The profiled variant is a code generation of its own: the default
    # code calls no value-profile helper.
    from ptxc.backends.llvm.codegen import KernelCodegen
    from ptxc.backends.llvm.plan import Plan
    fn = next(k for k in module.kernels if k.name == "vp_xor")
    plain = KernelCodegen(Plan(module, fn), "full")
    profiled = KernelCodegen(Plan(module, fn), "full")
    profiled.value_profile = True
    assert "ptxc_vp" not in plain.generate() and not plain.value_ctr
    assert "@ptxc_vp1(" in profiled.generate() and profiled.value_ctr
