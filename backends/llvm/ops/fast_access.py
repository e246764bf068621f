"""The fast path of ld/st: a warp access whose executing lanes, in each half
warp (lanes 0-15, 16-31), are contiguous (lane i at a0 + (i - first) * size)
or uniform (every lane at a0), lie in one segment, in bounds and aligned, and
pass the provenance check, is one ``llvm.masked.load`` / ``llvm.masked.store``
per half (a uniform half loads or stores one element) instead of per-lane
table lookups, checks and gathers/scatters (docs/performance.md has the
measurements). Half warps make the 16-wide tiles of 2-D blocks (a warp = two
rows of a 16 x 16 block: matrixMul) contiguous or uniform per half; a whole
contiguous or uniform warp is so in each half too.

The test is vector code ahead of the access; when it fails the access takes
the per-lane path of resolve.py unchanged, so faults (lane, address, kind),
provenance errors and the memory counters (computed before both paths) are
exactly those of the per-lane path: the fast path only runs accesses that
path would run without a fault. For contiguous lanes the per-lane tests are
monotonic, so the first and last executing lanes decide them; a uniform
store leaves the value of the last executing lane, as a scatter to one
address does (LLVM LangRef, llvm.masked.scatter: lanes store in order);
the halves store in lane order, lanes 0-15 first. The bodies have no branch:
a uniform half is a masked load/store of its first element only.

Not used for a variable's address (``[tile+8]``: every lane the same
constant; its per-lane checks fold to one compare and a fast path measured
slower: sgemm's 256 ``bTile`` reads, 0.8x), for .local and .param (per-lane
and parameter storage), nor in the compiled check variants (memcheck,
initcheck, racecheck, synccheck), which look at every lane; and only where
the address's lane stride (passes/memory/lane_stride.py) says the test will
probably pass: a failing test costs time and every fast path costs compile
time.
Accesses of one node to .shared/.const through one base register share one
range test (fast_groups.py; the branch that uses it is here, beside the
test it stands in for, which is why this file is over 400 lines: the test,
its branch and the accesses it guards are one mechanism).
``PTXC_FAST_MEM=0`` turns the fast path off (the code before it),
``PTXC_FAST_MEM=global`` keeps it to .global and generic accesses,
``PTXC_FAST_MEM=always`` emits it for every allowed access whatever the hint
(tests compare these; bench/mem_patterns.py measures them).
"""
from __future__ import annotations

import os

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments import provenance_ir
from ptxc.backends.llvm.irtext import lane_consts, splat
from ptxc.backends.llvm.ops import fast_groups, outlined
from ptxc.backends.llvm.ops.common import intr
from ptxc.backends.llvm.values import vname


def enabled(cg, space: str, static, ins=None, addr_op=None, nbytes: int = 0) -> bool:
    """Whether to emit the fast path for this access: allowed (space,
    variant, switch) and likely to pass its test (the address's lane stride,
    passes/memory/lane_stride.py, is 0 or the access size)."""
    flag = os.environ.get("PTXC_FAST_MEM", "1")
    if flag == "0":
        return False
    if cg.memcheck or cg.checks or getattr(cg, "initcheck", False):
        return False
    if static is not None:          # a variable's address: see above
        return False
    if flag == "global":
        allowed = space in ("global", "generic")
    else:
        allowed = space in ("global", "generic", "shared", "const")
    if not allowed or ins is None or flag == "always":
        return allowed
    return lane_stride(cg, ins, addr_op) in (0, nbytes)


def lane_stride(cg, ins, addr_op):
    """The lane stride of an address operand (analysis cached per function)."""
    from ptxc.passes.memory.lane_stride import LaneStrides
    fn = ins.block.function if ins.block is not None else None
    if fn is None:
        return None
    cache = cg.__dict__.setdefault("lane_strides", {})
    if id(fn) not in cache:
        cache[id(fn)] = (fn, LaneStrides(fn))
    return cache[id(fn)][1].stride(addr_op)


HALF = 16
HALF_IDS = lane_consts("i32", range(HALF))


def half_of(cg, vec: str, t: str, h: int) -> str:
    """Lanes 16h .. 16h+15 of a <32 x t> vector."""
    idx = lane_consts("i32", range(HALF * h, HALF * h + HALF))
    return cg.f.val(f"shufflevector <32 x {t}> {vec}, <32 x {t}> poison, <{HALF} x i32> {idx}")


def splat16(cg, scalar: str, t: str) -> str:
    f = cg.f
    v = f.val(f"insertelement <{HALF} x {t}> poison, {t} {scalar}, i32 0")
    return f.val(f"shufflevector <{HALF} x {t}> {v}, <{HALF} x {t}> poison, <{HALF} x i32> zeroinitializer")


class Half:
    """One half warp's test results: ``ok`` (i1), ``contig`` (i1: else
    uniform), ``ptr`` (host pointer of its first executing lane), ``first``,
    ``last`` (i32, 0-15), ``em`` (<16 x i1> executing lanes)."""

    def __init__(self, ok, contig, ptr, first, last, em):
        self.ok, self.contig, self.ptr, self.first, self.last, self.em = ok, contig, ptr, first, last, em

    def start(self, cg, stride: int) -> str:
        """Where the access starts: lane 0's place for a contiguous half
        (ptr - first * stride), the one address of a uniform half."""
        f = cg.f
        back = f.val(f"mul i64 {f.cast('zext', 'i32', self.first, 'i64')}, {-stride}")
        lane0 = f.val(f"getelementptr i8, ptr {self.ptr}, i64 {back}")
        return f.val(f"select i1 {self.contig}, ptr {lane0}, ptr {self.ptr}")

    def mask(self, cg, n: int) -> str:
        """The load/store mask (<16n x i1>): the executing lanes' elements, or
        the first n elements (one element of a uniform half)."""
        f = cg.f
        em = self.em
        if n > 1:
            idx = lane_consts("i32", [k for k in range(HALF) for _ in range(n)])
            em = f.val(f"shufflevector <{HALF} x i1> {em}, <{HALF} x i1> poison, <{HALF * n} x i32> {idx}")
        one = lane_consts("i1", ["true" if j < n else "false" for j in range(HALF * n)])
        return f.val(f"select i1 {self.contig}, <{HALF * n} x i1> {em}, <{HALF * n} x i1> {one}")


def test(cg, space: str, addr_op, nbytes: int, kind: int):
    """Emit the fast-path test of one access of ``nbytes`` per lane at
    address operand ``addr_op``: (i1 ok, [Half, Half])."""
    f = cg.f
    base, off = base_offset(cg, addr_op)
    shapes = cached_shapes(cg, base, nbytes)
    group = fast_groups.group_ok(cg, space, addr_op, shapes, nbytes,
                                 lambda ins, op, sp, n: enabled(cg, sp, None, ins, op, n))
    if group is not None:
        return own_test_unless(cg, group, space, shapes, off, nbytes, kind)
    halves = [half_range(cg, space, sh, off, nbytes, kind) for sh in shapes]
    ok = f.val(f"and i1 {halves[0].ok}, {halves[1].ok}")
    if space in ("global", "generic"):
        ok = f.val(f"and i1 {ok}, {provenance_ok(cg, halves)}")
    return ok, halves


def own_test_unless(cg, group: str, space: str, shapes, off: int, nbytes: int, kind: int):
    """(ok, halves) of a .shared/.const access in a group (fast_groups.py):
    true when the group's test passed, else its own test, computed only
    then. The halves' pointers are computed before the branch, so the fast
    body may use them on both ways in."""
    f = cg.f
    ptrs = [f.val(f"getelementptr i8, ptr {cg.seg_base[space]}, i64 "
                  f"{f.val(f'add i64 {sh.a0}, {off}') if off else sh.a0}") for sh in shapes]
    own, join = f.fresh_label("fown"), f.fresh_label("fjoin")
    came, restore = f.cur_label, cache_restorer(cg)
    f.cbr(group, join, own)
    f.label(own, dominated=True)
    halves = [half_range(cg, space, sh, off, nbytes, kind) for sh in shapes]
    own_ok = f.val(f"and i1 {halves[0].ok}, {halves[1].ok}")
    own_end = f.cur_label
    f.br(join)
    f.label(join, dominated=True)
    restore()
    ok = f.val(f"phi i1 [ true, %{came} ], [ {own_ok}, %{own_end} ]")
    return ok, [Half(ok, sh.contig, p, sh.first, sh.last, sh.em) for sh, p in zip(shapes, ptrs)]


def base_offset(cg, addr_op):
    """(<32 x i64> base lanes, int offset) of a register address: the lanes
    are ``base + offset`` (access.address), for 32-bit registers modulo 2^32,
    which the range test sees (an unwrapped address outside its segment takes
    the per-lane path)."""
    from ptxc import ir
    from ptxc.backends.llvm.ops.access import bits_of_reg
    got = fast_groups.base_and_offset(addr_op)
    if got is None:                     # no register: the constant address
        return splat("i64", addr_op.offset if isinstance(addr_op, ir.Addr) else 0), 0
    reg, off = got
    if reg.type and bits_of_reg(reg) == 64:
        return cg.read(reg, "u64"), off
    v = cg.read(reg, "u32")
    key = ("fast_zext", v)              # one name per value: cached_shapes keys on it
    if key not in cg.vcache:
        cg.vcache[key] = cg.f.cast("zext", "<32 x i32>", v, "<32 x i64>")
    return cg.vcache[key], off


class Shape:
    """A half warp's lanes: ``contig``/``uniform`` (i1), ``first``/``last``
    (i32), ``a0`` (i64: the base address of the first lane), ``em``, ``empty``."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def cached_shapes(cg, base: str, nbytes: int) -> list:
    """The two half-warp shapes of lanes ``base`` under the executing mask,
    computed once while ``base`` and the mask are the same values: adding an
    offset to every lane changes no shape (cg.vcache holds them, so they are
    dropped where the generator drops its cached values)."""
    key = ("fast_shape", base, cg.emi, nbytes)
    got = cg.vcache.get(key)
    if got is None and outlined.enabled() and outlined.calls(cg):     # one helper call (outlined.py)
        got = cg.vcache[key] = shapes_call(cg, base, nbytes)
    elif got is None:
        got = cg.vcache[key] = [half_shape(cg, base, h, nbytes) for h in (0, 1)]
    return got


FLAGS = ("contig", "uniform", "empty", "shape")      # i8 each in the helper's buffer


def shapes_call(cg, base: str, nbytes: int) -> list:
    """[Shape, Shape] from one call of ``@ptxc_shapes{nbytes}`` (outlined.py),
    which runs half_shape for both halves and stores, per half h at 32h:
    a0 (i64), span (i64), first, last (i32), FLAGS (i8)."""
    name, cc = define_shapes(cg, nbytes), outlined.CALLING_CONVENTION
    f, buf = cg.f, outlined.buffer(cg)
    f.emit(f"call {cc} void @{name}(ptr {buf}, <32 x i64> {base}, i32 {cg.emi})")
    out = []
    for h in (0, 1):
        at = 32 * h
        kw = {"a0": f.field("i64", buf, at, 8), "span": f.field("i64", buf, at + 8, 8),
              "first": f.field("i32", buf, at + 16, 4), "last": f.field("i32", buf, at + 20, 4),
              "em": half_of(cg, cg.em, "i1", h)}
        for k, flag in enumerate(FLAGS):
            kw[flag] = f.cast("trunc", "i8", f.field("i8", buf, at + 24 + k, 1), "i1")
        out.append(Shape(**kw))
    return out


def define_shapes(cg, nbytes: int) -> str:
    """Add ``@ptxc_shapes{nbytes}`` to ``cg.helpers`` (``cg``: anything with
    ``helpers`` and ``decls``: jit.precompile_helpers builds it too); its name."""
    def body(g):
        for h in (0, 1):
            sh, at = half_shape(g, "%a", h, nbytes), 32 * h
            for t, name, off in (("i64", "a0", 0), ("i64", "span", 8), ("i32", "first", 16),
                                 ("i32", "last", 20)):
                g.f.set_field(t, getattr(sh, name), "%out", at + off, int(t[1:]) // 8)
            for k, name in enumerate(FLAGS):
                g.f.set_field("i8", g.f.cast("zext", "i1", getattr(sh, name), "i8"), "%out", at + 24 + k, 1)
        g.f.emit("ret void")
    name, cc = f"ptxc_shapes{nbytes}", outlined.CALLING_CONVENTION
    outlined.define(cg, name, f"define internal {cc} void @{name}(ptr %out, <32 x i64> %a, i32 %m)", body)
    return name


def half_shape(cg, addr: str, h: int, nbytes: int) -> Shape:
    f = cg.f
    m = f.val(f"and i32 {f.val(f'lshr i32 {cg.emi}, {HALF * h}')}, 65535")
    em = half_of(cg, cg.em, "i1", h)
    a = half_of(cg, addr, "i64", h)
    first = intr(cg, "llvm.cttz.i32", "i32", [("i32", f.val(f"or i32 {m}, 65536")), ("i1", "true")])
    first = f.val(f"and i32 {first}, 15")
    lz = intr(cg, "llvm.ctlz.i32", "i32", [("i32", f.val(f"or i32 {m}, 1")), ("i1", "true")])
    last = f.val(f"sub i32 31, {lz}")
    a0 = f.val(f"extractelement <{HALF} x i64> {a}, i32 {first}")
    contig, uniform = lane_shape(cg, a, em, a0, first, nbytes)
    span = f.val(f"mul i64 {f.cast('zext', 'i32', f.val(f'sub i32 {last}, {first}'), 'i64')}, {nbytes}")
    return Shape(contig=contig, uniform=uniform, first=first, last=last, a0=a0, em=em,
                 empty=f.icmp("eq", "i32", m, "0"), span=f.val(f"select i1 {contig}, i64 {span}, i64 0"),
                 shape=f.val(f"or i1 {contig}, {uniform}"))


def half_range(cg, space: str, sh: Shape, off: int, nbytes: int, kind: int) -> Half:
    """The test of one half at ``off`` past its shape's lanes: true when it
    has no executing lane, or its lanes are contiguous or uniform, in bounds
    and aligned."""
    f = cg.f
    a0 = f.val(f"add i64 {sh.a0}, {off}") if off else sh.a0
    a_end = f.val(f"add i64 {f.val(f'add i64 {a0}, {sh.span}')}, {nbytes}")
    seg = None
    if space in ("global", "generic"):
        ptr, inb, seg = generic_range(cg, a0, a_end, kind)
    else:
        name = {"global": "globals"}.get(space, space)
        size = cg.seg_size[name]
        inb = f.val(f"and i1 {f.icmp('ult', 'i64', a0, size)}, {f.icmp('ule', 'i64', a_end, size)}")
        ptr = f.val(f"getelementptr i8, ptr {cg.seg_base[name]}, i64 {a0}")
    aligned = f.icmp("eq", "i64", f.val(f"and i64 {a0}, {nbytes - 1}"), "0")
    ok = f.val(f"and i1 {f.val(f'and i1 {inb}, {aligned}')}, {sh.shape}")
    ok = f.val(f"or i1 {ok}, {sh.empty}")
    hf = Half(ok, sh.contig, ptr, sh.first, sh.last, sh.em)
    hf.seg, hf.empty = seg, sh.empty
    return hf


def provenance_ok(cg, halves) -> str:
    """i1: the provenance check (provenance_ir.py) passes, given that each
    half that passes its range test lies in one segment (``seg``): every
    executing lane whose candidate is enabled expects that segment."""
    got = provenance_ir.expected_segment(cg)    # looked up at each call (tests replace it)
    if got is None:
        return "true"
    want, enabled, uniform = got
    f = cg.f
    ok = "true"
    for h, hf in enumerate(halves):
        if uniform:
            good = f.val(f"or i1 {f.icmp('eq', 'i64', want, hf.seg)}, {f.val(f'xor i1 {enabled}, true')}")
        else:
            w, en = half_of(cg, want, "i64", h), half_of(cg, enabled, "i1", h)
            ne = f.val(f"icmp ne <{HALF} x i64> {w}, {splat16(cg, hf.seg, 'i64')}")
            bad = f.val(f"and <{HALF} x i1> {f.val(f'and <{HALF} x i1> {ne}, {en}')}, {hf.em}")
            good = f.icmp("eq", "i16", f.cast("bitcast", f"<{HALF} x i1>", bad, "i16"), "0")
        ok = f.val(f"and i1 {ok}, {f.val(f'or i1 {good}, {hf.empty}')}")
    return ok


def lane_shape(cg, a: str, em: str, a0: str, first: str, nbytes: int):
    """(contiguous, uniform): i1, over the executing lanes of a half."""
    f = cg.f
    lane = f.val(f"sub <{HALF} x i32> {HALF_IDS}, {splat16(cg, first, 'i32')}")
    rel = f.val(f"mul <{HALF} x i64> {f.cast('sext', f'<{HALF} x i32>', lane, f'<{HALF} x i64>')}, "
                f"splat (i64 {nbytes})")
    base = splat16(cg, a0, "i64")
    want = f.val(f"add <{HALF} x i64> {base}, {rel}")
    return all_equal(cg, a, want, em), all_equal(cg, a, base, em)


def all_equal(cg, a: str, b: str, em: str) -> str:
    f = cg.f
    ne = f.val(f"icmp ne <{HALF} x i64> {a}, {b}")
    bad = f.cast("bitcast", f"<{HALF} x i1>", f.val(f"and <{HALF} x i1> {ne}, {em}"), "i16")
    return f.icmp("eq", "i16", bad, "0")


def generic_range(cg, a0: str, a_end: str, kind: int):
    """(host pointer of a0, i1: [a0, a_end) lies in one segment of the table,
    in bounds, with lane stride 0, i64 segment of a0): the per-lane
    ptxc_resolve's test for monotonic lanes."""
    from ptxc.backends.llvm.ops.resolve import segment_table
    f = cg.f
    sh = cg.plan.shift
    segs = segment_table(cg, kind)
    seg = f.val(f"lshr i64 {a0}, {sh}")
    last_seg = f.val(f"lshr i64 {f.val(f'sub i64 {a_end}, 1')}, {sh}")
    nsegs = f.cast("zext", "i32", cg.nsegs, "i64")
    valid = f.val(f"and i1 {f.icmp('ult', 'i64', seg, nsegs)}, {f.icmp('eq', 'i64', seg, last_seg)}")
    segc = f.val(f"select i1 {valid}, i64 {seg}, i64 0")
    ent = f.val(f"getelementptr i8, ptr {segs}, i64 {f.val(f'mul i64 {segc}, {Lo.SEG_ENTRY_BYTES}')}")
    base = f.load("ptr", ent, 8)
    size = f.load("i64", f.gep(ent, 8), 8)
    stride = f.load("i64", f.gep(ent, 16), 8)
    low = f.val(f"and i64 {a0}, {(1 << sh) - 1}")
    end = f.val(f"add i64 {low}, {f.val(f'sub i64 {a_end}, {a0}')}")
    inb = f.val(f"and i1 {valid}, {f.icmp('ule', 'i64', end, size)}")
    inb = f.val(f"and i1 {inb}, {f.icmp('eq', 'i64', stride, '0')}")
    return f.val(f"getelementptr i8, ptr {base}, i64 {low}"), inb, seg


# ------------------------------------------------------------ the accesses
def load(cg, halves, lt: str, es: int, n: int) -> list[str]:
    """The n element vectors (<32 x lt>) of a fast load: zero in the lanes
    that do not execute, as a masked gather gives."""
    f = cg.f
    parts = [load_half(cg, hf, lt, es, n) for hf in halves]
    idx = lane_consts("i32", range(32))
    out = []
    for i in range(n):
        v = f.val(f"shufflevector <{HALF} x {lt}> {parts[0][i]}, <{HALF} x {lt}> {parts[1][i]}, <32 x i32> {idx}")
        out.append(f.val(f"select <32 x i1> {cg.em}, <32 x {lt}> {v}, <32 x {lt}> zeroinitializer"))
    return out


def load_half(cg, hf: Half, lt: str, es: int, n: int) -> list[str]:
    f = cg.f
    V = f"<{HALF * n} x {lt}>"
    big = intr(cg, f"llvm.masked.load.v{HALF * n}{vsuffix(lt)}.p0", V,
               [("ptr", hf.start(cg, es * n)), ("i32", str(es)), (f"<{HALF * n} x i1>", hf.mask(cg, n)),
                (V, "zeroinitializer")])
    out = []
    for i in range(n):
        idx = lane_consts("i32", [k * n + i for k in range(HALF)])
        lanes = f.val(f"shufflevector {V} {big}, {V} poison, <{HALF} x i32> {idx}")
        one = f.val(f"shufflevector {V} {big}, {V} poison, <{HALF} x i32> "
                    f"{lane_consts('i32', [i] * HALF)}")
        out.append(f.val(f"select i1 {hf.contig}, <{HALF} x {lt}> {lanes}, <{HALF} x {lt}> {one}"))
    return out


def store(cg, halves, lt: str, es: int, vals: list[str]) -> None:
    """A fast store, lanes 0-15 first (a uniform half stores its last
    executing lane's values)."""
    n = len(vals)
    V = f"<{HALF * n} x {lt}>"
    name = f"llvm.masked.store.v{HALF * n}{vsuffix(lt)}.p0"
    cg.decls.add(f"declare void @{name}({V}, ptr, i32, <{HALF * n} x i1>)")
    for h, hf in enumerate(halves):
        f = cg.f
        mine = [half_of(cg, v, lt, h) for v in vals]
        lastv = [splat16(cg, f.val(f"extractelement <{HALF} x {lt}> {v}, i32 {hf.last}"), lt) for v in mine]
        big = f.val(f"select i1 {hf.contig}, {V} {interleave(cg, lt, mine)}, {V} {interleave(cg, lt, lastv)}")
        f.emit(f"call void @{name}({V} {big}, ptr {hf.start(cg, es * n)}, i32 {es}, "
               f"<{HALF * n} x i1> {hf.mask(cg, n)})")


def interleave(cg, lt: str, vals: list[str]) -> str:
    """<16n x lt> with lane k's element i at k*n + i."""
    f = cg.f
    n = len(vals)
    if n == 1:
        return vals[0]
    parts, w = list(vals), HALF
    while len(parts) > 1:              # concatenate pairwise: <16n x lt> in element order
        idx = lane_consts("i32", range(2 * w))
        parts = [f.val(f"shufflevector <{w} x {lt}> {parts[j]}, <{w} x {lt}> {parts[j + 1]}, "
                       f"<{2 * w} x i32> {idx}") for j in range(0, len(parts), 2)]
        w *= 2
    idx = lane_consts("i32", [i * HALF + k for k in range(HALF) for i in range(n)])
    return f.val(f"shufflevector <{w} x {lt}> {parts[0]}, <{w} x {lt}> poison, <{w} x i32> {idx}")


def vsuffix(lt: str) -> str:
    """The element part of an intrinsic's vector suffix (f32, i16, p0 ...)."""
    return vname(lt)[3:]


# ------------------------------------------------------------ the branch
def branch(cg, ok: str):
    """Emit the two-way branch; returns ((fast, slow, merge) labels,
    restore), restore() putting back the value cache of the branch point
    (values defined before it dominate both paths and the merge)."""
    f = cg.f
    names = [f.fresh_label(h) for h in ("ffast", "fslow", "fmerge")]
    restore = cache_restorer(cg)
    f.cbr(ok, names[0], names[1])
    return names, restore


def cache_restorer(cg):
    """A function that puts back the code generator's value cache as it is
    now (values defined before a branch dominate its arms and their merge;
    values defined in an arm do not)."""
    snapshot = dict(cg.vcache)

    def restore():
        cg.vcache.clear()
        cg.vcache.update(snapshot)
    return restore
