"""The LLVM IR of ``tex`` in generated code (texture_native.py holds the
descriptor table it reads and says which lanes it does).

One lane at a time (``ptxc_tx_lane{1,2,3}``, for 1-3 coordinates), the
steps of texture_objects.sample, read_at, convert and wrap_index and of
texture.put_results, in the same float32/float64 operations and order:

* ``ptxc_tx_wrap``: wrap (``i mod n``, non-negative), mirror (period 2n),
  clamp, border (clamped index plus "inside");
* ``ptxc_tx_raw``/``ptxc_tx_convf``: the texel channel as an integer
  (sign- or zero-extended) or as float64 (float32 texels; normalized 8/16-bit
  integers ``v / (2^n - 1)``, signed ones at least -1);
* ``ptxc_tx_rd{f,i}N``: read_at for one channel (the border colour, or 0
  for integers, outside a border-mode texture);
* point sampling ``T[floor(x)]``; linear filtering ``xB = x - 0.5``,
  ``i = floor(xB)``, weight ``floor(frac(xB) * 256 + 0.5) / 256`` in float64,
  the 2^N corners in itertools.product order summed from 0.0;
* results: float32 bits of the float64 value, or the low 32 bits of the
  integer; channels past the texture's are 0.

``ptxc_tx_warp{N}`` runs the lanes of the mask in order and returns those it
left to Python (handle outside the table, row not OK, result type or
coordinate kind not the texture's, a floor of a coordinate not below 2^31 in
magnitude or NaN).
"""
from __future__ import annotations

from ptxc.backends.llvm.ops.texture_native import (
    F_BASE, F_BITS, F_BORDER, F_CH, F_EB, F_FILTER, F_H, F_KIND, F_LINEAR, F_MODE, F_NORM,
    F_CUBE, F_LAYERED, F_OK, F_PITCH, F_RETF, F_W, NFIELDS, TABLE)


class _Fn:
    """A tiny SSA text emitter for the helper functions below."""

    def __init__(self, header: str):
        self.lines, self.n = [header + " {", "entry:"], 0

    def v(self, text: str) -> str:
        self.n += 1
        self.lines.append(f"  %v{self.n} = {text}")
        return f"%v{self.n}"

    def e(self, text: str) -> None:
        self.lines.append("  " + text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def field(self, k: int) -> str:
        return self.v(f"load i64, ptr {self.v(f'getelementptr inbounds i64, ptr %d, i64 {k}')}, align 8")

    def text(self) -> str:
        return "\n".join(self.lines + ["}"])


WRAP = """define internal { i64, i1 } @ptxc_tx_wrap(i64 %i, i64 %n, i64 %mode) alwaysinline {
entry:
  switch i64 %mode, label %clamp [ i64 0, label %wrap
                                   i64 2, label %mirror ]
wrap:
  %r = srem i64 %i, %n
  %rn = icmp slt i64 %r, 0
  %ra = add i64 %r, %n
  %w = select i1 %rn, i64 %ra, i64 %r
  %w1 = insertvalue { i64, i1 } undef, i64 %w, 0
  %w2 = insertvalue { i64, i1 } %w1, i1 true, 1
  ret { i64, i1 } %w2
mirror:
  %n2 = shl i64 %n, 1
  %q = srem i64 %i, %n2
  %qn = icmp slt i64 %q, 0
  %qa = add i64 %q, %n2
  %m = select i1 %qn, i64 %qa, i64 %q
  %lo = icmp slt i64 %m, %n
  %n2m = sub i64 %n2, 1
  %back = sub i64 %n2m, %m
  %mm = select i1 %lo, i64 %m, i64 %back
  %m1 = insertvalue { i64, i1 } undef, i64 %mm, 0
  %m2 = insertvalue { i64, i1 } %m1, i1 true, 1
  ret { i64, i1 } %m2
clamp:
  %neg = icmp slt i64 %i, 0
  %big = icmp sge i64 %i, %n
  %last = sub i64 %n, 1
  %c0 = select i1 %big, i64 %last, i64 %i
  %c = select i1 %neg, i64 0, i64 %c0
  %out = or i1 %neg, %big
  %in = xor i1 %out, true
  %isb = icmp eq i64 %mode, 3
  %ok = select i1 %isb, i1 %in, i1 true
  %c1 = insertvalue { i64, i1 } undef, i64 %c, 0
  %c2 = insertvalue { i64, i1 } %c1, i1 %ok, 1
  ret { i64, i1 } %c2
}"""


def _addr(f: _Fn, idx: list, ch: str) -> str:
    """Address of channel ``ch`` of the texel at (ix, iy, iz)."""
    base = f.v(f"inttoptr i64 {f.field(F_BASE)} to ptr")
    pitch, h, eb, bits = f.field(F_PITCH), f.field(F_H), f.field(F_EB), f.field(F_BITS)
    plane = f.v(f"mul i64 {pitch}, {h}")
    nbytes = f.v(f"lshr i64 {bits}, 3")
    off = f.v(f"mul i64 {idx[0]}, {eb}")
    off = f.v(f"add i64 {off}, {f.v(f'mul i64 {idx[1]}, {pitch}')}")
    off = f.v(f"add i64 {off}, {f.v(f'mul i64 {idx[2]}, {plane}')}")
    off = f.v(f"add i64 {off}, {f.v(f'mul i64 {ch}, {nbytes}')}")
    return f.v(f"getelementptr inbounds i8, ptr {base}, i64 {off}")


RAW = """define internal i64 @ptxc_tx_raw(ptr %p, i64 %kind, i64 %bits) alwaysinline {
entry:
  %s = icmp eq i64 %kind, 0
  switch i64 %bits, label %b32 [ i64 8, label %b8
                                 i64 16, label %b16 ]
b8:
  %x8 = load i8, ptr %p, align 1
  %s8 = sext i8 %x8 to i64
  %z8 = zext i8 %x8 to i64
  %r8 = select i1 %s, i64 %s8, i64 %z8
  ret i64 %r8
b16:
  %x16 = load i16, ptr %p, align 1
  %s16 = sext i16 %x16 to i64
  %z16 = zext i16 %x16 to i64
  %r16 = select i1 %s, i64 %s16, i64 %z16
  ret i64 %r16
b32:
  %x32 = load i32, ptr %p, align 1
  %s32 = sext i32 %x32 to i64
  %z32 = zext i32 %x32 to i64
  %r32 = select i1 %s, i64 %s32, i64 %z32
  ret i64 %r32
}"""

# convert(): a float32 texel as float64; an 8/16-bit integer read as
# normalized float: v / (2^n - 1) (unsigned), max(v / (2^(n-1) - 1), -1) (signed)
CONVF = """define internal double @ptxc_tx_convf(ptr %d, ptr %p) alwaysinline {
entry:
  %kp = getelementptr inbounds i64, ptr %d, i64 2
  %kind = load i64, ptr %kp, align 8
  %bp = getelementptr inbounds i64, ptr %d, i64 3
  %bits = load i64, ptr %bp, align 8
  %isf = icmp eq i64 %kind, 2
  br i1 %isf, label %flt, label %int
flt:
  %x = load float, ptr %p, align 1
  %xd = fpext float %x to double
  ret double %xd
int:
  %v = call i64 @ptxc_tx_raw(ptr %p, i64 %kind, i64 %bits)
  %vd = sitofp i64 %v to double
  %s = icmp eq i64 %kind, 0
  %bm = sub i64 %bits, 1
  %sh = select i1 %s, i64 %bm, i64 %bits
  %one = shl i64 1, %sh
  %den = sub i64 %one, 1
  %dd = sitofp i64 %den to double
  %q = fdiv double %vd, %dd
  %lt = fcmp olt double %q, -1.0
  %cl = select i1 %lt, double -1.0, double %q
  %r = select i1 %s, double %cl, double %q
  ret double %r
}"""


def _read(nd: int, flt: bool) -> str:
    """read_at for one channel: address modes, then the converted texel or
    the border value (float: the border colour; integer: 0)."""
    rt = "double" if flt else "i64"
    args = ", ".join(f"i64 %i{k}" for k in range(nd))
    f = _Fn(f"define internal {rt} @ptxc_tx_rd{'f' if flt else 'i'}{nd}(ptr %d, {args}, i64 %ch) alwaysinline")
    idx, ok = [], "true"
    for k in range(3):
        if k >= nd:
            idx.append("0")
            continue
        n = f.field(F_W + k)
        r = f.v(f"call {{ i64, i1 }} @ptxc_tx_wrap(i64 %i{k}, i64 {n}, i64 {f.field(F_MODE + k)})")
        idx.append(f.v(f"extractvalue {{ i64, i1 }} {r}, 0"))
        ok = f.v(f"and i1 {ok}, {f.v(f'extractvalue {{ i64, i1 }} {r}, 1')}")
    f.e(f"br i1 {ok}, label %in, label %out")
    f.label("in")
    p = _addr(f, idx, "%ch")
    if flt:
        f.e(f"ret double {f.v(f'call double @ptxc_tx_convf(ptr %d, ptr {p})')}")
    else:
        f.e(f"ret i64 {f.v(f'call i64 @ptxc_tx_raw(ptr {p}, i64 {f.field(F_KIND)}, i64 {f.field(F_BITS)})')}")
    f.label("out")
    if flt:
        bp = f.v(f"getelementptr inbounds i64, ptr %d, i64 {F_BORDER}")
        bc = f.v(f"getelementptr inbounds double, ptr {bp}, i64 %ch")
        f.e(f"ret double {f.v(f'load double, ptr {bc}, align 8')}")
    else:
        f.e("ret i64 0")
    return f.text()


def _bits(f: _Fn, val: str, flt: bool) -> str:
    """put_results: float32 bits of a float64 value, or the low 32 bits of
    an integer, as i64."""
    if flt:
        x = f.v(f"bitcast float {f.v(f'fptrunc double {val} to float')} to i32")
    else:
        x = f.v(f"trunc i64 {val} to i32")
    return f.v(f"zext i32 {x} to i64")



def _channels(f: _Fn, tag: str, value) -> None:
    """Store channel k < channels of the result (``value(k)``: an i64 of
    bits), each behind its own branch; the caller stored 0 in all four."""
    ch = f.field(F_CH)
    for k in range(4):
        on, nxt = f"{tag}{k}", f"{tag}{k}n"
        f.e(f"br i1 {f.v(f'icmp ult i64 {k}, {ch}')}, label %{on}, label %{nxt}")
        f.label(on)
        bits = value(k)
        f.e(f"store i64 {bits}, ptr {f.v(f'getelementptr inbounds i8, ptr %o, i64 {256 * k}')}, align 8")
        f.e(f"br label %{nxt}")
        f.label(nxt)
    f.e("ret i1 true")


def _point(f: _Fn, nd: int, idx: list, tag: str) -> None:
    """read_at at integer indices, float or integer results."""
    f.e(f"br i1 %wantf, label %{tag}f, label %{tag}i")
    for flt, t in ((True, "f"), (False, "i")):
        f.label(f"{tag}{t}")
        rt = "double" if flt else "i64"
        args = ", ".join(f"i64 {i}" for i in idx)
        _channels(f, f"{tag}{t}c", lambda k, flt=flt, rt=rt, t=t, args=args: _bits(
            f, f.v(f"call {rt} @ptxc_tx_rd{t}{nd}(ptr %d, {args}, i64 {k})"), flt))


def _floor_ok(f: _Fn, x: str) -> tuple:
    """(floor(x) as i64, |floor(x)| < 2^31 (false for NaN)) of a float32."""
    fl = f.v(f"call float @llvm.floor.f32(float {x})")
    mag = f.v(f"call float @llvm.fabs.f32(float {fl})")
    ok = f.v(f"fcmp olt float {mag}, 0x41E0000000000000")
    return fl, f.v(f"fptosi float {fl} to i64"), ok


def _linear(f: _Fn, nd: int, xs: list) -> None:
    """Linear filtering (texture_objects.sample): 2^nd corners in
    itertools.product order, weights in float64, summed from 0.0."""
    base, alphas, ok = [], [], "true"
    for x in xs:
        xb = f.v(f"fsub float {x}, 0.5")
        fl, i, good = _floor_ok(f, xb)
        ok = f.v(f"and i1 {ok}, {good}")
        frac = f.v(f"fsub float {xb}, {fl}")
        fr = f.v(f"fpext float {frac} to double")
        scaled = f.v(f"fmul double {fr}, 256.0")
        r = f.v(f"call double @llvm.floor.f64(double {f.v(f'fadd double {scaled}, 0.5')})")
        base.append(i)
        alphas.append(f.v(f"fdiv double {r}, 256.0"))
    f.e(f"br i1 {ok}, label %lf, label %slow")
    f.label("lf")

    def value(k):
        total = "0.0"
        for corner in range(1 << nd):
            bits = [(corner >> (nd - 1 - d)) & 1 for d in range(nd)]
            w = "1.0"
            for a, bit in zip(alphas, bits):
                w = f.v(f"fmul double {w}, {a if bit else f.v(f'fsub double 1.0, {a}')}")
            idx = ", ".join(f"i64 {f.v(f'add i64 {b}, {bit}')}" for b, bit in zip(base, bits))
            t = f.v(f"call double @ptxc_tx_rdf{nd}(ptr %d, {idx}, i64 {k})")
            total = f.v(f"fadd double {total}, {f.v(f'fmul double {w}, {t}')}")
        return _bits(f, total, True)
    _channels(f, "lfc", value)


def _lane(nd: int) -> str:
    """One lane's tex: true when done, false to leave it to Python."""
    cs = ", ".join(f"i32 %c{k}" for k in range(nd))
    f = _Fn(f"define internal i1 @ptxc_tx_lane{nd}(ptr %d, i1 %intc, i1 %wantf, {cs}, ptr %o)")
    ok = f.v(f"icmp ne i64 {f.field(F_OK)}, 0")
    flat = f.v(f"icmp eq i64 {f.field(F_LAYERED)}, 0")         # layered: texture_layered_ir.py
    ok = f.v(f"and i1 {ok}, {flat}")
    ok = f.v(f"and i1 {ok}, {f.v(f'icmp eq i64 {f.field(F_CUBE)}, 0')}")   # texture_cube_ir.py
    retf = f.v(f"icmp ne i64 {f.field(F_RETF)}, 0")
    same = f.v(f"icmp eq i1 {retf}, %wantf")
    f.e(f"br i1 {f.v(f'and i1 {ok}, {same}')}, label %body, label %slow")
    f.label("slow")
    f.e("ret i1 false")
    f.label("body")
    for k in range(4):
        f.e(f"store i64 0, ptr {f.v(f'getelementptr inbounds i8, ptr %o, i64 {256 * k}')}, align 8")
    lin = f.field(F_LINEAR)
    f.e(f"br i1 {f.v(f'icmp ne i64 {lin}, 0')}, label %lm, label %arr")
    # linear memory (tex1Dfetch): integer index, outside the buffer reads 0
    f.label("lm")
    f.e("br i1 %intc, label %lm1, label %slow")
    f.label("lm1")
    i = f.v("sext i32 %c0 to i64")
    w = f.field(F_W)
    lo, hi = f.v(f"icmp sge i64 {i}, 0"), f.v(f"icmp slt i64 {i}, {w}")
    inside = f.v(f"and i1 {lo}, {hi}")
    f.e(f"br i1 {inside}, label %lmin, label %lmout")
    f.label("lmout")
    f.e("ret i1 true")
    f.label("lmin")
    f.e("br i1 %wantf, label %lmf, label %lmi")
    for flt, t in ((True, "f"), (False, "i")):
        f.label(f"lm{t}")

        def value(k, flt=flt):
            p = _addr(f, [i, "0", "0"], str(k))
            if flt:
                return _bits(f, f.v(f"call double @ptxc_tx_convf(ptr %d, ptr {p})"), True)
            raw = f.v(f"call i64 @ptxc_tx_raw(ptr {p}, i64 {f.field(F_KIND)}, i64 {f.field(F_BITS)})")
            return _bits(f, raw, False)
        _channels(f, f"lm{t}c", value)
    # arrays: integer coordinates index texels, float ones are sampled
    f.label("arr")
    f.e("br i1 %intc, label %ai, label %af")
    f.label("ai")
    _point(f, nd, [f.v(f"sext i32 %c{k} to i64") for k in range(nd)], "ip")
    f.label("af")
    norm = f.v(f"icmp ne i64 {f.field(F_NORM)}, 0")
    xs = []
    for k in range(nd):
        x = f.v(f"bitcast i32 %c{k} to float")
        size = f.v(f"uitofp i64 {f.field(F_W + k)} to float")
        xs.append(f.v(f"select i1 {norm}, float {f.v(f'fmul float {x}, {size}')}, float {x}"))
    filt = f.field(F_FILTER)
    f.e(f"br i1 {f.v(f'icmp ne i64 {filt}, 0')}, label %lin, label %pt")
    f.label("pt")
    idx, ok = [], "true"
    for x in xs:
        _, i, good = _floor_ok(f, x)
        idx.append(i)
        ok = f.v(f"and i1 {ok}, {good}")
    f.e(f"br i1 {ok}, label %pt1, label %slow")
    f.label("pt1")
    _point(f, nd, idx, "fp")
    f.label("lin")
    _linear(f, nd, xs)
    return f.text()


def _warp(nd: int, name: str = "", lane: str = "", extra=(("i1", "%intc"), ("i1", "%wantf"))) -> str:
    """The lanes of ``mask`` one by one (``lane`` for each, with ``extra``
    arguments passed on); returns the lanes left to Python."""
    name, lane = name or f"ptxc_tx_warp{nd}", lane or f"ptxc_tx_lane{nd}"
    ex = ", ".join(f"{t} {v}" for t, v in extra)
    lines = [f"define internal i32 @{name}(ptr %h, ptr %c, i32 %mask, ptr %dbuf, {ex}) {{",
             "entry:",
             f"  %rows = load ptr, ptr @{TABLE}, align 8",
             f"  %np = getelementptr inbounds i64, ptr @{TABLE}, i64 1",
             "  %n = load i64, ptr %np, align 8",
             "  br label %loop",
             "loop:",
             "  %l = phi i32 [ 0, %entry ], [ %l1, %next ]",
             "  %slow = phi i32 [ 0, %entry ], [ %slow1, %next ]",
             "  %bit = shl i32 1, %l",
             "  %on0 = and i32 %mask, %bit",
             "  %on = icmp ne i32 %on0, 0",
             "  br i1 %on, label %look, label %next",
             "look:",
             "  %hp = getelementptr inbounds i64, ptr %h, i32 %l",
             "  %hv = load i64, ptr %hp, align 8",
             "  %known = icmp ult i64 %hv, %n",
             "  br i1 %known, label %do, label %next",
             "do:",
             f"  %d = getelementptr inbounds [{NFIELDS} x i64], ptr %rows, i64 %hv"]
    for k in range(nd):
        lines += [f"  %ci{k} = add i32 %l, {32 * k}",
                  f"  %cp{k} = getelementptr inbounds i32, ptr %c, i32 %ci{k}",
                  f"  %c{k} = load i32, ptr %cp{k}, align 4"]
    lines += ["  %o = getelementptr inbounds i64, ptr %dbuf, i32 %l",
              f"  %done = call i1 @{lane}(ptr %d, {ex}, "
              + ", ".join(f"i32 %c{k}" for k in range(nd)) + ", ptr %o)",
              "  br label %next",
              "next:",
              "  %fast = phi i1 [ true, %loop ], [ false, %look ], [ %done, %do ]",
              "  %miss = select i1 %fast, i32 0, i32 %bit",
              "  %slow1 = or i32 %slow, %miss",
              "  %l1 = add i32 %l, 1",
              "  %more = icmp ult i32 %l1, 32",
              "  br i1 %more, label %loop, label %exit",
              "exit:",
              "  ret i32 %slow1",
              "}"]
    return "\n".join(lines)


DECLS = ("declare float @llvm.floor.f32(float)", "declare float @llvm.fabs.f32(float)",
         "declare double @llvm.floor.f64(double)", f"@{TABLE} = external global [2 x i64]")


def helpers(nd: int) -> dict:
    """{name: IR text} of the helpers of a ``tex`` with ``nd`` coordinates."""
    return {"ptxc_tx_wrap": WRAP, "ptxc_tx_raw": RAW, "ptxc_tx_convf": CONVF,
            f"ptxc_tx_rdf{nd}": _read(nd, True), f"ptxc_tx_rdi{nd}": _read(nd, False),
            f"ptxc_tx_lane{nd}": _lane(nd), f"ptxc_tx_warp{nd}": _warp(nd)}
