"""Memory: ld, ldu, st, atom, red, cvta, isspacep, call parameter copies.

Every access goes through :func:`resolve`, which turns 32 lane addresses into
host pointers after checking, for the executing lanes, that the address lies
inside its segment and is naturally aligned (layout.py has the address map).
An address derived from a kernel pointer parameter must also lie in that
parameter's segment (provenance_ir.py: an offset never carries into another
buffer). A failing lane ends the run with ERR_OOB / ERR_MISALIGNED, its lane and its
address; in the memcheck variant (a compile of its own, memcheck.py)
ld/st/atom/red/cp.async record the failing lanes and leave them out of the
access instead. Loads and stores are then LLVM masked gathers/scatters; atomics run
lane by lane in lane order with LLVM ``atomicrmw``/``cmpxchg`` (safe when CTAs
run on several threads). With memory counters on, ld/st/atom/red first pass
their lane addresses to mem_count.count_access.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.check_hooks import race_hook
from ptxc.backends.llvm.irtext import LANE_IDS, splat, vt
from ptxc.backends.llvm.instruments.mem_count import count_access
from ptxc.backends.llvm.instruments.initcheck_ops import track
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.ops.common import intr, itype, types_of
from ptxc.backends.llvm.plan import DYNAMIC, decode_call
from ptxc.backends.llvm.instruments.provenance_ir import with_provenance
from ptxc.backends.llvm.values import bits_of, is_signed, lty, vname

SPACES = ("global", "shared", "local", "const", "param", "generic")


def K64(v) -> str:
    return splat("i64", v)


def space_of(ins) -> str:
    for m in ins.mods:
        base = m.split("::")[0]
        if base in SPACES:
            return base
    return "generic"


def vec_width(ins) -> int:
    for m in ins.mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    return 1


# ------------------------------------------------------------ addresses
def address(cg, addr_op, space: str):
    """(i64 lane addresses, static Placed or None) of an address operand."""
    if isinstance(addr_op, ir.Addr):
        base, off = addr_op.base, addr_op.offset
    else:
        base, off = addr_op, 0
    if isinstance(base, ir.Sym):
        p = cg.plan.resolve(cg.inst, cg.cur, base.name)
        return None, (p, off + base.offset)
    if base is None:
        return splat("i64", off), None
    bits = 64 if (base.type and bits_of_reg(base) == 64) else 32
    v = cg.read(base, "u64" if bits == 64 else "u32")
    if bits == 32:
        # A 32-bit address wraps at 2^32 (nvcc emits [%r+64] with %r = -60).
        if off:
            off32 = (off + (1 << 31)) % (1 << 32) - (1 << 31)
            v = cg.f.val(f"add <32 x i32> {v}, {splat('i32', off32)}")
        return cg.f.cast("zext", "<32 x i32>", v, "<32 x i64>"), None
    if off:
        v = cg.f.val(f"add <32 x i64> {v}, {K64(off)}")
    return v, None


def bits_of_reg(v) -> int:
    try:
        return bits_of(v.type)
    except KeyError:
        return 64


def static_address(cg, placed, off: int) -> int:
    """The space address of a placed symbol + offset."""
    base = cg.plan.dyn_shared_base if placed.offset == DYNAMIC else placed.offset
    return base + off


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
    if static is not None:
        placed, off = static
        space = {"param": "param", "local": "local", "shared": "shared", "const": "const",
                 "global": "globals"}[placed.space]
        where = SPACES.index(placed.space) if placed.space in SPACES else where
        a = static_address(cg, placed, off)
        if space == "globals":
            addr = K64(a)
            space = "global_seg"
        else:
            addr = K64(a)
    if space in ("global", "generic"):
        return resolve_generic(cg, addr, nbytes, align, kind, where, may_continue)
    seg = {"shared": "shared", "local": "local", "const": "const", "param": "param",
           "global_seg": "globals"}[space]
    base, size = cg.seg_base[seg], cg.seg_size[seg]
    sz = cg.bcast(size, "i64")
    end = f.val(f"add <32 x i64> {addr}, {K64(nbytes)}")
    ok = f.val(f"and <32 x i1> {f.val(f'icmp ult <32 x i64> {addr}, {sz}')}, "
               f"{f.val(f'icmp ule <32 x i64> {end}, {sz}')}")
    off = addr
    if seg == "local":
        lane = f.cast("zext", "<32 x i32>", LANE_IDS, "<32 x i64>")
        off = f.val(f"add <32 x i64> {addr}, {f.val(f'mul <32 x i64> {lane}, {sz}')}")
    if not (may_continue and cg.memcheck):
        check_stop(cg, ok, addr, align)
        r = None
    else:
        r = check(cg, ok, addr, align)
    basev = cg.bcast(base, "ptr")
    ptrs = f.val(f"getelementptr i8, <32 x ptr> {basev}, <32 x i64> {off}")
    em, emi = (cg.em, cg.emi) if r is None else failed(cg, r, addr, None, kind, where, nbytes,
                                                         may_continue)
    if seg == "shared" and may_continue:
        race_hook(cg, addr, None, emi, kind, nbytes, generic=False)
    return ptrs, em, emi


def resolve_generic(cg, addr: str, nbytes: int, align: int, kind: int = 0, where: int = 5,
                    may_continue: bool = True):
    """Segment-table lookup (seg = addr >> shift, offset = the low bits), done by
    the out-of-line ``ptxc_resolve`` (runtime_ir.RESOLVE); alignment = size."""
    f = cg.f
    if not hasattr(cg, "resolve_tmp"):
        cg.resolve_tmp = (f.alloca("<32 x i64>", "raddr", 64), f.alloca("<32 x ptr>", "rptr", 64))
    a_tmp, p_tmp = cg.resolve_tmp
    f.store("<32 x i64>", addr, a_tmp, 64)
    r = f.call("i64", "ptxc_resolve", [("ptr", "%segs"), ("i32", cg.nsegs), ("ptr", a_tmp),
                                        ("i32", cg.emi), ("i64", str(nbytes)), ("ptr", p_tmp),
                                        ("i64", str(cg.plan.shift))])
    r = with_provenance(cg, r, addr)
    em, emi = failed(cg, r, None, a_tmp, kind, where, nbytes, may_continue)
    if where == SPACES.index("generic") and may_continue:
        race_hook(cg, None, a_tmp, emi, kind, nbytes, generic=True)
    return f.load("<32 x ptr>", p_tmp, 64), em, emi


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


def spill_addr(cg, addr: str) -> str:
    """``addr`` (<32 x i64>) stored in the address temporary; returns it."""
    f = cg.f
    if not hasattr(cg, "resolve_tmp"):
        cg.resolve_tmp = (f.alloca("<32 x i64>", "raddr", 64), f.alloca("<32 x ptr>", "rptr", 64))
    f.store("<32 x i64>", addr, cg.resolve_tmp[0], 64)
    return cg.resolve_tmp[0]


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


# ------------------------------------------------------------ ld / st
def mem_type(ins) -> str:
    ts = types_of(ins)
    return ts[-1] if ts else "b32"


def op_ld(cg, ins):
    t = mem_type(ins)
    if t == "b128":
        return cg.unsupported(ins, "ld.b128")
    n = vec_width(ins)
    es = bits_of(t) // 8
    space = space_of(ins)
    addr, static = address(cg, ins.srcs[0], space)
    dsts = cg.dst_list(ins)
    if static is not None and static[0].space == "param" and static[0].seg == Lo.SEG_PARAM:
        return load_kernel_param(cg, static, t, n, dsts)
    count_access(cg, ins, space, addr, static, es * n)
    ptrs, em, emi = resolve_masked(cg, space, addr, static, es * n, es * n, KIND_LOAD)
    track(cg, space, static, addr, emi, KIND_LOAD, es * n)
    lt = lty(t)
    for i in range(n):
        v = gather(cg, lt, elem_ptrs(cg, ptrs, i * es), es, em)
        if i < len(dsts) and dsts[i] is not None:
            cg.write(dsts[i], v, t)


def load_kernel_param(cg, static, t: str, n: int, dsts) -> None:
    """ld.param of a kernel parameter: a uniform scalar load."""
    from ptxc.errors import PtxcError
    placed, off = static
    es = bits_of(t) // 8
    addr = static_address(cg, placed, off)
    if addr + es * n > cg.plan.param_size:
        raise PtxcError(f"reads beyond the kernel parameters ('{placed.var.name}')", cg.cur.loc)
    lt = lty(t)
    for i in range(n):
        p = cg.f.gep(cg.params, addr + i * es)
        v = cg.f.load(lt, p, 1)
        if i < len(dsts) and dsts[i] is not None:
            cg.write(dsts[i], cg.bcast(v, lt), t)


def op_st(cg, ins):
    t = mem_type(ins)
    if t == "b128":
        return cg.unsupported(ins, "st.b128")
    n = vec_width(ins)
    es = bits_of(t) // 8
    space = space_of(ins)
    addr_op = ins.dsts[0] if ins.dsts and isinstance(ins.dsts[0], ir.Addr) else ins.srcs[0]
    val_op = ins.srcs[-1]
    addr, static = address(cg, addr_op, space)
    if static is not None and static[0].seg == Lo.SEG_PARAM and static[0].space == "param":
        return cg.unsupported(ins, "st to a kernel parameter")
    if space in ("global", "generic") and static is None:
        cg.writes_global = True
    count_access(cg, ins, space, addr, static, es * n)
    ptrs, em, emi = resolve_masked(cg, space, addr, static, es * n, es * n, KIND_STORE)
    track(cg, space, static, addr, emi, KIND_STORE, es * n)
    items = val_op.items if isinstance(val_op, ir.Vec) else [val_op]
    lt = lty(t)
    for i, item in enumerate(items[:n]):
        v = cg.read(item, t)
        scatter(cg, lt, v, elem_ptrs(cg, ptrs, i * es), es, em)


# ------------------------------------------------------------- atomics
RMW = {"add": "add", "and": "and", "or": "or", "xor": "xor", "exch": "xchg",
       "inc": "uinc_wrap", "dec": "udec_wrap"}


def atomic_form(ins):
    """(operation, type, LLVM atomicrmw name or 'cas') of an atom/red that
    ptxc runs, or None for a form that is 'not supported yet'."""
    t = mem_type(ins)
    op = next((m for m in ins.mods if m in ("add", "min", "max", "inc", "dec", "and", "or",
                                             "xor", "exch", "cas")), None)
    if op is None or t in ("f16", "bf16", "f16x2", "bf16x2", "b128") or vec_width(ins) > 1:
        return None
    rmw = rmw_name(op, t)
    return None if rmw is None else (op, t, rmw)


def atomic(cg, ins, has_result: bool):
    form = atomic_form(ins)
    if form is None:
        return cg.unsupported(ins)
    op, t, rmw = form
    space = space_of(ins)
    if space in ("global", "generic"):
        cg.uses_global_atomics = True
        cg.writes_global = True
    es = bits_of(t) // 8
    a_idx = 0
    addr, static = address(cg, ins.srcs[a_idx], space)
    count_access(cg, ins, space, addr, static, es)
    ptrs, _, emi = resolve_masked(cg, space, addr, static, es, es, KIND_ATOMIC)
    track(cg, space, static, addr, emi, KIND_ATOMIC, es)
    lt = lty(t)
    b = cg.read(ins.srcs[a_idx + 1], t)
    c = cg.read(ins.srcs[a_idx + 2], t) if op == "cas" else None
    old = lane_atomics(cg, lt, ptrs, b, c, rmw, es, emi)
    if has_result:
        cg.write(ins.results[0] if ins.results else None, old, t)


def rmw_name(op: str, t: str) -> str | None:
    flt = t in ("f32", "f64")
    if op == "add":
        return "fadd" if flt else "add"
    if op in ("min", "max"):
        if flt:
            return "f" + op
        return op if is_signed(t) else "u" + op
    if op == "cas":
        return "cas"
    if flt and op != "exch":
        return None
    return RMW.get(op)


def lane_atomics(cg, lt: str, ptrs: str, b: str, c, rmw: str, align: int, mask: str) -> str:
    """Apply the atomic for the lanes of ``mask`` (i32) in lane order;
    returns the old values (0 for the other lanes)."""
    f = cg.f
    V = vt(lt)
    out = f.alloca(f"[32 x {lt}]", "atom", 64)
    f.store(V, "zeroinitializer", out, 64)
    head, body, nxt, done = (f.fresh_label(x) for x in ("ahead", "abody", "anext", "adone"))
    pre = f.cur_label
    f.br(head)
    f.label(head, dominated=True)
    i = f.tmp("i")
    f.lines.append(f"  {i} = phi i32 [ 0, %{pre} ], [ %{i[1:]}n, %{nxt} ]")
    bit = f.val(f"and i32 {f.val(f'lshr i32 {mask}, {i}')}, 1")
    f.cbr(f.icmp("ne", "i32", bit, "0"), body, nxt)
    f.label(body, dominated=True)
    p = f.val(f"extractelement <32 x ptr> {ptrs}, i32 {i}")
    x = f.val(f"extractelement {V} {b}, i32 {i}")
    if rmw == "cas":
        y = f.val(f"extractelement {V} {c}, i32 {i}")
        if lt in ("float", "double"):
            it = "i32" if lt == "float" else "i64"
            xi, yi = f.cast("bitcast", lt, x, it), f.cast("bitcast", lt, y, it)
            pair = f.val(f"cmpxchg ptr {p}, {it} {xi}, {it} {yi} monotonic monotonic, align {align}")
            old = f.cast("bitcast", it, f.val(f"extractvalue {{ {it}, i1 }} {pair}, 0"), lt)
        else:
            pair = f.val(f"cmpxchg ptr {p}, {lt} {x}, {lt} {y} monotonic monotonic, align {align}")
            old = f.val(f"extractvalue {{ {lt}, i1 }} {pair}, 0")
    else:
        old = f.val(f"atomicrmw {rmw} ptr {p}, {lt} {x} monotonic, align {align}")
    slot = f.val(f"getelementptr [32 x {lt}], ptr {out}, i32 0, i32 {i}")
    f.store(lt, old, slot, align)
    f.br(nxt)
    f.label(nxt, dominated=True)
    f.lines.append(f"  {i}n = add i32 {i}, 1")
    f.cbr(f.icmp("ult", "i32", f"{i}n", "32"), head, done)
    f.label(done, dominated=True)
    return f.load(V, out, 64)


def op_atom(cg, ins):
    atomic(cg, ins, True)


def op_red(cg, ins):
    atomic(cg, ins, False)


# ------------------------------------------------------- cvta / isspacep
CVTA_SEG = {"shared": Lo.SEG_SHARED, "local": Lo.SEG_LOCAL, "const": Lo.SEG_CONST,
            "param": Lo.SEG_PARAM}


def op_cvta(cg, ins):
    t = itype(ins, "u64")
    space = next((m for m in ins.mods if m in SPACES), "global")
    a = cg.read(ins.srcs[0], t)
    f = cg.f
    if space == "global" or space not in CVTA_SEG:
        return cg.write(ins.results[0], a, t)
    seg = CVTA_SEG[space]
    if bits_of(t) == 32 and cg.plan.shift == 32:     # 32-bit conversions of a 64-bit module
        return cg.write(ins.results[0], a, t)
    sh = cg.plan.shift
    wide = f.cast("zext", "<32 x i32>", a, "<32 x i64>") if bits_of(t) == 32 else a
    if "to" in ins.mods:
        r = f.val(f"and <32 x i64> {wide}, {K64((1 << sh) - 1)}")
    else:
        r = f.val(f"or <32 x i64> {wide}, {K64(seg << sh)}")
    cg.write(ins.results[0], r, "u64")        # narrowed to the register by write()


def op_isspacep(cg, ins):
    space = next((m for m in ins.mods if m in SPACES), "global")
    a = cg.read(ins.srcs[0], "u64")
    f = cg.f
    seg = f.val(f"lshr <32 x i64> {a}, {K64(cg.plan.shift)}")
    if space == "global":
        r = f.val(f"icmp uge <32 x i64> {seg}, {K64(Lo.SEG_GLOBALS)}")
    else:
        r = f.val(f"icmp eq <32 x i64> {seg}, {K64(CVTA_SEG.get(space, 0))}")
    cg.write(ins.results[0], r, "pred")


def op_nop(cg, ins):
    return None


def op_cp(cg, ins):
    """cp.async (non-bulk): the copy happens at once (its completion is only
    observable after cp.async.wait_*), zero-filling past src-size. Both
    addresses are aligned to cp-size (4, 8 or 16: checked), so the copy moves
    8-byte (or 4-byte) chunks; a lane whose src-size is 0 reads nothing (its
    source address is not checked), as the ISA's zero-fill form allows."""
    if "async" not in ins.mods:
        return cg.unsupported(ins)
    if any(m in ins.mods for m in ("commit_group", "wait_group", "wait_all")):
        return None
    if "bulk" in ins.mods or len(ins.srcs) < 3 or not isinstance(ins.srcs[2], ir.Imm):
        return cg.unsupported(ins)
    n = int(ins.srcs[2].value)
    daddr, dstatic = address(cg, ins.srcs[0], "shared")
    saddr, sstatic = address(cg, ins.srcs[1], "global")
    src_size = cp_src_size(cg, ins, n)
    dp, dem, _ = resolve_masked(cg, "shared", daddr, dstatic, n, n, KIND_STORE)
    em, emi = cg.em, cg.emi
    if src_size is not None:        # lanes that read at least one byte
        cg.em = cg.f.val(f"and <32 x i1> {em}, {cg.f.val(f'icmp ne <32 x i32> {src_size}, zeroinitializer')}")
        cg.emi = cg.f.cast("bitcast", "<32 x i1>", cg.em, "i32")
    try:
        sp, reads, ri = resolve_masked(cg, "global", saddr, sstatic, n, n, KIND_LOAD)
        if src_size is None:        # a partial src-size read is not checked (docs/check.md)
            track(cg, "global", sstatic, saddr, ri, KIND_LOAD, n)
    finally:
        cg.em, cg.emi = em, emi
    chunk = 8 if n % 8 == 0 else n
    lt = f"i{8 * chunk}"
    for off in range(0, n, chunk):
        v = gather(cg, lt, elem_ptrs(cg, sp, off), chunk, reads)
        if src_size is not None:
            v = zero_past(cg, v, chunk, src_size, off)
        scatter(cg, lt, v, elem_ptrs(cg, dp, off), chunk, dem)


def cp_src_size(cg, ins, n: int):
    """The bytes each lane copies from its source (<32 x i32>), or None when
    every lane copies all ``n`` (no operand, or an immediate >= cp-size). The
    fourth operand is src-size, or the ignore-src predicate (``p`` / ``!p``:
    true copies zeros only)."""
    if len(ins.srcs) <= 3:
        return None
    op = ins.srcs[3]
    if isinstance(op, ir.Imm):
        return None if int(op.value) >= n else splat("i32", int(op.value))
    negated = isinstance(op, ir.Not)
    if negated or getattr(op, "type", None) == "pred":
        ignore = cg.read(op.value if negated else op, "pred")
        zero, full = "zeroinitializer", splat("i32", n)
        a, b = (full, zero) if negated else (zero, full)
        return cg.f.val(f"select <32 x i1> {ignore}, <32 x i32> {a}, <32 x i32> {b}")
    return cg.read(op, "u32")


def zero_past(cg, v: str, chunk: int, src_size: str, off: int) -> str:
    """The chunk at byte ``off`` with its bytes at or past src-size zeroed
    (little-endian: byte k of the chunk is bits 8k..8k+7)."""
    f = cg.f
    bits = 8 * chunk
    lt = f"i{bits}"
    keep = f.val(f"sub <32 x i32> {src_size}, {splat('i32', off)}")
    neg = f.val(f"icmp slt <32 x i32> {keep}, zeroinitializer")
    keep = f.val(f"select <32 x i1> {neg}, <32 x i32> zeroinitializer, <32 x i32> {keep}")
    full = f.val(f"icmp uge <32 x i32> {keep}, {splat('i32', chunk)}")
    kbits = f.val(f"mul <32 x i32> {keep}, {splat('i32', 8)}")
    kbits = f.cast("zext", "<32 x i32>", kbits, f"<32 x {lt}>") if bits > 32 else kbits
    one = splat(lt, 1)
    low = f.val(f"sub <32 x {lt}> {f.val(f'shl <32 x {lt}> {one}, {kbits}')}, {one}")
    mask = f.val(f"select <32 x i1> {full}, <32 x {lt}> {splat(lt, -1)}, <32 x {lt}> {low}")
    return f.val(f"and <32 x {lt}> {v}, {mask}")


# ---------------------------------------------------- call parameters
def reg_param_pairs(cg, callee, actual, formal) -> list:
    """(actual operand, callee register Var) pairs of a .reg parameter; a vector
    parameter (.reg .v2 .u32 p) pairs component by component."""
    if formal.vec:
        scope = callee.fn.scope
        comps = scope.find_vector(formal.name) if scope is not None else None
        if comps is None or not isinstance(actual, ir.Vec) or len(actual.items) != len(comps):
            raise PtxcError(f"vector .reg parameter '{formal.name}' bound to {type(actual).__name__}")
        return list(zip(actual.items, comps))
    var = cg.plan.formal_var(callee.fn, formal.name)
    if var is None:
        raise PtxcError(f".reg parameter '{formal.name}' has no register in {callee.fn.name}")
    return [(actual, var)]


def copy_reg(cg, caller, callee, actual, var, t: str, into_callee: bool) -> None:
    if isinstance(actual, ir.Sym):
        raise PtxcError(f"symbol '{actual.name}' passed for .reg parameter")
    if into_callee:
        cg.inst = caller
        v = cg.read(actual, t)
        cg.inst = callee
        cg.write_var(var, v, t)
    else:
        cg.inst = callee
        v = cg.read_var(var, t)
        cg.inst = caller
        cg.write(actual, v, t)


def copy_params(cg, call_node, into_callee: bool) -> None:
    """Copy call arguments into the callee's parameters, or its return
    values back to the caller (masked by the executing lanes)."""
    call, callee = call_node.call, call_node.callee
    rets, _, args = decode_call(call)
    caller = call_node.inst
    pairs = zip(args, callee.fn.params) if into_callee else zip(rets, callee.fn.rets)
    saved = cg.inst, cg.cur
    cg.cur = call
    for actual, formal in pairs:
        copy_one(cg, caller, callee, actual, formal, into_callee)
    cg.inst, cg.cur = saved


def copy_one(cg, caller, callee, actual, formal, into_callee: bool) -> None:
    size = formal.size
    if formal.space == "reg":            # register parameters: copy the value(s)
        for item, var in reg_param_pairs(cg, callee, actual, formal):
            copy_reg(cg, caller, callee, item, var, formal.type, into_callee)
        return
    fplace = cg.plan._place(callee, formal)
    if isinstance(actual, ir.Sym):
        cg.inst = caller
        aplace = cg.plan.resolve(caller, cg.cur, actual.name)
        src, dst = (aplace, fplace) if into_callee else (fplace, aplace)
        copy_bytes(cg, src, dst, size)
        return
    t = formal.type if formal.type in ("f32", "f64") else "b%d" % (bits_of(formal.type) if formal.type != "pred" else 32)
    if into_callee:                      # a register or immediate argument
        cg.inst = caller
        v = cg.read(actual, t)
        store_static(cg, fplace, v, t)
    else:
        v = load_static(cg, fplace, t)
        cg.inst = caller
        cg.write(actual, v, t)


def _static_ptrs(cg, placed, nbytes):
    addr = K64(static_address(cg, placed, 0))
    return resolve(cg, "local", addr, None, nbytes, 1)


def copy_bytes(cg, src, dst, size: int) -> None:
    sp = _static_ptrs(cg, src, size)
    dp = _static_ptrs(cg, dst, size)
    off = 0
    for chunk, lt in ((8, "i64"), (4, "i32"), (2, "i16"), (1, "i8")):
        while size - off >= chunk:
            v = gather(cg, lt, elem_ptrs(cg, sp, off), 1, cg.em)
            scatter(cg, lt, v, elem_ptrs(cg, dp, off), 1, cg.em)
            off += chunk


def store_static(cg, placed, v, t) -> None:
    scatter(cg, lty(t), v, _static_ptrs(cg, placed, bits_of(t) // 8), 1, cg.em)


def load_static(cg, placed, t):
    return gather(cg, lty(t), _static_ptrs(cg, placed, bits_of(t) // 8), 1, cg.em)


OPS = {"ld": op_ld, "ldu": op_ld, "st": op_st, "atom": op_atom, "red": op_red,
       "cvta": op_cvta, "isspacep": op_isspacep, "prefetch": op_nop, "prefetchu": op_nop,
       "membar": op_nop, "fence": op_nop, "nanosleep": op_nop, "pmevent": op_nop,
       "griddepcontrol": op_nop, "discard": op_nop, "applypriority": op_nop,
       "brkpt": op_nop, "cp": op_cp}
