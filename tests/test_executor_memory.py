"""Memory semantics of the executor: every state space, initialised module
variables, vector accesses, generic addressing and cvta, atomics and
reductions, byval parameters (PTX ISA 5, 9.7.9)."""
from __future__ import annotations

import numpy as np

from executor_harness import run_kernel

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"


def both(text, kernel, grid, block, make_args, **kw):
    """Run full and hybrid; return (full profile, full args)."""
    res = {}
    for mode in ("full", "hybrid"):
        args = make_args()
        res[mode] = (run_kernel(text, kernel, grid, block, args, mode=mode, **kw), args)
    assert res["hybrid"][0].counters() == res["full"][0].counters()
    return res["full"]


SHARED = HDR + """
.shared .align 4 .b8 buf[512];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<12>; .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, buf;
  add.s32 %r5, %r4, %r3;
  mul.lo.s32 %r6, %r1, 3;
  st.shared.u32 [%r5], %r6;
  bar.sync 0;
  add.s32 %r7, %r1, 1;
  rem.u32 %r8, %r7, %r2;
  shl.b32 %r9, %r8, 2;
  add.s32 %r10, %r4, %r9;
  ld.shared.u32 %r11, [%r10];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r11;
  ret;
}
"""


def test_shared_memory_and_barrier():
    prof, (out,) = both(SHARED, "k", 2, 100, lambda: [np.zeros(100, np.int32)])
    np.testing.assert_array_equal(out, 3 * ((np.arange(100) + 1) % 100))
    assert prof.inst_executed == 2 * 4 * 19        # 2 CTAs x 4 warps x 19 instructions


DYNSHARED = HDR + """
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .f32 %f<4>;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, dyn;
  cvta.shared.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  cvt.rn.f32.u32 %f1, %r1;
  st.f32 [%rd4], %f1;
  bar.sync 0;
  sub.s32 %r2, 31, %r1;
  mul.wide.u32 %rd5, %r2, 4;
  add.s64 %rd6, %rd2, %rd5;
  ld.f32 %f2, [%rd6];
  ld.param.u64 %rd7, [out];
  add.s64 %rd7, %rd7, %rd3;
  st.global.f32 [%rd7], %f2;
  ret;
}
"""


def test_dynamic_shared_through_generic_addresses():
    prof, (out,) = both(DYNSHARED, "k", 1, 32, lambda: [np.zeros(32, np.float32)], shared_bytes=128)
    np.testing.assert_array_equal(out, 31 - np.arange(32, dtype=np.float32))


LOCAL = HDR + """
.visible .entry k(.param .u64 out)
{
  .local .align 4 .b8 arr[16];
  .reg .b32 %r<12>; .reg .b64 %rd<10>;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, arr;
  st.local.u32 [arr], %r1;
  add.s32 %r2, %r1, 100;
  st.local.u32 [arr+4], %r2;
  cvta.local.u64 %rd2, %rd1;
  mul.lo.s32 %r3, %r1, %r1;
  st.u32 [%rd2+8], %r3;
  ld.local.u32 %r4, [arr];
  ld.local.u32 %r5, [%rd1+4];
  ld.u32 %r6, [%rd2+8];
  add.s32 %r7, %r4, %r5;
  add.s32 %r8, %r7, %r6;
  ld.param.u64 %rd3, [out];
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r8;
  ret;
}
"""


def test_local_memory_is_per_thread():
    prof, (out,) = both(LOCAL, "k", 1, 64, lambda: [np.zeros(64, np.int32)])
    t = np.arange(64)
    np.testing.assert_array_equal(out, t + t + 100 + t * t)


CONST = HDR + """
.const .align 4 .u32 tab[4] = {10, 20, 30, 40};
.global .align 8 .u64 gcount = 5;
.global .align 4 .f32 gscale[2] = {0f40000000, 0f3F000000};
.visible .entry k(.param .u64 out, .param .u64 fout)
{
  .reg .b32 %r<12>; .reg .b64 %rd<12>; .reg .f32 %f<4>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, tab;
  add.s32 %r5, %r4, %r3;
  ld.const.u32 %r6, [%r5];
  ld.global.u64 %rd1, [gcount];
  cvt.u32.u64 %r7, %rd1;
  add.s32 %r8, %r6, %r7;
  ld.param.u64 %rd2, [out];
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r8;
  mov.u64 %rd5, gscale;
  ld.global.f32 %f1, [%rd5];
  ld.global.f32 %f2, [gscale+4];
  cvt.rn.f32.u32 %f3, %r1;
  fma.rn.f32 %f3, %f3, %f1, %f2;
  ld.param.u64 %rd6, [fout];
  add.s64 %rd7, %rd6, %rd3;
  st.global.f32 [%rd7], %f3;
  ret;
}
"""


def test_const_and_global_variables_with_initialisers():
    prof, (out, fout) = both(CONST, "k", 1, 32, lambda: [np.zeros(32, np.int32), np.zeros(32, np.float32)])
    np.testing.assert_array_equal(out, np.array([10, 20, 30, 40])[np.arange(32) % 4] + 5)
    np.testing.assert_array_equal(fout, np.arange(32, dtype=np.float32) * 2 + 0.5)


VECTOR = HDR + """
.visible .entry k(.param .u64 src, .param .u64 dst)
{
  .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .f32 %f<8>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];
  add.s32 %r6, %r2, %r5;
  st.global.v4.u32 [%rd5], {%r5, %r4, %r3, %r6};
  ld.global.v2.f32 {%f1, _}, [%rd4+8];
  ret;
}
"""


def test_vector_loads_and_stores():
    src = np.arange(4 * 32, dtype=np.int32)
    prof, (s, dst) = both(VECTOR, "k", 1, 32, lambda: [src.copy(), np.zeros(4 * 32, np.int32)])
    v = src.reshape(32, 4)
    want = np.stack([v[:, 3], v[:, 2], v[:, 1], v[:, 0] + v[:, 3]], axis=1).reshape(-1)
    np.testing.assert_array_equal(dst, want)


ATOMS = HDR + """
.visible .entry k(.param .u64 hist, .param .u64 old, .param .u64 cells, .param .u64 fsum)
{
  .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .f32 %f<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  ld.param.u64 %rd1, [hist];
  and.b32 %r5, %r4, 7;
  mul.wide.u32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  atom.global.add.u32 %r6, [%rd3], 1;
  ld.param.u64 %rd4, [old];
  mul.wide.u32 %rd5, %r4, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.global.u32 [%rd6], %r6;
  ld.param.u64 %rd7, [cells];
  atom.global.max.s32 %r7, [%rd7], %r4;
  atom.global.min.s32 %r8, [%rd7+4], %r4;
  atom.global.inc.u32 %r9, [%rd7+8], 9;
  atom.global.dec.u32 %r10, [%rd7+12], 5;
  atom.global.or.b32 %r11, [%rd7+16], %r4;
  atom.global.exch.b32 %r12, [%rd7+20], %r4;
  setp.eq.u32 %p1, %r4, 3;
  @%p1 atom.global.cas.b32 %r13, [%rd7+24], 0, 77;
  red.global.add.u32 [%rd7+28], 2;
  ld.param.u64 %rd8, [fsum];
  cvt.rn.f32.u32 %f1, %r4;
  atom.global.add.f32 %f2, [%rd8], %f1;
  ret;
}
"""


def test_atomics_and_reductions():
    def args():
        return [np.zeros(8, np.uint32), np.zeros(128, np.uint32),
                np.array([-5, 1000, 0, 0, 0, 0, 0, 0], np.int32), np.zeros(1, np.float32)]
    prof, (hist, old, cells, fsum) = both(ATOMS, "k", 4, 32, args)
    np.testing.assert_array_equal(hist, np.full(8, 16))
    # lane order within a warp, CTAs in order: thread g is the (g // 8)-th to add to bin g % 8
    np.testing.assert_array_equal(old, np.arange(128) // 8)
    assert cells[0] == 127 and cells[1] == 0
    assert cells[2] == 128 % 10                  # inc wraps at 9: 0..9 cycle
    dec = 0
    for _ in range(128):
        dec = 5 if dec == 0 or dec > 5 else dec - 1
    assert cells[3] == dec
    assert cells[4] == 127 and cells[5] == 127 and cells[6] == 77 and cells[7] == 256
    assert fsum[0] == np.float32(sum(range(128)))


SHATOM = HDR + """
.shared .align 4 .u32 cnt;
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.shared.u32 [cnt], 0;
  bar.sync 0;
  atom.shared.add.u32 %r2, [cnt], 1;
  bar.sync 0;
  ld.shared.u32 %r3, [cnt];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  add.s32 %r4, %r3, %r2;
  st.global.u32 [%rd3], %r4;
  ret;
}
"""


def test_shared_atomics_are_per_cta():
    prof, (out,) = both(SHATOM, "k", 3, 96, lambda: [np.zeros(96, np.int32)])
    np.testing.assert_array_equal(out, 96 + np.arange(96))


BYVAL = HDR + """
.visible .entry k(.param .align 8 .b8 s[16], .param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .f32 %f<2>;
  ld.param.u32 %r1, [s+4];
  ld.param.f32 %f1, [s+8];
  cvt.rzi.s32.f32 %r2, %f1;
  add.s32 %r3, %r1, %r2;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r3;
  ret;
}
"""


def test_byval_struct_parameter():
    s = np.zeros(4, np.uint32)
    s[1] = 40
    s[2] = np.float32(2.75).view(np.uint32)
    prof, (_, out) = both(BYVAL, "k", 1, 1, lambda: [s.view(np.uint8).copy(), np.zeros(1, np.int32)])
    assert out[0] == 42


CALL = HDR + """
.func (.param .b32 ret) twice(.param .b32 x, .param .b64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<2>; .reg .pred %q;
  ld.param.b32 %r1, [x];
  ld.param.b64 %rd1, [p];
  setp.lt.s32 %q, %r1, 8;
  @%q bra SMALL;
  st.u32 [%rd1], %r1;
  mov.b32 %r2, 1000;
  st.param.b32 [ret], %r2;
  ret;
SMALL:
  shl.b32 %r2, %r1, 1;
  st.param.b32 [ret], %r2;
  ret;
}
.visible .entry k(.param .u64 out, .param .u64 side)
{
  .reg .b32 %r<6>; .reg .b64 %rd<8>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [side];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  {
  .param .b32 a0;
  .param .b64 a1;
  .param .b32 r0;
  st.param.b32 [a0], %r1;
  st.param.b64 [a1], %rd3;
  call (r0), twice, (a0, a1);
  ld.param.b32 %r2, [r0];
  }
  ld.param.u64 %rd4, [out];
  add.s64 %rd5, %rd4, %rd2;
  st.global.u32 [%rd5], %r2;
  ret;
}
"""


def test_call_parameters_and_divergent_return():
    prof, (out, side) = both(CALL, "k", 1, 16, lambda: [np.zeros(16, np.int32), np.zeros(16, np.int32)])
    t = np.arange(16)
    np.testing.assert_array_equal(out, np.where(t < 8, 2 * t, 1000))
    np.testing.assert_array_equal(side, np.where(t < 8, 0, t))
    # callee blocks are counted under the callee's name
    assert prof.per_block["twice:SMALL"]["thread_execs"] == 8
    assert prof.divergent_branch == 1


def test_in_place_buffers_written_back_only_in_full_mode():
    out = np.zeros(100, np.int32)
    run_kernel(SHARED, "k", 2, 100, [out], mode="hybrid")
    assert not out.any()
    run_kernel(SHARED, "k", 2, 100, [out], mode="full")
    assert out.any()
