"""CTA equivalence for grid-stride loops under the default fault checks
(docs/cta-equivalence.md, rule 6 over loops; passes/cta/fault_loops.py).

A hybrid run checks every access its slice skips (faults=checked). In a
grid-stride loop the checked address is ``B + k*S`` over the loop's
iterations; the classes must still be exact: the reduced hybrid run gives
the counters of the hybrid run of every CTA and of the full run, and a
launch that faults stops with the full run's message (same CTA, thread,
line, address). Every class count and first faulting CTA/thread below is
derived by hand in the comment above it; the outputs of clean runs are
checked against numpy.

Kernels: tests/cuda/grid_stride.cu (nvcc -ptx -arch=sm_90 -O3 grid_stride.cu
-o grid_stride.sm90.ptx, nvcc 13.0). Lines cited are lines of the PTX.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.launcher.api import launch

from cta_runs import three_runs, error_of, same_error

PTX = Path(__file__).resolve().parent / "cuda" / "grid_stride.sm90.ptx"
X = SEG_FIRST_BUFFER << 32               # the first buffer argument's base address
Y = (SEG_FIRST_BUFFER + 1) << 32         # the second's


@pytest.fixture(scope="module")
def m():
    return ptxc.load(PTX)


def f32(n, seed=0):
    return np.random.default_rng(seed).random(n).astype(np.float32)


def oob(kernel, cta, thread, line, op, addr, param, nbytes, base) -> str:
    return (f"kernel {kernel}, CTA ({cta},0,0), thread ({thread}): out-of-bounds access at "
            f"line {line} ({op}), address 0x{addr:x} (right after the end of buffer of "
            f"parameter {kernel}_param_{param} ({nbytes} bytes at 0x{base:x}))")


# ------------------------------------------------------ 1-D grid stride
@pytest.mark.parametrize("grid, n, classes", [
    # stride 64*128 = 8192, i = 128c + t < 8192 <= n: every lane enters; it
    # stays after round 0 iff i + 8192 < 10000, i.e. i < 1808 = 14*128 + 16:
    # CTAs 0..13 two rounds, CTA 14 mixed, CTAs 15..63 one round. Every
    # address is below n: 3 classes, as without fault checks
    (64, 10000, 3),
    # stride 8*128 = 1024, n = 4096: 4 rounds in every thread: 1 class
    (8, 4096, 1),
])
def test_grid_stride_in_bounds(m, grid, n, classes):
    x, y0 = f32(n), f32(n, 1)
    reduced, _, args = three_runs(m, "gs_saxpy", grid, 128, lambda: [x, y0.copy(), 1.5, n])
    assert reduced.ctas_run == classes and reduced.cta_equivalence == f"{classes} classes"
    assert np.allclose(args[1], 1.5 * x.astype(np.float64) + y0, rtol=1e-6)


def test_grid_stride_one_element_short(m):
    """y has n - 1 = 9999 floats: only y[9999] is out of bounds. It is
    reached at round k = 1 by i = 9999 - 8192 = 1807 = 14*128 + 15: CTA 14,
    thread 15, whose first access there is the load of y[i] (line 49; x[i]
    at line 47 is in bounds), 4*9999 = 39996 bytes from y's base. CTAs
    0..13 reach at most i = 1791 + 8192 = 9983. With x one short instead,
    the same thread stops at the load of x[i] (line 47)."""
    x, y = f32(10000), f32(9999, 1)
    msg = same_error(m, "gs_saxpy", 64, 128, lambda: [x, y.copy(), 1.5, 10000])
    assert oob("gs_saxpy", 14, "15,0,0", 49, "ld.global.f32", Y + 39996, 1, 39996, Y) in msg
    msg = same_error(m, "gs_saxpy", 64, 128, lambda: [f32(9999), f32(10000), 1.5, 10000])
    assert oob("gs_saxpy", 14, "15,0,0", 47, "ld.global.f32", X + 39996, 0, 39996, X) in msg


def test_first_fault_in_cta_order(m):
    """y has 5000 floats, n = 10000, stride 8192: CTAs 39..63 fault at round
    0 (i >= 5000 = 39*128 + 8), but CTA 0 faults first in CTA order, at
    round 1: i = 0 + 8192 (lane 0 is the first failing lane of warp 0),
    address y + 4*8192 = y + 32768, past the end of its 20000 bytes."""
    msg = same_error(m, "gs_saxpy", 64, 128, lambda: [f32(10000), f32(5000), 1.5, 10000])
    assert "kernel gs_saxpy, CTA (0,0,0), thread (0,0,0): out-of-bounds access at line 49 " \
           f"(ld.global.f32), address 0x{Y + 32768:x}" in msg


def test_counting_down(m):
    """gs_reverse: i = 999 - g (g = 32c + t < 256), i -= 256 while i >= 0:
    lane g runs floor(i/256) + 1 rounds: 4 for i >= 768 (g <= 231), else 3:
    CTAs 0..6 four rounds, CTA 7 (g = 224..255) mixed: 2 classes. With x
    one float short, x[999] is read first by g = 0 at round 0: CTA 0,
    thread 0, line 93, 3996 bytes from x's base."""
    x = f32(1000)
    reduced, _, args = three_runs(m, "gs_reverse", 8, 32, lambda: [x, f32(1000, 1), 1000])
    assert reduced.ctas_run == 2
    assert np.array_equal(args[1], x + np.float32(1))
    msg = same_error(m, "gs_reverse", 8, 32, lambda: [f32(999), f32(1000), 1000])
    assert oob("gs_reverse", 0, "0,0,0", 93, "ld.global.f32", X + 3996, 0, 3996, X) in msg


# ------------------------------------------------------ 2-D grid stride
def test_2d_grid_stride(m):
    """gs_scale2d, grid (5, 4), block (16, 8), w = 200, h = 100. Columns
    c = 16bx + tx step 80: 3 rounds for c < 40, else 2: bx 0..1 three,
    bx 2 mixed (tx < 8), bx 3..4 two: 3 kinds. Rows r = 8by + ty step 32:
    4 rounds for r < 4, else 3: by 0 mixed, by 1..3 three: 2 kinds. In
    bounds: 3 x 2 = 6 classes. With out one float short, only out[19999]
    (r = 99 = 3 + 3*32, c = 199 = 39 + 2*80) faults: bx = 2, tx = 7, by = 0,
    ty = 3: CTA (2,0,0), thread (7,3,0), the store at line 155."""
    w, h = 200, 100
    x = f32(w * h)
    reduced, _, args = three_runs(m, "gs_scale2d", (5, 4), (16, 8), lambda: [
        x, np.zeros(w * h, np.float32), w, h])
    assert reduced.ctas_run == 6 and reduced.ctas_launched == 20
    assert np.array_equal(args[1], 2 * x)
    msg = same_error(m, "gs_scale2d", (5, 4), (16, 8), lambda: [
        x, np.zeros(w * h - 1, np.float32), w, h])
    assert oob("gs_scale2d", 2, "7,3,0", 155, "st.global.f32", Y + 79996, 1, 79996, Y) in msg


def test_2d_lanes_that_never_enter(m):
    """gs_scale2d, grid (5, 4), block (16, 8), w = 70, h = 100: columns
    c = 0..79 step 80: one round for c < 70, none for c >= 70 (bx 4, tx >= 6,
    which skip the inner loop, yet the checks evaluate their addresses
    over the outer loop's rounds); bx 0..3 one kind, bx 4 mixed. Rows as in
    test_2d_grid_stride: by 0 mixed, by 1..3 three rounds. For c >= 70 the
    unexecuted address (r*70 + c) passes the end of the 7000 floats only in
    the last round of r = 3 (3 + 96 = 99: 99*70 + 70 = 7000), in CTAs of by
    0, which are split anyway: (2 column kinds) x (2 row kinds) = 4 classes."""
    w, h = 70, 100
    x = f32(w * h)
    reduced, _, args = three_runs(m, "gs_scale2d", (5, 4), (16, 8), lambda: [
        x, np.zeros(w * h, np.float32), w, h])
    assert reduced.ctas_run == 4
    assert np.array_equal(args[1], 2 * x)


def test_2d_fault_splits_a_class(m):
    """gs_scale2d as above with out 99*200 + 176 floats: out[r*200 + c]
    faults for r = 99 (by 0, ty 3, round 3) and c >= 176: c = 176..191 is
    bx = 1 (tx 0..15, round 2), 192..199 bx = 2. CTA (1,0,0) shares its
    iteration counts with CTA (0,0,0) (row 99 of CTA 0 ends at c = 175, in
    bounds), so only the fault checks split them; in CTA order it faults
    first: warp 1 (ty 2, 3), at c = 176, lane tx = 0, ty = 3, the store at
    line 155, 4*19976 = 79904 bytes from out's base."""
    w, h = 200, 100
    msg = same_error(m, "gs_scale2d", (5, 4), (16, 8), lambda: [
        f32(w * h), np.zeros(99 * 200 + 176, np.float32), w, h])
    assert oob("gs_scale2d", 1, "0,3,0", 155, "st.global.f32", Y + 79904, 1, 79904, Y) in msg


# --------------------------------------------- strides other than the grid
def test_block_stride_over_a_row(m):
    """row_scale: CTA c scales row c of n = 100 floats, j = t, t + 64 (j < 100
    iff t < 36): every CTA alike, all in bounds: 1 class. With the buffer one
    float short, a[4999] = a[49*100 + 99] (j = 99 = 35 + 64): CTA 49,
    thread 35, the load at line 196."""
    a = f32(50 * 100)
    reduced, _, args = three_runs(m, "row_scale", 50, 64, lambda: [a.copy(), 100])
    assert reduced.ctas_run == 1
    assert np.array_equal(args[0], 2 * a)
    msg = same_error(m, "row_scale", 50, 64, lambda: [f32(4999), 100])
    assert oob("row_scale", 49, "35,0,0", 196, "ld.global.f32", X + 19996, 0, 19996, X) in msg


def test_twice_the_grid_with_a_guarded_access(m):
    """gs_pairs, grid 16 x 64 (stride 1024), step 2048, n = 5000: i = 64c + t
    runs 3 rounds for i < 904 = 14*64 + 8, else 2: CTAs 0..13 three, CTA 14
    mixed, CTA 15 two. The guarded access x[i + 1024] would be out of bounds
    at the last round of the 3-round lanes, which the guard skips: the
    checks' classes count the iterations that pass (rounds 0..1 of 0..2, the
    same in all of CTAs 0..13), so they split nothing: 3 classes. With x
    one float short, x[4999] is read by i = 4999 - 4096 = 903 (CTA 14,
    thread 7) at round 2 (line 240)."""
    x = f32(5000)
    reduced, _, args = three_runs(m, "gs_pairs", 16, 64, lambda: [x, f32(5000, 1), 5000])
    assert reduced.ctas_run == 3
    assert np.array_equal(args[1], x)
    msg = same_error(m, "gs_pairs", 16, 64, lambda: [f32(4999), f32(5000), 5000])
    assert oob("gs_pairs", 14, "7,0,0", 240, "ld.global.f32", X + 19996, 0, 19996, X) in msg


@pytest.mark.parametrize("kernel, grid, block, lens, n", [
    ("gs_saxpy", 37, 32, (1000, 1000), 1000),
    ("gs_saxpy", 37, 32, (1000, 977), 1000),
    ("gs_saxpy", 13, 96, (3001, 2990), 3001),
    ("gs_pairs", 21, 32, (2500, 2500), 2500),
    ("gs_pairs", 21, 32, (2500, 2401), 2500),
    ("gs_reverse", 9, 64, (900, 700), 900),
])
def test_reduced_equals_full(m, kernel, grid, block, lens, n):
    """Buffers of various lengths: the reduced hybrid run ends like the full
    run, with the same counters or the same message."""
    def args():
        return [f32(lens[0]), f32(lens[1], 1)] + ([1.5] if kernel == "gs_saxpy" else []) + [n]
    try:
        full = launch(m, kernel, grid, block, args(), mode="full")
    except ptxc.PtxcError as e:
        assert error_of(m, kernel, grid, block, args) == str(e)
        return
    assert launch(m, kernel, grid, block, args()).counters() == full.counters()


def test_misaligned_records(m):
    """gs_records reads an int at p + 6i. Grid 4 x 32 (stride 128, 768
    bytes a round, a multiple of 4) with n = 1: only i = 0 runs; the checks
    see every odd i misaligned (status 'every round fails', the same in every
    CTA, as i = 32c + t has t's parity) and every even i within p's 1202
    bytes: they split nothing, and the bounds check i < n splits CTA 0 from
    CTAs 1..3: 2 classes. Grid 3 x 33 (stride 99, 594 bytes a round, not a
    multiple of 4): the launch runs every CTA, saying why; with n = 200,
    i = 1 (CTA 0, thread 1) reads p + 6, misaligned, first."""
    def args(n):
        return lambda: [np.zeros(1202, np.uint8), np.zeros(200, np.int32), n]
    reduced, _, _ = three_runs(m, "gs_records", 4, 32, args(1))
    assert reduced.ctas_run == 2
    reduced, _, _ = three_runs(m, "gs_records", 3, 33, args(1))
    assert reduced.ctas_run == 3 and reduced.cta_equivalence == (
        "off: the fault check at line 382: its address steps by a non-multiple of its "
        "size (4 bytes)")
    msg = same_error(m, "gs_records", 3, 33, args(200))
    assert "kernel gs_records, CTA (0,0,0), thread (1,0,0): misaligned access at line 382 " \
           f"(ld.global.u32), address 0x{X + 6:x}" in msg


# ------------------------------------------------------------- refused
@pytest.mark.parametrize("kernel, args, why", [
    # a[(i*i) % n]: not affine in i
    ("gs_square", lambda: [np.zeros(1000, np.int32), 1000],
     "the address of st.global.u32 at line 423 (checked for faults) depends on %ctaid in a "
     "way that cannot be classified"),
    # the loop ends when steps[s] == 0: its trip count is not known
    ("until_zero", lambda: [np.r_[np.ones(3, np.int32), np.zeros(40, np.int32)],
                            np.zeros(4096, np.float32), 256],
     "the address of st.global.u32 at line 512 (checked for faults) holds an induction "
     "variable of the loop at line 509, which has no exit test on an induction variable "
     "(rule 5)"),
    # x[idx[i]]: the address depends on loaded data (the slice keeps the
    # load of idx[i], whose address depends on %ctaid: rule 3)
    ("gs_gather", lambda: [np.arange(1000, dtype=np.int32), f32(1000), f32(1000), 1000],
     "the address of ld.global.u32 at line 466 depends on %ctaid"),
])
def test_refused(m, kernel, args, why):
    reduced, _, _ = three_runs(m, kernel, 8, 32, args)
    assert reduced.ctas_run == 8 and why in reduced.cta_equivalence


def test_opt_prints_the_fault_checks():
    """``ptxc opt`` with fault checks: gs_saxpy's three accesses (lines 47,
    49, 51) are fault checks over its loop; gs_square is refused."""
    out = subprocess.run([sys.executable, "-m", "ptxc.cli", "opt",
                          "--pass=slice{faults=checked},cta-equivalence", str(PTX)],
                         capture_output=True, text=True, check=True).stdout
    assert "kernel @gs_saxpy: CTA equivalence: 2 comparison(s) on %ctaid (lines 36, 53), " \
           "3 fault check(s) (lines 47, 49, 51)" in out
    assert "kernel @gs_square: CTA equivalence off: the address of st.global.u32 at line 423" in out


# ------------------------------------------------- an independent model
def saxpy_model(grid, block, n, lens):
    """What decides gs_saxpy's trace and errors in CTA c, per thread: the
    rounds k it runs (i0 + k*S < n, S = grid*block) and, at each, whether
    x[i] and y[i] are past the ends of x and y (numpy, not ptxc)."""
    S = grid * block
    i0 = np.arange(grid * block).reshape(grid, block)
    rounds = np.where(i0 < n, -(-(n - i0) // S), 0)
    out = []
    for c in range(grid):
        out.append(tuple(tuple((k, i + k * S >= lens[0], i + k * S >= lens[1])
                               for k in range(r)) for i, r in zip(i0[c], rounds[c])))
    return out


@pytest.mark.parametrize("grid, block, n, lens", [
    (64, 128, 10000, (10000, 5000)),
    (37, 32, 3000, (2990, 3000)),
    (16, 64, 5000, (5000, 4000)),
    (20, 96, 7000, (6000, 6500)),
])
def test_classes_match_a_model(m, grid, block, n, lens):
    """The classes the launch computed (module.attrs' cache of
    ptxc/launcher/cta_classes.py) group exactly the CTAs whose per-thread rounds and
    per-round faults agree in the model: every lane enters (grid*block <=
    n), so the checks see nothing the lanes do not do."""
    m.attrs.pop("cta_classes", None)
    try:
        launch(m, "gs_saxpy", grid, block, [f32(lens[0]), f32(lens[1]), 1.5, n])
    except ptxc.PtxcError:
        pass
    (classes, note), = m.attrs["cta_classes"].values()
    assert classes is not None, note
    model = saxpy_model(grid, block, n, lens)
    groups = {}
    for c, cls in enumerate(classes.cta_class.tolist()):
        groups.setdefault(cls, set()).add(model[c])
    assert all(len(g) == 1 for g in groups.values())             # exact
    assert len(groups) == len(set(model))                         # and no finer
