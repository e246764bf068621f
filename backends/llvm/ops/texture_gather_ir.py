"""``tld4`` in generated code (texture_objects.gather, lane by lane): the
2x2 footprint of bilinear filtering, component ``comp`` of the texels at
``(i, j+1), (i+1, j+1), (i+1, j), (i, j)`` with ``i = floor(x - 0.5)``,
``j = floor(y - 0.5)`` (float32, after normalized coordinates are scaled),
each through read_at (address modes, border colour) and put_results.

A lane is left to Python (texture.run_form: the error messages) when the
row is not OK, the texture is linear memory, ``comp`` is not one of its
channels, the result type does not match it, or a floor is NaN or not below
2^31 in magnitude.
"""
from __future__ import annotations

from ptxc.backends.llvm.ops import texture_ir as X
from ptxc.backends.llvm.ops.texture_native import F_CH, F_LINEAR, F_NORM, F_OK, F_RETF, F_W

ORDER = ((0, 1), (1, 1), (1, 0), (0, 0))


def _lane() -> str:
    f = X._Fn("define internal i1 @ptxc_tx_g4(ptr %d, i32 %comp, i1 %wantf, i32 %c0, i32 %c1, ptr %o)")
    ok = f.v(f"icmp ne i64 {f.field(F_OK)}, 0")
    retf = f.v(f"icmp ne i64 {f.field(F_RETF)}, 0")
    same = f.v(f"icmp eq i1 {retf}, %wantf")
    lin = f.v(f"icmp eq i64 {f.field(F_LINEAR)}, 0")
    comp = f.v("zext i32 %comp to i64")
    has = f.v(f"icmp ult i64 {comp}, {f.field(F_CH)}")
    go = f.v(f"and i1 {f.v(f'and i1 {ok}, {same}')}, {f.v(f'and i1 {lin}, {has}')}")
    norm = f.v(f"icmp ne i64 {f.field(F_NORM)}, 0")
    base, good = [], go
    for k in range(2):
        x = f.v(f"bitcast i32 %c{k} to float")
        size = f.v(f"uitofp i64 {f.field(F_W + k)} to float")
        x = f.v(f"select i1 {norm}, float {f.v(f'fmul float {x}, {size}')}, float {x}")
        _, i, ok_k = X._floor_ok(f, f.v(f"fsub float {x}, 0.5"))
        base.append(i)
        good = f.v(f"and i1 {good}, {ok_k}")
    f.e(f"br i1 {good}, label %body, label %slow")
    f.label("slow")
    f.e("ret i1 false")
    f.label("body")
    f.e("br i1 %wantf, label %gf, label %gi")
    for flt, t in ((True, "f"), (False, "i")):
        f.label(f"g{t}")
        rt = "double" if flt else "i64"
        for k, (a, b) in enumerate(ORDER):
            i = f.v(f"add i64 {base[0]}, {a}")
            j = f.v(f"add i64 {base[1]}, {b}")
            v = f.v(f"call {rt} @ptxc_tx_rd{t}2(ptr %d, i64 {i}, i64 {j}, i64 {comp})")
            bits = X._bits(f, v, flt)
            f.e(f"store i64 {bits}, ptr {f.v(f'getelementptr inbounds i8, ptr %o, i64 {256 * k}')}, align 8")
        f.e("ret i1 true")
    return f.text()


def helpers() -> dict:
    """{name: IR text} of a tld4's helpers."""
    h = X.helpers(2)
    del h["ptxc_tx_lane2"], h["ptxc_tx_warp2"]
    h["ptxc_tx_g4"] = _lane()
    h["ptxc_tx_gwarp"] = X._warp(2, "ptxc_tx_gwarp", "ptxc_tx_g4", (("i32", "%comp"), ("i1", "%wantf")))
    return h
