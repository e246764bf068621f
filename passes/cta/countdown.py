"""Loop exit tests ``!=`` and ``==`` on an induction variable (CTA
equivalence, rule 5; docs/cta-equivalence.md, "Classes of a launch").

nvcc turns a counted loop whose trip count it can compute (a grid-stride
loop with a parameter stride, ``#pragma unroll``, a ``for (k = 0; k < n;
k++)`` it unrolls) into a register counted down to 0, or up to the trip
count, with the exit test ``setp.ne ... ; @%p bra`` (tests/cuda/countdown.cu).
The test side is ``V(k) = B + k*S`` at the lane's k-th evaluation (k back
edges since it entered the loop), modulo 2^w (w: the comparison's width),
and b the other operand. PTX compares bits, so the test is exact in modular
arithmetic without any range condition:

* a lane that leaves when ``V(k) == b`` (``!=`` keeps it in) stays exactly
  K times, K the least k >= 0 with ``k*S == b - B (mod 2^w)``: with
  ``S = 2^v * s`` (s odd), a solution exists iff 2^v divides ``d = (b - B)
  mod 2^w``, and then ``K = (d / 2^v) * s^-1 mod 2^(w - v)`` (every other
  solution differs by a multiple of 2^(w - v)); with none the lane never
  leaves (K = NEVER);
* a lane that leaves when ``V(k) != b`` stays once if ``B == b`` (then
  ``V(1) = b + S != b``, S being nonzero mod 2^w), else never (0 times).

So K(c, t) is the exact number of iterations, for every lane, whether or
not (b - B) is a multiple of S with the right sign: when it is not, the
register wraps around and K is the iteration at which it meets b, or NEVER.
A wrapped or never-ending count makes a large K, which the other users of
the loop's bound (fault checks over the loop, comparisons inside it) refuse
through their range checks (passes/cta/values.Unclassifiable); the exit
test itself classifies CTAs by K for every thread.

:func:`countdown_bound` is the LoopBound of such a test, for
passes/cta/loop_bounds.loop_bound. The static part,
:func:`entry_conditions`, finds the branches every lane entering a loop
passed (with passes/cta/exit_values.py's condition and reaches), for
passes/cta/equivalence.py.
"""
from __future__ import annotations

import numpy as np

from ptxc import ir

from ptxc.passes.cta.exit_values import condition, reaches
from ptxc.passes.cta.values import LIMIT, LoopBound, Unclassifiable, canon


NEVER = LIMIT               # K of a lane that never leaves the loop


def countdown_bound(ev, test) -> LoopBound:
    """The LoopBound (passes/cta/values.py) of an exit test ``==``/``!=``."""
    X, S, iv = _side(ev, test.a if test.a.has_iv else test.b)
    other = test.b if test.a.has_iv else test.a
    w = test.width
    S %= 1 << w
    if S == 0:
        raise Unclassifiable(f"the loop test at line {test.line}: an induction variable "
                             f"with step 0")
    d = _mod(np.asarray(ev.exact(other), dtype=np.int64) - np.asarray(X, dtype=np.int64), w)
    leave_on_equal = (test.cmp == "ne") == bool(test.stay)
    K = _meet(d, S, w) if leave_on_equal else np.where(d == 0, 1, 0)
    for cond, want in test.entry:           # lanes that never enter the loop: K = 0
        K = np.where((np.asarray(ev.exact(cond)) != 0) == want, K, 0)
    rows, nt = len(ev.cta[0]), ev.nthreads
    K = _rows(K, rows)
    k_hi, k_lo = K.max(axis=1), K.min(axis=1)
    return LoopBound(k_hi, k_lo, row_ids(ev, test, K, k_hi != k_lo),
                     lambda todo: np.broadcast_to(K[todo], (len(todo), nt)))


def _side(ev, node):
    """(the bits of the induction side at k = 0, its step S per iteration,
    the iv node) for a side built from one induction variable with
    add/sub/neg/trunc (cta_expr allows nothing else around an iv)."""
    if node.op == "iv":
        step = int(canon(ev.exact(node.args[1]), node.width, True))
        return np.asarray(ev.exact(node.args[0]), dtype=np.int64), step, node
    if not node.has_iv:
        return np.asarray(ev.exact(node), dtype=np.int64), 0, None
    parts = [_side(ev, a) for a in node.args]
    ivs = [p for p in parts if p[2] is not None]
    if len(ivs) != 1:
        raise Unclassifiable("two induction variables in one comparison")
    if node.op in ("add", "sub"):
        (x, sx, _), (y, sy, _) = parts
        sign = 1 if node.op == "add" else -1
        return x + sign * y, sx + sign * sy, ivs[0][2]
    if node.op == "neg":
        x, sx, iv = parts[0]
        return -x, -sx, iv
    if node.op == "trunc":
        return parts[0]
    raise Unclassifiable(f"operation {node.op} on an induction variable")


def _mod(x, w: int) -> np.ndarray:
    """``x mod 2^w`` as uint64 (int64 arithmetic wraps modulo 2^64)."""
    u = np.asarray(x, dtype=np.int64).view(np.uint64)
    return u if w >= 64 else u & np.uint64((1 << w) - 1)


def _meet(d: np.ndarray, S: int, w: int) -> np.ndarray:
    """The least k >= 0 with ``k*S == d (mod 2^w)`` (S != 0 mod 2^w), or
    NEVER; d as uint64 in [0, 2^w)."""
    v = (S & -S).bit_length() - 1          # 2^v exactly divides S
    inv = pow(S >> v, -1, 1 << (w - v))
    low = np.uint64((1 << v) - 1)
    k = (d >> np.uint64(v)) * np.uint64(inv)        # wraps modulo 2^64
    if w - v < 64:
        k &= np.uint64((1 << (w - v)) - 1)
    solvable = (d & low) == 0
    if np.any(solvable & (k >= np.uint64(NEVER))):
        raise Unclassifiable("a loop count too large")
    return np.where(solvable, k, np.uint64(NEVER)).astype(np.int64)


def _rows(K, rows: int) -> np.ndarray:
    """K (a number, per CTA, per thread or per pair) as (rows, 1 or threads)."""
    a = np.asarray(K, dtype=np.int64)
    a = a.reshape(1, 1) if a.ndim == 0 else a.reshape(-1, 1) if a.ndim == 1 else a
    return np.broadcast_to(a, (rows, a.shape[1]))


def row_ids(ev, test, K: np.ndarray, mixed: np.ndarray) -> np.ndarray:
    """Per CTA whose threads stay different numbers of times: a number for
    its row of K(c, t) (equal rows, equal numbers, across chunks)."""
    out = np.zeros(K.shape[0], dtype=np.int64)
    todo = np.nonzero(mixed)[0]
    if todo.size:
        ids = ev.ids.setdefault(("loop", id(test)), {})
        rows = np.ascontiguousarray(K[todo])
        out[todo] = [ids.setdefault(r.tobytes(), len(ids) + 1) for r in rows]
    return out


# ------------------------------------------------------------- static part
def entry_conditions(builder, loop) -> tuple:
    """((cond, outcome), ...): branches that every lane entering ``loop``
    passed with that outcome. For each block D that dominates the loop's
    header H and ends with ``@p bra`` on a comparison formula p without
    induction variables (passes/cta/exit_values.condition): if H cannot be
    reached from one successor of D without passing D again, a lane at H
    left D, the last time, by the other one, and p has the same value at
    every visit of D. A lane that fails one of these never runs the loop,
    so its K is irrelevant; countdown_bound sets it to 0, which keeps the
    loop's other users (fault checks, comparisons inside) in range."""
    dom, H, out = builder.dom, loop.header, []
    D = dom.idom.get(H)
    while D is not None:
        bra = D.terminator
        if bra is not None and bra.opcode == "bra" and isinstance(bra.guard, ir.Result) and \
                bra.srcs and isinstance(bra.srcs[0], ir.LabelRef) and len(D.succs) == 2:
            target = bra.srcs[0].block
            other = next((s for s in D.succs if s is not target), None)
            cond = condition(builder, bra.guard)
            if cond is not None and other is not None:
                taken_on_true = (bra.guard.index == 0) != bra.guard_neg
                by_taken = target is H or reaches(target, H, D, D)
                by_other = other is H or reaches(other, H, D, D)
                if by_taken != by_other:
                    out.append((cond, taken_on_true == by_taken))
        D = dom.idom.get(D)
    return tuple(out)
