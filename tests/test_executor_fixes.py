"""Focused checks of executor fixes, each against values derived by hand from
the PTX ISA text (comments give the derivation)."""
from __future__ import annotations

import numpy as np

from executor_harness import HEADER, run_kernel, run_op


# ---------------------------------------------------------------- cvt.pack
# PTX ISA cvt.pack: ta = sat(a), tb = sat(b) to convertType (n bits);
# d[n-1:0] = tb, d[2n-1:n] = ta; for the 2/4/8-bit forms d[31:2n] = c[31-2n:0].
def test_cvt_pack_u8_s8_with_c():
    a, b, c = [300, -1, 5], [-1, 300, -5], [0xABCD1234, 0, 0xFFFFFFFF]
    ins = {"a": a, "b": b, "c": c}
    got = run_op("cvt.pack.sat.u8.s32.b32 %d, %a, %b, %c;", ins, a="s32", b="s32", c="b32", d="u32")
    # u8: sat(300)=0xff, sat(-1)=0; sat(-1)=0, sat(300)=0xff; 5, sat(-5)=0
    assert [int(x) for x in got] == [0x1234FF00, 0x000000FF, 0xFFFF0500]
    got = run_op("cvt.pack.sat.s8.s32.b32 %d, %a, %b, %c;", ins, a="s32", b="s32", c="b32", d="u32")
    # s8: sat(300)=0x7f, -1=0xff; -1=0xff, 0x7f; 5=0x05, -5=0xfb
    assert [int(x) for x in got] == [0x12347FFF, 0x0000FF7F, 0xFFFF05FB]


def test_cvt_pack_u4_and_16bit_forms():
    got = run_op("cvt.pack.sat.u4.s32.b32 %d, %a, %b, %c;", {"a": [20], "b": [3], "c": [1]},
                 a="s32", b="s32", c="b32", d="u32")
    assert int(got[0]) == 0x1F3                      # c << 8 | 15 << 4 | 3
    ins = {"a": [70000, -40000], "b": [-5, 5]}
    got = run_op("cvt.pack.sat.u16.s32 %d, %a, %b;", ins, a="s32", b="s32", d="u32")
    assert [int(x) for x in got] == [0xFFFF0000, 0x00000005]
    got = run_op("cvt.pack.sat.s16.s32 %d, %a, %b;", ins, a="s32", b="s32", d="u32")
    assert [int(x) for x in got] == [0x7FFFFFFB, 0x80000005]


# ------------------------------------------------------------ f32 -> fp8x2
# d = fp8(a) << 8 | fp8(b), round to nearest even, .satfinite: overflow and
# +-inf -> +-max finite (e4m3 0x7e = 448, e5m2 0x7b = 57344), NaN -> 0x7f.
def test_cvt_e4m3x2_f32():
    a = np.array([1.0, -2.0, np.nan, 1.0625, np.inf], np.float32)
    b = np.array([500.0, 0.0, 2.0 ** -9, 1.1875, -np.inf], np.float32)
    got = run_op("cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="b16")
    # 1.0 = 0x38 (bias 7); 500 -> 448 = 0x7e; -2 = 0xc0; 2^-9 = min subnormal 0x01;
    # 1.0625 ties to 1.0 (even), 1.1875 ties to 1.25 = 0x3a; -inf -> 0xfe
    assert [int(x) for x in got] == [0x387E, 0xC000, 0x7F01, 0x383A, 0x7EFE]


def test_cvt_e5m2x2_f32():
    a = np.array([1.0, -0.5, 2.0 ** -16], np.float32)
    b = np.array([1e6, 3.0, 2.0 ** -17], np.float32)
    got = run_op("cvt.rn.satfinite.e5m2x2.f32 %d, %a, %b;", {"a": a, "b": b}, a="f32", b="f32", d="b16")
    # 1.0 = 0x3c (bias 15); 1e6 -> 57344 = 0x7b; -0.5 = 0xb8; 3.0 = 0x42;
    # 2^-16 = min subnormal 0x01; 2^-17 ties to 0 (even)
    assert [int(x) for x in got] == [0x3C7B, 0xB842, 0x0100]


# ------------------------------------------- symbols in module initialisers
# A variable named in an initializer has the value mov gives it (a .const
# variable's .const-space offset); generic(x) is its generic address (cvta).
CONST_INIT = HEADER + """
.const .u64 x = 1;
.const .u64 y[2] = {4, 5};
.const .u64 tab[3] = {x, y, generic(y)};
.global .u32 gv;
.global .u64 gtab[1] = {gv};
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<16>;
  ld.param.u64 %rd0, [out];
  mov.u64 %rd1, x;
  mov.u64 %rd2, y;
  cvta.const.u64 %rd3, %rd2;
  mov.u64 %rd4, gv;
  ld.const.u64 %rd5, [tab];
  ld.const.u64 %rd6, [tab+8];
  ld.const.u64 %rd7, [tab+16];
  ld.global.u64 %rd8, [gtab];
  xor.b64 %rd5, %rd5, %rd1;
  xor.b64 %rd6, %rd6, %rd2;
  xor.b64 %rd7, %rd7, %rd3;
  xor.b64 %rd8, %rd8, %rd4;
  st.global.u64 [%rd0], %rd5;
  st.global.u64 [%rd0+8], %rd6;
  st.global.u64 [%rd0+16], %rd7;
  st.global.u64 [%rd0+24], %rd8;
  ld.const.u64 %rd9, [%rd1];
  st.global.u64 [%rd0+32], %rd9;
  ret;
}
"""


def test_initializer_symbols_match_mov():
    out = np.full(5, 0xDEAD, np.uint64)
    run_kernel(CONST_INIT, "k", 1, 1, [out])
    assert [int(v) for v in out] == [0, 0, 0, 0, 1]


# -------------------------------------------------------------------- dp2a
# d = c + sum_{i<2} a.half[i] * b.byte[sel + i], sel = 0 (.lo) or 2 (.hi); halves
# and bytes sign- or zero-extended by atype / btype.
def test_dp2a():
    got = run_op("dp2a.lo.u32.u32 %d, %a, %b, %c;", {"a": [0x00030002], "b": [0x00000504], "c": [10]},
                 a="u32", b="u32", c="u32", d="u32")
    assert int(got[0]) == 33                          # 10 + 2*4 + 3*5
    got = run_op("dp2a.hi.s32.s32 %d, %a, %b, %c;", {"a": [0xFFFF0002], "b": [0xFE030000], "c": [0]},
                 a="u32", b="u32", c="u32", d="u32")
    assert int(got[0]) == 8                           # 2*3 + (-1)*(-2)
    got = run_op("dp2a.lo.s32.u32 %d, %a, %b, %c;", {"a": [0xFFFFFFFF], "b": [0x0000FFFF], "c": [0]},
                 a="u32", b="u32", c="u32", d="u32")
    assert int(got[0]) == 0xFFFFFE02                  # -1*255 + -1*255 = -510


# ------------------------------------------------------------- vshl / vshr
# tb = min(b, 32) (.clamp) or b & 31 (.wrap); tmp = a << tb or a >> tb (arithmetic
# for .s32 a); optional .sat to dtype; then the secondary op with c.
def test_vshift():
    def one(text, x, y, z=0):
        return int(run_op(text, {"a": [x], "b": [y], "c": [z]}, a="u32", b="u32", c="u32", d="u32")[0])
    assert one("vshr.u32.u32.u32.clamp.add %d, %a, %b, %c;", 0x80000000, 40, 7) == 7
    assert one("vshr.u32.u32.u32.clamp.add %d, %a, %b, %c;", 0x100, 4, 5) == 0x15
    assert one("vshr.s32.s32.u32.clamp %d, %a, %b;", 0xFFFFFF00, 100) == 0xFFFFFFFF
    assert one("vshr.u32.u32.u32.wrap %d, %a, %b;", 0x100, 36) == 0x10
    assert one("vshl.u32.u32.u32.sat.clamp %d, %a, %b;", 0x40000000, 2) == 0xFFFFFFFF
    assert one("vshl.u32.u32.u32.clamp %d, %a, %b;", 0x40000000, 2) == 0
    assert one("vshr.s32.s32.u32.clamp.max %d, %a, %b, %c;", 0xFFFFFF00, 4, 0xFFFFFFEC) == 0xFFFFFFF0


def test_createpolicy_runs():
    got = run_op("createpolicy.fractional.L2::evict_last.b64 %rd60, 1.0;\n  mov.u32 %d, %a;",
                 {"a": [5]}, a="u32", d="u32")
    assert int(got[0]) == 5


# ------------------------------------------------------- vector register mov
# mov.vN d, a copies component by component; all of a is read before d is written.
def test_mov_vector_registers():
    body = """{
  .reg .v2 .u32 v;
  mov.v2.u32 v, {%a, %b};
  mov.v2.u32 v, {v.y, v.x};
  mov.v2.u32 {%d, %q}, v;
  }"""
    d, q = run_op(body, {"a": [1, 7], "b": [2, 9]}, a="u32", b="u32", d="u32", q="u32")
    assert [int(x) for x in d] == [2, 9] and [int(x) for x in q] == [1, 7]
