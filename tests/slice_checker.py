"""An independent checker for slice marks (written apart from passes/slice*).

Given a module whose instructions carry ``attrs['slice']``, check that

1. every criterion is kept: each ``bra``/``brx``/``ret``/``exit``/``trap``,
   each ``call``, each CTA barrier, and the definition of every guard (of
   every guarded instruction when the slice used criteria=counters, else of
   terminators, barriers, calls and warp collectives);
2. the kept set is closed:
   * data: every SSA value a kept instruction reads (sources, address bases,
     guard, old value of a guarded definition, carry) is defined by a kept
     instruction or phi;
   * control: every block a kept instruction is control dependent on ends in
     a kept branch (checked with the control-dependence analysis when it is
     available);
   * register returns: a kept use of a call's register result has every
     write of the callee's ``.reg`` return registers kept;
   * byval parameters: a kept local or generic read in a ``.func`` whose
     parameter's address is taken has that parameter's arguments kept;
   * parameters: a kept ``ld.param`` of a call's return variable has its call
     and the callee's stores to that return parameter kept; a kept
     ``ld.param`` of a function parameter has, at every call site, the stores
     to the matching argument kept; stores to a local ``.param`` variable
     read by a kept ``ld.param`` are kept;
   * memory (only for memory=conservative): for every kernel, in the set of
     functions it can reach, every write in a space that a kept read's space
     may alias (generic ~ global/shared/local) is kept.

``check_module(module)`` returns a list of messages; empty means the marks
are a sound slice by these rules.
"""
from __future__ import annotations

from ptxc import ir

TERMINATORS = {"bra", "brx", "ret", "exit", "trap"}
WARP_OPS = {"shfl", "vote", "match", "redux", "activemask", "elect", "mma", "wgmma", "wmma"}
NO_WRITE_EXTERNS = {"vprintf", "__assertfail", "__assert_fail", "malloc", "free"}
CP_BOOKKEEPING = {"commit_group", "wait_group", "wait_all", "prefetch", "wait_group_read"}


def kept(ins) -> bool:
    return bool(ins.attrs.get("slice"))


def where(ins) -> str:
    fn = ins.block.function.name if ins.block is not None else "?"
    return f"@{fn} {ins.loc}: {ins.full_opcode}"


# ------------------------------------------------------------- spaces

def space_words(mods) -> list[str]:
    out = []
    for m in mods:
        for name in ("global", "shared", "local", "param", "const"):
            if m == name or m.startswith(name + "::") or (name == "const" and m.startswith("const[")):
                out.append(name)
    return out


def mem_effects(ins) -> tuple[set, set]:
    """(spaces read, spaces written) by one non-call instruction."""
    op, mods = ins.opcode, ins.mods
    words = space_words(mods)
    first = words[0] if words else "generic"
    if op in ("ld", "ldu"):
        return {first}, set()
    if op == "st":
        return set(), {first}
    if op in ("atom", "red", "mbarrier"):
        return {first}, {first}
    if op == "ldmatrix":
        return {words[0] if words else "shared"}, set()
    if op == "stmatrix":
        return set(), {words[0] if words else "shared"}
    if op == "wmma":
        return ({first}, set()) if "load" in mods else ((set(), {first}) if "store" in mods else (set(), set()))
    if op == "cp":
        if CP_BOOKKEEPING & set(mods):
            return set(), set()
        dst = words[0] if words else "generic"
        src = words[1] if len(words) > 1 else dst
        reads_, writes_ = {src}, {dst}
        if "reduce" in mods:
            reads_.add(dst)
        n_addr = sum(isinstance(s, ir.Addr) for s in ins.srcs)
        if n_addr > 2:
            reads_.add("shared")
            writes_.add("shared")
        return reads_, writes_
    if op in ("tex", "tld4", "suld"):
        return {"global"}, set()
    if op in ("sust", "sured"):
        return set(), {"global"}
    return set(), set()


def may_see(read_space: str, write_space: str) -> bool:
    if read_space in ("const", "param"):
        return False
    if read_space == "generic":
        return write_space in ("global", "shared", "local", "generic")
    return write_space in (read_space, "generic")


# ------------------------------------------------------------- calls

def call_parts(ins):
    rets, target, args = [], None, []
    for d in ins.dsts:
        if isinstance(d, ir.ParenList):
            rets = d.items
    for s in ins.srcs:
        if target is None:
            if isinstance(s, ir.ParenList):
                rets = s.items
            else:
                target = s
        elif isinstance(s, ir.ParenList):
            args = s.items
            break
    return rets, target, args


def lookup(ins, name, module):
    scope = ins.scope
    while scope is not None:
        for v in scope.vars:
            if v.name == name:
                return v
        scope = scope.parent
    fn = ins.block.function
    for v in list(fn.params) + list(fn.rets):
        if v.name == name:
            return v
    for v in module.globals:
        if v.name == name:
            return v
    return None


def sym_of(ins):
    for s in ins.srcs:
        if isinstance(s, ir.Addr) and isinstance(s.base, ir.Sym):
            return s.base.name
    return None


class Checker:
    def __init__(self, module, memory="conservative", criteria="counters"):
        self.module = module
        self.memory = memory
        self.criteria = criteria
        self.funcs = [f for f in module.functions if not f.is_decl]
        self.by_name = {f.name: f for f in self.funcs}
        self.errors: list[str] = []
        self.reg_checked: set[int] = set()
        self.taken_by_fn: dict[str, set] = {}
        self.args_checked: set = set()
        self.calls = [(f, i) for f in self.funcs for i in f.instructions() if i.opcode == "call"]
        self.taken = {s.name for f in self.funcs for i in f.instructions()
                      if i.opcode in ("mov", "cvta") for s in i.srcs if isinstance(s, ir.Sym)}

    def error(self, msg: str) -> None:
        if len(self.errors) < 50:
            self.errors.append(msg)

    def run(self) -> list[str]:
        for fn in self.funcs:
            if not fn.attrs.get("sliced"):
                self.error(f"@{fn.name}: not marked as sliced")
            for ins in fn.instructions():
                if "slice" not in ins.attrs:
                    self.error(f"{where(ins)}: no slice mark")
                self.check_criteria(ins)
                if kept(ins):
                    self.check_data(ins)
                    self.check_params(ins)
        self.check_control()
        if self.memory == "conservative":
            self.check_memory()
        return self.errors

    # ---------------------------------------------------------- criteria
    def check_criteria(self, ins) -> None:
        if ins.is_phi:
            return
        info = ins.info
        must = ins.opcode in TERMINATORS or ins.opcode == "call" or (info is not None and info.barrier)
        if must and not kept(ins):
            self.error(f"{where(ins)}: criterion not kept")
        if ins.guard is None:
            return
        guard_needed = self.criteria == "counters" or must or ins.opcode in WARP_OPS
        g = ins.guard
        if guard_needed and isinstance(g, ir.Result) and not kept(g.instr):
            self.error(f"{where(ins)}: guard {g.name} defined by an unkept instruction")

    # -------------------------------------------------------------- data
    def check_data(self, ins) -> None:
        for v in ins.operand_values():
            if isinstance(v, ir.Result) and not kept(v.instr):
                self.error(f"{where(ins)}: reads {v.name} from unkept {where(v.instr)}")
            if isinstance(v, ir.Result) and v.instr.opcode == "call":
                self.check_reg_return(v.instr)

    def check_reg_return(self, call) -> None:
        """A register result of a call: every write of the callee's .reg
        return registers must be kept."""
        if id(call) in self.reg_checked:
            return
        self.reg_checked.add(id(call))
        _, target, _ = call_parts(call)
        callee = self.by_name.get(target.name) if isinstance(target, ir.Sym) else None
        if callee is None:
            return
        names = {r.name for r in callee.rets if r.space == "reg"}
        for i in callee.instructions():
            for r in i.results:
                if r.reg is not None and r.reg.split(".")[0] in names and not kept(i):
                    self.error(f"{where(call)}: callee writes return register {r.reg} "
                               f"in unkept {where(i)}")

    # ----------------------------------------------------------- control
    def check_control(self) -> None:
        try:
            from ptxc.passes.controldep import ControlDep
            from ptxc.ir.passmanager import AnalysisManager
        except ImportError:
            return
        am = AnalysisManager(self.module)
        for fn in self.funcs:
            try:
                cd = am.get(ControlDep, fn)
            except Exception as e:  # the analysis is someone else's; report, do not crash
                self.error(f"@{fn.name}: control dependence failed: {e!r}")
                continue
            for block in fn.blocks:
                if not any(kept(i) for i in block.instrs):
                    continue
                for dep in cd.deps.get(block, ()):
                    term = dep.terminator
                    if term is not None and not kept(term):
                        self.error(f"@{fn.name} {block.name}: depends on unkept branch of {dep.name}")

    # -------------------------------------------------------- parameters
    def check_params(self, ins) -> None:
        fn = ins.block.function
        if not fn.is_kernel and ins.opcode != "call" and mem_effects(ins)[0] & {"local", "generic"}:
            taken = self.taken_in(fn)
            for i, p in enumerate(fn.params):     # address-taken (byval) parameters
                if p.name in taken:
                    self.check_args(fn, i)
        if ins.opcode != "ld" or "param" not in space_words(ins.mods):
            return
        name = sym_of(ins)
        if name is None:
            return
        var = lookup(ins, name, self.module)
        fn = ins.block.function
        if var is None:
            return
        if any(var is p for p in fn.params):
            if not fn.is_kernel:
                self.check_args(fn, [p.name for p in fn.params].index(var.name))
            return
        self.check_local_param(ins, var, fn)

    def taken_in(self, fn) -> set:
        if fn.name not in self.taken_by_fn:
            self.taken_by_fn[fn.name] = {s.name for i in fn.instructions()
                                         if i.opcode in ("mov", "cvta")
                                         for s in i.srcs if isinstance(s, ir.Sym)}
        return self.taken_by_fn[fn.name]

    def param_stores(self, fn, var):
        for i in fn.instructions():
            if i.opcode == "st" and "param" in space_words(i.mods):
                n = sym_of(i)
                if n is not None and lookup(i, n, self.module) is var:
                    yield i

    def check_local_param(self, ins, var, fn) -> None:
        for st in self.param_stores(fn, var):
            if not kept(st):
                self.error(f"{where(ins)}: store {where(st)} to {var.name} not kept")
        for caller, call in self.calls:
            if caller is not fn:
                continue
            rets, target, args = call_parts(call)
            for j, r in enumerate(rets):
                if isinstance(r, ir.Sym) and lookup(call, r.name, self.module) is var:
                    if not kept(call):
                        self.error(f"{where(ins)}: its call {where(call)} not kept")
                    self.check_callee_ret(call, target, args, j)

    def check_callee_ret(self, call, target, args, j) -> None:
        callee = self.by_name.get(target.name) if isinstance(target, ir.Sym) else None
        if callee is None:
            for k in range(len(args)):
                self.check_arg(call, args, k)
            return
        if j < len(callee.rets):
            for st in self.param_stores(callee, callee.rets[j]):
                if not kept(st):
                    self.error(f"{where(call)}: callee store {where(st)} to return value not kept")

    def check_args(self, callee, i) -> None:
        if (callee.name, i) in self.args_checked:
            return
        self.args_checked.add((callee.name, i))
        for caller, call in self.calls:
            rets, target, args = call_parts(call)
            if isinstance(target, ir.Sym) and target.name == callee.name:
                self.check_arg(call, args, i)

    def check_arg(self, call, args, i) -> None:
        if i >= len(args):
            return
        a = args[i]
        if isinstance(a, ir.Sym):
            var = lookup(call, a.name, self.module)
            for st in self.param_stores(call.block.function, var):
                if not kept(st):
                    self.error(f"{where(call)}: argument store {where(st)} not kept")
        elif isinstance(a, ir.Result) and not kept(a.instr):
            self.error(f"{where(call)}: argument {a.name} not kept")

    # ------------------------------------------------------------ memory
    def reachable(self, root) -> list:
        seen, stack = {root.name}, [root]
        while stack:
            f = stack.pop()
            for i in f.instructions():
                if i.opcode != "call":
                    continue
                _, target, args = call_parts(i)
                names = ([target.name] if isinstance(target, ir.Sym)
                         else [g.name for g in self.funcs
                               if len(g.params) == len(args) and g.name in self.taken])
                for n in names:
                    g = self.by_name.get(n)
                    if g is not None and n not in seen:
                        seen.add(n)
                        stack.append(g)
        return [f for f in self.funcs if f.name in seen]

    def writes_in(self, funcs):
        for f in funcs:
            for i in f.instructions():
                if i.opcode == "call":
                    _, target, _ = call_parts(i)
                    external = isinstance(target, ir.Sym) and target.name not in self.by_name
                    if external and not (isinstance(target, ir.Sym) and target.name in NO_WRITE_EXTERNS):
                        yield i, {"global", "shared", "local", "generic"}
                    continue
                _, w = mem_effects(i)
                if w - {"param"}:
                    yield i, w - {"param"}

    def check_memory(self) -> None:
        roots = [f for f in self.funcs if f.is_kernel] or self.funcs
        for root in roots:
            funcs = self.reachable(root)
            read_spaces = set()
            for f in funcs:
                for i in f.instructions():
                    if kept(i) and i.opcode != "call":
                        read_spaces |= mem_effects(i)[0]
            for w, spaces in self.writes_in(funcs):
                if kept(w):
                    continue
                if any(may_see(r, s) for r in read_spaces for s in spaces):
                    self.error(f"kernel @{root.name}: write {where(w)} may reach a kept read "
                               f"({'/'.join(sorted(read_spaces))}) but is not kept")


def check_module(module, memory: str = "conservative", criteria: str = "counters") -> list[str]:
    """Messages for every violated rule (empty list: the marks are sound)."""
    return Checker(module, memory, criteria).run()
