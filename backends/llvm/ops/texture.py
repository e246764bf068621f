"""Texture and surface instructions: tex, tld4, suld.b, sust.b (texture-object
mode: the texture/surface operand is a 64-bit handle register).

PTX ISA, "Texture Instructions" (tex, tld4) and "Surface Instructions"
(suld, sust). ``tex``, ``tld4``, ``suld.b`` and ``sust.b`` first run in
generated code (texture_native.py, texture_ir.py, texture_layered_ir.py,
texture_cube_ir.py, texture_gather_ir.py, surface_ir.py) for the lanes it
can do; the rest go to Python (layered and cubemap fetches: texture_layers.py):
each warp-level instruction stores the executing lanes'
handles, coordinates (and for sust the data) in per-warp buffers and calls
``ptxc_tex(form, handles, coords, mask, data, cta)`` once: a ctypes callback
(:func:`run_form`) that looks every handle up in the handle table of
texture_objects.py and computes the results with numpy (the fetch semantics
are documented there and in docs/executor.md). The callback returns the lanes that failed (an
invalid handle, a ``.trap`` surface access out of range, an unsupported
format); the run then stops with layout.ERR_TEX and the message the
callback kept for that CTA (``ERRORS``).

``form`` packs the instruction form into an i32 (see :func:`encode`), so
compiled code (also from the on-disk object cache) holds no Python state.
Forms ptxc does not run (texture references ``.texref``, ``.2dms/.a2dms``,
sampler operands, depth compare, offsets, the
residency predicate, ``suld.p``/``sust.p``, ``sured``) compile to a
run-time "not supported yet" error naming the instruction.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ptxc import ir
from ptxc.errors import PtxcError

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.ops import surface_ir, texture_cube_ir, texture_gather_ir, texture_ir
from ptxc.backends.llvm.ops import texture_layered_ir
from ptxc.backends.llvm.ops import texture_layers as TL
from ptxc.backends.llvm.ops import texture_native as N
from ptxc.backends.llvm.ops import texture_objects as T

OP_TEX, OP_TLD4, OP_SULD, OP_SUST = range(4)
GEOMS = {"1d": 1, "2d": 2, "3d": 3}
LAYERED = {"a1d": 1, "a2d": 2}          # {layer, x[, y, _]}
CUBE = {"cube": False, "acube": True}   # tex only: {x, y, z, _} / {cube, x, y, z}
DTYPES = ("f32", "s32", "u32")
SMODES = ("trap", "clamp", "zero")
SIZES = {"b8": 0, "b16": 1, "b32": 2, "b64": 3}
DECL = "declare i32 @ptxc_tex(i32, ptr, ptr, i32, ptr, i32)"


def encode(op: int, dims: int, integer: bool, dtype: int = 0, comp: int = 0,
           smode: int = 0, size_log2: int = 2, vec: int = 1, layered: bool = False,
           cube: bool = False) -> int:
    return (op | dims << 2 | int(integer) << 5 | dtype << 6 | comp << 8 | smode << 10
            | size_log2 << 12 | vec << 16 | int(layered) << 19 | int(cube) << 20)


def decode(form: int) -> dict:
    return {"op": form & 3, "dims": form >> 2 & 7, "integer": bool(form >> 5 & 1),
            "dtype": form >> 6 & 3, "comp": form >> 8 & 3, "smode": form >> 10 & 3,
            "size": 1 << (form >> 12 & 3), "vec": form >> 16 & 7, "layered": bool(form >> 19 & 1),
            "cube": bool(form >> 20 & 1)}


# ------------------------------------------------------------ lowering
def operands(ins):
    """(handle operand, coordinate items) of the bracket ``[h, {c..}]``."""
    addr = ins.srcs[0]
    items = addr.base.items if isinstance(addr, ir.Addr) and isinstance(addr.base, ir.Bracket) else None
    if not items or len(items) != 2:
        raise PtxcError("only the texture-object form [handle, {coordinates}] is supported")
    handle, coords = items
    if isinstance(handle, ir.Sym):
        raise PtxcError(f"texture/surface references ({handle.name}) are not supported; "
                        "use texture or surface objects")
    coords = coords.items if isinstance(coords, ir.Vec) else [coords]
    return handle, coords


def geometry(ins, allowed=tuple(GEOMS)) -> tuple:
    """(dimensions, layered?, cube?) of the instruction's geometry (one of ``allowed``)."""
    geoms = [m for m in ins.mods if m in GEOMS or m in ("a1d", "a2d", "cube", "acube", "2dms", "a2dms")]
    if len(geoms) != 1 or geoms[0] not in allowed:
        raise PtxcError(f"geometry {'.'.join(geoms) or '(none)'} is not supported "
                        f"({', '.join(allowed)})")
    g = geoms[0]
    if g in CUBE:
        return 3, CUBE[g], True
    return (LAYERED[g], True, False) if g in LAYERED else (GEOMS[g], False, False)


def stage(cg, handle, coords, ctype: str, ndims: int):
    """Per-warp buffers holding the handles and the coordinates (an item
    None: 0 in every lane)."""
    f = cg.f
    hbuf = f.alloca("<32 x i64>", "texh", 64)
    cbuf = f.alloca("[4 x <32 x i32>]", "texc", 64)
    dbuf = f.alloca("[4 x <32 x i64>]", "texd", 64)
    f.store("<32 x i64>", cg.read(handle, "b64"), hbuf, 64)
    for k in range(ndims):
        v = "zeroinitializer" if coords[k] is None else cg.read(coords[k], ctype)
        f.store("<32 x i32>", v, f.gep(cbuf, k * 128), 64)
    return hbuf, cbuf, dbuf


def call(cg, form: int, hbuf, cbuf, dbuf, slow: str | None = None) -> None:
    """The callback for the executing lanes, or, after the native fetch
    (texture_native.py), for its ``slow`` lanes only when there are any."""
    f = cg.f
    cg.decls.add(DECL)
    if slow is not None:
        py, join, pre = f.fresh_label("texpy"), f.fresh_label("texj"), f.cur_label
        f.cbr(f.icmp("ne", "i32", slow, "0"), py, join)
        f.label(py, dominated=True)
    cta = f.field("i32", "%cta", Lo.CTA_LINEAR)
    bad = f.call("i32", "ptxc_tex", [("i32", str(form)), ("ptr", hbuf), ("ptr", cbuf),
                                     ("i32", cg.emi if slow is None else slow), ("ptr", dbuf),
                                     ("i32", cta)])
    if slow is not None:
        f.br(join)
        f.label(join, dominated=True)
        bad = f.val(f"phi i32 [ 0, %{pre} ], [ {bad}, %{py} ]")
    cg.fail_if(bad, Lo.ERR_TEX, f.load("<32 x i64>", hbuf, 64))


def native(cg, dims: int, integer: bool, want_float: bool, hbuf, cbuf, dbuf,
           layered: bool = False, cube: bool = False) -> str:
    """The generated-code fetch (texture_native.py); the lanes it left."""
    if cube:
        mod, name = texture_cube_ir, f"ptxc_tx_cwarp{int(layered)}"
        helpers = mod.helpers(layered)
    else:
        mod = texture_layered_ir if layered else texture_ir
        name = f"ptxc_tx_{'awarp' if layered else 'warp'}{dims}"
        helpers = mod.helpers(dims)
    for hname, text in helpers.items():
        cg.helpers.setdefault(hname, text)
    cg.decls.update(texture_ir.DECLS + (texture_layered_ir.DECLS if layered or cube else ()))
    return cg.f.call("i32", name, [
        ("ptr", hbuf), ("ptr", cbuf), ("i32", cg.emi), ("ptr", dbuf),
        ("i1", "true" if integer else "false"), ("i1", "true" if want_float else "false")])


def write_results(cg, dsts, dbuf, bits: int) -> None:
    f = cg.f
    for k, item in enumerate(dsts):
        if isinstance(item, ir.Sink):
            continue
        v = f.load("<32 x i64>", f.gep(dbuf, k * 256), 64)
        if bits < 64:
            v = f.cast("trunc", "<32 x i64>", v, f"<32 x i{bits}>")
        cg.write(item, v, f"b{bits}")


def native_surface(cg, op: str, form: int, hbuf, cbuf, dbuf) -> str | None:
    """suld/sust in generated code (surface_ir.py); the lanes it left, or
    None for a form it does not do (then Python does every lane)."""
    d = decode(form)
    if d["vec"] not in (1, 2, 4) or not 1 <= d["dims"] <= 3:
        return None
    for name, text in surface_ir.helpers(op, d["dims"], d["size"], d["vec"], d["layered"]).items():
        cg.helpers.setdefault(name, text)
    cg.decls.update(surface_ir.DECLS)
    tag = "a" if d["layered"] else ""
    return cg.f.call("i32", f"ptxc_sf_{op}{d['dims']}{tag}_{d['size']}_{d['vec']}", [
        ("ptr", hbuf), ("ptr", cbuf), ("i32", cg.emi), ("ptr", dbuf), ("i64", str(d["smode"]))])


LOD_SRCS = {"level": 2, "grad": 3}    # tex.level: + lod; tex.grad: + dPdx, dPdy


def refuse_extras(ins) -> None:
    """Only ``[handle, {coordinates}]``, or for ``tex.level``/``tex.grad``
    that and the LOD or gradient operands, which pick a mipmap level: ptxc's
    textures have one level (mipmapped arrays are refused when the texture
    is made), so the fetch reads level 0 whatever they say (PTX ISA, tex:
    the LOD selects among the levels of a mipmapped texture)."""
    lod = [m for m in ins.mods if m in LOD_SRCS]
    want = LOD_SRCS[lod[0]] if len(lod) == 1 else 1
    if len(ins.srcs) != want or not isinstance(ins.dsts[0], ir.Vec):
        raise PtxcError("sampler, offset, depth-compare and predicate operands are not supported")


def lower_tex(cg, ins) -> None:
    refuse_extras(ins)
    dims, layered, cube = geometry(ins, tuple(GEOMS) + tuple(LAYERED) + tuple(CUBE))
    types = [m for m in ins.mods if m in ("f32", "s32", "u32", "f16")]
    if "v4" not in ins.mods or len(types) != 2 or types[0] == "f16" or types[1] not in ("f32", "s32"):
        raise PtxcError("only .v4 results of f32/s32/u32 with f32/s32 coordinates are supported")
    if cube and types[1] != "f32":
        raise PtxcError("tex.cube/tex.acube take .f32 coordinates (PTX ISA, tex)")
    handle, coords = operands(ins)
    integer = types[1] == "s32"
    hbuf, cbuf, dbuf = stage(cg, handle, coords, "b32", dims + layered)
    form = encode(OP_TEX, dims, integer, DTYPES.index(types[0]), layered=layered, cube=cube)
    slow = native(cg, dims, integer, types[0] == "f32", hbuf, cbuf, dbuf, layered, cube)
    call(cg, form, hbuf, cbuf, dbuf, slow)
    write_results(cg, ins.dsts[0].items, dbuf, 32)


def lower_tld4(cg, ins) -> None:
    refuse_extras(ins)
    comps = [m for m in ins.mods if m in ("r", "g", "b", "a")]
    types = [m for m in ins.mods if m in ("f32", "s32", "u32")]
    if geometry(ins) != (2, False, False) or len(comps) != 1 or len(types) != 2 or types[1] != "f32":
        raise PtxcError("only tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32 is supported")
    handle, coords = operands(ins)
    hbuf, cbuf, dbuf = stage(cg, handle, coords, "b32", 2)
    form = encode(OP_TLD4, 2, False, DTYPES.index(types[0]), "rgba".index(comps[0]))
    for name, text in texture_gather_ir.helpers().items():
        cg.helpers.setdefault(name, text)
    cg.decls.update(texture_ir.DECLS)
    slow = cg.f.call("i32", "ptxc_tx_gwarp", [
        ("ptr", hbuf), ("ptr", cbuf), ("i32", cg.emi), ("ptr", dbuf),
        ("i32", str("rgba".index(comps[0]))), ("i1", "true" if types[0] == "f32" else "false")])
    call(cg, form, hbuf, cbuf, dbuf, slow)
    write_results(cg, ins.dsts[0].items, dbuf, 32)


def surface_form(ins, op: int, nvals: int) -> int:
    """The form of a suld/sust; layered geometries (``.a1d/.a2d``) are staged
    as 3-D ones with the layer as the third coordinate (:func:`surface_coords`)."""
    if "b" not in ins.mods:
        raise PtxcError("only the .b (raw bytes) surface form is supported")
    dims, layered, _ = geometry(ins, tuple(GEOMS) + tuple(LAYERED))
    sizes = [m for m in ins.mods if m in SIZES]
    smodes = [m for m in ins.mods if m in SMODES] or ["trap"]
    if len(sizes) != 1:
        raise PtxcError("surface element type must be one of .b8 .b16 .b32 .b64")
    return encode(op, 3 if layered else dims, True, smode=SMODES.index(smodes[0]),
                  size_log2=SIZES[sizes[0]], vec=nvals, layered=layered)


def surface_coords(coords: list, form: int) -> list:
    """The staged coordinates: as written, or for ``.a1d {layer, x}`` /
    ``.a2d {layer, x, y, _}`` (PTX ISA, suld) ``x, y (0 for .a1d), layer``."""
    d = decode(form)
    if not d["layered"]:
        return coords[:d["dims"]]
    return [coords[1], coords[2] if len(coords) > 2 else None, coords[0]]


def lower_suld(cg, ins) -> None:
    if len(ins.srcs) != 1:
        raise PtxcError("unexpected operands")
    items = ins.dsts[0].items if isinstance(ins.dsts[0], ir.Vec) else [ins.dsts[0]]
    form = surface_form(ins, OP_SULD, len(items))
    handle, coords = operands(ins)
    hbuf, cbuf, dbuf = stage(cg, handle, surface_coords(coords, form), "s32", decode(form)["dims"])
    call(cg, form, hbuf, cbuf, dbuf, native_surface(cg, "ld", form, hbuf, cbuf, dbuf))
    write_results(cg, items, dbuf, decode(form)["size"] * 8)


def lower_sust(cg, ins) -> None:
    vals = ins.srcs[1]
    items = vals.items if isinstance(vals, ir.Vec) else [vals]
    form = surface_form(ins, OP_SUST, len(items))
    bits = decode(form)["size"] * 8
    handle, coords = operands(ins)
    hbuf, cbuf, dbuf = stage(cg, handle, surface_coords(coords, form), "s32", decode(form)["dims"])
    f = cg.f
    for k, item in enumerate(items):
        v = cg.read(item, f"b{bits}")
        if bits < 64:
            v = f.cast("zext", f"<32 x i{bits}>", v, "<32 x i64>")
        f.store("<32 x i64>", v, f.gep(dbuf, k * 256), 64)
    call(cg, form, hbuf, cbuf, dbuf, native_surface(cg, "st", form, hbuf, cbuf, dbuf))


OPS = {"tex": lower_tex, "tld4": lower_tld4, "suld": lower_suld, "sust": lower_sust}


# ------------------------------------------------------------ the callback
ERRORS: dict[int, str] = {}       # linear CTA -> message of its failed instruction


def error_text(cta: int) -> str:
    """The message of the texture error of CTA ``cta`` (and forget them all)."""
    text = ERRORS.get(cta, "texture/surface instruction failed")
    ERRORS.clear()
    return text


def run_form(form: int, handles, coords, mask: int, data, cta: int = 0) -> int:
    """Execute one instruction for the lanes of ``mask``; the failing lanes."""
    d = decode(form)
    lanes = np.array([k for k in range(32) if mask >> k & 1], np.int64)
    bad = 0
    for h in np.unique(handles[lanes]):
        sel = lanes[handles[lanes] == h]
        try:
            one_handle(T, d, int(h), sel, coords, data)
        except T.TextureError as e:
            ERRORS[cta] = str(e)
            failed = getattr(e, "lanes", None)
            bad |= sum(1 << int(k) for k in (sel if failed is None else failed))
        except PtxcError as e:
            ERRORS[cta] = e.message
            bad |= sum(1 << int(k) for k in sel)
    return bad


def one_handle(T, d, h, sel, coords, data) -> None:
    if d["op"] in (OP_TEX, OP_TLD4):
        tex = T.lookup(h, T.Texture)
        first = int(d["layered"])
        raw = coords[first:first + d["dims"], sel]
        cs = list(raw.view(np.int32) if d["integer"] else raw.view(np.float32))
        layer = coords[0, sel] if d["layered"] else None         # .u32 bits
        if d["op"] == OP_TLD4:
            vals = T.gather(tex, cs, d["comp"])
        elif d["cube"]:
            vals = TL.sample_cube(tex, cs, layer)
        elif d["layered"] or tex.layered or tex.cubemap:
            vals = TL.sample_layered(tex, cs, d["integer"], layer)
        else:
            vals = T.sample(tex, cs, d["integer"])
        put_results(T, tex, d, vals, sel, data)
        return
    raw = coords[:d["dims"], sel]
    surf = T.lookup(h, T.Surface)
    nbytes = d["size"] * d["vec"]
    cs = list(raw.view(np.int32).astype(np.int64))
    if surf.layered != d["layered"]:
        raise T.TextureError(
            f"surface object {h} is layered (a layered or cubemap array): it needs "
            "surf1DLayered/surf2DLayered/surfCubemap* (.a1d/.a2d)" if surf.layered else
            f"surface object {h} is not layered: .a1d/.a2d (surf*Layered*, surfCubemap*) need a "
            "layered or cubemap array")
    if d["layered"]:
        cs[2] = raw[2].astype(np.int64)                          # the .u32 layer
    mode = SMODES[d["smode"]]
    if d["op"] == OP_SULD:
        rows, bad = T.surface_load(surf, cs, nbytes, mode)
        trap(T, surf, cs, sel, bad, "read")
        words = rows.reshape(len(sel), d["vec"], d["size"])
        for k in range(d["vec"]):
            data[k, sel] = np.frombuffer(np.ascontiguousarray(words[:, k, :]).tobytes(),
                                         f"<u{d['size']}").astype(np.uint64)
        return
    vals = np.stack([data[k, sel] for k in range(d["vec"])], axis=1)
    rows = vals.astype(f"<u{d['size']}").view(np.uint8).reshape(len(sel), nbytes)
    _, inside = T.surface_index(surf, cs, nbytes, mode)
    if mode == "trap":
        trap(T, surf, cs, sel, ~inside, "write")
    T.surface_store(surf, cs, rows, mode)


def trap(T, surf, cs, sel, bad, what: str) -> None:
    if bad.any():
        k = int(np.argmax(bad))
        at = ", ".join(str(int(c[k])) for c in cs)
        names = "x in bytes, y, layer" if surf.layered else "x in bytes"
        size = f"{surf.dims[0]} x {surf.dims[1]} elements" + \
            (f" x {surf.dims[2]} layers" if surf.layered else "")
        e = T.TextureError(f"surface {what} out of range at ({at}) ({names}) of surface object "
                           f"{surf.handle} ({size} of {surf.fmt.elem_bytes} bytes), .trap mode")
        e.lanes = sel[bad]
        raise e


def put_results(T, tex, d, vals, sel, data) -> None:
    want_float = d["dtype"] == 0
    if want_float != tex.returns_float():
        raise T.TextureError(f"texture object {tex.handle} returns "
                             f"{'floats' if tex.returns_float() else 'integers'} but the instruction "
                             f"reads .{DTYPES[d['dtype']]}")
    ch = vals.shape[1]
    for k in range(4):
        if k < ch:
            col = vals[:, k]
        else:
            col = np.zeros(len(sel))
        if want_float:
            bits = col.astype(np.float32).view(np.uint32)
        else:
            bits = col.astype(np.int64).astype(np.uint32)
        data[k, sel] = bits.astype(np.uint64)


def _callback(form, hptr, cptr, mask, dptr, cta) -> int:
    try:
        handles = np.ctypeslib.as_array((ctypes.c_uint64 * 32).from_address(hptr))
        coords = np.ctypeslib.as_array((ctypes.c_uint32 * 128).from_address(cptr)).reshape(4, 32)
        data = np.ctypeslib.as_array((ctypes.c_uint64 * 128).from_address(dptr)).reshape(4, 32)
        return run_form(form, handles, coords, mask, data, cta)
    except Exception as e:                 # never unwind through native code
        ERRORS[cta] = f"internal error in a texture instruction: {type(e).__name__}: {e}"
        return mask


_TEX = callbacks.c_function(_callback, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int32)


def register_symbols(binding) -> None:
    """Make the callback known to LLVM's symbol resolution (once)."""
    callbacks.add_symbols(binding, {"ptxc_tex": _TEX, **N.symbols()})
