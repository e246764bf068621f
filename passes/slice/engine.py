"""The backward slice closure: a worklist over use-def edges (Weiser 1981).

Weiser's static slice of a program with respect to a criterion is the set of
statements that may affect the criterion's values. On SSA form the data part
is a walk over use-def edges (each value has one definition); control
dependence (Ottenstein & Ottenstein's program dependence graph) comes for free
here because every branch is itself a criterion, so every instruction's
controlling branches are always in the slice.

Closure rules, applied to each instruction the first time it is kept:

1. every value it reads (``operand_values``: sources, address bases, the
   guard, the old value of a guarded definition, the carry flag) keeps its
   defining instruction or phi;
2. every memory read keeps every write that may reach it (slice_memory);
3. an ``ld.param`` of a ``.func`` parameter keeps, at each call site in the
   universe, what the argument was stored from; an ``ld.param`` of a call's
   return variable keeps the callee's ``st.param`` to that return parameter
   (Horwitz-Reps-Binkley parameter edges, context-insensitive);
4. an external call that is kept for its result or its memory effect keeps
   all of its arguments (and the memory it may read); so does every kept
   ``vprintf`` / ``__assertfail`` / ``__assert_fail``: what they print is
   host-visible output (docs/runtime.md); so does every device-side launch
   (``__cudaCDP2LaunchDeviceV2``), whose parameter buffer the launched grid
   reads, and every call of the device runtime keeps the arguments of all
   of them (one state: parameter buffers, pending launches, last errors).

Each instruction, bucket and parameter edge is processed once: O(size of the
universe + its uses + its accesses).
"""
from __future__ import annotations

from ptxc import ir

from ptxc.passes.memory.access import GENERIC, Access
from ptxc.passes.slice.calls import CallSite, decode_call
from ptxc.passes.slice.memory_deps import (CDP_EXTERNS, CDP_LAUNCH, HEAP_EXTERNS, PURE_EXTERNS,
                                           MemoryIndex)

# calls whose arguments are printed, or read as a launched grid's parameters
HOST_OUTPUT = ("vprintf", "__assertfail", "__assert_fail") + CDP_LAUNCH

class Slicer:
    """The slice of one universe (a kernel and the functions it can reach)."""

    def __init__(self, program, funcs: list, criteria: str, facts, rules, addresses: bool = False,
                 faults: str = "unchecked"):
        self.program = program
        self.funcs = funcs
        self.criteria = criteria
        self.addresses = addresses
        self.faults = faults
        self.facts = facts
        self.in_universe = {id(f) for f in funcs}
        self.memory = MemoryIndex(funcs, rules, facts.regions, lambda fn: facts.writes(fn, rules))
        self.kept: set[int] = set()
        self.kept_instrs: list = []
        self.reads_kernel_writes = False    # a kept read may see a global write (CTA order)
        self._work: list = []
        self._done: set = set()

    # ---------------------------------------------------------- worklist
    def keep(self, ins) -> None:
        if id(ins) not in self.kept:
            self.kept.add(id(ins))
            self.kept_instrs.append(ins)
            self._work.append(ins)

    def keep_value(self, v) -> None:
        if isinstance(v, ir.Result):
            self.keep(v.instr)
            if v.instr.opcode == "call":
                self._need_reg_ret(v.instr)

    def keep_all(self, instrs) -> None:
        for ins in instrs:
            self.keep(ins)
            if ins.opcode == "call":
                self._extern_effect(decode_call(ins))

    def run(self) -> "Slicer":
        self._seed()
        return self.drain()

    def drain(self) -> "Slicer":
        while self._work:
            self._visit(self._work.pop())
        return self

    def absorb(self, kept: set) -> bool:
        """Keep (and close) instructions of this universe that another
        universe kept; True if any was new here. Marks are one per
        instruction, so the union of all universes must be closed in each."""
        new = [ins for fn in self.funcs for ins in fn.instructions()
               if id(ins) in kept and id(ins) not in self.kept]
        for ins in new:
            self.keep(ins)
        self.drain()
        return bool(new)

    def _seed(self) -> None:
        for fn in self.funcs:
            for seed in self.facts.seeds(fn, self.criteria, self.addresses, self.faults):
                if isinstance(seed, ir.Value):
                    self.keep_value(seed)
                else:
                    self.keep(seed)
                    if seed.opcode == "call":
                        self._heap_call(decode_call(seed))

    def _visit(self, ins) -> None:
        for v in ins.operand_values():
            self.keep_value(v)
        if ins.opcode == "call":
            self._host_output(ins)
            return
        if ins.info is None or not ins.info.reads_mem:
            return
        fn = ins.block.function
        for acc in self.facts.reads(ins):
            if acc.space == "param":
                self._param_read(ins, acc, fn)
                continue
            self.keep_all(self.memory.writers(ins, acc, fn))
            if not self.reads_kernel_writes:
                self.reads_kernel_writes = self.memory.may_see_device_write(ins, acc, fn)
            if acc.space in ("local", GENERIC) and not fn.is_kernel:
                for i in self.facts.taken_params(fn):   # byval params live in .local
                    self._need_param(fn, i)

    def _once(self, key) -> bool:
        if key in self._done:
            return False
        self._done.add(key)
        return True

    # -------------------------------------------------- parameters, calls
    def _param_read(self, ins, acc: Access, fn) -> None:
        base = acc.addr.base if acc.addr is not None else None
        if not isinstance(base, ir.Sym):
            for i in range(len(fn.params)):
                self._need_param(fn, i)
            return
        var = self.program.resolve(ins, base.name)
        if var is None:
            return
        role = self.program.function_of_var(fn, var)
        if role is not None and role[0] == "param":
            self._need_param(fn, role[1])
            return
        self.keep_all(self.memory.param_writers.get(id(var), ()))
        for site, j in self.memory.ret_sites.get(id(var), ()):
            self.keep(site.instr)
            self._need_ret(site, j)

    def _sites_calling(self, fn) -> list[CallSite]:
        return [s for s in self.program.callers.get(fn.name, ())
                if id(s.instr.block.function) in self.in_universe]

    def _need_param(self, fn, i: int) -> None:
        if fn.is_kernel or not self._once(("param", id(fn), i)):
            return
        for site in self._sites_calling(fn):
            self.keep(site.instr)
            self._need_arg(site, i)
        if i in self.facts.taken_params(fn):
            self.keep_all(self.memory.writers(fn.params[i], Access("r", "local"), fn))

    def _need_arg(self, site: CallSite, i: int) -> None:
        if i >= len(site.args):
            return
        op = site.args[i]
        if isinstance(op, ir.Sym):
            var = self.program.resolve(site.instr, op.name)
            if var is not None:
                self.keep_all(self.memory.param_writers.get(id(var), ()))
        for v in ir.values_in(op):
            self.keep_value(v)

    def _need_ret(self, site: CallSite, j: int) -> None:
        if not self._once(("ret", id(site.instr), j)):
            return
        for callee in self.program.callees_of_site(site):
            if id(callee) in self.in_universe and j < len(callee.rets):
                self.keep_all(self.memory.param_writers.get(id(callee.rets[j]), ()))
        if self.program.is_external(site):
            self._extern_result(site)

    def _need_reg_ret(self, call) -> None:
        """A call's register result (``.func (.reg .u32 r) f``) is needed: keep
        every definition of the callee's return registers (a superset of
        those reaching its ``ret``s; the IR links no value to ``ret``)."""
        if not self._once(("regret", id(call))):
            return
        site = decode_call(call)
        for callee in self.program.callees_of_site(site):
            if id(callee) in self.in_universe:
                names = {r.name for r in callee.rets if r.space == "reg"}
                for ins in self.facts.reg_defs(callee, frozenset(names)):
                    self.keep(ins)
        if self.program.is_external(site):
            self._extern_result(site)

    def _host_output(self, call) -> None:
        """A kept ``vprintf`` / ``__assertfail`` prints what its arguments
        point to (the format, the argument buffer in .local memory, strings):
        keep its arguments and every write that a generic read may see."""
        site = decode_call(call)
        if site.callee_name in HOST_OUTPUT and self.program.is_external(site):
            self._extern_effect(site)
            self.keep_all(self.memory.writers(call, Access("r", GENERIC), call.block.function))

    def _extern_effect(self, site: CallSite) -> None:
        """A kept external call's memory writes depend on all its arguments."""
        if self.program.is_external(site) and self._once(("effect", id(site.instr))):
            for i in range(len(site.args)):
                self._need_arg(site, i)
            self.keep_value(site.target if isinstance(site.target, ir.Value) else None)

    def _heap_call(self, site: CallSite) -> None:
        """malloc and free change the device heap, which later calls and later
        launches see: every such call runs with its arguments in every
        slice, so hybrid and full runs hand out the same addresses."""
        if site.callee_name in HEAP_EXTERNS + CDP_EXTERNS and self.program.is_external(site):
            self._extern_effect(site)

    def _extern_result(self, site: CallSite) -> None:
        """An external call's result may depend on its arguments, on every
        earlier call of the same function (allocator state) and on memory."""
        name = site.callee_name or "<indirect>"
        group = HEAP_EXTERNS if name in HEAP_EXTERNS else CDP_EXTERNS if name in CDP_EXTERNS else (name,)
        others = [o for n in group for o in self.memory.extern_sites.get(n, [])] or [site]
        for other in others:
            if self._once(("effect", id(other.instr))):
                self.keep(other.instr)
                for i in range(len(other.args)):
                    self._need_arg(other, i)
        if name not in PURE_EXTERNS:
            fn = site.instr.block.function
            self.keep_all(self.memory.writers(site.instr, Access("r", GENERIC), fn))
