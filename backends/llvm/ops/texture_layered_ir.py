"""``tex.a1d``/``tex.a2d`` in generated code (texture_layers.sample_layered,
lane by lane): the layer operand (a .u32, clamped to the last layer) picks
``pitch * h`` bytes of the texture, which is then sampled as a texture of
its own: a copy of the row with the layer's base address, one layer
(``F_D`` 1) and not layered, given to texture_ir's ``ptxc_tx_lane{N}``.

Left to Python (the error messages): a texture that is not layered, a
cubemap (texture_cube_ir.py), ``tex.a1d`` of 2-D layers (height above 1),
and every lane texture_ir leaves.
"""
from __future__ import annotations

from ptxc.backends.llvm.ops import texture_ir as X
from ptxc.backends.llvm.ops.texture_native import (
    F_BASE, F_CUBE, F_D, F_H, F_LAYERED, F_OK, F_PITCH, NFIELDS)


def slice_of(f, layer: str, height: str, fields) -> str:
    """A copy of the descriptor %d (on the stack) that describes its 2-D
    slice ``layer`` (of ``height`` rows) alone: the base moved to the slice
    and the (field, value) pairs ``fields`` stored over the copy's. Returns
    the copy's pointer (texture_cube_ir.py uses it for a face too)."""
    copy = f.v(f"alloca [{NFIELDS} x i64], align 8")
    f.e(f"call void @llvm.memcpy.p0.p0.i64(ptr {copy}, ptr %d, i64 {8 * NFIELDS}, i1 false)")
    step = f.v(f"mul i64 {f.field(F_PITCH)}, {height}")
    base = f.v(f"add i64 {f.field(F_BASE)}, {f.v(f'mul i64 {layer}, {step}')}")
    for k, v in ((F_BASE, base), *fields):
        f.e(f"store i64 {v}, ptr {f.v(f'getelementptr inbounds i64, ptr {copy}, i64 {k}')}, align 8")
    return copy


def _lane(nd: int) -> str:
    cs = ", ".join(f"i32 %c{k}" for k in range(nd + 1))
    f = X._Fn(f"define internal i1 @ptxc_tx_al{nd}(ptr %d, i1 %intc, i1 %wantf, {cs}, ptr %o)")
    ok = f.v(f"icmp ne i64 {f.field(F_OK)}, 0")
    lay = f.v(f"icmp ne i64 {f.field(F_LAYERED)}, 0")
    h = f.field(F_H)
    # tex.a1d needs 1-D layers (height 1); tex.a2d reads any layers (a 2-D
    # layered array of height 1 looks like a 1-D layered one: both are allowed)
    fits = f.v(f"icmp eq i64 {h}, 1") if nd == 1 else "true"
    flat = f.v(f"icmp eq i64 {f.field(F_CUBE)}, 0")
    go = f.v(f"and i1 {f.v(f'and i1 {ok}, {lay}')}, {f.v(f'and i1 {fits}, {flat}')}")
    f.e(f"br i1 {go}, label %body, label %slow")
    f.label("slow")
    f.e("ret i1 false")
    f.label("body")
    layer = f.v("zext i32 %c0 to i64")                      # a .u32 index
    last = f.v(f"sub i64 {f.field(F_D)}, 1")
    layer = f.v(f"select i1 {f.v(f'icmp ugt i64 {layer}, {last}')}, i64 {last}, i64 {layer}")
    copy = slice_of(f, layer, h, ((F_D, "1"), (F_LAYERED, "0")))
    args = ", ".join(f"i32 %c{k}" for k in range(1, nd + 1))
    f.e(f"ret i1 {f.v(f'call i1 @ptxc_tx_lane{nd}(ptr {copy}, i1 %intc, i1 %wantf, {args}, ptr %o)')}")
    return f.text()


DECLS = ("declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",)


def helpers(nd: int) -> dict:
    """{name: IR text} of a layered tex with ``nd`` coordinates besides the layer."""
    h = X.helpers(nd)
    del h[f"ptxc_tx_warp{nd}"]
    h[f"ptxc_tx_al{nd}"] = _lane(nd)
    h[f"ptxc_tx_awarp{nd}"] = X._warp(nd + 1, f"ptxc_tx_awarp{nd}", f"ptxc_tx_al{nd}")
    return h
