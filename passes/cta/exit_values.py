"""Values after a loop and at a join: formula nodes (CTA equivalence, rules 4
and 5; passes/cta/expr.py).

nvcc splits a counted loop it unrolls into a remainder loop and an unrolled
loop (or the other way round; tests/cuda/countdown.cu). The second loop
starts where the first one ended: its induction variable enters through a
phi at the join after the first loop, ``phi(i0 from the branch that skips
the first loop, i0 + R*S from the first loop's exit)``. Two formula nodes
make such values formulas (docs/cta-equivalence.md, "Classes of a launch"):

* ``atexit(v)``: the value of v, defined in loop L (its induction
  variables' ring formula), seen after L exits: L has one exiting block X,
  whose branch is L's exit test (rule 5), and v's block dominates X, so v
  was last computed in the lane's last iteration k = K(c, t), the number
  of times the exit test said "stay" (exact: passes/cta/loop_bounds.loop_bound,
  passes/cta/countdown.py). Its value is v with each ``iv`` of L replaced by
  ``init + K*S``. For a lane that never ran L, K means nothing; such a lane
  does not reach the use (below).
* ``select(p, a, b)``: a phi at a block J that is not a loop header, whose
  two incoming edges follow the two outcomes of the branch that ends J's
  immediate dominator D (D and J in the same innermost loop; each incoming
  edge reachable from one successor of D only, without passing D or J): the
  lane's last visit of D before J decided which edge it came by, and p
  (a comparison formula without induction variables) has the same value at
  every visit. select is evaluated exactly, per (CTA, thread).

This module builds the two nodes: ExprBuilder (passes/cta/expr.py) calls
:func:`merge_phi` for a phi that is not an induction variable of the loop
it heads; passes/cta/evaluator.py (``evaluate``) evaluates them for a
launch. :func:`condition` and :func:`reaches` also give
passes/cta/countdown.py the entry conditions of a loop.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.ir.types import TYPE_SIZES

from ptxc.passes.cta.nodes import SET_CMPS, INT_TYPES, Node, iv_loops, type_info


def merge_phi(builder, phi, v) -> Node | None:
    """The select node of a two-way join phi, or None."""
    dom, loops = builder.dom, builder.loops
    J = phi.block
    if dom is None or loops is None or len(phi.srcs) != 2:
        return None
    D = dom.idom.get(J)
    if D is None or loops.loop_of(D) is not loops.loop_of(J):
        return None
    bra = D.terminator
    if bra is None or bra.opcode != "bra" or not isinstance(bra.guard, ir.Result) or \
            not bra.srcs or not isinstance(bra.srcs[0], ir.LabelRef):
        return None
    target = bra.srcs[0].block
    others = [s for s in D.succs if s is not target]
    cond = condition(builder, bra.guard)
    if cond is None or len(others) != 1:
        return None
    taken_on_true = (bra.guard.index == 0) != bra.guard_neg
    w = 8 * TYPE_SIZES.get(v.type, 0)
    sides = {}
    for src, pred in zip(phi.srcs, phi.phi_blocks):
        side = _side_of(pred, D, J, target, others[0])
        node = _incoming(builder, src, pred, J, w)
        if side is None or side in sides or node is None or node.has_iv:
            return None
        sides[side] = node
    if len(sides) != 2:
        return None
    a, b = (sides[True], sides[False]) if taken_on_true else (sides[False], sides[True])
    return Node("select", w, False, (cond, a, b))


def condition(builder, guard) -> Node | None:
    """The setp that computes ``guard`` as a ``set`` node (-1 when true);
    results[1] of ``setp p|q`` is the negation, which select's sides
    account for (taken_on_true)."""
    ins = guard.instr
    types = [m for m in ins.mods if m in INT_TYPES]
    cmp = next((SET_CMPS[m] for m in ins.mods if m in SET_CMPS), None)
    if ins.opcode != "setp" or ins.guard is not None or len(ins.srcs) != 2 or \
            len(types) != 1 or cmp is None:
        return None
    width, signed = type_info(types[0])
    if cmp[1] is not None:
        signed = cmp[1]
    x, y = (builder.operand(s, width) for s in ins.srcs)
    if x is None or y is None or x.has_iv or y.has_iv:
        return None
    return Node("set", 32, True, (x, y), data=(cmp[0], signed))


def _side_of(pred, D, J, target, other) -> bool | None:
    """True if the edge pred -> J follows D's branch taken, False if not
    taken, None if it may follow either."""
    if pred is D:
        return True if target is J else False if other is J else None
    by_taken, by_other = reaches(target, pred, D, J), reaches(other, pred, D, J)
    return None if by_taken == by_other else by_taken


def reaches(start, goal, D, J) -> bool:
    """goal is reachable from start without passing D or J."""
    seen, todo = set(), [start]
    while todo:
        b = todo.pop()
        if b is D or b is J or id(b) in seen:
            continue
        if b is goal:
            return True
        seen.add(id(b))
        todo.extend(b.succs)
    return False


def _incoming(builder, src, pred, J, w: int) -> Node | None:
    """The node of a phi input: an exit value when pred -> J leaves a loop."""
    loops = builder.loops
    L = loops.loop_of(pred)
    if L is None or loops.loop_of(J) is not L.parent:
        return builder.operand(src, w)
    return exit_value(builder, src, L, pred, w)


def exit_value(builder, src, L, X, w: int) -> Node | None:
    """``atexit`` of ``src`` leaving loop L at block X (see the module doc)."""
    inside = {id(b) for b in L.blocks}
    exiting = [b for b in L.blocks if any(id(s) not in inside for s in b.succs)]
    test = builder.loop_test(L) if builder.loop_test is not None else None
    node = builder.operand(src, w)
    if node is None or not node.has_iv:
        return node                     # no iv: the same value in every iteration
    if exiting != [X] or test is None or X.terminator is None or \
            X.terminator.guard is None or X.terminator.guard.instr is not test.instr:
        return None
    if any(loop is not L for loop in iv_loops(node)) or not isinstance(src, ir.Result) or \
            not builder.dom.dominates(src.instr.block, X):
        return None
    out = Node("atexit", w, False, (node,), data=(L, test), kind=frozenset(("c", "t")))
    out.has_iv = False
    return out
