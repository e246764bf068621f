"""CTA equivalence for loops whose exit test is ``!=`` (docs/cta-equivalence.md,
"Classes of a launch" and the proof; passes/cta/countdown.py,
passes/cta/exit_values.py).

nvcc turns a grid-stride loop with a parameter stride, and a counted loop
``for (k = 0; k < n; k++)``, into a remainder loop and a loop unrolled by 4,
counting registers down to 0 (``setp.ne ... 0``). The reduced hybrid run
(one CTA per class) must give the counters of the hybrid run of every CTA
and of the full run, and stop with the full run's message where a buffer is
short. Class counts and faulting CTA/thread/line are derived by hand in the
comments; the output is checked against numpy.

Kernels: tests/cuda/countdown.cu (nvcc -ptx -arch=sm_90 -O3 countdown.cu -o
countdown.sm90.ptx, nvcc 13.0). Lines cited are lines of the PTX.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc
from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
from ptxc.launcher.api import launch

from cta_runs import three_runs, same_error
from ptxc.passes.cta.countdown import _meet

PTX = Path(__file__).resolve().parent / "cuda" / "countdown.sm90.ptx"
X = SEG_FIRST_BUFFER << 32               # the first buffer argument's base address


@pytest.fixture(scope="module")
def m():
    return ptxc.load(PTX)


def oob(kernel, cta, thread, line, op, addr, param, nbytes, base) -> str:
    return (f"kernel {kernel}, CTA ({cta},0,0), thread ({thread}): out-of-bounds access at "
            f"line {line} ({op}), address 0x{addr:x} (right after the end of buffer of "
            f"parameter {kernel}_param_{param} ({nbytes} bytes at 0x{base:x}))")


# -------------------------------------------------- the congruence solver
@pytest.mark.parametrize("w", [4, 8])
def test_meet_matches_brute_force(w):
    """_meet(d, S, w): the least k >= 0 with k*S == d (mod 2^w), else NEVER;
    compared with a search over k = 0 .. 2^w - 1 for every S != 0 and d."""
    M = 1 << w
    d = np.arange(M, dtype=np.uint64)
    for S in range(1, M):
        got = _meet(d, S, w)
        for dd in range(M):
            want = next((k for k in range(M) if (k * S - dd) % M == 0), None)
            assert (got[dd] == want) if want is not None else got[dd] >= 1 << 62


# ------------------------------------------- grid stride, stride a parameter
def param_stride_classes(grid, block, n, stride):
    """numpy model: a lane with i0 = c*block + t < n runs R = (n - 1 - i0) //
    stride + 1 iterations (R & 3 in the remainder loop, the rest 4 at a
    time), none if i0 >= n; R decides its trace. Classes: distinct rows."""
    i0 = np.arange(grid * block).reshape(grid, block)
    R = np.where(i0 < n, (n - 1 - i0) // stride + 1, 0)
    return len({tuple(r) for r in R.tolist()})


@pytest.mark.parametrize("grid, block, n, stride, classes", [
    # i0 = 128c + t < 1024; R = (4999 - i0) // 1000 + 1: 5 for i0 <= 999
    # (R & 3 = 1 remainder iteration, one unrolled round), 4 for 1000..1023
    # (no remainder: R & 3 = 0 skips that loop; one round): CTAs 0..6 all 5,
    # CTA 7 (896..1023) mixed: 2 classes
    (8, 128, 5000, 1000, 2),
    # stride 1024 > n: R = 1 for every i0 < 1000 (remainder loop once, no
    # unrolled round); i0 >= 1000 runs nothing: CTAs 0..30 (i0 < 992) all
    # 1, CTA 31 (992..1023) mixed: 2 classes
    (32, 32, 1000, 1024, 2),
    # i0 = 64c + t < 4096, R = (29999 - i0) // 1000 + 1: 30, 29, 28, 27 on
    # [0, 1000), [1000, 2000), [2000, 3000), [3000, 4000), 26 above: CTAs
    # 15 (960..1023), 31 (1984..2047), 46 (2944..3007), 62 (3968..4031)
    # mixed, each alone; the others in 5 uniform groups: 9 classes
    (64, 64, 30000, 1000, 9),
    # strides that cut CTAs in many ways: as many classes as the model says
    (100, 32, 20000, 320, None),
    (64, 32, 20000, 96, None),
])
def test_param_stride_in_bounds(m, grid, block, n, stride, classes):
    x = np.arange(n, dtype=np.int32)
    reduced, _, args = three_runs(m, "cd_param_stride", grid, block,
                               lambda: [x, np.zeros(n, np.int32), n, stride])
    want = param_stride_classes(grid, block, n, stride)
    assert classes is None or classes == want
    assert reduced.ctas_run == want and reduced.cta_equivalence == f"{want} classes"
    assert np.array_equal(args[1], x + 1)


def test_param_stride_one_element_short(m):
    """``in`` has 29999 ints (n = 30000, stride 1000, grid 64 x 64): only
    in[29999] is out of bounds, read by i0 = 999, 1999, ...: first in CTA
    order by i0 = 999 (CTA 15, thread 39) at its iteration j = 29. It runs
    R = 30: R & 3 = 2 remainder iterations (j = 0, 1), then unrolled rounds
    of 4 from j = 2: j = 29 is the fourth load of the round j = 26..29
    (line 92), 4*29999 = 119996 bytes from in's base. CTAs 0..14 reach at
    most i = 959 + 29000 < 29999."""
    msg = same_error(m, "cd_param_stride", 64, 64, lambda: [
        np.zeros(29999, np.int32), np.zeros(30000, np.int32), 30000, 1000])
    assert oob("cd_param_stride", 15, "39,0,0", 92, "ld.global.u32", X + 119996, 0, 119996,
               X) in msg


# ------------------------------------------- a counted loop, n from %ctaid
def test_counted_loop_row(m):
    """cd_row, grid 40 x 32, m = 11: CTA c writes a[11c + k] for k < n =
    c % 11 (4 at a time while n - n % 4 counts down by 4, then n % 4 one at
    a time); every thread of a CTA does the same, and CTAs with the same n
    the same: n takes the 11 values 0..10 over c = 0..39: 11 classes.
    Every address is below 440 = 40*11."""
    reduced, _, args = three_runs(m, "cd_row", 40, 32, lambda: [np.zeros(440, np.float32), 11])
    assert reduced.ctas_run == 11 and reduced.cta_equivalence == "11 classes"
    want = np.zeros(440, np.float32)
    for c in range(40):
        want[11 * c: 11 * c + c % 11] = np.arange(c % 11)
    assert np.array_equal(args[0], want)


def test_counted_loop_row_short(m):
    """cd_row with 434 floats: a[434] = a[11*39 + 5] is written only by CTA
    39 (n = 39 % 11 = 6: one round of 4 (k = 0..3), then the remainder loop
    k = 4, 5): the store at line 175 in its second remainder iteration,
    lane 0 first (every lane stores there), 4*434 = 1736 bytes from a's
    base. CTAs 6, 17, 28 (also n = 6) stay in bounds: only the fault check
    splits CTA 39 from them."""
    msg = same_error(m, "cd_row", 40, 32, lambda: [np.zeros(434, np.float32), 11])
    assert oob("cd_row", 39, "0,0,0", 175, "st.global.f32", X + 1736, 0, 1736, X) in msg


def test_counted_loop_sum(m):
    """cd_sum, grid 40 x 64, m = 7: thread t of CTA c sums b[t + 64k] for
    k < n = c % 7; the addresses do not depend on %ctaid, the trip counts
    (both != loops) do: 7 classes (n = 0..6)."""
    b = np.random.default_rng(0).random(6 * 64).astype(np.float32)
    reduced, _, args = three_runs(m, "cd_sum", 40, 64, lambda: [np.zeros(40 * 64, np.float32), b, 7])
    assert reduced.ctas_run == 7
    want = np.zeros((40, 64), np.float32)
    for c in range(40):
        for k in range(c % 7):
            want[c] += b[64 * k: 64 * k + 64]
    assert np.array_equal(args[0], want.reshape(-1))


# ------------------------------------------------------------- refused
def test_equality_inside_the_loop_refused(m):
    """cd_mark: ``if (i == mark)`` on the induction variable is not the
    loop's exit test; its outcome over the iterations is not a threshold in
    k, so the condition refuses (every CTA runs)."""
    reduced, _, _ = three_runs(m, "cd_mark", 8, 32, lambda: [
        np.zeros(1000, np.int32), np.zeros(1, np.int32), 1000, 300])
    assert reduced.ctas_run == 8
    assert "the guard at line 322 depends on %ctaid in a way that cannot be classified" \
        in reduced.cta_equivalence


# ------------------------------------------------- an independent model
@pytest.mark.parametrize("chunk", [None, 3])
@pytest.mark.parametrize("grid, block, n, stride", [
    (64, 32, 20000, 96), (100, 32, 20000, 320), (64, 64, 30000, 1000),
])
def test_classes_match_the_model(monkeypatch, chunk, grid, block, n, stride):
    """The classes the launch computed group exactly the CTAs whose rows of
    R (the model's per-thread trip counts) agree, also when the CTAs are
    evaluated a few at a time (ids of mixed rows must agree across chunks)."""
    from ptxc.passes.cta import classes as cta_classes
    if chunk:
        monkeypatch.setattr(cta_classes, "CHUNK", chunk)
        monkeypatch.setattr(cta_classes, "EXACT_CHUNK", 64)
    module = ptxc.load(PTX)
    launch(module, "cd_param_stride", grid, block, [
        np.zeros(n, np.int32), np.zeros(n, np.int32), n, stride])
    (classes, note), = module.attrs["cta_classes"].values()
    assert classes is not None, note
    i0 = np.arange(grid * block).reshape(grid, block)
    R = [tuple(r) for r in np.where(i0 < n, (n - 1 - i0) // stride + 1, 0).tolist()]
    groups = {}
    for c, cls in enumerate(classes.cta_class.tolist()):
        groups.setdefault(cls, set()).add(R[c])
    assert all(len(g) == 1 for g in groups.values())             # exact
    assert len(groups) == len(set(R))                             # and no finer


def test_wrapping_countdown_refused(m):
    """cd_until, grid 8 x 32, n = 257, step 2, out of 300 ints: a lane
    with odd i0 = t meets 257 after (257 - t)/2 rounds; a lane with even t
    never does (its register would wrap around 2^32): its exact count is
    NEVER, which the store's fault check over the loop cannot bound, so
    the launch runs every CTA. The even lanes of CTA 0 run off the end:
    round k stores out[t + 2k], first past 299 for t = 30 at k = 135
    (lane 28 is at 298; the odd lanes left by k = 128): CTA 0, thread 30,
    the store at line 362, 4*300 = 1200 bytes from out's base."""
    module = ptxc.load(PTX)
    msg = same_error(module, "cd_until", 8, 32, lambda: [np.zeros(300, np.int32), 257, 2])
    assert oob("cd_until", 0, "30,0,0", 362, "st.global.u32", X + 1200, 0, 1200, X) in msg
    (classes, note), = module.attrs["cta_classes"].values()
    assert classes is None and note.startswith("off: the fault check at line 362")


def test_opt_prints_the_condition():
    """``ptxc opt`` on cd_param_stride (PTX lines 37-98): the comparisons
    i0 >= n (37), R & 3 == 0 (45), the remainder loop's != 0 (62), R - 1 < 3
    (66) and the unrolled loop's i < n (97); the fault checks are the
    remainder loop's load and store (55, 57) and the unrolled loop's four
    of each (74 ... 95)."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "ptxc.cli", "opt",
                          "--pass=slice{faults=checked},cta-equivalence", str(PTX)],
                         capture_output=True, text=True, check=True).stdout
    assert "kernel @cd_param_stride: CTA equivalence: 5 comparison(s) on %ctaid (lines 37, " \
           "45, 62, 66, 97), 10 fault check(s) (lines 55, 57, 74, 77, 79, 82, 86, 89, 92, " \
           "95)" in out
    assert "kernel @cd_mark: CTA equivalence off: the guard at line 322" in out
