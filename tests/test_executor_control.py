"""SIMT control flow and counting (METRICS.md): divergence and IPDOM
reconvergence, loops with per-lane trip counts, guarded exit, brx.idx,
uniform branches, calls, recursion, partial warps, multi-dimensional ids.
Every expected number below is derived by hand in the comments."""
from __future__ import annotations

import numpy as np

from executor_harness import run_kernel

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"


def both(text, grid, block, make_args, kernel="k"):
    res = {}
    for mode in ("full", "hybrid"):
        args = make_args()
        res[mode] = (run_kernel(text, kernel, grid, block, args, mode=mode), args)
    assert res["hybrid"][0].counters() == res["full"][0].counters()
    return res["full"]


LOOP = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  mov.u32 %r3, 0;
LOOP:
  setp.ge.s32 %p1, %r3, %r2;
  @%p1 bra DONE;
  add.s32 %r3, %r3, 1;
  bra.uni LOOP;
DONE:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_loop_with_per_lane_trip_counts():
    # trips t = lane % 4 (8 lanes each). LOOP runs with 32, 24, 16, 8 lanes; the
    # branch diverges at k = 0, 1, 2 (some lanes leave) and not at k = 3.
    prof, (out,) = both(LOOP, 1, 32, lambda: [np.zeros(32, np.int32)])
    np.testing.assert_array_equal(out, np.arange(32) % 4)
    pb = prof.per_block
    assert (pb["k:LOOP"]["warp_execs"], pb["k:LOOP"]["thread_execs"]) == (4, 80)
    body = next(e for e in pb.values() if e["first"] == 6)
    assert (body["warp_execs"], body["thread_execs"]) == (3, 48)
    assert (pb["k:DONE"]["warp_execs"], pb["k:DONE"]["thread_execs"]) == (1, 32)
    assert prof.inst_executed == 3 + 4 * 2 + 3 * 2 + 5
    assert prof.thread_inst_executed == 3 * 32 + 2 * 80 + 2 * 48 + 5 * 32
    assert prof.thread_inst_executed_pred_on == prof.thread_inst_executed - (80 - 32)
    assert (prof.branch, prof.cond_branch, prof.divergent_branch) == (7, 4, 3)
    br = prof.per_branch["k:LOOP"]
    assert br == {"line": br["line"], "warp_execs": 4, "active": 80, "taken": 32,
                  "not_taken": 48, "divergent": 3}
    assert prof.branch_efficiency == 100.0 * 4 / 7


IFELSE = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<3>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 40;
  @%p1 bra THEN;
  mov.u32 %r2, 7;
  bra.uni JOIN;
THEN:
  and.b32 %r3, %r1, 1;
  setp.eq.u32 %p2, %r3, 0;
  @%p2 bra EVEN;
  mov.u32 %r2, 1;
  bra.uni JOIN;
EVEN:
  mov.u32 %r2, 2;
JOIN:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def test_nested_divergence_reconverges_at_ipdom():
    # 64 threads: warp 0 all < 40 (no divergence at the outer branch), warp 1
    # lanes 32..39 < 40 (diverges). The inner branch diverges in both warps.
    prof, (out,) = both(IFELSE, 1, 64, lambda: [np.zeros(64, np.int32)])
    t = np.arange(64)
    np.testing.assert_array_equal(out, np.where(t < 40, np.where(t % 2 == 0, 2, 1), 7))
    pb = prof.per_block
    assert pb["k:JOIN"]["warp_execs"] == 2 and pb["k:JOIN"]["thread_execs"] == 64
    assert pb["k:THEN"]["thread_execs"] == 40 and pb["k:EVEN"]["thread_execs"] == 20
    assert prof.divergent_branch == 3
    assert prof.cond_branch == 4


GEXIT = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 10;
  @%p1 exit;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def test_guarded_exit_removes_lanes():
    prof, (out,) = both(GEXIT, 1, 48, lambda: [np.zeros(48, np.int32)])
    t = np.arange(48)
    np.testing.assert_array_equal(out, np.where(t < 10, 0, t))
    # block 1: 3 instructions x 2 warps (48 threads); block 2: 5 instructions,
    # warp 0 with 22 lanes, warp 1 with 16
    assert prof.inst_executed == 3 * 2 + 5 * 2
    assert prof.thread_inst_executed == 3 * 48 + 5 * 38
    assert prof.thread_inst_executed_pred_on == prof.thread_inst_executed - 38
    assert prof.branch == 0


BRX = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx %r2, ts;
L0:
  mov.u32 %r3, 10;
  bra.uni END;
L1:
  mov.u32 %r3, 11;
  bra.uni END;
L2:
  mov.u32 %r3, 12;
  bra.uni END;
L3:
  mov.u32 %r3, 13;
END:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_brx_idx_multiway_divergence():
    prof, (out,) = both(BRX, 1, 32, lambda: [np.zeros(32, np.int32)])
    np.testing.assert_array_equal(out, 10 + np.arange(32) % 4)
    for label in ("L0", "L1", "L2", "L3"):
        assert prof.per_block[f"k:{label}"]["thread_execs"] == 8
    assert prof.divergent_branch == 1 and prof.cond_branch == 1
    assert prof.branch == 1 + 3
    assert prof.per_block["k:END"]["warp_execs"] == 1


PARTIAL = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<12>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %ntid.y;
  mad.lo.s32 %r6, %r3, %r5, %r2;
  mad.lo.s32 %r7, %r6, %r4, %r1;
  mov.u32 %r8, %ctaid.y;
  mov.u32 %r9, %nctaid.x;
  mov.u32 %r10, %ctaid.x;
  mad.lo.s32 %r11, %r8, %r9, %r10;
  mad.lo.s32 %r11, %r11, 1000, %r7;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r11, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r11;
  ret;
}
"""


def test_partial_warps_and_3d_ids():
    # block (5,3,3) = 45 threads: warps of 32 and 13 lanes; grid (2,3,1)
    prof, (out,) = both(PARTIAL, (2, 3, 1), (5, 3, 3), lambda: [np.zeros(6000, np.int32)])
    want = np.zeros(6000, np.int32)
    for c in range(6):
        want[c * 1000: c * 1000 + 45] = c * 1000 + np.arange(45)
    np.testing.assert_array_equal(out, want)
    assert prof.inst_executed == 17 * 2 * 6
    assert prof.thread_inst_executed == 17 * 45 * 6
    assert prof.warp_execution_efficiency == 100.0 * 45 / 64
    assert prof.per_cta["ctas"] == 6 and prof.per_cta["inst_executed"]["min"] == 34


RECUR = HDR + """
.func (.param .b32 r) fact(.param .b32 n)
{
  .reg .b32 %r<6>; .reg .pred %p;
  ld.param.b32 %r1, [n];
  setp.le.s32 %p, %r1, 1;
  @%p bra BASE;
  sub.s32 %r2, %r1, 1;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r2;
  call (b), fact, (a);
  ld.param.b32 %r3, [b];
  }
  mul.lo.s32 %r4, %r3, %r1;
  st.param.b32 [r], %r4;
  ret;
BASE:
  st.param.b32 [r], 1;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r1;
  call (b), fact, (a);
  ld.param.b32 %r2, [b];
  }
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def test_recursion_within_the_inline_depth():
    import math
    prof, (out,) = both(RECUR, 1, 8, lambda: [np.zeros(8, np.int32)])
    np.testing.assert_array_equal(out, [math.factorial(max(i, 1)) for i in range(8)])
    # fact's entry block runs once per (lane, recursion level): sum of max(i,1) levels
    assert prof.per_block["fact:bb0"]["thread_execs"] == sum(max(i, 1) for i in range(8))


def test_recursion_deeper_than_eight_levels():
    # Once refused ("call nested deeper than 8 levels of recursion"): fact(31)
    # takes 31 frames of 16 bytes on the thread's call stack (tests/test_call_stack.py).
    import math
    prof, (out,) = both(RECUR, 1, 32, lambda: [np.zeros(32, np.int32)])
    np.testing.assert_array_equal(out, [np.uint32(math.factorial(max(i, 1)) % 2 ** 32).view(np.int32)
                                        for i in range(32)])
    assert prof.per_block["fact:bb0"]["thread_execs"] == sum(max(i, 1) for i in range(32))


def test_results_do_not_depend_on_thread_count():
    text = LOOP
    ref = None
    for threads in (1, 2, 3):
        out = np.zeros(32 * 50, np.int32)
        prof = run_kernel(text.replace("mov.u32 %r1, %tid.x;", "mov.u32 %r1, %tid.x;"), "k", 50, 32,
                          [out], mode="full", threads=threads)
        if ref is None:
            ref = prof.counters()
        assert prof.counters() == ref
