"""``suld.b`` and ``sust.b`` in generated code: the LLVM IR that reads the
surface rows of texture_native.py (``F_SURF``) and repeats
texture_objects.surface_index/surface_load/surface_store lane by lane.

Per lane (``ptxc_sf_off{N}``, N coordinates): x is in bytes; with
``nbytes = size * vec`` the lane is inside when ``0 <= x <= width - nbytes``
(width = elements x element bytes) and ``0 <= y <= h - 1`` (``z`` likewise);
``.clamp`` clamps ``x`` rounded down to a multiple of nbytes (``x & -nbytes``:
nbytes is a power of two) and the other coordinates, ``.zero`` reads 0 and
drops the store outside, ``.trap`` outside is an error. The offset is
``x + y pitch + z pitch h``; components are ``size`` little-endian bytes
each, read zero-extended to 64 bits, stored truncated.

Layered surfaces (``.a1d``/``.a2d``, also cubemap faces: texture.py
stages ``x, y, layer``) use the 3-coordinate helpers with the suffix ``a``:
the layer is a ``.u32`` (zero-extended), checked against the layers like
``z``, and only rows of layered surfaces (``F_LAYERED``) take them; the
other helpers only take rows that are not layered.

Left to the Python callback (texture.run_form): a handle outside the table
or whose row is not a surface this path does, ``nbytes`` wider than a row,
and a ``.trap`` lane outside (the error message). A ``sust`` stores nothing
natively unless every executing lane can be done, so that a mixed warp
stores in the Python path's order and an error stores nothing.
"""
from __future__ import annotations

from ptxc.backends.llvm.ops.texture_native import (
    F_BASE, F_D, F_EB, F_H, F_LAYERED, F_PITCH, F_SURF, F_W, NFIELDS, TABLE)

SMODES = ("trap", "clamp", "zero")        # texture.SMODES


def _field(k: int, into: str) -> list:
    return [f"  %{into}p = getelementptr inbounds i64, ptr %d, i64 {k}",
            f"  %{into} = load i64, ptr %{into}p, align 8"]


def _clamp(v: str, lim: str, into: str) -> list:
    return [f"  %{into}n = icmp slt i64 {v}, 0", f"  %{into}b = icmp sgt i64 {v}, {lim}",
            f"  %{into}h = select i1 %{into}b, i64 {lim}, i64 {v}",
            f"  %{into} = select i1 %{into}n, i64 0, i64 %{into}h"]


def offset_fn(nd: int, layered: bool = False) -> str:
    """{offset, status}: status 0 access, 1 no access (.zero outside), 2
    Python. ``layered``: the third coordinate is the .u32 layer (zero-extended)
    and the row must be a layered surface (any other row must not be)."""
    cs = ", ".join(f"i32 %c{k}" for k in range(nd))
    tag = "a" if layered else ""
    L = [f"define internal {{ i64, i32 }} @ptxc_sf_off{nd}{tag}(ptr %d, i64 %nb, i64 %smode, {cs}) "
         "alwaysinline {", "entry:"]
    for k, name in ((F_SURF, "ok"), (F_EB, "eb"), (F_W, "w"), (F_H, "h"), (F_D, "dd"), (F_PITCH, "pitch"),
                    (F_LAYERED, "lay")):
        L += _field(k, name)
    L += ["  %wb = mul i64 %w, %eb", "  %lim0 = sub i64 %wb, %nb",
          "  %okb = icmp ne i64 %ok, 0", "  %fits = icmp sge i64 %lim0, 0",
          f"  %kind = icmp eq i64 %lay, {int(layered)}", "  %okk = and i1 %okb, %kind",
          "  %go = and i1 %okk, %fits",
          "  %x = sext i32 %c0 to i64", "  %xl = icmp sge i64 %x, 0", "  %xh = icmp sle i64 %x, %lim0",
          "  %in0 = and i1 %xl, %xh", "  %nbneg = sub i64 0, %nb", "  %xr = and i64 %x, %nbneg"]
    L += _clamp("%xr", "%lim0", "xc")
    inside, parts = "%in0", [("%x", "%xc")]
    lims = {1: "%h", 2: "%dd"}
    for k in range(1, nd):
        ext = "zext" if layered and k == 2 else "sext"
        L += [f"  %y{k} = {ext} i32 %c{k} to i64", f"  %lim{k} = sub i64 {lims[k]}, 1",
              f"  %yl{k} = icmp sge i64 %y{k}, 0", f"  %yh{k} = icmp sle i64 %y{k}, %lim{k}",
              f"  %yin{k} = and i1 %yl{k}, %yh{k}", f"  %in{k} = and i1 {inside}, %yin{k}"]
        L += _clamp(f"%y{k}", f"%lim{k}", f"yc{k}")
        inside = f"%in{k}"
        parts.append((f"%y{k}", f"%yc{k}"))
    L += ["  %isclamp = icmp eq i64 %smode, 1", "  %iszero = icmp eq i64 %smode, 2"]
    for k, (raw, cl) in enumerate(parts):
        L.append(f"  %p{k} = select i1 %isclamp, i64 {cl}, i64 {raw}")
    L += ["  %plane = mul i64 %pitch, %h", "  %o0 = add i64 %p0, 0"]
    scale = {1: "%pitch", 2: "%plane"}
    for k in range(1, nd):
        L += [f"  %m{k} = mul i64 %p{k}, {scale[k]}", f"  %o{k} = add i64 %o{k - 1}, %m{k}"]
    L += [f"  %inside = or i1 {inside}, %isclamp",
          "  %outz = select i1 %iszero, i32 1, i32 2",
          "  %st0 = select i1 %inside, i32 0, i32 %outz",
          "  %st = select i1 %go, i32 %st0, i32 2",
          f"  %r0 = insertvalue {{ i64, i32 }} undef, i64 %o{nd - 1}, 0",
          "  %r1 = insertvalue { i64, i32 } %r0, i32 %st, 1",
          "  ret { i64, i32 } %r1", "}"]
    return "\n".join(L)


def _warp(nd: int, name: str, args: str, body: list, pre: list = (), post: list = (),
          unknown: str = "slowl", tag: str = "") -> str:
    """A loop over the lanes of %mask (the slow lanes kept in %slowa, an
    alloca that LLVM promotes); ``body`` runs for lane %l with %d, %off
    (%at the byte address) and %st, and ends by branching to %next. A
    handle outside the table branches to ``unknown`` before any row is read
    (the table may be empty: no rows at all)."""
    L = [f"define internal i32 @{name}(ptr %h, ptr %c, i32 %mask, ptr %dbuf, {args}) {{",
         "entry:",
         "  %slowa = alloca i32, align 4", "  store i32 0, ptr %slowa, align 4",
         f"  %rows = load ptr, ptr @{TABLE}, align 8",
         f"  %np = getelementptr inbounds i64, ptr @{TABLE}, i64 1",
         "  %n = load i64, ptr %np, align 8", *pre,
         "  br label %head",
         "head:",
         "  %l = phi i32 [ 0, %entry ], [ %l1, %next ]",
         "  %bit = shl i32 1, %l", "  %on0 = and i32 %mask, %bit", "  %on = icmp ne i32 %on0, 0",
         "  br i1 %on, label %do, label %next",
         "do:",
         "  %hp = getelementptr inbounds i64, ptr %h, i32 %l",
         "  %hv = load i64, ptr %hp, align 8",
         "  %known = icmp ult i64 %hv, %n",
         f"  br i1 %known, label %row, label %{unknown}",
         "row:",
         f"  %d = getelementptr inbounds [{NFIELDS} x i64], ptr %rows, i64 %hv"]
    for k in range(nd):
        L += [f"  %ci{k} = add i32 %l, {32 * k}",
              f"  %cp{k} = getelementptr inbounds i32, ptr %c, i32 %ci{k}",
              f"  %c{k} = load i32, ptr %cp{k}, align 4"]
    cs = ", ".join(f"i32 %c{k}" for k in range(nd))
    L += [f"  %os = call {{ i64, i32 }} @ptxc_sf_off{nd}{tag}(ptr %d, i64 %nb, i64 %smode, {cs})",
          "  %off = extractvalue { i64, i32 } %os, 0",
          "  %st = extractvalue { i64, i32 } %os, 1",
          f"  %bp = getelementptr inbounds i64, ptr %d, i64 {F_BASE}",
          "  %bi = load i64, ptr %bp, align 8",
          "  %base = inttoptr i64 %bi to ptr",
          "  %at = getelementptr i8, ptr %base, i64 %off",
          *body,
          "next:",
          "  %l1 = add i32 %l, 1", "  %more = icmp ult i32 %l1, 32",
          "  br i1 %more, label %head, label %exit",
          "exit:", *post,
          "  %slow = load i32, ptr %slowa, align 4", "  ret i32 %slow", "}"]
    return "\n".join(L)


def _mark_slow() -> list:
    return ["slowl:", "  %s0 = load i32, ptr %slowa, align 4", "  %s1 = or i32 %s0, %bit",
            "  store i32 %s1, ptr %slowa, align 4", "  br label %next"]


def load_fn(nd: int, size: int, vec: int, tag: str = "") -> str:
    """suld: component k of lane l goes to dbuf[k * 32 + l]; returns the
    lanes left to Python."""
    it = f"i{8 * size}"
    body = ["  %py = icmp eq i32 %st, 2", "  br i1 %py, label %slowl, label %go",
            "go:", "  %acc = icmp eq i32 %st, 0"]
    for k in range(vec):
        body += [f"  %q{k} = getelementptr inbounds i8, ptr %at, i64 {k * size}",
                 f"  %dk{k} = add i32 %l, {32 * k}",
                 f"  %dp{k} = getelementptr inbounds i64, ptr %dbuf, i32 %dk{k}"]
    body += ["  br i1 %acc, label %rd, label %zero", "rd:"]
    for k in range(vec):
        z = f"%v{k}" if size == 8 else f"%z{k}"
        body += [f"  %v{k} = load {it}, ptr %q{k}, align 1"]
        body += [f"  %z{k} = zext {it} %v{k} to i64"] if size < 8 else []
        body += [f"  store i64 {z}, ptr %dp{k}, align 8"]
    body += ["  br label %next", "zero:"]
    body += [f"  store i64 0, ptr %dp{k}, align 8" for k in range(vec)]
    body += ["  br label %next", *_mark_slow()]
    return _warp(nd, f"ptxc_sf_ld{nd}{tag}_{size}_{vec}", "i64 %smode", body,
                 pre=[f"  %nb = add i64 0, {size * vec}"], tag=tag)


def store_fn(nd: int, size: int, vec: int, tag: str = "") -> str:
    """sust: two passes, the first only checks (any lane for Python: all
    lanes go to Python, nothing stored), the second stores in lane order."""
    it = f"i{8 * size}"
    check = _warp(nd, f"ptxc_sf_chk{nd}{tag}_{size}_{vec}", "i64 %smode",
                  ["  %py = icmp eq i32 %st, 2", "  br i1 %py, label %slowl, label %next", *_mark_slow()],
                  pre=[f"  %nb = add i64 0, {size * vec}"], tag=tag)
    body = ["  %acc = icmp eq i32 %st, 0", "  br i1 %acc, label %wr, label %next", "wr:"]
    for k in range(vec):
        body += [f"  %dk{k} = add i32 %l, {32 * k}",
                 f"  %dp{k} = getelementptr inbounds i64, ptr %dbuf, i32 %dk{k}",
                 f"  %v{k} = load i64, ptr %dp{k}, align 8",
                 f"  %q{k} = getelementptr inbounds i8, ptr %at, i64 {k * size}"]
        if size < 8:
            body += [f"  %t{k} = trunc i64 %v{k} to {it}"]
        body += [f"  store {it} {'%v' if size == 8 else '%t'}{k}, ptr %q{k}, align 1"]
    body += ["  br label %next"]
    name = f"ptxc_sf_st{nd}{tag}_{size}_{vec}"
    write = _warp(nd, name + "w", "i64 %smode", body, pre=[f"  %nb = add i64 0, {size * vec}"],
                  unknown="next", tag=tag)
    top = (f"define internal i32 @{name}(ptr %h, ptr %c, i32 %mask, ptr %dbuf, i64 %smode) {{\n"
           f"entry:\n  %bad = call i32 @ptxc_sf_chk{nd}{tag}_{size}_{vec}(ptr %h, ptr %c, i32 %mask, "
           f"ptr %dbuf, i64 %smode)\n  %any = icmp ne i32 %bad, 0\n"
           f"  br i1 %any, label %py, label %go\npy:\n  ret i32 %mask\ngo:\n"
           f"  %w = call i32 @{name}w(ptr %h, ptr %c, i32 %mask, ptr %dbuf, i64 %smode)\n"
           f"  ret i32 0\n}}")
    return "\n\n".join([check, write, top])


DECLS = (f"@{TABLE} = external global [2 x i64]",)


def helpers(op: str, nd: int, size: int, vec: int, layered: bool = False) -> dict:
    """{name: IR} for a suld (op 'ld') or sust (op 'st') form (``layered``:
    .a1d/.a2d staged as 3 coordinates, the layer last)."""
    fn = load_fn if op == "ld" else store_fn
    tag = "a" if layered else ""
    return {f"ptxc_sf_off{nd}{tag}": offset_fn(nd, layered),
            f"ptxc_sf_{op}{nd}{tag}_{size}_{vec}": fn(nd, size, vec, tag)}
