"""Lane addresses -> checked host pointers, and the masked gathers and
scatters that use them.

Every access goes through :func:`resolve`, which turns 32 lane addresses into
host pointers after checking, for the executing lanes, that the address lies
inside its segment and is naturally aligned (layout.py has the address map).
Generic stores and atomics of a module with .const variables look their
segment up in the write half of the table, where those are not writable
(a module without any keeps the one table: nothing of its own to protect,
and the loads and stores of one address share their lookups). An address derived
from a kernel pointer parameter must also lie in that
parameter's segment (provenance_ir.py: an offset never carries into another
buffer). A failing lane ends the run with ERR_OOB / ERR_MISALIGNED, its lane and its
address; in the memcheck variant (a compile of its own, memcheck.py)
ld/st/atom/red/cp.async record the failing lanes and leave them out of the
access instead (:func:`resolve_masked`). A shared (or generic) access then
passes its lanes to the racecheck hook (check_hooks.race_hook). Loads and
stores are LLVM masked gathers/scatters (:func:`gather`, :func:`scatter`).
"""
from __future__ import annotations

import os

from ptxc.backends.llvm import helper_lib
from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.check_hooks import race_hook
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_STORE
from ptxc.backends.llvm.instruments.memcheck_heap import heap_bounds
from ptxc.backends.llvm.instruments.provenance_ir import with_provenance
from ptxc.backends.llvm.irtext import LANE_IDS, splat, vt
from ptxc.backends.llvm.ops.access import K64, SPACES, spill_addr, static_address, static_vector
from ptxc.backends.llvm.ops import outlined
from ptxc.backends.llvm.ops.common import intr
from ptxc.backends.llvm.prelude_ir import RESOLVE
from ptxc.backends.llvm.values import vname


def resolve(cg, space: str, addr, static, nbytes: int, align: int, kind: int = 0) -> str:
    """Host pointers (<32 x ptr>) of the executing lanes, after the checks
    (a failure stops the launch, with or without memcheck)."""
    return resolve_masked(cg, space, addr, static, nbytes, align, kind, may_continue=False)[0]


def resolve_masked(cg, space: str, addr, static, nbytes: int, align: int, kind: int = 0,
                   may_continue: bool = True):
    """(host pointers, <32 x i1> lanes that access, their i32 mask): the
    executing lanes less those that failed a check under memcheck (the
    launch stops at a failure otherwise). ``kind``: memcheck.KIND_*."""
    f = cg.f
    where = SPACES.index(space) if space in SPACES else SPACES.index("global")
    const = None                    # the one address of every lane (a variable's), if known
    if static is not None:
        placed, off = static
        if getattr(placed, "frame", None) is None:
            const = static_address(cg, placed, off)
        space = {"param": "param", "local": "local", "shared": "shared", "const": "const",
                 "global": "globals"}[placed.space]
        where = SPACES.index(placed.space) if placed.space in SPACES else where
        if space == "globals":
            addr = K64(static_address(cg, placed, off))
            space = "global_seg"
        else:
            addr = static_vector(cg, placed, off)
    if space in ("global", "generic"):
        return resolve_generic(cg, addr, nbytes, align, kind, where, may_continue)
    seg = {"shared": "shared", "local": "local", "const": "const", "param": "param",
           "global_seg": "globals"}[space]
    base, size = cg.seg_base[seg], cg.seg_size[seg]
    sz = cg.bcast(size, "i64")
    off = addr
    if seg == "local":
        lane = f.cast("zext", "<32 x i32>", LANE_IDS, "<32 x i64>")
        off = f.val(f"add <32 x i64> {addr}, {f.val(f'mul <32 x i64> {lane}, {sz}')}")
    stops = not (may_continue and cg.memcheck)
    if stops and const is not None and outlined.enabled():  # scalar: every lane at one address
        stop_on(cg, uniform_check(cg, const, size, nbytes, align), addr, None)
        r = None
    else:
        end = f.val(f"add <32 x i64> {addr}, {K64(nbytes)}")
        ok = f.val(f"and <32 x i1> {f.val(f'icmp ult <32 x i64> {addr}, {sz}')}, "
                   f"{f.val(f'icmp ule <32 x i64> {end}, {sz}')}")
        r = None if stops else check(cg, ok, addr, align)
        if stops:
            check_stop(cg, ok, addr, align)
    basev = cg.bcast(base, "ptr")
    ptrs = f.val(f"getelementptr i8, <32 x ptr> {basev}, <32 x i64> {off}")
    em, emi = (cg.em, cg.emi) if r is None else failed(cg, r, addr, None, kind, where, nbytes,
                                                         may_continue)
    if seg == "shared" and may_continue:
        race_hook(cg, addr, None, emi, kind, nbytes, generic=False)
    return ptrs, em, emi


UNIFORM_SPACES = {"shared": "shared", "const": "const", "global": "globals"}


def uniform_pointer(cg, static, nbytes: int) -> str | None:
    """The one host pointer that every lane of a load reads when its address
    is a variable's (``ld.shared.f32 %f1, [tile+20]``: the same constant in
    every lane), for one scalar load and a broadcast instead of a gather of
    32 copies of one address; None for any other access: a lane address in a
    register, a .local variable (one copy per lane), a .param one, a
    framed instance's, and the memcheck variant (its failing lanes go on
    without stopping, so nothing proves the address in bounds).
    Call it after :func:`resolve_masked`, whose checks stop the launch when
    an executing lane is out of bounds or misaligned; when no lane executes
    they do not fail, so the pointer is that of a zeroed scratch unless the
    address lies within the segment: no byte outside it is ever read."""
    if static is None or cg.memcheck or uniform_disabled():
        return None
    placed, off = static
    seg = UNIFORM_SPACES.get(placed.space)
    if seg is None or getattr(placed, "frame", None) is not None:
        return None
    f = cg.f
    a = static_address(cg, placed, off)
    inside = f.icmp("ule", "i64", str(a + nbytes), cg.seg_size[seg])
    if getattr(cg, "uniform_scratch", None) is None:
        cg.uniform_scratch = f.alloca("<4 x i64>", "uscratch", 64)
        f.entry.append(f"  store <4 x i64> zeroinitializer, ptr {cg.uniform_scratch}, align 64")
    return f.val(f"select i1 {inside}, ptr {f.gep(cg.seg_base[seg], a)}, ptr {cg.uniform_scratch}")


def uniform_disabled() -> bool:
    """PTXC_UNIFORM_LOADS=0: gather a variable's address like any other (the
    code before :func:`uniform_pointer`, for tests and before/after runs)."""
    return os.environ.get("PTXC_UNIFORM_LOADS") == "0"


def broadcast_load(cg, lt: str, ptr: str, align: int) -> str:
    """``lt`` at ``ptr`` in all 32 lanes."""
    return cg.bcast(cg.f.load(lt, ptr, align), lt)


def resolve_generic(cg, addr: str, nbytes: int, align: int, kind: int = 0, where: int = 5,
                    may_continue: bool = True):
    """Segment-table lookup (seg = addr >> shift, offset = the low bits), done by
    the out-of-line ``ptxc_resolve`` (prelude_ir.RESOLVE); alignment = size."""
    f = cg.f
    if not hasattr(cg, "resolve_tmp"):
        cg.resolve_tmp = (f.alloca("<32 x i64>", "raddr", 64), f.alloca("<32 x ptr>", "rptr", 64))
    if cg.level == 0 and helper_lib.helpers_apart():    # a call at level 0: compiled once
        cg.helpers["ptxc_resolve"] = RESOLVE
    a_tmp, p_tmp = cg.resolve_tmp
    f.store("<32 x i64>", addr, a_tmp, 64)
    segs = segment_table(cg, kind)
    r = f.call("i64", "ptxc_resolve", [("ptr", segs), ("i32", cg.nsegs), ("ptr", a_tmp),
                                        ("i32", cg.emi), ("i64", str(nbytes)), ("ptr", p_tmp),
                                        ("i64", str(cg.plan.shift))])
    r = with_provenance(cg, r, addr)
    if cg.memcheck and may_continue:        # the heap's blocks are bounded too
        r = heap_bounds(cg, r, a_tmp, nbytes)
    em, emi = failed(cg, r, None, a_tmp, kind, where, nbytes, may_continue)
    if where == SPACES.index("generic") and may_continue:
        race_hook(cg, None, a_tmp, emi, kind, nbytes, generic=True)
    return f.load("<32 x ptr>", p_tmp, 64), em, emi


def segment_table(cg, kind: int) -> str:
    """The segment table an access of ``kind`` looks its lanes up in: the
    write half for stores and atomics of a module with .const variables."""
    return write_segments(cg) if kind in (KIND_STORE, KIND_ATOMIC) and cg.plan.const_size else "%segs"


def write_segments(cg) -> str:
    """The write half of the segment table (runtime.Launch._segments: the
    read-only segments, the .const variables, have size 0 there), computed
    once in the entry block."""
    if getattr(cg, "wsegs", None) is None:
        f = cg.f
        lines, f.lines = f.lines, cg.pro
        off = f.val(f"mul i64 {f.cast('zext', 'i32', cg.nsegs, 'i64')}, {Lo.SEG_ENTRY_BYTES}")
        cg.wsegs = f.val(f"getelementptr inbounds i8, ptr %segs, i64 {off}", "wsegs")
        f.lines = lines
    return cg.wsegs


def failed(cg, r: str, addr, a_tmp, kind: int, where: int, nbytes: int, may_continue: bool):
    """Branch on ``r`` (i64: out-of-bounds lanes | misaligned lanes << 32).
    Without memcheck a failure reports its first lane and returns ST_ERROR;
    in the memcheck variant (``cg.memcheck``, a compile of its own) the lanes
    are recorded (memcheck.py) and masked out of the access. Returns the
    lanes that access (<32 x i1>, i32).
    Accesses whose callers cannot mask lanes (``may_continue`` False) stop
    in either case."""
    f = cg.f
    if not (may_continue and cg.memcheck):
        return stop_on(cg, r, addr, a_tmp)
    log, ok = f.fresh_label("mlog"), f.fresh_label("mok")
    pre = f.cur_label
    f.cbr(f.icmp("ne", "i64", r, "0"), log, ok)
    f.label(log, dominated=True)
    a_tmp = a_tmp or spill_addr(cg, addr)
    cg.decls.add("declare void @ptxc_memcheck(ptr, ptr, ptr, i64, i32, ptr, i32, i32, i32)")
    f.call("void", "ptxc_memcheck", [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("i64", r),
                                     ("i32", str(cg.iid())), ("ptr", a_tmp), ("i32", str(kind)),
                                     ("i32", str(where)), ("i32", str(nbytes))])
    f.br(ok)
    f.label(ok, dominated=True)
    bad = f.val(f"phi i64 [ 0, %{pre} ], [ {r}, %{log} ]")
    lanes = f.val(f"or i64 {bad}, {f.val(f'lshr i64 {bad}, 32')}")
    keep = f.val(f"xor i32 {f.cast('trunc', 'i64', lanes, 'i32')}, -1")
    emi = f.val(f"and i32 {cg.emi}, {keep}")
    return f.cast("bitcast", "i32", emi, "<32 x i1>"), emi


def stop_on(cg, r: str, addr, a_tmp):
    """Report the first failed lane of ``r`` and return ST_ERROR."""
    f = cg.f
    err, ok = f.fresh_label("merr"), f.fresh_label("mok")
    f.cbr(f.icmp("ne", "i64", r, "0"), err, ok)
    f.label(err, dominated=True)
    a_tmp = a_tmp or spill_addr(cg, addr)
    f.call("void", "ptxc_mem_error", [("ptr", "%ws"), ("i64", r), ("i32", str(cg.iid())), ("ptr", a_tmp)])
    f.emit(f"ret i32 {Lo.ST_ERROR}")
    f.label(ok, dominated=True)
    return cg.em, cg.emi


def check_stop(cg, ok: str, addr: str, align: int) -> None:
    """The default segment checks: the first failing lane stops the launch."""
    f = cg.f
    bad = f.val(f"xor <32 x i1> {ok}, {splat('i1', 'true')}")
    bad = f.val(f"and <32 x i1> {bad}, {cg.em}")
    cg.fail_if(f.cast("bitcast", "<32 x i1>", bad, "i32"), Lo.ERR_OOB, addr)
    if align > 1:
        low = f.val(f"and <32 x i64> {addr}, {K64(align - 1)}")
        mis = f.val(f"icmp ne <32 x i64> {low}, zeroinitializer")
        mis = f.val(f"and <32 x i1> {mis}, {cg.em}")
        cg.fail_if(f.cast("bitcast", "<32 x i1>", mis, "i32"), Lo.ERR_MISALIGNED, addr)


def uniform_check(cg, a: int, size: str, nbytes: int, align: int) -> str:
    """What :func:`check` gives for lanes that all hold address ``a`` (a
    variable's), in scalar IR: every executing lane out of bounds or none,
    misaligned or not (known here)."""
    f = cg.f
    inb = f.val(f"and i1 {f.icmp('ult', 'i64', str(a), size)}, {f.icmp('ule', 'i64', str(a + nbytes), size)}")
    r = f.cast("zext", "i32", f.val(f"select i1 {inb}, i32 0, i32 {cg.emi}"), "i64")
    if align > 1 and a % align:
        lanes = f.cast("zext", "i32", cg.emi, "i64")
        r = f.val(f"or i64 {r}, {f.val(f'shl i64 {lanes}, 32')}")
    return r


def check(cg, ok: str, addr: str, align: int) -> str:
    """The failed lanes of a segment access, as ptxc_resolve returns them."""
    f = cg.f
    bad = f.val(f"xor <32 x i1> {ok}, {splat('i1', 'true')}")
    bad = f.val(f"and <32 x i1> {bad}, {cg.em}")
    r = f.cast("zext", "i32", f.cast("bitcast", "<32 x i1>", bad, "i32"), "i64")
    if align > 1:
        low = f.val(f"and <32 x i64> {addr}, {K64(align - 1)}")
        mis = f.val(f"icmp ne <32 x i64> {low}, zeroinitializer")
        mis = f.val(f"and <32 x i1> {mis}, {cg.em}")
        mi = f.cast("zext", "i32", f.cast("bitcast", "<32 x i1>", mis, "i32"), "i64")
        r = f.val(f"or i64 {r}, {f.val(f'shl i64 {mi}, 32')}")
    return r


def gather(cg, lt: str, ptrs: str, align: int, mask: str) -> str:
    V = vt(lt)
    return intr(cg, f"llvm.masked.gather.{vname(lt)}.v32p0", V,
                [("<32 x ptr>", ptrs), ("i32", str(align)), ("<32 x i1>", mask), (V, "zeroinitializer")])


def scatter(cg, lt: str, val: str, ptrs: str, align: int, mask: str) -> None:
    V = vt(lt)
    cg.decls.add(f"declare void @llvm.masked.scatter.{vname(lt)}.v32p0({V}, <32 x ptr>, i32, <32 x i1>)")
    cg.f.emit(f"call void @llvm.masked.scatter.{vname(lt)}.v32p0({V} {val}, <32 x ptr> {ptrs}, "
              f"i32 {align}, <32 x i1> {mask})")


def elem_ptrs(cg, ptrs: str, off: int) -> str:
    if not off:
        return ptrs
    return cg.f.val(f"getelementptr i8, <32 x ptr> {ptrs}, <32 x i64> {K64(off)}")
