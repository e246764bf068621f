"""Calls of recursive functions: a per-thread call stack sized like CUDA's
(``cudaLimitStackSize``, 1 KiB per thread by default), recursion to any
depth whose frames fit, and a stack overflow as a GPU reports it. (Over
400 lines: one job, the call stack, whose frame model, calls, returns and
saves share their layout.)

Non-recursive calls stay inlined (plan.py): each call site has its own
instance of the callee and nothing is saved. An instance of a function on a
call-graph cycle is *framed*, and a call that would repeat an instance
already on the chain (recursion) *re-enters* that ancestor instead
(``Node.reentry``). The state of a thread's call stack:

* ``used`` (a per-lane slot): the stack bytes the thread's frames take, as
  a GPU counts them. Every call into a framed instance adds the callee's
  frame (:func:`frame_model`) and its return takes it off; a call that
  would pass the launch's stack size (``L_STACK``) stops the launch with
  ERR_STACK_OVERFLOW at the callee's first instruction, for the first lane
  that overflows (compute-sanitizer: "Stack overflow"; the application
  gets ``cudaErrorLaunchFailure``).
* ``lsp`` (a per-lane slot): the top of the thread's local-memory stack,
  after the static local variables: a framed instance's ``.local``
  variables (nvcc's ``__local_depot``) live at its frame pointer (a slot of
  the instance, ``(inst.id, "fp")``) in each activation, so a pointer to a
  caller's local array passed down a recursion points into the caller's
  frame, as on a GPU.
* ``svp`` (a per-lane slot): the top of the warp's save area (after the warp
  state, ``%savearea``). A re-entering call saves the registers (slots) and
  the ``.param`` variables of every instance from the callee's home instance
  down to the caller (``Node.chain``), as one record of whole 32-lane
  vectors; the return restores them for the lanes that come back. The lanes
  executing in one activation always share one ``svp`` (they entered
  together), so a record is read at the first lane's offset.

Control flow: a call into a framed instance turns the running SIMT entry
into the call's continuation and pushes an entry for the callee whose
reconvergence pc is the callee's return pseudo pc (plan.ret_pc); every
``ret`` goes there, so the callee's lanes reconverge, the entry is popped
and the continuation runs with the lanes that return, at whatever depth.
The reconvergence stack of a recursive kernel has RECURSION_ENTRIES more
entries (virtual memory: pages are touched only as deep as a run goes).

The frame a GPU needs is ptxas's, which ptxc cannot know; the model
(measured against ptxas 13 on sm_90: fib, a function with a local array
and one with six live values get ptxas's 24, 40 and 40 bytes exactly;
functions with loops or many calls get less than ptxas's):
``align8(.local bytes + 12 + bytes of the registers live across its
calls)``: the local depot, the return address with one more saved register,
and the callee-saved registers. The counters do not change: the saves and
restores are not instructions of the program.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import LANE_IDS, splat, vt
from ptxc.backends.llvm.ops.access import fp_slot, lane_slot
from ptxc.backends.llvm.plan import Slot, align_up, decode_call
from ptxc.backends.llvm.values import bits_of, ity

RECURSION_ENTRIES = 1 << 15     # more reconvergence-stack entries in a recursive kernel
FRAME_OVERHEAD = 12             # return address + one saved register (ptxas's frames)


# ------------------------------------------------------------ frame model
def frame_model(fn: ir.Function) -> int:
    """The stack bytes one activation of ``fn`` takes (module docstring)."""
    got = fn.attrs.get("_frame_model")
    if got is None:
        got = fn.attrs["_frame_model"] = align_up(local_bytes(fn) + FRAME_OVERHEAD
                                                  + live_across_bytes(fn), 8)
    return got


def local_bytes(fn: ir.Function) -> int:
    """Bytes of the ``.local`` variables declared in ``fn`` (any scope)."""
    scopes, seen = [], set()
    for s in [fn.scope] + [ins.scope for blk in fn.blocks for ins in blk.instrs]:
        while s is not None and id(s) not in seen:
            seen.add(id(s))
            scopes.append(s)
            s = s.parent
    total = 0
    for s in scopes:
        for v in s.vars:
            if v.space == "local":
                total = align_up(total, max(1, v.align or 1)) + max(v.size, 1)
    return total


def _reg_values(values) -> list:
    return [v for v in values if isinstance(v, (ir.Result, ir.Argument)) and v.reg]


def live_across_bytes(fn: ir.Function) -> int:
    """Bytes of the registers whose value is live across one of ``fn``'s
    calls (SSA liveness; a register counts once, 8 bytes if 64-bit, else 4)."""
    blocks = fn.blocks
    phi_uses: dict = {}
    for b in blocks:
        for ins in b.phis:
            for v, pb in zip(ins.srcs, ins.phi_blocks):
                if isinstance(v, (ir.Result, ir.Argument)) and v.reg:
                    phi_uses.setdefault(id(pb), set()).add(v)

    def transfer(b, live, across=None):
        live = set(live)
        for ins in reversed(b.instrs):
            if ins.is_phi:
                live.difference_update(ins.results)
                continue
            live.difference_update(ins.results)
            if across is not None and ins.opcode == "call":
                across.update(live)
            live.update(_reg_values(ins.operand_values()))
        return live

    live_in = {id(b): set() for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            out = set(phi_uses.get(id(b), ()))
            for s in b.succs:
                out |= live_in[id(s)]
            new = transfer(b, out)
            if new != live_in[id(b)]:
                live_in[id(b)], changed = new, True
    across: set = set()
    for b in blocks:
        if any(i.opcode == "call" for i in b.instrs):
            out = set(phi_uses.get(id(b), ()))
            for s in b.succs:
                out |= live_in[id(s)]
            transfer(b, out, across)
    regs = {}
    for v in across:
        regs[v.reg] = 8 if v.type not in ("pred", "cc") and bits_of(v.type) == 64 else 4
    return sum(regs.values())


# ------------------------------------------------------------------ slots
def stack_slot(cg, name: str) -> Slot:
    """A per-lane u32 of the call stack ("used", "lsp", "svp"), zero when a warp starts."""
    return lane_slot(cg, ("stack", name))


def _masked_set(cg, slot, v: str, mask: str) -> None:
    f = cg.f
    old = cg.load_slot(slot)
    new = f.select("<32 x i1>", mask, "<32 x i32>", v, old)
    f.store("<32 x i32>", new, cg.slot_ptr(slot), 8)
    cg.vcache[slot.index] = new


# ------------------------------------------------------------------ calls
def enter_framed(cg, node) -> None:
    """A call into a framed instance (module docstring): check the stack,
    copy the arguments (a re-entry saves the chain first), push the frame
    and the SIMT entry, jump to the callee."""
    f = cg.f
    callee, caller = node.callee, node.inst
    model = frame_model(callee.fn)
    cg.cur = node.call
    used = cg.load_slot(stack_slot(cg, "used"))
    nused = f.val(f"add <32 x i32> {used}, {splat('i32', model)}")
    over = f.val(f"icmp ugt <32 x i32> {nused}, {cg.bcast(cg.stack_limit, 'i32')}")
    over = f.cast("bitcast", "<32 x i1>", f.val(f"and <32 x i1> {over}, {cg.mv}"), "i32")
    first = next(iter(callee.fn.blocks[0].body), None) if callee.fn.blocks else None
    cg.inst, cg.cur = callee, first or node.call
    if first is None:
        cg.inst = caller
    cg.fail_if(over, Lo.ERR_STACK_OVERFLOW, f.cast("zext", "<32 x i32>", nused, "<32 x i64>"))
    cg.inst, cg.cur = caller, node.call
    writes = transfer_values(cg, node, into_callee=True)
    if node.reentry:
        marker(cg, node, "save")
    for w in writes:
        w()
    cg.inst = caller
    if callee.frame_size:
        lsp = cg.load_slot(stack_slot(cg, "lsp"))
        _masked_set(cg, fp_slot(cg, callee), lsp, cg.mv)
        step = splat("i32", align_up(callee.frame_size, 16))
        _masked_set(cg, stack_slot(cg, "lsp"), f.val(f"add <32 x i32> {lsp}, {step}"), cg.mv)
    _masked_set(cg, stack_slot(cg, "used"), nused, cg.mv)
    push_call(cg, node)


def push_call(cg, node) -> None:
    """The running SIMT entry becomes the continuation (with the calling
    lanes); the callee's entry, reconverging at its return pseudo pc, goes
    on top; go to the callee's first node."""
    f, plan = cg.f, cg.plan
    callee = node.callee
    entry = plan.node_of(callee, callee.fn.blocks[0]).id
    ret = plan.ret_pc(callee)
    sp = f.load("i32", cg.sp_a, 4)
    room = f.fresh_label("callroom")
    f.cbr(f.icmp("uge", "i32", sp, str(cg.stack_depth)), "stackerr", room)
    f.label(room, dominated=True)
    top = cg.stack_entry(f.val(f"sub i32 {sp}, 1"))
    f.store("i32", str(node.next.id), top, 4)
    f.store("i32", cg.m, f.gep(top, 8), 4)
    e = cg.stack_entry(sp)
    f.store("i32", str(entry), e, 4)
    f.store("i32", str(ret), f.gep(e, 4), 4)
    f.store("i32", cg.m, f.gep(e, 8), 4)
    f.store("i32", f.val(f"add i32 {sp}, 1"), cg.sp_a, 4)
    f.store("i32", str(ret), cg.rpc_a, 4)
    f.br(f"N{entry}")


def return_framed(cg, call_node) -> None:
    """At the continuation of a framed call, for the lanes that returned:
    read the return values, pop the frame (a re-entry restores the saved
    chain), write the return values to the caller."""
    f = cg.f
    callee, caller = call_node.callee, call_node.inst
    saved = cg.inst, cg.cur
    cg.cur = call_node.call
    writes = transfer_values(cg, call_node, into_callee=False)
    cg.inst = caller
    used = cg.load_slot(stack_slot(cg, "used"))
    model = splat("i32", frame_model(callee.fn))
    _masked_set(cg, stack_slot(cg, "used"), f.val(f"sub <32 x i32> {used}, {model}"), cg.mv)
    if callee.frame_size:
        _masked_set(cg, stack_slot(cg, "lsp"), cg.load_slot(fp_slot(cg, callee)), cg.mv)
    if call_node.reentry:
        marker(cg, call_node, "restore")
        cg.vcache.clear()
    for w in writes:
        w()
    cg.inst, cg.cur = saved


def transfer_values(cg, call_node, into_callee: bool) -> list:
    """Read the arguments (or return values) now, in the reading instance,
    and return the writes into the other one, to run later: a re-entry
    saves the chain between the two (and the callee may be the caller)."""
    from ptxc.backends.llvm.ops.call_params import reg_param_pairs, store_static, load_static, \
        _static_ptrs
    from ptxc.backends.llvm.ops.resolve import elem_ptrs, gather, scatter
    plan = cg.plan
    call, callee, caller = call_node.call, call_node.callee, call_node.inst
    rets, _, args = decode_call(call)
    pairs = zip(args, callee.fn.params) if into_callee else zip(rets, callee.fn.rets)
    writes = []
    for actual, formal in pairs:
        if formal.space == "reg":
            for item, var in reg_param_pairs(cg, callee, actual, formal):
                if isinstance(item, ir.Sym):
                    raise PtxcError(f"symbol '{item.name}' passed for .reg parameter")
                t = formal.type
                if into_callee:
                    cg.inst = caller
                    v = cg.read(item, t)
                    writes.append(lambda var=var, v=v, t=t: (_at(cg, callee), cg.write_var(var, v, t)))
                else:
                    cg.inst = callee
                    v = cg.read_var(var, t)
                    writes.append(lambda item=item, v=v, t=t: (_at(cg, caller), cg.write(item, v, t)))
            continue
        fplace = plan._place(callee, formal)
        if isinstance(actual, ir.Sym):
            aplace = plan.resolve(caller, call, actual.name)
            src, dst = (aplace, fplace) if into_callee else (fplace, aplace)
            cg.inst = caller        # (memory: placed already; checks name the call)
            size, sp, off, parts = formal.size, _static_ptrs(cg, src, formal.size), 0, []
            for chunk, lt in ((8, "i64"), (4, "i32"), (2, "i16"), (1, "i8")):
                while size - off >= chunk:
                    parts.append((lt, off, gather(cg, lt, elem_ptrs(cg, sp, off), 1, cg.em)))
                    off += chunk

            def put(dst=dst, parts=parts, size=size):
                _at(cg, caller)
                dp = _static_ptrs(cg, dst, size)
                for lt, o, v in parts:
                    scatter(cg, lt, v, elem_ptrs(cg, dp, o), 1, cg.em)
            writes.append(put)
            continue
        t = formal.type if formal.type in ("f32", "f64") else \
            "b%d" % (bits_of(formal.type) if formal.type != "pred" else 32)
        if into_callee:
            cg.inst = caller
            v = cg.read(actual, t)
            writes.append(lambda fplace=fplace, v=v, t=t: (_at(cg, caller), store_static(cg, fplace, v, t)))
        else:
            cg.inst = caller
            v = load_static(cg, fplace, t)
            writes.append(lambda actual=actual, v=v, t=t: (_at(cg, caller), cg.write(actual, v, t)))
    return writes


def _at(cg, inst) -> None:
    cg.inst = inst


# ----------------------------------------------------- saving the chain
def marker(cg, node, kind: str) -> None:
    """Mark where the save (or restore) of ``node``'s chain goes: its code
    is written when the function is assembled (:func:`fill_markers`), once
    every register slot of the chain exists."""
    cg.stack_markers.append((len(cg.f.lines), kind, node, cg.m, cg.mv))


def chain_state(cg, chain) -> tuple[list, list]:
    """(register slots, static .param/.reg variables) of the instances of ``chain``."""
    ids = {inst.id for inst in chain}
    slots = []
    for key, s in cg.plan.slots.items():
        owner = key[1] if key and key[0] in ("provenance",) else key[0] if key else None
        if owner in ids:
            slots.append(s)
    slots.sort(key=lambda s: s.index)
    placed = sorted((p for (owner, _), p in cg.plan._placed.items()
                     if owner in ids and p.per_lane and p.frame is None),
                    key=lambda p: p.offset)
    return slots, placed


def fill_markers(cg) -> None:
    """Write the save and restore code of every marker (codegen._assemble)."""
    f = cg.f
    cg.save_record = 0
    for at, kind, node, m, mv in sorted(cg.stack_markers, key=lambda x: -x[0]):
        lines, f.lines = f.lines, []
        record = _save_restore(cg, node, kind, m, mv)
        cg.save_record = max(cg.save_record, record)
        code, f.lines = f.lines, lines
        f.lines[at:at] = code


def _record_layout(cg, chain):
    slots, placed = chain_state(cg, chain)
    items, off = [], 0
    for s in slots:
        n = 4 if s.bits == 1 else 32 * s.bits // 8
        items.append(("slot", s, off))
        off = align_up(off + n, 8)
    for p in placed:
        size, o = max(p.var.size, 1), 0
        for chunk, lt in ((8, "i64"), (4, "i32"), (2, "i16"), (1, "i8")):
            while size - o >= chunk:
                items.append(("var", (p.offset + o, lt, chunk), off))
                off = align_up(off + 32 * chunk, 8)
                o += chunk
    return items, align_up(off, 64)


def _local_ptrs(cg, offset: int) -> str:
    """Each lane's host pointer to its local memory at ``offset``."""
    f = cg.f
    sz = cg.bcast(cg.seg_size["local"], "i64")
    lane = f.cast("zext", "<32 x i32>", LANE_IDS, "<32 x i64>")
    off = f.val(f"add <32 x i64> {f.val(f'mul <32 x i64> {lane}, {sz}')}, {splat('i64', offset)}")
    return f.val(f"getelementptr i8, <32 x ptr> {cg.bcast(cg.seg_base['local'], 'ptr')}, <32 x i64> {off}")


def _save_restore(cg, node, kind: str, m: str, mv: str) -> int:
    from ptxc.backends.llvm.ops.resolve import gather, scatter
    f = cg.f
    items, record = _record_layout(cg, node.chain)
    svp_slot = stack_slot(cg, "svp")
    lane = f.call("i32", "llvm.cttz.i32", [("i32", m), ("i1", "false")])
    lane = f.val(f"and i32 {lane}, 31")
    svp_v = f.load("<32 x i32>", cg.slot_ptr(svp_slot), 8)
    svp = f.val(f"extractelement <32 x i32> {svp_v}, i32 {lane}")
    start = svp if kind == "save" else f.val(f"sub i32 {svp}, {record}")
    base = f.gep("%savearea", f.cast("zext", "i32", start, "i64"))
    for what, x, off in items:
        p = f.gep(base, off)
        if what == "slot":
            sp = cg.slot_ptr(x)
            V = vt(ity(x.bits))
            if kind == "save":
                v = f.load(V, sp, 8)
                if x.bits == 1:
                    f.store("i32", f.cast("bitcast", V, v, "i32"), p, 4)
                else:
                    f.store(V, v, p, 8)
            else:
                if x.bits == 1:
                    v = f.cast("bitcast", "i32", f.load("i32", p, 4), V)
                else:
                    v = f.load(V, p, 8)
                f.store(V, f.select("<32 x i1>", mv, V, v, f.load(V, sp, 8)), sp, 8)
        else:
            loc, lt, _ = x
            ptrs = _local_ptrs(cg, loc)
            if kind == "save":
                f.store(vt(lt), gather(cg, lt, ptrs, 1, mv), p, 8)
            else:
                scatter(cg, lt, f.load(vt(lt), p, 8), ptrs, 1, mv)
    end = f.val(f"add i32 {svp}, {record}") if kind == "save" else start
    f.store("<32 x i32>", f.select("<32 x i1>", mv, "<32 x i32>", cg.bcast(end, "i32"), svp_v),
            cg.slot_ptr(svp_slot), 8)
    return record


def stack_info(cg) -> dict | None:
    """What a launch of a recursive kernel sizes its stacks by (runtime.Launch):
    the smallest frame a call pushes, the largest local frame and the
    largest save record (bytes for the whole warp)."""
    plan = cg.plan
    if not plan.recursive:
        return None
    return {"min_frame": min(frame_model(n.callee.fn) for n in plan.framed_calls),
            "local_frame": max(align_up(n.callee.frame_size, 16) for n in plan.framed_calls),
            "save_record": getattr(cg, "save_record", 0)}


def stack_sizes(info: dict, stack_size: int) -> tuple[int, int]:
    """(local stack bytes per lane, save-area bytes per warp) of a launch
    whose threads have ``stack_size`` bytes of stack: every framed call
    pushes at least ``min_frame`` bytes, so at most stack_size // min_frame
    activations are live."""
    levels = stack_size // max(1, info["min_frame"]) + 1
    return levels * info["local_frame"], align_up(levels * info["save_record"], 256)
