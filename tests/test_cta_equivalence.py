"""CTA equivalence (docs/cta-equivalence.md): a hybrid run that executes one
CTA per class must give exactly the counters of the hybrid run of every CTA
and of the full run, counter by counter (totals, per block, per branch, and
the per-CTA min/max/mean/argmin/argmax).

The number of CTAs run is derived by hand for each launch (the comment above
each case says how); the full runs' outputs are checked against numpy.
Kernels: tests/cuda/cta_equiv.cu (nvcc -ptx -arch=sm_90 -O3).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.launcher.api import launch

CUDA = Path(__file__).resolve().parent / "cuda"
PTX = CUDA / "cta_equiv.sm90.ptx"


@pytest.fixture(scope="module")
def m():
    return ptxc.load(PTX)


def f32(n, seed=0):
    return np.random.default_rng(seed).random(n).astype(np.float32)


def three_runs(module, kernel, grid, block, make_args, **kw):
    """(reduced hybrid, every-CTA hybrid, full, the full run's arguments)."""
    reduced = launch(module, kernel, grid, block, make_args(), **kw)
    every = launch(module, kernel, grid, block, make_args(), cta_equivalence=False, **kw)
    args = make_args()
    full = launch(module, kernel, grid, block, args, mode="full")
    assert every.ctas_run == every.ctas_launched == full.ctas_run
    assert reduced.counters() == every.counters()
    assert every.counters() == full.counters()
    assert reduced.per_cta == full.per_cta and reduced.per_cta["ctas"] == reduced.ctas_launched
    return reduced, every, full, args


# --------------------------------------------------------- bounds checks
@pytest.mark.parametrize("n, classes", [
    (99 * 128 + 5, 2),      # CTAs 0..98 all in bounds, CTA 99 partly: 2 classes
    (50 * 128, 2),          # CTAs 0..49 all in, 50..99 all out: 2 classes
    (100 * 128, 1),         # every thread in bounds: 1 class
    (0, 1),                 # every thread out of bounds: 1 class
])
def test_linear_bounds_check(m, n, classes):
    x = f32(100 * 128)
    reduced, _, full, args = three_runs(m, "scale_bounded", 100, 128, lambda: [
        x, np.zeros(100 * 128, np.float32), 2.0, n])
    assert reduced.ctas_run == classes and reduced.ctas_launched == 100
    want = np.zeros(100 * 128, np.float32)
    want[:n] = 2.0 * x[:n]
    assert np.array_equal(args[1], want)


@pytest.mark.parametrize("grid, n, classes", [
    # stride 7*64 = 448; CTA c covers c*64 + [0, 64) + 448k. n = 1000:
    # CTA 0: 3 rounds (896..959 < 1000); CTA 1: 960..1023 is cut at 1000
    # (mixed); CTAs 2..6: 2 rounds. 3 classes.
    (7, 1000, 3),
    # stride 16*64 = 1024 > n: one round at most; CTA 15 (960..1023) mixed,
    # CTAs 0..14 one full round: 2 classes
    (16, 1000, 2),
    # stride 4*64 = 256, n = 1024 = 4 * 256: every CTA does 4 full rounds
    (4, 1024, 1),
])
def test_grid_stride_loop(m, grid, n, classes):
    x, y0 = f32(n), f32(n, 1)
    reduced, _, _, args = three_runs(m, "saxpy_stride", grid, 64, lambda: [x, y0.copy(), 1.5, n],
                                     check_faults=False)
    assert reduced.ctas_run == classes
    # Checking the skipped accesses (the default): the loop's addresses
    # x + 4i, y + 4i over its iterations (rule 6, loops) stay within the n
    # elements of x and y in every thread, so no CTA is split further
    checked, _, _, _ = three_runs(m, "saxpy_stride", grid, 64, lambda: [x, y0.copy(), 1.5, n])
    assert checked.ctas_run == classes and checked.cta_equivalence == f"{classes} classes"
    assert np.allclose(args[1], 1.5 * x.astype(np.float64) + y0, rtol=1e-6)    # fma


def test_2d_grid_partial_column_and_row(m):
    # w = 70 with 16-wide CTAs: columns 0..3 full, column 4 partial (64..79);
    # h = 30 with 8-high CTAs: rows 0..2 full, row 3 partial (24..31):
    # (full|partial column) x (full|partial row) = 4 classes of 20 CTAs
    w, h = 70, 30
    x = f32(w * h)
    reduced, _, _, args = three_runs(m, "tile2d", (5, 4), (16, 8), lambda: [
        x, np.zeros(w * h, np.float32), w, h])
    assert reduced.ctas_run == 4 and reduced.ctas_launched == 20
    assert np.array_equal(args[1], 2.0 * x)


def test_loop_count_from_block_index(m):
    # trip count blockIdx.x % 5 + 1 (5 values) and the bounds check i < n with
    # n = 23*64 - 10 cutting CTA 22 (22 % 5 = 2): CTAs 0..21 form 5 classes
    # by trip count, CTA 22 is mixed: 6 classes
    n = 23 * 64 - 10
    reduced, _, _, args = three_runs(m, "block_rounds", 23, 64, lambda: [
        np.zeros(23 * 64, np.float32), n])
    assert reduced.ctas_run == 6
    rounds = np.arange(n) // 64 % 5 + 1
    want = np.array([sum(0.5 ** j for j in range(r)) for r in rounds], np.float32)
    assert np.allclose(args[0][:n], want, rtol=1e-6)


def test_thread_index_against_block_index(m):
    # threadIdx.x < blockIdx.x with 64 threads: CTA 0 all false, CTAs 1..63
    # mixed (each its own class: the outcome splits at a different thread),
    # CTAs 64..199 all true: 1 + 63 + 1 = 65 classes
    reduced, _, _, args = three_runs(m, "triangle", 200, 64, lambda: [
        np.zeros(200 * 64, np.float32)])
    assert reduced.ctas_run == 65
    c, t = np.divmod(np.arange(200 * 64), 64)
    assert np.array_equal(args[0], (t < c).astype(np.float32))


def test_shared_memory_reduction(m):
    # 20 CTAs of 128, n = 2500: CTA 19 (2432..2559) is partial: 2 classes
    x = np.random.default_rng(6).integers(0, 9, 2560).astype(np.int32)
    reduced, _, _, args = three_runs(m, "block_sum", 20, 128, lambda: [
        x, np.zeros(20, np.int32), 2500])
    assert reduced.ctas_run == 2
    want = np.where(np.arange(2560) < 2500, x, 0).reshape(20, 128).sum(axis=1)
    assert args[1].tolist() == want.tolist()


def test_refuses_when_the_slice_reads_memory_at_a_block_index(m):
    flags = np.random.default_rng(5).integers(-1, 2, 10).astype(np.int32)
    reduced, _, _, args = three_runs(m, "block_flag", 10, 64, lambda: [
        flags, np.zeros(640, np.float32), 600])
    assert reduced.ctas_run == 10
    assert "address" in reduced.cta_equivalence and "depends on %ctaid" in reduced.cta_equivalence
    want = np.where(np.repeat(flags, 64)[:600] > 0, 1.0, 2.0)
    assert np.array_equal(args[1][:600], want)


def test_switch_off_and_full_mode_run_every_cta(m):
    args = [f32(1280), np.zeros(1280, np.float32), 2.0, 1000]
    off = launch(m, "scale_bounded", 10, 128, args, cta_equivalence=False)
    assert off.ctas_run == 10 and off.cta_equivalence == "off"
    full = launch(m, "scale_bounded", 10, 128, args, mode="full")
    assert full.ctas_run == 10


def test_cli_flag(m, tmp_path):
    from click.testing import CliRunner
    from ptxc.cli.main import cli
    base = ["opt", "--pass=slice,count", "--format=json", "--kernel", "scale_bounded",
            "--grid", "100", "--block", "128", "--arg", "0=zeros:f32:12800",
            "--arg", "1=zeros:f32:12800", "--arg", "2=1.0", "--arg", "3=12677", str(PTX)]
    import json
    runs = {}
    for flag in ([], ["--no-cta-equivalence"]):
        res = CliRunner().invoke(cli, base + flag)
        assert res.exit_code == 0, res.output
        runs[bool(flag)] = json.loads(res.output)["count"]["functions"]["scale_bounded"]["dynamic"]
    assert runs[False]["ctas_run"] == 2 and runs[True]["ctas_run"] == 100
    drop = ("ctas_run", "cta_equivalence", "timings")
    assert {k: v for k, v in runs[False].items() if k not in drop} == \
        {k: v for k, v in runs[True].items() if k not in drop}


# ------------------------------------------------------- other kernels
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "cuda"))
expected_counts = pytest.importorskip("expected_counts")
MULTI = [(f, k, spec) for (f, k), specs in expected_counts.EXPECTED.items() for spec in specs
         if np.prod(spec["grid"]) > 1]


@pytest.mark.parametrize("item", MULTI, ids=[f"{s['id']}-{k}" for f, k, s in MULTI])
def test_expected_counts_launches(item):
    """Every multi-CTA launch of tests/cuda/expected_counts.py: the reduced
    hybrid run equals the run of every CTA (hybrid == full and the counts
    themselves are checked in test_dynamic_kernels)."""
    from test_dynamic_kernels import make_args, module
    f, k, spec = item
    mod = module(f)
    runs = [launch(mod, k, spec["grid"], spec["block"], make_args(spec["args"])[1],
                   cta_equivalence=eq) for eq in (True, False)]
    assert runs[0].counters() == runs[1].counters()
    assert runs[1].ctas_run == runs[1].ctas_launched


# ------------------------------------------- exact (non-separable) values
def test_product_of_block_and_thread_index(m):
    # blockIdx.x * threadIdx.x < 300 with 64 threads: CTAs 0..4 all true
    # (4 * 63 < 300); CTA c >= 5 is true exactly for t < ceil(300 / c), so
    # CTAs with the same ceil(300 / c) form one class
    want = 1 + len({-(-300 // c) for c in range(5, 64)})
    reduced, _, _, args = three_runs(m, "product_bound", 64, 64, lambda: [
        np.zeros(64 * 64, np.float32), 300])
    assert reduced.ctas_run == want
    c, t = np.divmod(np.arange(64 * 64), 64)
    assert np.array_equal(args[0], (c * t < 300).astype(np.float32))


def test_or_of_overlapping_bits(m):
    # (blockIdx.x * 8) | threadIdx.x < 200 with 32 threads: the bits overlap,
    # so every (CTA, thread) outcome is computed; classes are the distinct
    # outcome rows (computed here with numpy)
    rows = {tuple(((c * 8) | np.arange(32)) < 200) for c in range(40)}
    reduced, _, _, args = three_runs(m, "or_bound", 40, 32, lambda: [
        np.zeros(40 * 32, np.float32), 200])
    assert reduced.ctas_run == len(rows)


@pytest.mark.parametrize("d, classes", [(4, 2), (0, 20)])
def test_division_by_a_parameter(m, d, classes):
    # blockIdx.x / 4 < 3: CTAs 0..11 in, 12..19 out: 2 classes; a zero
    # divisor is not classified (every CTA runs)
    reduced, _, _, _ = three_runs(m, "div_bound", 20, 32, lambda: [np.zeros(640, np.float32), d, 3])
    assert reduced.ctas_run == classes


def test_countdown_loop(m):
    # i = 20 - blockIdx.x, i -= 3 while i > 0: ceil((20 - c) / 3) rounds for
    # c < 20 (7 7 6 6 6 5 5 5 4 4 4 3 3 3 2 2 2 1 1 1), none for c >= 20: 8 classes
    reduced, _, _, args = three_runs(m, "countdown", 30, 32, lambda: [
        np.zeros(30 * 32, np.float32), 20])
    assert reduced.ctas_run == 8
    rounds = np.maximum(0, -(-(20 - np.arange(30)) // 3))
    assert np.array_equal(args[0], np.repeat(rounds, 32).astype(np.float32))


def test_launch_segments(m):
    """launch_segments (the CUDA runtime's entry point) reduces hybrid runs
    too; grid 100, n = 99*128 + 5: 2 classes."""
    import struct
    from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
    from ptxc.launcher.api import launch_segments
    s_x, s_y = SEG_FIRST_BUFFER, SEG_FIRST_BUFFER + 1
    params = struct.pack("<QQfI", s_x << 32, s_y << 32, 2.0, 99 * 128 + 5)
    runs = {}
    for mode, eq in (("hybrid", True), ("hybrid", False), ("full", True)):
        segs = {s_x: f32(12800).view(np.uint8), s_y: np.zeros(12800 * 4, np.uint8)}
        runs[(mode, eq)] = launch_segments(m, "scale_bounded", 100, 128, params, segs,
                                           mode=mode, cta_equivalence=eq)
    assert runs[("hybrid", True)].ctas_run == 2
    assert runs[("hybrid", False)].ctas_run == runs[("full", True)].ctas_run == 100
    assert runs[("hybrid", True)].counters() == runs[("hybrid", False)].counters() \
        == runs[("full", True)].counters()


def test_off_when_the_slice_keeps_global_stores():
    """tests/cuda/launch_alias.cu store_then_branch with a == b: the slice
    keeps the store through b (a branch reads it), so CTAs could see each
    other's writes: every CTA runs."""
    mod = ptxc.load(CUDA / "launch_alias.sm90.ptx")
    x = np.zeros(512, np.int32)
    prof = launch(mod, "store_then_branch", 4, 128, [x, x, np.zeros(512, np.int32), 500])
    assert prof.ctas_run == 4
    assert prof.cta_equivalence.startswith("off: the slice writes global memory")


def test_off_for_address_counters(m, monkeypatch):
    """The hook for counters that depend on addresses (memory coalescing):
    a compiled kernel that sets memory_counters runs every CTA."""
    from ptxc.backends.llvm import jit
    original = jit.compile_kernel

    def flagged(*a, **kw):
        c = original(*a, **kw)
        c.memory_counters = True
        return c
    args = [f32(12800), np.zeros(12800, np.float32), 2.0, 12677]
    monkeypatch.setattr(jit, "compile_kernel", flagged)
    prof = launch(ptxc.load(PTX), "scale_bounded", 100, 128, args)     # a fresh module: its
    assert prof.ctas_run == 100 and "memory counters" in prof.cta_equivalence   # own JIT cache
    monkeypatch.undo()
    assert launch(ptxc.load(PTX), "scale_bounded", 100, 128, args).ctas_run == 2
