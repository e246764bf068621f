"""Names, call sites and the call graph, as the branch slice needs them.

The slice follows values through ``.param`` variables across calls, in the
manner of Horwitz, Reps and Binkley ("Interprocedural slicing using dependence
graphs", PLDI 1988): a call site's argument ``i`` flows into the callee's
``ld.param`` of its parameter ``i``; the callee's ``st.param`` to its return
parameter ``j`` flows into the caller's ``ld.param`` of the call's return
variable ``j``. Marks are per instruction, so the result is the
context-insensitive union over all call sites (sound, possibly larger than
HRB's context-sensitive slice).

This module only answers structural questions:

* which Variable (or Function) a symbol name means at an instruction
  (innermost ``{ }`` scope first, then the function's parameters and return
  parameters, then module scope);
* the parts of a ``call`` (return list, target, argument list);
* which functions a function calls, and the *universe* of a kernel: the kernel
  plus every function reachable from it (a launch of the kernel can execute
  exactly those instructions).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptxc import ir


@dataclass
class CallSite:
    """One ``call``: rets/args are operand lists; target a Sym or a Value."""
    instr: ir.Instr
    rets: list = field(default_factory=list)
    target: object = None
    args: list = field(default_factory=list)

    @property
    def callee_name(self) -> str | None:
        return self.target.name if isinstance(self.target, ir.Sym) else None


def decode_call(ins: ir.Instr) -> CallSite:
    """Split ``call (rets), target, (args), proto`` into its parts.

    The return list is a parenthesised list in the destinations (or one
    written before the target among the sources); the first list after the
    target is the argument list; anything later (prototype, target list) is
    ignored.
    """
    site = CallSite(ins)
    for op in ins.dsts:
        if isinstance(op, ir.ParenList):
            site.rets = list(op.items)
    for op in ins.srcs:
        if site.target is None:
            if isinstance(op, ir.ParenList):
                site.rets = list(op.items)
            else:
                site.target = op
        elif isinstance(op, ir.ParenList):
            site.args = list(op.items)
            break
    return site


class Program:
    """Module-wide lookups shared by one slicing run (built once, O(n))."""

    def __init__(self, module):
        self.module = module
        self.functions = [f for f in module.functions if not f.is_decl]
        self._globals = {v.name: v for v in module.globals}
        self._funcs = {}
        for f in module.functions:
            if f.name not in self._funcs or not f.is_decl:
                self._funcs[f.name] = f
        self._scope_names: dict[int, dict] = {}
        self._sig_names: dict[int, dict] = {}
        self.sites: dict[int, list[CallSite]] = {id(f): [] for f in self.functions}
        self.callers: dict[str, list[CallSite]] = {}
        self.address_taken_funcs: list = []
        self._scan()

    # ------------------------------------------------------------ symbols
    def resolve(self, ins: ir.Instr, name: str):
        """The Variable or Function that ``name`` denotes at ``ins`` (or None)."""
        scope = ins.scope
        while scope is not None:
            hit = self._names_of(scope).get(name)
            if hit is not None:
                return hit
            scope = scope.parent
        fn = ins.block.function if ins.block is not None else None
        if fn is not None:
            hit = self._signature(fn).get(name)
            if hit is not None:
                return hit
        hit = self._globals.get(name)
        return hit if hit is not None else self._funcs.get(name)

    def _names_of(self, scope) -> dict:
        names = self._scope_names.get(id(scope))
        if names is None:
            names = {v.name: v for v in scope.vars}
            self._scope_names[id(scope)] = names
        return names

    def _signature(self, fn) -> dict:
        names = self._sig_names.get(id(fn))
        if names is None:
            names = {v.name: v for v in list(fn.params) + list(fn.rets)}
            self._sig_names[id(fn)] = names
        return names

    def function_of_var(self, fn, var) -> tuple[str, int] | None:
        """('param', i) / ('ret', j) if ``var`` is in ``fn``'s signature."""
        for i, p in enumerate(fn.params):
            if p is var:
                return ("param", i)
        for j, r in enumerate(fn.rets):
            if r is var:
                return ("ret", j)
        return None

    # ---------------------------------------------------------- call graph
    def _scan(self) -> None:
        from ptxc.ir.call_targets import address_taken
        self.address_taken_funcs = address_taken(self.module)
        for fn in self.functions:
            for ins in fn.instructions():
                if ins.opcode == "call":
                    self._add_site(fn, decode_call(ins))

    def _add_site(self, fn, site: CallSite) -> None:
        self.sites[id(fn)].append(site)
        for callee in self.callees_of_site(site):
            self.callers.setdefault(callee.name, []).append(site)

    def callees_of_site(self, site: CallSite) -> list:
        """Defined functions a call may enter: if indirect, every
        address-taken one whose signature matches the call's prototype
        (ptxc/ir/call_targets.py)."""
        name = site.callee_name
        if name is None:
            from ptxc.ir.call_targets import matches, prototype
            proto = prototype(site.instr)
            return [f for f in self.address_taken_funcs
                    if matches(f, proto) and len(f.params) == len(site.args)]
        f = self._funcs.get(name)
        return [f] if f is not None and not f.is_decl else []

    def is_external(self, site: CallSite) -> bool:
        """True if the call may enter code ptxc cannot see (a declaration only)."""
        name = site.callee_name
        if name is None:
            return not self.callees_of_site(site)
        f = self._funcs.get(name)
        return f is None or f.is_decl

    def universe(self, root) -> list:
        """``root`` and every defined function reachable from it, in module order."""
        seen = {id(root)}
        stack = [root]
        while stack:
            fn = stack.pop()
            for site in self.sites.get(id(fn), ()):
                for callee in self.callees_of_site(site):
                    if id(callee) not in seen:
                        seen.add(id(callee))
                        stack.append(callee)
        return [f for f in self.functions if id(f) in seen]

    def universes(self) -> list[tuple]:
        """(root, universe) per kernel, plus per function no kernel reaches."""
        out, covered = [], set()
        for fn in self.functions:
            if fn.is_kernel:
                u = self.universe(fn)
                covered.update(id(f) for f in u)
                out.append((fn, u))
        for fn in self.functions:
            if id(fn) not in covered:
                u = self.universe(fn)
                covered.update(id(f) for f in u)
                out.append((fn, u))
        return out

