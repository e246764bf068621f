"""Warp collectives (shfl, vote, match, redux, activemask, elect) and CTA
barrier reductions, checked against the PTX ISA pseudocode; collectives see
exactly the executing lanes (METRICS.md)."""
from __future__ import annotations

import numpy as np
import pytest

from executor_harness import run_kernel

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"


def kernel(body: str, decls: str = "") -> str:
    """Thread t computes %r9 (and %p9 into %r10) from a = in[t]; out[t] = %r9, out2[t] = %r10."""
    return HDR + f""".visible .entry k(.param .u64 in, .param .u64 out, .param .u64 out2)
{{
  .reg .b32 %r<16>; .reg .b64 %rd<12>; .reg .pred %p<10>;
  {decls}
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  mov.u32 %r9, 0;
  mov.u32 %r10, 0;
  {body}
  ld.param.u64 %rd4, [out];
  add.s64 %rd5, %rd4, %rd2;
  st.global.u32 [%rd5], %r9;
  ld.param.u64 %rd6, [out2];
  add.s64 %rd7, %rd6, %rd2;
  st.global.u32 [%rd7], %r10;
  ret;
}}
"""


def run(body, a, n=32, decls=""):
    outs = {}
    for mode in ("full", "hybrid"):
        args = [np.asarray(a, np.uint32).copy(), np.zeros(n, np.uint32), np.zeros(n, np.uint32)]
        prof = run_kernel(kernel(body, decls), "k", 1, n, args, mode=mode)
        outs[mode] = (prof, args[1], args[2])
    assert outs["hybrid"][0].counters() == outs["full"][0].counters()
    return outs["full"][1], outs["full"][2]


def shfl_ref(mode, a, b, c, active):
    out, pred = [], []
    for lane in range(32):
        seg = (c >> 8) & 31
        maxl = (lane & seg) | ((c & 31) & ~seg)
        minl = lane & seg
        if mode == "up":
            j = lane - b
            p = j >= maxl
        elif mode == "down":
            j = lane + b
            p = j <= maxl
        elif mode == "bfly":
            j = lane ^ b
            p = j <= maxl
        else:
            j = minl | (b & ~seg)
            p = j <= maxl
        if not p:
            j = lane
        out.append(a[j])
        pred.append(int(p))
    return np.array(out, np.uint32), np.array(pred, np.uint32)


CASES = [("down", 1, 0x1F), ("down", 5, 0x1F), ("up", 3, 0), ("bfly", 4, 0x1F), ("idx", 7, 0x1F),
         ("down", 2, 0x181F), ("up", 1, 0x1800), ("idx", 3, 0x181F), ("bfly", 1, 0x1C1F),
         ("down", 3, 0x0F), ("idx", 20, 0x0F), ("up", 2, 0x05), ("bfly", 8, 0x0F), ("idx", 9, 0x1F0A)]


@pytest.mark.parametrize("mode,b,c", CASES)
def test_shfl_sync(mode, b, c):
    a = (np.arange(32) * 7 + 3).astype(np.uint32)
    body = f"""shfl.sync.{mode}.b32 %r9|%p9, %r2, {b}, {c}, -1;
  selp.u32 %r10, 1, 0, %p9;"""
    d, p = run(body, a)
    want_d, want_p = shfl_ref(mode, a, b, c, None)
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(p, want_p)


def test_shfl_reduction_tree():
    a = np.arange(32, dtype=np.uint32) + 1
    body = "\n  ".join(f"shfl.sync.bfly.b32 %r3, %r2, {s}, 31, -1;\n  add.s32 %r2, %r2, %r3;"
                       for s in (16, 8, 4, 2, 1)) + "\n  mov.u32 %r9, %r2;"
    d, _ = run(body, a)
    np.testing.assert_array_equal(d, np.full(32, a.sum()))


def test_vote_in_divergent_code_sees_active_lanes_only():
    a = np.arange(32, dtype=np.uint32)
    body = """setp.lt.u32 %p1, %r1, 20;
  @!%p1 bra SKIP;
  and.b32 %r3, %r2, 1;
  setp.eq.u32 %p2, %r3, 1;
  vote.sync.ballot.b32 %r9, %p2, -1;
  vote.sync.all.pred %p3, %p2, -1;
  vote.any.pred %p4, %p2;
  activemask.b32 %r4;
  selp.u32 %r5, 1, 0, %p3;
  selp.u32 %r6, 2, 0, %p4;
  or.b32 %r10, %r5, %r6;
  xor.b32 %r9, %r9, %r4;
SKIP:"""
    d, p = run(body, a)
    odd = sum(1 << i for i in range(20) if i % 2)
    active = (1 << 20) - 1
    np.testing.assert_array_equal(d[:20], np.full(20, odd ^ active))
    np.testing.assert_array_equal(p[:20], np.full(20, 2))          # not all, but any
    np.testing.assert_array_equal(d[20:], 0)


def test_vote_uni_and_guarded_member_mask():
    a = np.full(32, 5, np.uint32)
    body = """setp.eq.u32 %p2, %r2, 5;
  vote.sync.uni.pred %p3, %p2, 0x0000ffff;
  selp.u32 %r10, 1, 0, %p3;
  vote.sync.ballot.b32 %r9, %p2, 0x0000ffff;"""
    d, p = run(body, a)
    np.testing.assert_array_equal(p, 1)
    np.testing.assert_array_equal(d, 0xFFFF)


def test_match_any_and_all():
    a = (np.arange(32) % 3).astype(np.uint32)
    d, _ = run("match.any.sync.b32 %r9, %r2, -1;", a)
    want = [sum(1 << j for j in range(32) if a[j] == a[i]) for i in range(32)]
    np.testing.assert_array_equal(d, np.array(want, np.uint32))
    d, p = run("match.all.sync.b32 %r9|%p9, %r2, -1;\n  selp.u32 %r10, 1, 0, %p9;", a)
    np.testing.assert_array_equal(d, 0)
    np.testing.assert_array_equal(p, 0)
    d, p = run("match.all.sync.b32 %r9|%p9, %r2, -1;\n  selp.u32 %r10, 1, 0, %p9;", np.full(32, 4))
    np.testing.assert_array_equal(d, 0xFFFFFFFF)
    np.testing.assert_array_equal(p, 1)


@pytest.mark.parametrize("op,t,fn", [("add", "u32", lambda v: v.sum() & 0xFFFFFFFF),
                                     ("min", "s32", lambda v: v.view(np.int32).min()),
                                     ("max", "u32", lambda v: v.max()),
                                     ("and", "b32", np.bitwise_and.reduce),
                                     ("or", "b32", np.bitwise_or.reduce),
                                     ("xor", "b32", np.bitwise_xor.reduce)])
def test_redux_sync(op, t, fn):
    a = (np.arange(32, dtype=np.int64) * 2654435761 % (1 << 32)).astype(np.uint32)
    d, _ = run(f"redux.sync.{op}.{t} %r9, %r2, -1;", a)
    np.testing.assert_array_equal(d, np.full(32, fn(a)).astype(np.uint32))


def test_elect_sync():
    a = np.arange(32, dtype=np.uint32)
    body = """setp.ge.u32 %p1, %r1, 5;
  @!%p1 bra SKIP;
  elect.sync %r9|%p9, -1;
  selp.u32 %r10, 1, 0, %p9;
SKIP:"""
    d, p = run(body, a)
    np.testing.assert_array_equal(d[5:], 5)
    np.testing.assert_array_equal(p, (np.arange(32) == 5).astype(np.uint32))


BARRED = HDR + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 3;
  setp.eq.u32 %p1, %r2, 0;
  bar.red.popc.u32 %r3, 0, %p1;
  setp.lt.u32 %p2, %r1, 1000;
  bar.red.and.pred %p3, 0, %p2;
  selp.u32 %r4, 1000, 0, %p3;
  bar.red.or.pred %p3, 0, !%p2;
  selp.u32 %r5, 100000, 0, %p3;
  add.s32 %r6, %r3, %r4;
  add.s32 %r6, %r6, %r5;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
  ret;
}
"""


def test_bar_red_popc_and_or():
    out = np.zeros(100, np.uint32)
    full = run_kernel(BARRED, "k", 2, 100, [out], mode="full")
    np.testing.assert_array_equal(out, np.full(100, 34 + 1000))
    hybrid = run_kernel(BARRED, "k", 2, 100, [np.zeros(100, np.uint32)], mode="hybrid")
    assert hybrid.counters() == full.counters()


def test_shfl_source_not_executing_gives_its_register():
    """A source lane that does not execute the shfl (undefined in the ISA):
    ptxc reads the value its register holds. Lanes 0-15 add 1000 to %r3 and
    read lane ^ 16, which skipped the add: they get a[lane ^ 16]."""
    a = np.arange(32, dtype=np.uint32) * 3 + 1
    body = """mov.u32 %r3, %r2;
  setp.lt.u32 %p1, %r1, 16;
  @!%p1 bra SKIP;
  add.u32 %r3, %r3, 1000;
  shfl.sync.bfly.b32 %r9, %r3, 16, 31, 0xffff;
SKIP:"""
    d, _ = run(body, a)
    np.testing.assert_array_equal(d[:16], a[16:])
    np.testing.assert_array_equal(d[16:], 0)
