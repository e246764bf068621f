"""CTA equivalence: when may a hybrid run execute one CTA per class?

A hybrid run of a CTA is a deterministic function of its ``%ctaid``, the
launch constants and the memory it reads. :func:`analyse` checks a static
condition on the sliced kernel under which two CTAs whose *signatures* agree
execute identically (the proof is in docs/cta-equivalence.md), and returns
the *atoms*: the comparisons through which ``%ctaid`` reaches a decision.
passes/cta/classes.py evaluates them for a launch and groups the CTAs.

The condition, over the instructions the hybrid run executes (the kept
instructions of the kernel's universe; every guard is evaluated):

1. taint: a value depends on %ctaid when it is %ctaid or is computed from
   such a value (operands, guards, old values of guarded definitions, phi
   inputs), loaded from memory that a kept instruction wrote with a
   %ctaid-dependent address or value, or passed through a call with such an
   argument. Control dependence is not taint: decisions are checked instead.
2. no kept instruction writes global or generic memory (so global memory is
   the launch's initial memory in every CTA), and no kept call goes to code
   ptxc cannot see (except vprintf / __assertfail);
3. no memory address, ``brx.idx`` index, barrier operand or indirect call
   target depends on %ctaid; every guard is computed by a kept instruction;
4. every %ctaid-dependent guard or branch predicate is a boolean combination
   (``and``/``or``/``xor``/``not``/``mov``, ``setp``'s boolean operator) of
   predicates that do not depend on %ctaid and of *atoms*: integer ``setp``
   comparisons whose operands are formulas of cta_expr (of %ctaid, %tid,
   launch constants, and at most one induction variable);
5. an atom on an induction variable of loop L is either L's *exit test* (its
   result guards a branch in a block of L, not of a loop nested in L, that
   dominates every latch of L and has one successor inside L and one
   outside), or L has an exit test on one of its induction variables (with
   or without %ctaid) that bounds the iterations the atom can see. Exit
   tests may be ``<``, ``<=``, ``>``, ``>=`` or ``!=``, ``==`` (nvcc's
   counted-down loops, exact in modular arithmetic: passes/cta/countdown.py);
   other atoms on an induction variable must be ordered comparisons.

6. (slice option ``faults=checked``) the bounds check of an access the slice
   does not keep (passes/memory/checked.py) whose address depends on %ctaid is a
   *fault check*: a ``.global`` or generic access whose 64-bit address is a
   formula, affine in the induction variables it may hold, each of a loop
   with an exit test (rule 5; passes/cta/fault_loops.py). cta_classes
   evaluates it for every CTA and thread (over the iterations the exit
   tests allow) and splits CTAs whose lanes would fault differently.

The memory-coalescing counters (if a Compiled kernel sets
``address_counters``) count addresses, which condition 3 does not cover: the
launcher switches CTA equivalence off for them (passes/cta/classes.py).

This module is longer than the others of passes/cta (over 500 lines): the
:class:`Analysis` checks rules 1-6 in one walk over the kept instructions,
its taint, predicate and loop parts share its state (taint sets, builders,
atoms, loop tests), and splitting the class would only pass that state
around. The formulas it builds are passes/cta/expr.py's and
passes/cta/fault_loops.py's; the program and the provenance of an address
come from passes/memory/provenance.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptxc import ir
from ptxc.ir.address_size import address_bits
from ptxc.passes.memory.checked import access_bytes, checked, checked_values
from ptxc.passes.memory.measured import address_operand, state_space
from ptxc.passes.memory.provenance import module_program, origins
from ptxc.ir.passmanager import ALL, AnalysisManager, Pass, PassResult

from ptxc.passes.cta.nodes import INT_TYPES, SET_CMPS as CMPS, Node, const, iv_loops, type_info
from ptxc.passes.cta.expr import ExprBuilder
from ptxc.passes.cta.countdown import entry_conditions
from ptxc.passes.cta.fault_loops import AffineBuilder
from ptxc.passes.domtree import DomTree
from ptxc.passes.loops import Loops
from ptxc.passes.memory.access import ALIAS_SPACES, GENERIC, accesses
from ptxc.passes.slice.calls import decode_call

PRED_OPS = ("and", "or", "xor", "not", "mov")
CTA_SPECIAL = "ctaid"           # %ctaid.*; cluster registers are treated the same way
SAFE_EXTERNS = ("vprintf", "__assertfail", "__assert_fail")


@dataclass
class Atom:
    """One %ctaid-dependent comparison ``a cmp b`` (math integers after the
    range checks); ``stay`` is, for a loop exit test, the outcome that keeps
    a lane in the loop (None otherwise)."""
    instr: object
    cmp: str
    signed: bool
    width: int
    a: object
    b: object
    stay: bool | None = None
    bound: "Atom | None" = None
    entry: tuple = ()           # an exit test == / !=: (cond, outcome) to enter (cta_countdown)

    @property
    def line(self) -> int | None:
        return self.instr.loc.line if self.instr.loc else None


@dataclass
class FaultCheck:
    """The bounds check of an access outside the slice whose address
    ``addr`` (a 64-bit formula) depends on %ctaid; ``nbytes`` per lane."""
    instr: object
    addr: object
    nbytes: int
    origins: tuple = ()     # provenance candidates: ('param', index, type, offset) / ('globals',)
    loops: tuple = ()       # (loop, its exit test Atom) per induction variable in addr


@dataclass
class Condition:
    """The result: ``ok`` with the atoms, or the reason it does not hold."""
    kernel: str
    ok: bool
    reason: str = ""
    atoms: list = field(default_factory=list)
    checks: list = field(default_factory=list)

    def describe(self) -> str:
        if not self.ok:
            return f"CTA equivalence off: {self.reason}"
        if not self.atoms and not self.checks:
            return "CTA equivalence: no decision depends on %ctaid (one class)"
        if self.checks:
            lines = ", ".join(str(c.instr.loc.line if c.instr.loc else "?") for c in self.checks)
            head = f"{len(self.atoms)} comparison(s) on %ctaid" + (
                f" (lines {', '.join(str(a.line) for a in self.atoms)})" if self.atoms else "")
            return f"CTA equivalence: {head}, {len(self.checks)} fault check(s) (lines {lines})"
        lines = ", ".join(str(a.line) for a in self.atoms)
        return f"CTA equivalence: {len(self.atoms)} comparison(s) on %ctaid (lines {lines})"


class Refuse(Exception):
    """The condition does not hold; the message says where and why."""


def where(ins) -> str:
    return f"line {ins.loc.line}" if ins is not None and ins.loc else "?"


def is_kept(ins) -> bool:
    fn = ins.block.function
    return not fn.attrs.get("sliced") or bool(ins.attrs.get("slice"))


def analyse(module, kernel) -> Condition:
    """The CTA-equivalence condition for hybrid runs of ``kernel`` (marks as they are now)."""
    try:
        analysis = Analysis(module, kernel)
        atoms = analysis.run()
        return Condition(kernel.name, True, atoms=atoms, checks=analysis.checks)
    except Refuse as e:
        return Condition(kernel.name, False, reason=str(e))


class Analysis:
    def __init__(self, module, kernel):
        self.program = module_program(module)
        self.kernel = kernel
        self.funcs = self.program.universe(kernel)
        self.am = AnalysisManager(module)
        self.tainted: set[int] = set()
        self.mem_taint: set[str] = set()
        self.call_taint = False
        self.callee_taint = False
        self.builders: dict[int, ExprBuilder] = {}
        self.affine_builders: dict[int, AffineBuilder] = {}
        self.atoms: dict[int, Atom] = {}
        self.classified: dict[int, bool] = {}
        self.loop_tests: dict[int, Atom | None] = {}
        self.checks: list = []
        self.faults = (kernel.attrs.get("slice_report") or {}).get("faults") == "checked"

    def run(self) -> list:
        self._taint()
        for fn in self.funcs:
            for ins in fn.instructions():
                self._check(ins)
        return list(self.atoms.values())

    # ------------------------------------------------------------ taint
    def is_tainted(self, v) -> bool:
        if isinstance(v, ir.SpecialReg):
            return CTA_SPECIAL in v.name or "cluster" in v.name
        if isinstance(v, ir.Argument):
            return self.call_taint
        return id(v) in self.tainted

    def _taint(self) -> None:
        kept = [ins for fn in self.funcs for ins in fn.instructions() if is_kept(ins)]
        changed = True
        while changed:
            changed = False
            for ins in kept:
                changed |= self._taint_one(ins)

    def _taint_one(self, ins) -> bool:
        t = any(self.is_tainted(v) for v in ins.operand_values())
        changed = False
        if ins.opcode == "call":
            if t and not self.call_taint:
                self.call_taint = changed = True
            t = t or self.call_taint or self.callee_taint
        elif ins.info is not None and ins.info.reads_mem:
            t = t or any(self._read_tainted(ins, acc) for acc in accesses(ins) if acc.kind == "r")
        if t and ins.info is not None and ins.info.writes_mem and ins.opcode != "call":
            for acc in accesses(ins):
                if acc.kind == "w" and acc.space not in self.mem_taint:
                    self.mem_taint.add(acc.space)
                    changed = True
        if t:
            for r in ins.results:
                if id(r) not in self.tainted:
                    self.tainted.add(id(r))
                    changed = True
                    if not ins.block.function.is_kernel:
                        self.callee_taint = True
        return changed

    def _read_tainted(self, ins, acc) -> bool:
        if acc.space == "param":
            base = acc.addr.base if acc.addr is not None else None
            if isinstance(base, ir.Sym) and ins.block.function is self.kernel:
                var = self.program.resolve(ins, base.name)
                if any(var is p for p in self.kernel.params):
                    return False            # a kernel parameter: written by the launch only
            return "param" in self.mem_taint
        return any(s in self.mem_taint for s in ALIAS_SPACES.get(acc.space, (acc.space,)))

    # ----------------------------------------------------------- checks
    def _check(self, ins) -> None:
        if ins.guard is not None:
            g = ins.guard
            if isinstance(g, ir.Result) and not is_kept(g.instr):
                raise Refuse(f"the guard at {where(ins)} is not computed by the slice")
            if not self.classify(g):
                raise Refuse(f"the guard at {where(ins)} depends on %ctaid in a way "
                             f"that cannot be classified")
        if not is_kept(ins) or ins.is_phi:
            if self.faults and not ins.is_phi and checked(ins):
                self._check_fault(ins)
            return
        if ins.info is not None and (ins.info.reads_mem or ins.info.writes_mem) \
                and ins.opcode != "call":
            self._check_memory(ins)
        if ins.opcode == "call":
            self._check_call(ins)
        elif ins.opcode == "brx" or (ins.info is not None and ins.info.barrier):
            if any(self.is_tainted(v) for op in ins.srcs for v in ir.values_in(op)):
                raise Refuse(f"{ins.full_opcode} at {where(ins)} has a %ctaid-dependent operand")

    def _check_memory(self, ins) -> None:
        for acc in accesses(ins):
            if acc.kind == "w" and acc.space in ("global", GENERIC):
                raise Refuse(f"the slice writes {acc.space} memory at {where(ins)} "
                             f"({ins.full_opcode}): CTAs could see each other's writes")
        for op in list(ins.srcs) + list(ins.dsts):
            if isinstance(op, (ir.Addr, ir.Bracket)):
                if any(self.is_tainted(v) for v in ir.values_in(op)):
                    raise Refuse(f"the address of {ins.full_opcode} at {where(ins)} "
                                 f"depends on %ctaid")

    def _check_fault(self, ins) -> None:
        """Rule 6: the bounds check of ``ins`` (not in the slice)."""
        if not any(self.is_tainted(v) for v in checked_values(ins)):
            return
        op = address_operand(ins)
        what = f"the address of {ins.full_opcode} at {where(ins)} (checked for faults)"
        if ins.opcode == "cp" or state_space(ins) not in ("global", "generic") or \
                not isinstance(op, ir.Addr) or not isinstance(op.base, ir.Value) or \
                op.base.type not in ("u64", "b64", "s64"):
            raise Refuse(f"{what} depends on %ctaid")
        fn = ins.block.function
        node = self.builder(fn).operand(op.base, 64)
        if node is None or node.has_iv:
            node = self.affine_builder(fn).operand(op.base, 64)
        if node is None:
            raise Refuse(f"{what} depends on %ctaid in a way that cannot be classified "
                         f"(not a formula of %ctaid, %tid, launch constants and affine "
                         f"induction variables)")
        if op.offset:
            node = Node("add", 64, False, (node, const(op.offset, 64)))
        loops = tuple((loop, self._fault_loop_test(loop, what)) for loop in iv_loops(node))
        self.checks.append(FaultCheck(ins, node, access_bytes(ins), self._origins(ins), loops))

    def _fault_loop_test(self, loop, what: str) -> Atom:
        """The exit test that bounds the iterations of ``loop`` (rule 5),
        for a fault check over its induction variable (rule 6)."""
        test = self._loop_test(loop)
        if test is None:
            head = next((i for i in loop.header.instrs if i.loc), None)
            raise Refuse(f"{what} holds an induction variable of the loop at {where(head)}, "
                         f"which has no exit test on an induction variable (rule 5)")
        return test

    def affine_builder(self, fn) -> AffineBuilder:
        b = self.affine_builders.get(id(fn))
        if b is None:
            b = self.affine_builders[id(fn)] = AffineBuilder(fn, self.program,
                                                             self.am.get(Loops, fn))
            self._hook(b, fn)
        return b

    def _origins(self, ins) -> tuple:
        """The provenance candidates of ``ins`` (passes/memory/provenance.py)."""
        params, bits = self.kernel.params, address_bits(self.kernel.module)
        cands = origins(ins, bits) or []
        if any(c[0] == "loaded" for c in cands):
            raise Refuse(f"the address of {ins.full_opcode} at {where(ins)} (checked for faults) "
                         f"derives from a pointer loaded from memory")
        return tuple(("globals",) if c[0] == "globals" else
                     ("param", next(i for i, p in enumerate(params) if p is c[1]),
                      f"u{bits}", c[2]) for c in cands)

    def _check_call(self, ins) -> None:
        site = decode_call(ins)
        if self.program.is_external(site) and site.callee_name not in SAFE_EXTERNS:
            raise Refuse(f"the slice calls external code at {where(ins)}")
        if isinstance(site.target, ir.Value) and self.is_tainted(site.target):
            raise Refuse(f"the call target at {where(ins)} depends on %ctaid")

    # ------------------------------------------------------ predicates
    def classify(self, v) -> bool:
        """Is predicate ``v`` a function of atoms and %ctaid-free predicates?"""
        if isinstance(v, ir.Not):
            v = v.value
        if not self.is_tainted(v):
            return True
        if not isinstance(v, ir.Result):
            return False
        key = id(v)
        if key not in self.classified:
            self.classified[key] = False            # a cycle (phi of predicates) fails
            self.classified[key] = self._classify(v.instr)
        return self.classified[key]

    def _classify(self, ins) -> bool:
        if ins.is_phi:
            return False
        preds = [op for op in ins.srcs if _is_pred(op)]
        if ins.guard is not None and not (self.classify(ins.guard) and
                                          all(self.classify(p) for p in ins.prior)):
            return False
        if ins.opcode == "setp":
            return self._atom(ins) and all(self.classify(p) for p in preds)
        if ins.opcode in PRED_OPS and "pred" in ins.mods:
            return all(self.classify(op) for op in ins.srcs)
        return False

    def _atom(self, ins) -> bool:
        if id(ins) in self.atoms:
            return True
        atom = self._formulas(ins)
        if atom is None or (atom.a.has_iv and atom.b.has_iv):
            return False
        x, y = atom.a, atom.b
        if x.has_iv or y.has_iv:
            if len(ins.srcs) != 2:
                return False
            side = x if x.has_iv else y
            atom.stay = self._exit_test(ins, side)
            if atom.stay is None and atom.cmp in ("eq", "ne"):
                return False                    # not a threshold in k (rule 5)
            self._entry(atom, _iv_loop(side))
            if atom.stay is None:
                atom.bound = self._loop_test(_iv_loop(side))
                if atom.bound is None:
                    return False
        self.atoms[id(ins)] = atom
        return True

    def _comparison(self, ins) -> Atom | None:
        """``ins`` as an integer comparison of two formulas (no atom kept)."""
        if ins.opcode != "setp" or len(ins.srcs) != 2 or ins.guard is not None:
            return None
        atom = self._formulas(ins)
        if atom is None or atom.a.has_iv == atom.b.has_iv:
            return None
        return atom

    def _formulas(self, ins) -> Atom | None:
        """``setp`` ``ins`` as a comparison of its first two operands' integer
        formulas, or None (not one integer type, no known comparison, an
        operand with no formula)."""
        types = [m for m in ins.mods if m in INT_TYPES]
        cmp = next((CMPS[m] for m in ins.mods if m in CMPS), None)
        if len(types) != 1 or cmp is None or len(ins.srcs) < 2:
            return None
        width, signed = type_info(types[0])
        if cmp[1] is not None:
            signed = cmp[1]
        b = self.builder(ins.block.function)
        x, y = b.operand(ins.srcs[0], width), b.operand(ins.srcs[1], width)
        if x is None or y is None:
            return None
        return Atom(ins, cmp[0], signed, width, x, y)

    def builder(self, fn) -> ExprBuilder:
        b = self.builders.get(id(fn))
        if b is None:
            b = self.builders[id(fn)] = ExprBuilder(fn, self.program, self.am.get(Loops, fn))
            self._hook(b, fn)
        return b

    def _entry(self, test, loop) -> None:
        """An exit test learns which branches every lane entering its loop
        passed (passes/cta_countdown.entry_conditions): == / != tests set
        the count of the others to 0, fault checks over the loop skip them."""
        if test.stay is not None:
            test.entry = entry_conditions(self.builder(loop.header.function), loop)

    def _hook(self, b, fn) -> None:
        """Values after a loop and at joins (passes/cta/exit_values.py)
        need the dominator tree and the loops' exit tests."""
        b.dom, b.loop_test = self.am.get(DomTree, fn), self._loop_test

    # ------------------------------------------------------------ loops
    def _exit_test(self, setp, side) -> bool | None:
        """The compare outcome that keeps a lane in the loop of the induction
        variable in ``side``, if ``setp`` is that loop's exit test (rule 5)."""
        loop = _iv_loop(side)
        fn = setp.block.function
        info = self.am.get(Loops, fn)
        dom = self.am.get(DomTree, fn)
        if info.loop_of(setp.block) is not loop:
            return None
        for k, res in enumerate(setp.results):
            for user in res.uses:
                if user.opcode == "bra" and user.guard is res:
                    stay = _stay_outcome(user, loop, info, dom, k)
                    if stay is not None:
                        return stay
        return None


    def _loop_test(self, loop) -> Atom | None:
        """An exit test of ``loop`` on one of its induction variables (rule 5):
        it bounds the iterations a lane can make, whether or not it depends
        on %ctaid (docs/cta-equivalence.md, induction variables)."""
        if loop is None:
            return None
        if id(loop) not in self.loop_tests:     # one Atom per loop (its bound is memoised)
            self.loop_tests[id(loop)] = self._find_loop_test(loop)
        return self.loop_tests[id(loop)]

    def _find_loop_test(self, loop) -> Atom | None:
        fn = loop.header.function
        info, dom = self.am.get(Loops, fn), self.am.get(DomTree, fn)
        found = []
        for block in loop.blocks:
            bra = block.terminator
            if bra is None or bra.opcode != "bra" or not isinstance(bra.guard, ir.Result):
                continue
            test = self._comparison(bra.guard.instr)
            if test is None or _iv_loop(test.a if test.a.has_iv else test.b) is not loop or \
                    info.loop_of(test.instr.block) is not loop:
                continue
            test.stay = _stay_outcome(bra, loop, info, dom, bra.guard.index)
            if test.stay is not None:
                self._entry(test, loop)
                found.append(test)
        # an ordered test bounds K without wrapping around: prefer it to != / ==
        return min(found, key=lambda t: t.cmp in ("eq", "ne"), default=None)


def _stay_outcome(bra, loop, info, dom, k: int) -> bool | None:
    x = bra.block
    if info.loop_of(x) is not loop or not all(dom.dominates(x, lt) for lt in loop.latches):
        return None
    target = bra.srcs[0].block if bra.srcs and isinstance(bra.srcs[0], ir.LabelRef) else None
    others = [s for s in x.succs if s is not target]
    if target is None or len(others) != 1:
        return None
    inside = {id(b) for b in loop.blocks}
    t_in, f_in = id(target) in inside, id(others[0]) in inside
    if t_in == f_in:
        return None
    taken_on_true = (k == 0) != bra.guard_neg        # results[1] of setp p|q is the negation
    return taken_on_true if t_in else not taken_on_true


def _iv_loop(node):
    if node.op == "iv":
        return node.data
    for a in node.args:
        if a.has_iv:
            return _iv_loop(a)
    return None


def _is_pred(op) -> bool:
    v = op.value if isinstance(op, ir.Not) else op
    return isinstance(v, ir.Value) and v.type == "pred"


def cached_condition(module, kernel) -> Condition:
    """analyse(), once per kernel and slice variant (keyed like the JIT cache)."""
    report = kernel.attrs.get("slice_report")
    cache = module.attrs.setdefault("cta_conditions", {})
    key = (kernel.name, id(report))
    hit = cache.get(key)
    if hit is None or hit[0] is not report:
        hit = cache[key] = (report, analyse(module, kernel))
    return hit[1]


@dataclass(frozen=True)
class CtaEquivalencePass(Pass):
    name = "cta-equivalence"
    summary = "say per kernel whether hybrid runs may run one CTA per equivalence class"

    def run(self, module, am) -> PassResult:
        data, lines = {}, []
        for k in module.kernels:
            cond = analyse(module, k)
            data[k.name] = {"ok": cond.ok, "reason": cond.reason,
                            "atoms": [a.line for a in cond.atoms]}
            lines.append(f"kernel @{k.name}: {cond.describe()}")
        return PassResult(self.name, "\n".join(lines) + "\n", data, ALL)
