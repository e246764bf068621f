"""Loop exit tests ``<``, ``<=``, ``>``, ``>=`` on an induction variable, and
comparisons inside a loop (CTA equivalence, rule 5; docs/cta-equivalence.md,
"Classes of a launch": an exit test, an atom inside a loop).

An exit test ``B + k*S cmp b`` keeps a lane in its loop K(c, t) times: the
number of k >= 0 with ``E + k*P < 0`` (P > 0) after normalising, where the
values the induction side takes up to one step past the bound must fit the
comparison's type. :func:`loop_bound` gives the test's LoopBound
(passes/cta/values.py) for the chunk's CTAs, memoised per chunk for all its
users: the test's own signature (:func:`loop_signature`), comparisons
inside the loop (:func:`inner_signature`: a threshold in k, clipped at the
loop's bound), values after the loop (passes/cta/evaluator.py) and fault
checks over it (passes/cta/fault_loops.py). Tests ``==``/``!=`` go to
passes/cta/countdown.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ptxc.passes.cta.countdown import countdown_bound, row_ids
from ptxc.passes.cta.nodes import Node
from ptxc.passes.cta.values import (COUNT, MIXED, LoopBound, Sep, Unclassifiable, canon, guard,
                                    hi, lo, operand, sep_range, type_range)

if TYPE_CHECKING:
    from ptxc.passes.cta.evaluator import Evaluator


def loop_signature(ev: Evaluator, atom) -> list:
    """Signature of a loop exit test ``a cmp b`` where one side is ``B + k*S``."""
    return loop_bound(ev, atom).cols


def loop_bound(ev: Evaluator, test) -> LoopBound:
    """The LoopBound of an exit test: ``<``, ``<=``, ``>``, ``>=`` here,
    ``==``/``!=`` in passes/cta/countdown.py."""
    key = ("loop_bound", id(test))              # shared by the test's users, per chunk
    if key not in ev.memo:
        ev.memo[key] = _loop_bound(ev, test)
    return ev.memo[key]


def _loop_bound(ev: Evaluator, test) -> LoopBound:
    if test.cmp in ("eq", "ne"):
        return countdown_bound(ev, test)
    E, P, k_hi, k_lo = loop_counts(ev, test)
    if k_hi is None:                    # E per CTA and thread: K(c, t) exactly
        K = _iterations(np.broadcast_to(E.F + np.asarray(E.G), (len(E.F), ev.nthreads)), P)
        k_hi, k_lo = K.max(axis=1), K.min(axis=1)
        return LoopBound(k_hi, k_lo, row_ids(ev, test, K, k_hi != k_lo), lambda rows: K[rows])

    def per_thread(rows):
        x = np.broadcast_to(E.F[rows, None] + np.asarray(E.G, dtype=np.int64),
                            (len(rows), ev.nthreads))
        return _iterations(x, P)
    # equal F(c) give equal E(c, t) = F(c) + G(t), hence equal K(c, t)
    return LoopBound(k_hi, k_lo, np.broadcast_to(E.F, k_hi.shape), per_thread)


def loop_counts(ev: Evaluator, test):
    """For an exit test ``<``, ``<=``, ``>``, ``>=``: (E, P, most and fewest
    iterations over the threads of each CTA) where a lane stays while
    ``E + k*P < 0`` (P > 0); (E, P, None, None) when E is per CTA and
    thread."""
    B, S, b, cmp = iv_comparison(ev, test)
    if not test.stay:
        cmp = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}[cmp]
    up = cmp in ("lt", "le")
    if S == 0 or (S > 0) != up:
        raise Unclassifiable("a loop whose step does not move toward its exit")
    _check_loop_range(B, b, S, cmp, test)
    E, P = _normalise(B, b, S, cmp)
    if per_thread(E.F):
        return E, P, None, None
    F = np.broadcast_to(np.asarray(E.F, dtype=np.int64).reshape(-1), (len(ev.cta[0]),))
    E = Sep(F, E.G)
    return E, P, _iterations(F + lo(E.G), P), _iterations(F + hi(E.G), P)


def per_thread(F) -> bool:
    """Is F (of a Sep) per CTA and thread (exact evaluation)?"""
    return np.ndim(F) == 2 and np.shape(F)[1] > 1


def iv_comparison(ev: Evaluator, test):
    """(B, S, b, cmp): the test is ``B + k*S cmp b`` (the induction side first)."""
    iv_left = test.a.has_iv
    side, other = (test.a, test.b) if iv_left else (test.b, test.a)
    B, coeff, iv = iv_parts(ev, side)
    if coeff not in (1, -1):
        raise Unclassifiable("a scaled induction variable")
    S = coeff * int(canon(ev.exact(iv.args[1]), iv.width, True))
    b = operand(ev, other, test)
    if b is None:
        raise Unclassifiable(f"the loop test at line {test.line} needs exact values")
    cmp = test.cmp if iv_left else {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[test.cmp]
    return B, S, b, cmp


def _normalise(B: Sep, b: Sep, S: int, cmp: str):
    """(E, P > 0) with ``B + k*S cmp b`` iff ``E + k*P < 0``, for cmp lt/le
    with S > 0 or gt/ge with S < 0."""
    up = cmp in ("lt", "le")
    E = Sep(B.F - b.F, B.G - b.G) if up else Sep(b.F - B.F, b.G - B.G)
    if cmp in ("le", "ge"):
        E = Sep(E.F, E.G - 1)
    return E, (S if up else -S)


def inner_signature(ev: Evaluator, atom) -> list:
    """Signature of a comparison on an induction variable that is not its
    loop's exit test: the loop's exit test ``atom.bound`` says a lane runs at
    most K iterations (per CTA, over its threads); the outcome for k = 0..K
    is a threshold in k, so the number of leading k with outcome T (clipped
    at K + 1) gives it, where T is the comparison or its negation."""
    k_max = loop_bound(ev, atom.bound).k_hi
    B, S, b, cmp = iv_comparison(ev, atom)
    if per_thread(B.F):
        raise Unclassifiable(f"the comparison at line {atom.line} starts from a value "
                             f"that is not separable")
    if S == 0:
        raise Unclassifiable("an induction variable with step 0")
    top = int(np.max(k_max)) if np.size(k_max) else 0
    low, high = type_range(atom.width, atom.signed)
    B_lo, B_hi = sep_range(B)
    b_lo, b_hi = sep_range(b)
    if B_lo + min(0, top * S) < low or B_hi + max(0, top * S) > high or b_lo < low or b_hi > high:
        raise Unclassifiable(f"the comparison at line {atom.line} may leave the range of its type")
    if S < 0:                                   # -B + k*(-S) cmp' -b
        B, b, S = Sep(-B.F, -B.G), Sep(-b.F, -b.G), -S
        cmp = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[cmp]
    T = {"lt": "lt", "le": "le", "gt": "le", "ge": "lt"}[cmp]     # gt/ge: outcome is not T
    E, P = _normalise(B, b, S, T)
    F = np.asarray(E.F, dtype=np.int64).reshape(-1)
    clip = np.asarray(k_max, dtype=np.int64).reshape(-1) + 1
    n_hi = np.minimum(_iterations(F + lo(E.G), P), clip)
    n_lo = np.minimum(_iterations(F + hi(E.G), P), clip)
    uniform = n_hi == n_lo
    return [np.where(uniform, COUNT, MIXED), np.where(uniform, n_hi, F), clip]


def _iterations(E, P: int):
    """Number of k >= 0 with E + k*P < 0."""
    return np.where(E >= 0, 0, (-E + P - 1) // P)


def _check_loop_range(B: Sep, b: Sep, S: int, cmp: str, atom) -> None:
    """The values the induction side takes before the lane leaves the loop
    (at most one step past the bound) must be exact in the comparison type."""
    low, high = type_range(atom.width, atom.signed)
    b_lo, b_hi = sep_range(b)
    B_lo, B_hi = sep_range(B)
    if cmp in ("lt", "le"):
        top = max(B_hi, b_hi + S - (1 if cmp == "lt" else 0))
        ok = B_lo >= low and top <= high
    else:
        bottom = min(B_lo, b_lo + S + (1 if cmp == "gt" else 0))
        ok = bottom >= low and B_hi <= high
    if not ok or b_lo < low or b_hi > high:
        raise Unclassifiable(f"the loop test at line {atom.line} may leave the range of its type")


def iv_parts(ev: Evaluator, node: Node):
    """(value at k = 0 as F + G, coefficient of k*S, the iv node) of a side
    built from one induction variable with add/sub/neg/mov/trunc."""
    if node.op == "iv":
        init = ev.as_sep(node.args[0])
        if init is None:            # per CTA and thread (F of shape (rows, threads))
            x = np.asarray(ev.exact(node.args[0]), dtype=np.int64)
            init = Sep(np.broadcast_to(x, (len(ev.cta[0]), ev.nthreads)), 0)
        return init, 1, node
    if not node.has_iv:
        s = ev.as_sep(node)
        if s is None:
            raise Unclassifiable("a loop bound that is not separable")
        return s, 0, None
    parts = [iv_parts(ev, a) for a in node.args]
    ivs = [p[2] for p in parts if p[2] is not None]
    if len(ivs) != 1:
        raise Unclassifiable("two induction variables in one comparison")
    iv = ivs[0]
    if node.op in ("add", "sub"):
        (x, cx, _), (y, cy, _) = parts
        sign = 1 if node.op == "add" else -1
        return guard(Sep(x.F + sign * y.F, x.G + sign * y.G)), cx + sign * cy, iv
    if node.op == "neg":
        x, cx, _ = parts[0]
        return Sep(-x.F, -x.G), -cx, iv
    if node.op == "trunc":
        return parts[0]
    raise Unclassifiable(f"operation {node.op} on an induction variable")
