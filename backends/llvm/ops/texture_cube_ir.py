"""``tex.cube``/``tex.acube`` in generated code (texture_layers.sample_cube,
lane by lane, in the same float32 operations, so the bits are the same).

The face comes from CUDA's "Cubemap Fetch" table (texture_layers.py): x
is the major axis when ``|x| > |y|`` and ``|x| > |z|``, else y when
``|y| > |z|``, else z; ``m``, ``s``, ``t`` are the table's signed
coordinates, ``u = (s / m + 1) * 0.5`` and ``v = (t / m + 1) * 0.5``. The
face's layer (``6 * min(cube, cubes - 1) + face`` for ``tex.acube``, the
cube index a ``.u32``) is then fetched like ``tex.2d`` with normalized
coordinates: a copy of the row with the layer's base address, one layer,
neither layered nor a cubemap, ``F_NORM`` 1, given to texture_ir's
``ptxc_tx_lane2`` (the row's address modes were already computed as for
normalized coordinates: texture_native.row_of).

Left to Python (the error messages): a texture that is not a cubemap, a
layered cubemap read with ``tex.cube`` or a plain one with ``tex.acube``,
and every lane texture_ir leaves (a NaN coordinate: all-zero directions).
"""
from __future__ import annotations

from ptxc.backends.llvm.ops import texture_ir as X
from ptxc.backends.llvm.ops.texture_layered_ir import slice_of
from ptxc.backends.llvm.ops.texture_native import F_CUBE, F_D, F_H, F_LAYERED, F_NORM, F_OK


def _sel(f, c: str, a: str, b: str, t: str = "float") -> str:
    return f.v(f"select i1 {c}, {t} {a}, {t} {b}")


def _face(f, x: str, y: str, z: str) -> tuple:
    """(face as i64, m, s, t) of direction (x, y, z)."""
    ax, ay, az = (f.v(f"call float @llvm.fabs.f32(float {c})") for c in (x, y, z))
    xmaj = f.v(f"and i1 {f.v(f'fcmp ogt float {ax}, {ay}')}, {f.v(f'fcmp ogt float {ax}, {az}')}")
    ymaj = f.v(f"and i1 {f.v(f'xor i1 {xmaj}, true')}, {f.v(f'fcmp ogt float {ay}, {az}')}")
    xp, yp, zp = (f.v(f"fcmp oge float {c}, 0.0") for c in (x, y, z))
    nx, ny, nz = (f.v(f"fneg float {c}") for c in (x, y, z))
    face = _sel(f, xmaj, _sel(f, xp, "0", "1", "i64"),
                _sel(f, ymaj, _sel(f, yp, "2", "3", "i64"), _sel(f, zp, "4", "5", "i64"), "i64"), "i64")
    m = _sel(f, xmaj, _sel(f, xp, x, nx), _sel(f, ymaj, _sel(f, yp, y, ny), _sel(f, zp, z, nz)))
    s = _sel(f, xmaj, _sel(f, xp, nz, z), _sel(f, ymaj, x, _sel(f, zp, x, nx)))
    t = _sel(f, xmaj, ny, _sel(f, ymaj, _sel(f, yp, z, nz), ny))
    return face, m, s, t


def _lane(layered: bool) -> str:
    n = 4 if layered else 3
    cs = ", ".join(f"i32 %c{k}" for k in range(n))
    f = X._Fn(f"define internal i1 @ptxc_tx_cl{int(layered)}(ptr %d, i1 %intc, i1 %wantf, {cs}, ptr %o)")
    ok = f.v(f"icmp ne i64 {f.field(F_OK)}, 0")
    cube = f.v(f"icmp ne i64 {f.field(F_CUBE)}, 0")
    kind = f.v(f"icmp eq i64 {f.field(F_LAYERED)}, {int(layered)}")
    go = f.v(f"and i1 {f.v(f'and i1 {ok}, {cube}')}, {kind}")
    f.e(f"br i1 {go}, label %body, label %slow")
    f.label("slow")
    f.e("ret i1 false")
    f.label("body")
    first = int(layered)
    x, y, z = (f.v(f"bitcast i32 %c{first + k} to float") for k in range(3))
    face, m, s, t = _face(f, x, y, z)
    uv = []
    for c in (s, t):
        q = f.v(f"fadd float {f.v(f'fdiv float {c}, {m}')}, 1.0")
        uv.append(f.v(f"bitcast float {f.v(f'fmul float {q}, 0.5')} to i32"))
    layer = face
    if layered:
        last = f.v(f"sub i64 {f.v(f'udiv i64 {f.field(F_D)}, 6')}, 1")
        idx = f.v("zext i32 %c0 to i64")                       # a .u32 index
        idx = f.v(f"select i1 {f.v(f'icmp ugt i64 {idx}, {last}')}, i64 {last}, i64 {idx}")
        layer = f.v(f"add i64 {face}, {f.v(f'mul i64 {idx}, 6')}")
    copy = slice_of(f, layer, f.field(F_H),
                    ((F_D, "1"), (F_LAYERED, "0"), (F_CUBE, "0"), (F_NORM, "1")))
    done = f.v(f"call i1 @ptxc_tx_lane2(ptr {copy}, i1 false, i1 %wantf, i32 {uv[0]}, i32 {uv[1]}, ptr %o)")
    f.e(f"ret i1 {done}")
    return f.text()


def helpers(layered: bool) -> dict:
    """{name: IR text} of a tex.cube (``layered`` False) or tex.acube."""
    h = X.helpers(2)
    del h["ptxc_tx_warp2"]
    k = int(layered)
    h[f"ptxc_tx_cl{k}"] = _lane(layered)
    h[f"ptxc_tx_cwarp{k}"] = X._warp(4 if layered else 3, f"ptxc_tx_cwarp{k}", f"ptxc_tx_cl{k}")
    return h
