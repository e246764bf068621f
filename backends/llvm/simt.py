"""SIMT control flow of the generated ``run_warp`` (mixin of KernelCodegen).

GPGPU-Sim's immediate-post-dominator reconvergence stack (Fung et al.,
"Dynamic Warp Formation and Scheduling", MICRO 2007), as METRICS.md
prescribes. The stack lives in the warp state (entries pc, reconvergence pc,
mask); the top entry's mask and reconvergence pc are kept in locals.

* ``dispatcher``: pops entries without live lanes (or already at their
  reconvergence point) and jumps to the top entry's node.
* ``goto``: a jump to node T pops the stack when T is the current
  reconvergence pc, so the reconvergence entry (all lanes) runs next.
* ``cond_branch``: all lanes agree -> jump; otherwise count a divergent
  branch, turn the top entry into the reconvergence entry (or drop it when it
  already reconverges at the same point) and push the not-taken and taken
  paths; a path whose target is the reconvergence point is not pushed.
* ``exit_like``: ret/exit lanes join the exited mask for good; ``ret`` in an
  inlined callee jumps to the call's continuation.
* ``barrier``: save the resume point and return ST_BARRIER (the CTA loop
  releases the warps); ``enter_call``: copy arguments, enter the callee.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import splat
from ptxc.passes.slice.memory_deps import CDP_EXTERNS as CDP_NAMES


class SimtMixin:
    """Control-flow lowering; expects the KernelCodegen attributes."""

    # -------------------------------------------------------- dispatcher
    def stack_entry(self, sp_minus_1: str) -> str:
        f = self.f
        off = f.val(f"mul i32 {sp_minus_1}, {Lo.STACK_ENTRY}")
        off64 = f.cast("zext", "i32", off, "i64")
        base = f.gep("%ws", Lo.WS_STACK)
        return f.gep(base, off64)

    def dispatcher(self) -> None:
        f = self.f
        f.label("dispatch")
        sp = f.load("i32", self.sp_a, 4)
        f.cbr(f.icmp("eq", "i32", sp, "0"), "done", "dispatch.top")
        f.label("dispatch.top")
        i = f.val(f"sub i32 {sp}, 1")
        e = self.stack_entry(i)
        pc = f.load("i32", e, 4)
        rpc = f.load("i32", f.gep(e, 4), 4)
        em = f.load("i32", f.gep(e, 8), 4)
        ex = f.load("i32", self.ex_a, 4)
        m = f.val(f"and i32 {em}, {f.val(f'xor i32 {ex}, -1')}")
        pop = f.val(f"or i1 {f.icmp('eq', 'i32', m, '0')}, {f.icmp('eq', 'i32', pc, rpc)}")
        f.cbr(pop, "dispatch.pop", "dispatch.go")
        f.label("dispatch.pop")
        f.store("i32", i, self.sp_a, 4)
        f.br("dispatch")
        f.label("dispatch.go")
        f.store("i32", m, self.mask_a, 4)
        f.store("i32", rpc, self.rpc_a, 4)
        self.dispatch_pc = pc
        self.dispatch_at = len(f.lines)      # the switch is inserted here at the end
        f.label("popdispatch")
        sp2 = f.load("i32", self.sp_a, 4)
        f.store("i32", f.val(f"sub i32 {sp2}, 1"), self.sp_a, 4)
        f.br("dispatch")

    def switch_text(self) -> str:
        cases = [f"i32 {n.id}, label %N{n.id}" for n in self.plan.nodes]
        cases += [f"i32 {self.n_nodes + k}, label %{lab}" for k, lab in enumerate(self.resume_labels)]
        cases.append(f"i32 {Lo.EXIT_PC}, label %exitlanes")
        return f"  switch i32 {self.dispatch_pc}, label %badpc [ " + " ".join(cases) + " ]"

    # ------------------------------------------------------- control flow
    def goto(self, pc: int) -> None:
        """Continue at node ``pc`` with the current mask (pop at reconvergence)."""
        f = self.f
        if pc == Lo.EXIT_PC:
            f.store("i32", self.m, self.mask_a, 4)
            return f.br("exitlanes")
        r = f.load("i32", self.rpc_a, 4)
        target = f"N{pc}" if pc < self.n_nodes else "badpc"    # a return pseudo pc pops
        f.cbr(f.icmp("eq", "i32", r, str(pc)), "popdispatch", target)

    def end_block(self, node, term) -> None:
        plan, blk, inst = self.plan, node.block, node.inst
        if term is None:
            if blk.fallthrough is not None:
                return self.goto(plan.node_of(inst, blk.fallthrough).id)
            return self.leave_function(node)
        self.cur = term
        op = term.opcode
        if op == "bra":
            target = next(o.block for o in term.srcs if isinstance(o, ir.LabelRef))
            t_pc = plan.node_of(inst, target).id
            if term.guard is None:
                return self.goto(t_pc)
            ft = blk.fallthrough
            f_pc = plan.node_of(inst, ft).id if ft is not None else self.after_function(inst)
            return self.cond_branch(term, t_pc, f_pc, node, counted=True)
        if op == "brx":
            return self.brx(term, node)
        if op in ("ret", "exit", "trap"):
            return self.exit_like(term, node)
        return self.goto(plan.node_of(inst, blk.fallthrough).id)

    def after_function(self, inst) -> int:
        return self.plan.ret_pc(inst)

    def leave_function(self, node) -> None:
        """Falling off the end of a function body: like ``ret``."""
        if node.inst.parent is not None:
            return self.goto(self.plan.ret_pc(node.inst))
        f = self.f
        ex = f.load("i32", self.ex_a, 4)
        f.store("i32", f.val(f"or i32 {ex}, {self.m}"), self.ex_a, 4)
        f.br("dispatch")

    def exit_like(self, term, node) -> None:
        f, inst = self.f, node.inst
        eff = self.guard_mask(term) if term.guard is not None else self.mv
        effi = f.cast("bitcast", "<32 x i1>", eff, "i32")
        if term.opcode == "trap":
            self.fail_if(effi, Lo.ERR_TRAP, "zeroinitializer")
        if term.opcode == "ret" and inst.parent is not None:
            ret = self.plan.ret_pc(inst)
            if term.guard is None:
                return self.goto(ret)
            ft = self.plan.node_of(inst, node.block.fallthrough).id
            return self.cond_branch(term, ret, ft, node, counted=False, eff=eff)
        ex = f.load("i32", self.ex_a, 4)
        f.store("i32", f.val(f"or i32 {ex}, {effi}"), self.ex_a, 4)
        if term.guard is None or node.block.fallthrough is None:
            return f.br("dispatch")
        rest = f.val(f"and i32 {self.m}, {f.val(f'xor i32 {effi}, -1')}")
        go = f.fresh_label("rest")
        f.cbr(f.icmp("eq", "i32", rest, "0"), "dispatch", go)
        f.label(go, dominated=True)
        f.store("i32", rest, self.mask_a, 4)
        self.goto(self.plan.node_of(inst, node.block.fallthrough).id)

    def cond_branch(self, term, t_pc: int, f_pc: int, node, counted: bool, eff=None) -> None:
        f = self.f
        if eff is None:
            eff = self.guard_mask(term)
        taken = f.cast("bitcast", "<32 x i1>", eff, "i32")
        m = self.m
        nt = f.val(f"and i32 {m}, {f.val(f'xor i32 {taken}, -1')}")
        base = None
        if counted:
            base = self.branch_counters(term)
            f.call("void", "ptxc_branch", [("ptr", "%cnt"), ("i64", str(base)), ("i32", m), ("i32", taken)])
        l_all, l_some, l_none, l_div = (f.fresh_label(x) for x in ("all", "some", "none", "div"))
        f.cbr(f.icmp("eq", "i32", taken, m), l_all, l_some)
        f.label(l_all, dominated=True)
        self.goto(t_pc)
        f.label(l_some, dominated=True)
        f.cbr(f.icmp("eq", "i32", taken, "0"), l_none, l_div)
        f.label(l_none, dominated=True)
        self.goto(f_pc)
        f.label(l_div, dominated=True)
        if counted:
            self.bump(base + 4, "1")
        rpc = self.plan.reconvergence_pc(node.inst, node.block)
        self.diverge(rpc, [(f_pc, nt), (t_pc, taken)])

    def branch_counters(self, term) -> int:
        iid = self.plan.instr_id(self.inst, term)
        if iid not in self.branch_ctr:
            self.branch_ctr[iid] = self.new_counters(5)
        return self.branch_ctr[iid]

    def diverge(self, rpc: int, paths: list[tuple[int, str]]) -> None:
        """Push ``paths`` (pc, mask) with reconvergence pc ``rpc``; the last runs first."""
        f = self.f
        if len(paths) == 2:
            (pf, mf), (pt, mt) = paths
            sp = f.call("i32", "ptxc_diverge", [
                ("ptr", "%ws"), ("i32", f.load("i32", self.sp_a, 4)), ("i32", f.load("i32", self.rpc_a, 4)),
                ("i32", str(rpc)), ("i32", str(pf)), ("i32", mf), ("i32", str(pt)), ("i32", mt),
                ("i32", str(self.stack_depth))])
            f.store("i32", sp, self.sp_a, 4)
            return f.cbr(f.icmp("slt", "i32", sp, "0"), "stackerr", "dispatch")
        sp = f.load("i32", self.sp_a, 4)
        top = self.stack_entry(f.val(f"sub i32 {sp}, 1"))
        cur_rpc = f.load("i32", self.rpc_a, 4)
        same = f.icmp("eq", "i32", cur_rpc, str(rpc))
        f.store("i32", f.select("i1", same, "i32", f.load("i32", top, 4), str(rpc)), top, 4)
        sp = f.select("i1", same, "i32", f.val(f"sub i32 {sp}, 1"), sp)
        room = f.fresh_label("room")
        f.cbr(f.icmp("ugt", "i32", sp, str(self.stack_depth - len(paths))), "stackerr", room)
        f.label(room, dominated=True)
        for pc, mask in paths:
            if pc == rpc:
                continue
            e = self.stack_entry(sp)
            f.store("i32", str(pc), e, 4)
            f.store("i32", str(rpc), f.gep(e, 4), 4)
            f.store("i32", mask, f.gep(e, 8), 4)
            if mask != "-1":
                keep = f.icmp("ne", "i32", mask, "0")
                sp = f.val(f"add i32 {sp}, {f.cast('zext', 'i1', keep, 'i32')}")
            else:
                sp = f.val(f"add i32 {sp}, 1")
        f.store("i32", sp, self.sp_a, 4)
        f.br("dispatch")

    def brx(self, term, node) -> None:
        f = self.f
        eff = self.guard_mask(term) if term.guard is not None else self.mv
        names = term.block.function.attrs.get("btargets", {}).get(term.srcs[-1].name, [])
        targets = [self._label_block(node, n) for n in names]
        idx = self.read(term.srcs[0], "u32")
        base = self.branch_counters(term)
        m = self.m
        self.bump(base, "1")
        self.bump(base + 1, self.popc(m))
        self.bump(base + 2, self.popc(m))
        bad = f.val(f"icmp uge <32 x i32> {idx}, {splat('i32', len(targets))}")
        badm = f.val(f"and <32 x i1> {bad}, {eff}")
        idx64 = f.cast("zext", "<32 x i32>", idx, "<32 x i64>")
        self.fail_if(f.cast("bitcast", "<32 x i1>", badm, "i32"), Lo.ERR_OOB, idx64)
        paths, nonempty = [], "0"
        for k in reversed(range(len(targets))):
            hit = f.val(f"icmp eq <32 x i32> {idx}, {splat('i32', k)}")
            mk = f.cast("bitcast", "<32 x i1>", f.val(f"and <32 x i1> {hit}, {eff}"), "i32")
            nz = f.cast("zext", "i1", f.icmp("ne", "i32", mk, "0"), "i32")
            nonempty = f.val(f"add i32 {nonempty}, {nz}")
            paths.append((self.plan.node_of(node.inst, targets[k]).id, mk))
        div = f.icmp("ugt", "i32", nonempty, "1")
        self.bump(base + 4, f.cast("zext", "i1", div, "i64"))
        rpc = self.plan.reconvergence_pc(node.inst, node.block)
        self.diverge(rpc, paths)

    def _label_block(self, node, name: str):
        for b in node.inst.fn.blocks:
            if b.label == name:
                return b
        raise KeyError(name)

    # ----------------------------------------------------------- barriers
    def barrier(self, ins) -> None:
        """CTA barrier: save the warp, return ST_BARRIER, resume here."""
        from ptxc.backends.llvm.instruments.check_hooks import race_resume_hook
        from ptxc.backends.llvm.ops.warp import barrier_arrive, barrier_resume
        mods = ins.mods
        if "arrive" in mods or "warp" in mods:
            return
        f = self.f
        self.has_barrier = True
        go, skip = f.fresh_label("bar"), f.fresh_label("barskip")
        f.cbr(f.icmp("ne", "i32", self.emi, "0"), go, skip)
        f.label(go, dominated=True)
        if self.keep(ins):
            barrier_arrive(self, ins)
        label, _ = self.resume_point()
        f.br("save")
        f.label(label)
        self.set_mask(f.load("i32", self.mask_a, 4))
        if self.checks:
            race_resume_hook(self, ins)         # racecheck: a named barrier's phase acquired
        if self.keep(ins):
            barrier_resume(self, ins)
        f.br(skip)
        f.label(skip)
        self.set_mask(f.load("i32", self.mask_a, 4))

    def resume_point(self) -> tuple[str, str]:
        """(a new resume label, the stack depth): the stack top's pc becomes
        the label's dispatch id, so the next call of run_warp continues there
        (a barrier's or a yield's continuation)."""
        f = self.f
        k = len(self.resume_labels)
        label = f"resume{k}"
        self.resume_labels.append(label)
        sp = f.load("i32", self.sp_a, 4)
        f.store("i32", str(self.n_nodes + k), self.stack_entry(f.val(f"sub i32 {sp}, 1")), 4)
        return label, sp

    def yield_if(self, lanes_i32: str) -> None:
        """If any lane of ``lanes_i32`` is set: save the warp and return
        ST_YIELD (the CTA loop runs the other warps, then resumes here)."""
        f = self.f
        go, skip = f.fresh_label("yield"), f.fresh_label("yieldskip")
        f.cbr(f.icmp("ne", "i32", lanes_i32, "0"), go, skip)
        f.label(go, dominated=True)
        label, sp = self.resume_point()
        self.yield_to_sibling(sp)
        f.label(label)
        self.set_mask(f.load("i32", self.mask_a, 4))
        f.br(skip)
        f.label(skip)
        self.set_mask(f.load("i32", self.mask_a, 4))

    def yield_to_sibling(self, sp: str) -> None:
        """A diverged warp whose path yields first lets a sibling path run
        (the stack entry below with the same reconvergence pc: swap the two
        entries and dispatch), once per call of run_warp; otherwise it
        returns ST_YIELD. Without this, a path spinning on an mbarrier that
        lanes of its own warp's other path must arrive at would never end
        (the reconvergence stack runs one path to its end first)."""
        f = self.f
        if not hasattr(self, "swapped_a"):
            self.swapped_a = f.alloca("i32", "swapped", 4)
            f.entry.append(f"  store i32 0, ptr {self.swapped_a}, align 4")
        deep = f.icmp("uge", "i32", sp, "2")
        fresh = f.icmp("eq", "i32", f.load("i32", self.swapped_a, 4), "0")
        try_swap, swap = f.fresh_label("sib"), f.fresh_label("sibswap")
        f.cbr(f.val(f"and i1 {deep}, {fresh}"), try_swap, "yieldsave")
        f.label(try_swap, dominated=True)
        top = self.stack_entry(f.val(f"sub i32 {sp}, 1"))
        below = self.stack_entry(f.val(f"sub i32 {sp}, 2"))
        same = f.icmp("eq", "i32", f.load("i32", f.gep(top, 4), 4), f.load("i32", f.gep(below, 4), 4))
        f.cbr(same, swap, "yieldsave")
        f.label(swap, dominated=True)
        a, b = f.load("<4 x i32>", top, 4), f.load("<4 x i32>", below, 4)
        f.store("<4 x i32>", b, top, 4)
        f.store("<4 x i32>", a, below, 4)
        f.store("i32", "1", self.swapped_a, 4)
        f.br("dispatch")

    # -------------------------------------------------------------- calls
    def enter_call(self, node) -> None:
        from ptxc.backends.llvm.ops.call_params import copy_params
        callee = node.callee
        if node.indirect is not None:                # through a function pointer
            from ptxc.backends.llvm.ops.indirect_calls import enter_indirect
            return enter_indirect(self, node)
        if callee is not None and callee.framed:      # a call stack (recursion)
            from ptxc.backends.llvm.ops.call_frames import enter_framed
            return enter_framed(self, node)
        if callee is not None:
            self.lower(node.call, lambda cg, n: copy_params(cg, n, into_callee=True), node)
            self.inst = node.inst
            return self.goto(self.plan.node_of(callee, callee.fn.blocks[0]).id)
        else:
            self.cur = node.call
            why = self.plan.no_callee.get(id(node.call), "call")
            if why in ("builtin vprintf", "builtin __assertfail", "builtin __assert_fail"):
                from ptxc.backends.llvm.ops.builtin import device_call
                self.lower(node.call, device_call, node, why.split()[1])
            elif why in ("builtin malloc", "builtin free"):
                from ptxc.backends.llvm.ops.heap_calls import builtin_heap
                builtin_heap(self, node, why.split()[1])
            elif why.startswith("builtin ") and why.split()[1] in CDP_NAMES:
                from ptxc.backends.llvm.ops.cdp_calls import cdp_call
                self.lower(node.call, cdp_call, node, why.split()[1])
            else:
                self.unsupported(node.call, why)
            return self.goto(node.next.id)

    def copy_returns(self, call_node) -> None:
        from ptxc.backends.llvm.ops.call_params import copy_params
        if call_node is not None and call_node.callee.framed:
            from ptxc.backends.llvm.ops.call_frames import return_framed
            return return_framed(self, call_node)
        if call_node is not None:
            self.lower(call_node.call, lambda cg, n: copy_params(cg, n, into_callee=False), call_node)
