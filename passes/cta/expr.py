"""Integer expressions over %ctaid, %tid and launch constants (CTA equivalence).

The CTA-equivalence condition (passes/cta/equivalence.py,
docs/cta-equivalence.md) needs, for every comparison that depends on
``%ctaid``, a formula of its operands that the launcher can evaluate for
every CTA and every thread. :class:`ExprBuilder` turns an SSA value into a
:class:`Node` tree (passes/cta/nodes.py), or None when the value is not
such a formula.

Leaves: integer immediates, kernel scalar parameters (``ld.param`` of the
kernel's own parameter), the launch constants ``%ntid``/``%nctaid``, the CTA
atoms ``%ctaid.{x,y,z}`` and the thread atoms ``%tid.{x,y,z}``, ``%laneid``,
``%warpid``. The *kind* of a node is the set of atom sorts it depends on:
``c`` (CTA), ``t`` (thread); empty for launch constants.

Operations: ``mov``, ``add``, ``sub``, ``mul`` (``.lo``, ``.wide``),
``mad`` (``.lo``, ``.wide``), ``mul24.lo``, ``shl``/``shr`` by anything,
``neg``, ``not``, ``and``, ``or``, ``xor``, ``div``, ``rem``, ``min``,
``max``, integer ``cvt`` (without ``.sat``) and ``cvta`` to or from ``.global``
(the identity on the executor's addresses). passes/cta/evaluator.py
evaluates them with PTX's exact integer semantics, per CTA, per thread, or
for every (CTA, thread) pair; when a value is *separable*, ``F(ctaid) +
G(tid)`` (sums, differences and constant multiples of CTA-only and
thread-only values), it keeps the two parts apart and classifies CTAs from
F alone.

Loops: a header phi ``i = phi(init, i + S)`` with one value entering from
outside the loop and a launch-constant step S on every back edge is an
induction variable (op ``iv``): at the k-th evaluation after entering the
loop it holds ``init + k*S``. Only ``add``/``sub``/``mov`` may combine it
with other nodes. A phi at a join that is not a loop header may be a
``select`` of its two inputs by a comparison, and an input that leaves a
loop an ``atexit`` value (passes/cta/exit_values.py).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.ir.types import TYPE_SIZES

from ptxc.passes.cta.exit_values import merge_phi
from ptxc.passes.cta.nodes import C, EMPTY, INT_TYPES, SET_CMPS, T, Node, const, type_info


SPECIAL_AXES = {"x": 0, "y": 1, "z": 2}


def special_node(name: str) -> Node | None:
    base, _, axis = name.partition(".")
    if base in ("%ctaid", "%tid", "%ntid", "%nctaid") and axis in SPECIAL_AXES:
        k = SPECIAL_AXES[axis]
        if base == "%ctaid":
            return Node("ctaid", 32, False, data=k, kind=frozenset((C,)))
        if base == "%tid":
            return Node("tid", 32, False, data=k, kind=frozenset((T,)))
        return Node("launch", 32, False, data=(base, k), kind=EMPTY)
    if name in ("%laneid", "%warpid"):
        return Node(name[1:], 32, False, kind=frozenset((T,)))
    return None


class ExprBuilder:
    """SSA values of one function -> Node trees (memoised; None: no formula)."""

    def __init__(self, fn, program, loops=None, dom=None):
        self.fn, self.program = fn, program
        self.loops, self.dom = loops, dom
        self.memo: dict[int, Node | None] = {}
        self._busy: set[int] = set()
        self.loop_test = None       # loop -> its exit test Atom (cta_exit_values)

    # -------------------------------------------------------- operands
    def operand(self, op, width: int) -> Node | None:
        """The node of source operand ``op`` read at ``width`` bits."""
        if isinstance(op, ir.Imm):
            return const(op.value, width) if op.kind == "int" else None
        if isinstance(op, ir.RegOffset):
            base = self.operand(op.value, width)
            return None if base is None else self._ring("add", width, base, const(op.offset, width))
        if not isinstance(op, ir.Value):
            return None
        node = self.value(op)
        if node is None:
            return None
        if node.width > width:
            return Node("trunc", width, node.signed, (node,))
        return node if node.width == width else None

    def value(self, v) -> Node | None:
        key = id(v)
        if key in self.memo:
            return self.memo[key]
        if key in self._busy:                   # a cycle not through a recognised phi
            return None
        self._busy.add(key)
        try:
            node = self._build(v)
        finally:
            self._busy.discard(key)
        self.memo[key] = node
        return node

    def _build(self, v) -> Node | None:
        if isinstance(v, ir.SpecialReg):
            return special_node(v.name)
        if not isinstance(v, ir.Result) or v.instr.guard is not None:
            return None
        ins = v.instr
        if ins.is_phi:
            return self._phi(ins, v)
        types = [m for m in ins.mods if m in TYPE_SIZES]
        if not types or any(t not in INT_TYPES for t in types) or len(v.instr.results) != 1:
            return None
        handler = getattr(self, "_op_" + ins.opcode, None)
        return handler(ins, types) if handler is not None else None

    # ------------------------------------------------------- builders
    def _ring(self, op: str, width: int, *args) -> Node | None:
        if any(a is None for a in args):
            return None
        if op == "mul" and any(a.has_iv for a in args):
            return None
        return Node(op, width, False, tuple(args))

    def _op_mov(self, ins, types):
        if len(ins.srcs) != 1:
            return None
        w, s = type_info(types[0])
        node = self.operand(ins.srcs[0], w)
        return node

    def _op_ld(self, ins, types):
        """``ld.param`` of one of the kernel's own scalar parameters."""
        addr = ins.srcs[0] if ins.srcs else None
        if "param" not in ins.mods or not self.fn.is_kernel or not isinstance(addr, ir.Addr) \
                or not isinstance(addr.base, ir.Sym) or any(m in ("v2", "v4") for m in ins.mods):
            return None
        var = self.program.resolve(ins, addr.base.name)
        index = next((i for i, p in enumerate(self.fn.params) if p is var), None)
        if index is None:
            return None
        w, s = type_info(types[0])
        return Node("param", w, s, data=(index, addr.base.offset + addr.offset, types[0]),
                    kind=EMPTY)

    def _binary(self, ins, types, op):
        if len(ins.srcs) != 2 or any(m in ("cc", "sat", "hi") for m in ins.mods):
            return None
        w, s = type_info(types[0])
        node = self._ring(op, w, self.operand(ins.srcs[0], w), self.operand(ins.srcs[1], w))
        if node is not None:
            node.signed = s
        return node

    def _op_add(self, ins, types):
        return self._binary(ins, types, "add")

    def _op_sub(self, ins, types):
        return self._binary(ins, types, "sub")

    def _op_mul(self, ins, types):
        if "wide" not in ins.mods:
            return self._binary(ins, types, "mul")
        if len(ins.srcs) != 2:
            return None
        w, s = type_info(types[0])
        a, b = (self._extend(self.operand(x, w), s, 2 * w) for x in ins.srcs)
        return self._ring("mul", 2 * w, a, b)

    def _op_mad(self, ins, types):
        if len(ins.srcs) != 3 or any(m in ("cc", "sat", "hi") for m in ins.mods):
            return None
        w, s = type_info(types[0])
        if "wide" in ins.mods:
            a, b = (self._extend(self.operand(x, w), s, 2 * w) for x in ins.srcs[:2])
            w = 2 * w
        else:
            a, b = (self.operand(x, w) for x in ins.srcs[:2])
        return self._ring("add", w, self._ring("mul", w, a, b), self.operand(ins.srcs[2], w))

    def _op_shl(self, ins, types):
        w, s = type_info(types[0])
        amount = ins.srcs[1] if len(ins.srcs) == 2 else None
        if amount is None:
            return None
        if not isinstance(amount, ir.Imm) or amount.kind != "int":
            a, n = self.operand(ins.srcs[0], w), self.operand(amount, 32)
            return None if a is None or n is None else self._exact("shl", w, s, a, n)
        k = amount.value
        factor = const(1 << k if 0 <= k < w else 0, w)
        return self._ring("mul", w, self.operand(ins.srcs[0], w), factor)

    def _op_cvta(self, ins, types):
        """``cvta`` to or from the global space: the executor's global
        addresses are generic addresses (backends/llvm/ops/memory.py, op_cvta)."""
        if "global" not in ins.mods or len(ins.srcs) != 1:
            return None
        w, s = type_info(types[0])
        return self.operand(ins.srcs[0], w)

    def _op_neg(self, ins, types):
        w, s = type_info(types[0])
        return self._ring("neg", w, self.operand(ins.srcs[0], w))

    def _op_not(self, ins, types):
        w, s = type_info(types[0])
        inner = self._ring("neg", w, self.operand(ins.srcs[0], w))
        return self._ring("sub", w, inner, const(1, w))

    def _op_cvt(self, ins, types):
        if len(types) != 2 or len(ins.srcs) != 1 or "sat" in ins.mods:
            return None
        (dw, ds), (sw, ss) = type_info(types[0]), type_info(types[1])
        node = self.operand(ins.srcs[0], sw)
        if node is None:
            return None
        if dw > sw:
            return self._extend(node, ss, dw)
        return Node("trunc", dw, ds, (node,)) if dw < sw else node

    def _extend(self, node, signed: bool, width: int) -> Node | None:
        if node is None or node.has_iv:
            return None
        return Node("ext", width, signed, (node,), data=signed)

    def _bitwise(self, ins, types, op):
        if len(ins.srcs) != 2:
            return None
        w, s = type_info(types[0])
        a, b = (self.operand(x, w) for x in ins.srcs)
        if a is None or b is None:
            return None
        return self._exact(op, w, s, a, b)

    def _op_or(self, ins, types):
        return self._bitwise(ins, types, "or")

    def _op_xor(self, ins, types):
        return self._bitwise(ins, types, "xor")

    def _op_and(self, ins, types):
        return self._bitwise(ins, types, "and")

    def _exact(self, op, w, s, *args, data=None) -> Node | None:
        """An operation that is not a ring operation: no induction variable."""
        if any(a.has_iv for a in args):
            return None
        return Node(op, w, s, tuple(args), data=data)

    def _op_set(self, ins, types):
        """``set.cmp.dtype.stype d, a, b`` with an integer d: all ones or 0."""
        cmp = next((SET_CMPS[m] for m in ins.mods if m in SET_CMPS), None)
        if len(types) != 2 or len(ins.srcs) != 2 or cmp is None:
            return None
        (dw, _), (sw, ss) = type_info(types[0]), type_info(types[1])
        if cmp[1] is not None:
            ss = cmp[1]
        a, b = (self.operand(x, sw) for x in ins.srcs)
        return None if a is None or b is None else \
            self._exact("set", dw, True, a, b, data=(cmp[0], ss))

    def _op_mul24(self, ins, types):
        if "lo" not in ins.mods or len(ins.srcs) != 2:
            return None
        w, s = type_info(types[0])
        a, b = (self.operand(x, w) for x in ins.srcs)
        return None if a is None or b is None else self._exact("mul24", w, s, a, b)

    def _exact_binary(self, ins, types, op):
        if len(ins.srcs) != 2 or any(m in ("hi", "wide", "sat", "cc") for m in ins.mods):
            return None
        w, s = type_info(types[0])
        a, b = self.operand(ins.srcs[0], w), self.operand(ins.srcs[1], 32 if op == "shr" else w)
        if a is None or b is None:
            return None
        return self._exact(op, w, s, a, b)

    def _op_shr(self, ins, types):
        return self._exact_binary(ins, types, "shr")

    def _op_div(self, ins, types):
        return self._exact_binary(ins, types, "div")

    def _op_rem(self, ins, types):
        return self._exact_binary(ins, types, "rem")

    def _op_min(self, ins, types):
        return self._exact_binary(ins, types, "min")

    def _op_max(self, ins, types):
        return self._exact_binary(ins, types, "max")

    # ------------------------------------------------------------ loops
    def _phi(self, phi, v) -> Node | None:
        """An induction variable ``phi(init, phi + S)`` of the loop headed here."""
        if self.loops is None:
            return None
        block = phi.block
        loop = next((lp for lp in self.loops.loops if lp.header is block), None)
        if loop is None:
            return merge_phi(self, phi, v)
        inside = {id(b) for b in loop.blocks}
        entering, steps = [], []
        for src, pred in zip(phi.srcs, phi.phi_blocks):
            (steps if id(pred) in inside else entering).append(src)
        if not entering or not steps or any(e is not entering[0] for e in entering):
            return None
        w = 8 * TYPE_SIZES.get(v.type, 0)
        step = self._common_step(steps, v, w)
        init = self.operand(entering[0], w) if isinstance(entering[0], (ir.Value, ir.Imm)) else None
        if step is None or init is None or init.has_iv:
            return None
        return Node("iv", w, False, (init, step), data=loop)

    def _common_step(self, values, phi_value, w) -> Node | None:
        """S when every back-edge value is ``phi + S`` (or ``phi - S'``)."""
        found = None
        for val in values:
            step = self._step_of(val, phi_value, w)
            if step is None or (found is not None and not same_const(found, step)):
                return None
            found = found or step
        return found

    def _step_of(self, val, phi_value, w, depth: int = 0) -> Node | None:
        """S when ``val`` is ``phi + S`` or ``phi - S`` (launch constant S),
        also through a chain of such adds (``(phi + S1) + S2``: S1 + S2)."""
        if not isinstance(val, ir.Result) or val.instr.guard is not None or depth > 8:
            return None
        ins = val.instr
        if ins.opcode not in ("add", "sub") or len(ins.srcs) != 2 or \
                any(m in ("cc", "sat") for m in ins.mods):
            return None
        a, b = ins.srcs
        if a is phi_value or (b is phi_value and ins.opcode == "add"):
            inner, other = None, (b if a is phi_value else a)
        else:                                    # (phi + S1) +/- S2, or S2 + (phi + S1)
            inner, other = self._step_of(a, phi_value, w, depth + 1), b
            if inner is None and ins.opcode == "add":
                inner, other = self._step_of(b, phi_value, w, depth + 1), a
            if inner is None:
                return None
        step = self.operand(other, w)
        if step is None or step.kind or step.has_iv:
            return None                          # the step must be a launch constant
        if ins.opcode == "sub":
            step = Node("neg", w, False, (step,))
        return step if inner is None else Node("add", w, False, (inner, step))


def same_const(a: Node, b: Node) -> bool:
    """Structurally equal launch-constant nodes (same formula)."""
    if a.op != b.op or a.width != b.width or a.data != b.data or len(a.args) != len(b.args):
        return False
    return all(same_const(x, y) for x, y in zip(a.args, b.args))
