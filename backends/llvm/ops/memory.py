"""Memory: ld, ldu, st, cvta, isspacep, cp.async (and the memory
instructions that are no-ops here: prefetch, membar, fence ...).

An access computes its lane addresses (access.py), resolves them to checked
host pointers (resolve.py: bounds, alignment, provenance; memcheck and
racecheck hooks) and reads or writes them with LLVM masked
gathers/scatters. With memory counters on, ld/st first pass their lane
addresses to mem_count.count_access; in the initcheck variant the accessed
bytes are tracked (initcheck_ops.track). atom/red are in atomics.py, the
copies of call parameters in call_params.py.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.initcheck_ops import track
from ptxc.backends.llvm.instruments.mem_count import count_access
from ptxc.backends.llvm.instruments.memcheck import KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.ops.access import (K64, SPACES, address, cp_src_size, mem_type, space_of,
                                           static_address, vec_width)
from ptxc.backends.llvm.ops import fast_access, slow_access
from ptxc.backends.llvm.ops.common import itype
from ptxc.backends.llvm.ops.resolve import (broadcast_load, elem_ptrs, gather, resolve_masked, scatter,
                                            uniform_pointer)
from ptxc.backends.llvm.values import bits_of, lty


# ------------------------------------------------------------ ld / st
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
    count_access(cg, ins, space, addr, static, es * n, ins.srcs[0])
    lt = lty(t)
    if fast_access.enabled(cg, space, static, ins, ins.srcs[0], es * n):
        def per_lane(c, sp, a, _vals):
            return gather_all(c, sp, a, None, lt, es, n)
        vals = with_fast_path(cg, space, ins.srcs[0], static, lt, es, n, KIND_LOAD,
                              lambda halves: fast_access.load(cg, halves, lt, es, n),
                              lambda: slow_access.arm(cg, space, addr, lt, es, n, KIND_LOAD, per_lane))
    else:
        vals = gather_all(cg, space, addr, static, lt, es, n)
    for i, v in enumerate(vals):
        if i < len(dsts) and dsts[i] is not None:
            cg.write(dsts[i], v, t)


def gather_all(cg, space, addr, static, lt: str, es: int, n: int) -> list[str]:
    """The per-lane load: checks (resolve.py), then one gather per element."""
    ptrs, em, emi = resolve_masked(cg, space, addr, static, es * n, es * n, KIND_LOAD)
    track(cg, space, static, addr, emi, KIND_LOAD, es * n)
    one = uniform_pointer(cg, static, es * n)
    if one is not None:         # a variable's address: every lane reads the same bytes
        return [broadcast_load(cg, lt, cg.f.gep(one, i * es), es) for i in range(n)]
    return [gather(cg, lt, elem_ptrs(cg, ptrs, i * es), es, em) for i in range(n)]


def with_fast_path(cg, space, addr_op, static, lt: str, es: int, n: int, kind: int, fast_fn, slow_fn):
    """Run ``fast_fn(halves)`` on the fast path and ``slow_fn()`` on the
    per-lane one (fast_access.py); returns the phis of their results (a list
    of <32 x lt> values, possibly empty)."""
    f = cg.f
    ok, halves = fast_access.test(cg, space, addr_op, es * n, kind)
    (lfast, lslow, lmerge), restore = fast_access.branch(cg, ok)
    results = []
    for label, body in ((lfast, lambda: fast_fn(halves)), (lslow, slow_fn)):
        f.label(label, dominated=True)
        restore()
        vals = body() or []
        results.append((vals, f.cur_label))
        f.br(lmerge)
    f.label(lmerge, dominated=True)
    restore()
    return [f.val(f"phi <32 x {lt}> " + ", ".join(f"[ {vals[i]}, %{lab} ]" for vals, lab in results))
            for i in range(len(results[0][0]))]


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
    count_access(cg, ins, space, addr, static, es * n, addr_op)
    items = val_op.items if isinstance(val_op, ir.Vec) else [val_op]
    lt = lty(t)
    if "racecheck" in cg.checks:        # the values, for a write-after-write of the same value
        cg.race_store = [(lt, cg.read(item, t)) for item in items[:n]]
    vals = [cg.read(item, t) for item in items[:n]]
    if fast_access.enabled(cg, space, static, ins, addr_op, es * n) and len(vals) == n:
        def per_lane(c, sp, a, vs):
            scatter_all(c, sp, a, None, lt, es, n, vs)
        with_fast_path(cg, space, addr_op, static, lt, es, n, KIND_STORE,
                       lambda halves: fast_access.store(cg, halves, lt, es, vals),
                       lambda: slow_access.arm(cg, space, addr, lt, es, n, KIND_STORE, per_lane, vals))
    else:
        scatter_all(cg, space, addr, static, lt, es, n, vals)


def scatter_all(cg, space, addr, static, lt: str, es: int, n: int, vals: list[str]) -> None:
    """The per-lane store of ``vals`` (n elements of ``es`` bytes per lane,
    or fewer values): checks (resolve.py), then one scatter per element."""
    ptrs, em, emi = resolve_masked(cg, space, addr, static, es * n, es * n, KIND_STORE)
    cg.race_store = None
    track(cg, space, static, addr, emi, KIND_STORE, es * n)
    for i, v in enumerate(vals):
        scatter(cg, lt, v, elem_ptrs(cg, ptrs, i * es), es, em)


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


OPS = {"ld": op_ld, "ldu": op_ld, "st": op_st,
       "cvta": op_cvta, "isspacep": op_isspacep, "prefetch": op_nop, "prefetchu": op_nop,
       "membar": op_nop, "fence": op_nop, "nanosleep": op_nop, "pmevent": op_nop,
       "griddepcontrol": op_nop, "discard": op_nop, "applypriority": op_nop,
       "brkpt": op_nop, "cp": op_cp}
