"""Error injection (ptxc.inject.launch_campaign, `ptxc inject`; docs/inject.md).

The kernels are nvcc's PTX: tests/cuda_apps/inject_poly.cu (its PTX
inject_poly.sm90.ptx, `nvcc -ptx -arch=sm_90 -O3`) and tests/apps/vectorAdd
(vectorAdd.sm90.ptx). Every expected outcome comes from tests/inject_model.py,
an independent interpreter of those PTX files that flips the same bit: for
the one-thread poly launch the test enumerates every site of every target
(not a sample) and compares each class; the apps' campaigns (built by nvcc
at test time, skipped without it) compare each drawn site's class with the
model's.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import inject_model as M
import ptxc
import ptxc.inject as inj
from ptxc.inject import sites as inject_sites, stats as inject_stats
from ptxc.errors import PtxcError

HERE = Path(__file__).parent
POLY_CU = HERE / "cuda_apps" / "inject_poly.cu"
POLY_PTX = HERE / "cuda_apps" / "inject_poly.sm90.ptx"
VADD_PTX = HERE / "apps" / "vectorAdd" / "vectorAdd.sm90.ptx"
VADD_CU = HERE / "apps" / "vectorAdd" / "vectorAdd.cu"
OUT = 6 << 32            # the first buffer's generic address (segment 6, docs/executor.md)
MAX_STEPS = 2000         # poly's loop runs n' times; flipped bounds run 2^b ^ 2 times: b <= 10
                         # stays under 2000 block executions, b >= 11 is a hang (no case near 2000)


def poly_expected(target: str, instance: int, bit: int, n: int = 2):
    """The model's class of one poly site (and whether the site exists)."""
    ptx = POLY_PTX.read_text()
    gold = bytearray(4)
    M.run(ptx, "poly", {"poly_param_0": OUT, "poly_param_1": n}, {"%tid.x": 0}, {OUT: gold})
    out = bytearray(4)
    status, counts = M.run(ptx, "poly", {"poly_param_0": OUT, "poly_param_1": n}, {"%tid.x": 0},
                           {OUT: out}, flip=(target, instance, bit), max_blocks=MAX_STEPS)
    if status != "ok":
        return "due"
    return "masked" if out == gold else "sdc"


def model_space(target: str, n: int = 2):
    """[(instance, destination bits)] of the fault-free poly thread."""
    ptx = POLY_PTX.read_text()
    _, counts = M.run(ptx, "poly", {"poly_param_0": OUT, "poly_param_1": n}, {"%tid.x": 0},
                      {OUT: bytearray(4)})
    return counts[target]


def poly_args(n: int = 2):
    return [np.zeros(1, np.uint32), n]


# ------------------------------------------------------------ hand-derived
def test_poly_space_by_hand():
    """One thread, n = 2: register writes are ld.param x2, mov %r16/%r15/%r14,
    2 iterations x (mul, add, add), add %r12, add %r16, mov %r13, cvta,
    mul.wide, add.s64 = 17; predicates: setp %p1 + 2 x setp %p2 = 3; one st."""
    launches, gold = inj.golden_run(ptxc.load(POLY_PTX), "poly", 1, 1, poly_args())
    counts = launches[0].counts
    assert [int(counts[t][0]) for t in ("register", "memory", "predicate")] == [17, 1, 3]
    assert int(counts["register"][1:].sum()) == 0           # lanes 1..31 do not exist
    assert gold[0][0] == 10                                  # s = 1 -> 3*1 + 0 -> 3*3 + 1


# Register instances of the poly thread (n = 2), in execution order:
# 0 ld %rd1, 1 ld %r8 (n), 2 mov %r16, 3 mov %r15, 4 mov %r14, 5 mul %r3, 6 add %r15,
# 7 add %r14, 8 mul %r3, 9 add %r15, 10 add %r14, 11 add %r12, 12 add %r16, 13 mov %r13,
# 14 cvta %rd2, 15 mul.wide %rd3, 16 add.s64 %rd4.
HAND = [
    (2, 5, "masked"),    # mov %r16, 1 is dead when n > 0 (the exit block writes %r16 again)
    (9, 0, "masked"),    # the last iteration's %r15 is dead (the result comes from %r3, %r14)
    (1, 1, "sdc"),       # n = 2 ^ 2 = 0: setp %p1 skips the loop, s = 1
    (1, 0, "sdc"),       # n = 3: one more iteration, s = 3 * 10 + 2 = 32
    (1, 11, "due"),      # n = 2050: more iterations than the step budget (2000): a hang
    (1, 31, "due"),      # n = 2^31 + 2: a hang
    (10, 4, "sdc"),      # the last i++ gives 2 ^ 16 = 18: s = %r3 + %r14 - 1 = 9 + 18 - 1 = 26
    (16, 2, "due"),      # the store address + 4: past the 4-byte buffer
    (0, 40, "due"),      # the buffer pointer in another segment: no such buffer
]


@pytest.mark.parametrize("instance,bit,expected", HAND)
def test_poly_hand_derived_sites(instance, bit, expected):
    m = ptxc.load(POLY_PTX)
    site = inject_sites.Site("register", 0, 0, 0, instance, bit)
    c = inj.campaign(m, "poly", 1, 1, poly_args(), sites=[site], max_steps=MAX_STEPS)
    o = c.outcomes[0]
    assert o["flipped"] and o["bit"] == bit
    assert o["outcome"] == expected == poly_expected("register", instance, bit)


# ------------------------------------------------------- brute force
WIDTHS = {"register": [64, 32, 32, 32, 32] + [32] * 6 + [32, 32, 32, 64, 64, 64],
          "predicate": [1, 1, 1], "memory": [32]}     # the declared widths, instance by instance


@pytest.mark.parametrize("target", ["register", "predicate", "memory"])
def test_poly_every_site_matches_the_model(target):
    """Every (instance, bit) of the one-thread launch, ptxc against the model."""
    m = ptxc.load(POLY_PTX)
    launches, _ = inj.golden_run(m, "poly", 1, 1, poly_args())
    assert int(launches[0].counts[target][0]) == model_space(target) == len(WIDTHS[target])
    sites = [inject_sites.Site(target, 0, 0, 0, k, b)
             for k, w in enumerate(WIDTHS[target]) for b in range(w)]
    c = inj.campaign(m, "poly", 1, 1, poly_args(), sites=sites, max_steps=MAX_STEPS)
    got = [(o["site"], o["outcome"]) for o in c.outcomes]
    want = [(s.text(), poly_expected(target, s.instance, s.rand)) for s in sites]
    assert got == want
    assert all(o["flipped"] for o in c.outcomes)
    assert [o["bits"] for o in c.outcomes] == [w for w in WIDTHS[target] for _ in range(w)]
    if target == "register":
        assert {o["outcome"] for o in c.outcomes} == {"masked", "sdc", "due"}


# ----------------------------------------------------- reproducibility
def test_same_seed_same_sites_and_outcomes():
    m = ptxc.load(POLY_PTX)
    a = inj.campaign(m, "poly", 1, 1, poly_args(), runs=12, seed=7, max_steps=MAX_STEPS)
    b = inj.campaign(m, "poly", 1, 1, poly_args(), runs=12, seed=7, max_steps=MAX_STEPS)
    c = inj.campaign(m, "poly", 1, 1, poly_args(), runs=12, seed=8, max_steps=MAX_STEPS)
    assert a.outcomes == b.outcomes and a.text() == b.text()
    assert [o["site"] for o in a.outcomes] != [o["site"] for o in c.outcomes]


def test_draw_is_pcg64_uniform_over_instances():
    """The draw: k = integers(0, total), rand = integers(0, 2^64) per site,
    k located thread by thread (independent recomputation with numpy)."""
    class R:
        index, block = 0, (4, 1, 1)
        counts = {"register": np.array([3, 0, 2, 5] + [0] * 28, np.int64)}
    sites = inject_sites.draw([R], "register", 5, seed=11)
    rng = np.random.Generator(np.random.PCG64(11))
    cum = np.cumsum([3, 0, 2, 5])
    for s in sites:
        k = int(rng.integers(0, 10))
        rand = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        t = int(np.searchsorted(cum, k, side="right"))
        assert (s.thread, s.instance, s.rand) == (t, k - (int(cum[t - 1]) if t else 0), rand)


def test_wilson_interval():
    """Wilson (1927) for x = 8 of n = 20 at z = 1.96: centre (8 + 1.92) / 23.84
    = 0.4161, half-width 1.96 / 23.84 * sqrt(8 * 12 / 20 + 0.96) = 0.1974."""
    lo, hi = inject_stats.wilson(8, 20)
    assert abs(lo - 0.2188) < 1e-3 and abs(hi - 0.6134) < 1e-3
    assert inject_stats.wilson(0, 10)[0] == 0.0 and inject_stats.wilson(10, 10)[1] == 1.0


def test_site_text_round_trip_and_errors():
    s = inject_sites.Site("memory", 1, 2, 3, 4, 2 ** 64 - 1)
    assert inject_sites.parse_site(s.text()) == s
    for bad in ("register/1/2/3", "reg/0/0/0/0/0", "register/0/0/x/0/0", "register/0/0/0/0/-1"):
        with pytest.raises(PtxcError):
            inject_sites.parse_site(bad)


def test_hybrid_launch_refused_while_injecting():
    from ptxc.launcher import injection as inject_session
    with inject_session.session():
        with pytest.raises(PtxcError, match="full run"):
            ptxc.launch(ptxc.load(POLY_PTX), "poly", 1, 1, poly_args(), mode="hybrid")


def test_plain_launch_after_a_campaign():
    """The injection variant is a compiled kernel of its own: a plain launch
    afterwards computes s(2) = 10 with the counters of a plain launch before
    it. One thread, n = 2: 10 instructions before the loop and after it
    (ld x2, setp, mov, bra, mov x2; add x2 ... see the PTX) are counted by
    test_count; here only the equality matters."""
    m = ptxc.load(POLY_PTX)
    before = ptxc.launch(m, "poly", 1, 1, poly_args(), mode="full")
    inj.campaign(m, "poly", 1, 1, poly_args(), runs=3, seed=1, max_steps=MAX_STEPS)
    a = poly_args()
    after = ptxc.launch(m, "poly", 1, 1, a, mode="full")
    assert a[0][0] == 10
    for name in ("inst_executed", "thread_inst_executed", "branch", "divergent_branch"):
        assert getattr(before, name) == getattr(after, name)
    # 29 = 5 (entry) + 2 (preheader) + 2 x 5 (loop) + 2 (exit) + 6 (tail): the PTX's blocks
    assert after.thread_inst_executed == 5 + 2 + 2 * 5 + 2 + 6


def test_app_comparison_ignores_lines_and_refuses_nondeterminism():
    from ptxc.inject import app_campaign as inject_app
    g = {"stdout": b"x\ntime 1.5 ms\nPASS\n", "files": {"o": "aa"}}
    r = {"stdout": b"x\ntime 2.5 ms\nPASS\n", "files": {"o": "aa"}, "hung": False,
         "worker_status": 0, "result": {"stopped": None, "faults": [], "status": 0}}
    assert inject_app.classify(g, r) == ("sdc", None)
    assert inject_app.classify(g, r, ["^time "]) == ("masked", None)
    with pytest.raises(PtxcError, match="--ignore REGEX"):
        inject_app.check_deterministic(g, r, ())
    inject_app.check_deterministic(g, r, ["^time "])
    assert inject_app.classify(g, {**r, "hung": True})[0] == "due"
    assert inject_app.classify(g, {**r, "result": {**r["result"], "status": 3}}) == \
        ("due", "exit status 3")


def test_cli_errors_are_one_line(tmp_path):
    from click.testing import CliRunner

    from ptxc.cli.main import cli
    r = CliRunner().invoke(cli, ["inject", "--", str(tmp_path / "nosuch")], catch_exceptions=False)
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        f"ptxc: error: cannot run '{tmp_path / 'nosuch'}': no such program"]
    r = CliRunner().invoke(cli, ["inject", "--ignore", "(", "--", "x"], catch_exceptions=False)
    assert r.exit_code == 2 and "--ignore '('" in r.output


VEC_PTX = HERE / "cuda" / "inject_vec.sm90.ptx"     # nvcc -ptx -arch=sm_90 -O3 inject_vec.cu


def test_memory_target_flips_one_bit_of_a_vector_store():
    """st.global.v4.f32 {x, 0, x + 2, 3x} per thread: D = 128, bit b is bit
    b mod 32 of element b div 32 (numpy: the golden words with that bit
    XORed); the other thread's store and every other element are untouched."""
    m = ptxc.load(VEC_PTX)
    args = [np.zeros((2, 4), np.float32), np.float32(1.5)]
    gold = np.array([[1.5, 0.0, 3.5, 4.5]] * 2, np.float32)
    sites = [inject_sites.Site("memory", 0, 0, 1, 0, b) for b in range(128)]
    launches, golden = inj.golden_run(m, "vec4", 1, 2, args)
    assert golden[0].tobytes() == gold.tobytes()
    assert [int(x) for x in launches[0].counts["memory"][:2]] == [1, 1]
    from ptxc.launcher import injection as inject_session
    for s in sites:
        a = [np.zeros((2, 4), np.float32), np.float32(1.5)]
        with inject_session.session(site=s) as sess:
            ptxc.launch(m, "vec4", 1, 2, a, mode="full")
        want = gold.copy().view(np.uint32)
        want[1, s.rand // 32] ^= np.uint32(1 << (s.rand % 32))
        assert sess.launches[0].hit[1:] == (s.rand, 128)
        assert a[0].view(np.uint32).tolist() == want.tolist()


def test_counting_variant_keeps_the_counters():
    """A launch in a session without a site (step 1) counts what a plain
    full run and a hybrid run count, and computes the same output."""
    from ptxc.launcher import injection as inject_session
    m = ptxc.load(POLY_PTX)
    names = ("inst_executed", "thread_inst_executed", "thread_inst_executed_pred_on", "branch",
             "cond_branch", "divergent_branch")
    a, b, c = poly_args(), poly_args(), poly_args()
    with inject_session.session():
        counted = ptxc.launch(m, "poly", 1, 1, a, mode="full")
    full = ptxc.launch(m, "poly", 1, 1, b, mode="full")
    hybrid = ptxc.launch(m, "poly", 1, 1, c, mode="hybrid")
    for n in names:
        assert getattr(counted, n) == getattr(full, n) == getattr(hybrid, n), n
    assert a[0][0] == b[0][0] == 10


def test_nondeterministic_instruction_counts_are_refused():
    from ptxc.inject import app_campaign as inject_app
    g = {"stdout": b"PASS\n", "files": {}, "counts": {"0_register": np.array([3, 4])}}
    inject_app.check_deterministic(g, {**g, "counts": {"0_register": np.array([3, 4])}}, ())
    with pytest.raises(PtxcError, match="different kernel instructions"):
        inject_app.check_deterministic(g, {**g, "counts": {"0_register": np.array([3, 5])}}, ())
