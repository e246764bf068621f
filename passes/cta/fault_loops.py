"""Fault checks over loop iterations (CTA equivalence, rule 6, loops).

A grid-stride loop ``for (i = blockIdx.x*blockDim.x + threadIdx.x; i < n;
i += blockDim.x*gridDim.x) y[i] = ...`` accesses, in thread t of CTA c at
its k-th iteration, the address ``A(k) = B(c, t) + k*D``: an *affine*
formula of the loop's induction variable (docs/cta-equivalence.md, rule 6).
When the slice does not keep the access, a hybrid run checks it
(passes/memory/checked.py); this module lets CTA equivalence classify such a
check exactly instead of giving up:

* statically, :class:`AffineBuilder` builds the address as a cta_expr
  formula in which induction variables may also be sign- or zero-extended
  (``cvt``, ``mul.wide``) and multiplied by launch constants (``mul``,
  ``shl`` by an immediate, ``mad``), besides the ``add``/``sub`` that atoms
  allow; several loops' variables may appear (2-D grid-stride loops); each
  loop needs an exit test on an induction variable (rule 5), which bounds
  the iterations a lane can see to ``0 <= k <= K(c, t)``;
* for a launch, :func:`loop_fault_signature` evaluates ``B`` (F(c) + G(t)
  where separable) and the launch-constant steps ``D``, and gives each CTA
  a signature from which the set of iterations k in the box
  ``prod_l [0, K_l(c, t)]`` at which each thread's check fails follows
  exactly: all clean (0), or the id of the CTA's per-thread triples
  (status, B - lo, hi - B), where [lo, hi] are the first and last addresses
  the executor accepts in the segment the address must lie in (its home
  segment, passes/memory/provenance.py, or the one segment its range stays in), with
  the loops' iteration signatures, which fix every K_l(c, t).

Where exactness cannot be shown for a launch (an extension whose operand
may leave its type, a step that is not a multiple of the access size, an
address range that may cross segments or enter a state-space window) the
launch runs every CTA, with the reason (passes/cta/values.Unclassifiable).
"""
from __future__ import annotations

import numpy as np

from ptxc.passes.cta.expr import ExprBuilder
from ptxc.passes.cta.loop_bounds import loop_bound
from ptxc.passes.cta.nodes import Node
from ptxc.passes.cta.segments import home_segment
from ptxc.passes.cta.values import (LIMIT, Sep, Unclassifiable, bound, canon, guard, hi, lo,
                                    sep_range, type_range)


MANY = 1 << 20             # _triples' status: several loops move the address


class AffineBuilder(ExprBuilder):
    """cta_expr's builder, also allowing an induction variable under ``ext``
    (cvt, mul.wide) and ``mul`` by a launch constant: affine formulas of
    induction variables, for fault-check addresses only."""

    def _ring(self, op: str, width: int, *args) -> Node | None:
        if any(a is None for a in args):
            return None
        if op == "mul" and any(a.has_iv for a in args):
            if sum(a.has_iv for a in args) != 1 or any(a.kind for a in args if not a.has_iv):
                return None                     # the factor must be a launch constant
        return Node(op, width, False, tuple(args))

    def _extend(self, node, signed: bool, width: int) -> Node | None:
        if node is None:
            return None
        return Node("ext", width, signed, (node,), data=signed)


# ------------------------------------------------------------ evaluation
def loop_fault_signature(ev, check, segments) -> list:
    """Signature columns of a fault check whose address holds induction
    variables: per loop, its iteration signature (COUNT and K, or MIXED and
    F: equal columns give equal K(c, t) for every thread, as for exit-test
    atoms), then one column: 0 when every lane's check passes at every
    iteration it can reach, else an id of the CTA's per-thread triples.
    Raises Unclassifiable, naming the check's line, where this launch's
    values break a range or alignment condition."""
    try:
        return _signature(ev, check, segments)
    except Unclassifiable as e:
        raise Unclassifiable(f"the fault check at line {_line(check)}: {e}") from None


def _signature(ev, check, segments) -> list:
    cols, kmax, boxes, rows = [], {}, [], len(ev.cta[0])
    for loop, test in check.loops:
        lb = loop_bound(ev, test)
        cols += [np.broadcast_to(c, (rows,)) for c in lb.cols]
        kmax[id(loop)] = int(np.max(lb.k_hi)) if np.size(lb.k_hi) else 0
        boxes.append((id(loop), lb, np.broadcast_to(lb.k_hi, (rows,))))
    B, D = affine(ev, check.addr, kmax)
    nb = check.nbytes
    if any(d % nb for d in D.values()):
        raise Unclassifiable(f"its address steps by a non-multiple of its size ({nb} bytes)")
    for key, _, _ in boxes:
        D.setdefault(key, 0)
    if bound(np.asarray(B.F)) + bound(np.asarray(B.G)) + \
            sum(abs(kmax[k] * d) for k, d in D.items()) >= LIMIT:
        raise Unclassifiable("values too large")
    home = home_segment(ev, check, segments, len(segments.table))
    return cols + [_dirty_ids(ev, check, B, D, boxes, segments, home)]


def _line(check):
    return check.instr.loc.line if check.instr.loc else "?"


def affine(ev, node: Node, kmax: dict):
    """(B, D): the node's integer is ``B + sum_l k_l * D[l]`` (congruent to
    its bits modulo 2^width; exact wherever an ``ext`` reads it, checked for
    every k_l <= kmax[l]). B is F(c) + G(t) (F may be per CTA and thread
    when the value is not separable)."""
    if not node.has_iv:
        s = ev.as_sep(node)
        return (s if s is not None else Sep(ev.exact(node), 0)), {}
    op = node.op
    if op == "iv":
        init, _ = affine(ev, node.args[0], kmax)
        return init, {id(node.data): int(canon(ev.exact(node.args[1]), node.width, True))}
    if op in ("add", "sub"):
        (x, dx), (y, dy) = (affine(ev, a, kmax) for a in node.args)
        sign = 1 if op == "add" else -1
        d = dict(dx)
        for key, v in dy.items():
            d[key] = d.get(key, 0) + sign * v
        return guard(Sep(x.F + sign * y.F, x.G + sign * y.G)), d
    if op == "neg":
        x, dx = affine(ev, node.args[0], kmax)
        return Sep(-x.F, -x.G), {key: -v for key, v in dx.items()}
    if op == "mul":
        factor = next(a for a in node.args if not a.has_iv)
        other = next(a for a in node.args if a.has_iv)
        c = int(canon(ev.exact(factor), node.width, True))
        x, dx = affine(ev, other, kmax)
        if (bound(np.asarray(x.F)) + bound(np.asarray(x.G))) * abs(c) >= LIMIT:
            raise Unclassifiable("values too large")
        return Sep(x.F * c, x.G * c), {key: v * c for key, v in dx.items()}
    if op == "trunc":
        return affine(ev, node.args[0], kmax)
    if op == "ext":
        x, dx = affine(ev, node.args[0], kmax)
        _check_range(x, dx, kmax, node.args[0].width, node.data)
        return x, dx
    raise Unclassifiable(f"operation {op} on an induction variable")


def _check_range(x: Sep, d: dict, kmax: dict, width: int, signed: bool) -> None:
    """The extended value must be the integer for every reachable k."""
    low, high = type_range(width, signed)
    a, b = sep_range(x)
    a += sum(min(0, kmax.get(key, 0) * v) for key, v in d.items())
    b += sum(max(0, kmax.get(key, 0) * v) for key, v in d.items())
    if a < low or b > high:
        raise Unclassifiable("an induction variable in a checked address may leave the "
                             "range of its type")


def _rows(x, rows: int) -> np.ndarray:
    """F (a number, per CTA (rows, 1) or per CTA and thread) as (rows, 1 or threads)."""
    a = np.asarray(x, dtype=np.int64)
    a = a.reshape(1, 1) if a.ndim == 0 else a.reshape(-1, 1) if a.ndim == 1 else a
    return np.broadcast_to(a, (rows, a.shape[1]))


def _dirty_ids(ev, check, B: Sep, D: dict, boxes: list, segments, home) -> np.ndarray:
    """Per CTA: 0 when a conservative range test (every thread, every k up
    to the CTA's most iterations) shows every check passes, else the exact
    per-thread triples, numbered (``ev.ids``: the same triples in any chunk
    get the same number; all-clean triples are 0)."""
    rows, nb = len(ev.cta[0]), check.nbytes
    span_lo = sum(np.minimum(0, k_hi * D[key]) for key, _, k_hi in boxes)
    span_hi = sum(np.maximum(0, k_hi * D[key]) for key, _, k_hi in boxes)
    F = _rows(B.F, rows)
    low = F.min(axis=1) + lo(B.G) + span_lo
    high = F.max(axis=1) + hi(B.G) + span_hi
    aligned = np.all(np.asarray(B.G) % nb == 0) & (F % nb == 0).all(axis=1)
    out = np.zeros(rows, dtype=np.int64)
    todo = np.nonzero(~(aligned & _inside(low, high, nb, segments, home)))[0]
    if not todo.size:
        return out
    enter = entering(ev, check, rows)
    if enter is not None:                   # CTAs where no lane runs the loops: clean
        todo = todo[enter[todo].any(axis=1)]
        if not todo.size:
            return out
    triples = _triples(ev, check, B, D, boxes, segments, home, todo,
                       None if enter is None else enter[todo])
    flat = np.ascontiguousarray(triples.reshape(len(todo), -1))
    ids = ev.ids.setdefault(id(check), {})
    dirty = flat[:, 0::3].any(axis=1)
    out[todo] = [ids.setdefault(row.tobytes(), len(ids) + 1) if d else 0
                 for row, d in zip(flat, dirty.tolist())]
    return out


def entering(ev, check, rows: int):
    """(rows, threads) bool: the lanes that pass the entry conditions of
    every loop of the check (passes/cta_countdown.entry_conditions), or
    None when no loop has any. A lane that fails one never runs the loop,
    nor reaches a use of its induction variable after it (the header
    dominates every use), so it never executes the access."""
    conds = [c for _, test in check.loops for c in test.entry]
    if not conds:
        return None
    ok = np.ones((rows, ev.nthreads), dtype=bool)
    for cond, want in conds:
        ok &= (np.asarray(ev.exact(cond)) != 0) == want
    return ok


def _inside(low, high, nb: int, segments, home) -> np.ndarray:
    """Rows whose addresses [low, high] all pass the executor's check
    (given alignment): one segment (the home one if known), within its size."""
    seg = np.where(low >= 0, low, 0) >> segments.shift
    n = len(segments.table)
    size = segments.table[np.minimum(seg, n - 1)]
    ok = (low >= 0) & (seg == (np.where(high >= 0, high, 0) >> segments.shift)) & \
        (seg >= segments.first) & (seg < n) & \
        ((high & ((1 << segments.shift) - 1)) + nb <= size)
    return ok & (seg == home) if home is not None else ok


def _triples(ev, check, B: Sep, D: dict, boxes: list, segments, home, todo,
             enter=None) -> np.ndarray:
    """Per thread of the CTAs ``todo`` (shape (len(todo), threads, 3)): a
    status (0: the check passes at every reachable iteration, 1: it fails
    at every one, >= 2: at some) and, for the last, two numbers that with
    the steps D and the box of reachable k (fixed by the loops' signatures)
    say exactly at which k it fails. A(k) = B + sum k_l D_l passes iff it
    lies in [lo, hi], the addresses the check accepts in the segment the
    address must lie in, and B is aligned (D is a multiple of the size).
    When one loop j moves the thread's address (D_j != 0 < K_j), the status
    is 2 + j and the numbers are the first and last passing k_j (clipped to
    [0, K_j]: an interval, A being monotone in k_j); with more, the status
    is MANY and the numbers are B - lo and hi - B. Lanes outside ``enter``
    (never run the loops: entering()) get status 0, evaluated at the home
    segment's first address with no iterations."""
    rows, nt, nb = len(ev.cta[0]), ev.nthreads, check.nbytes
    base = np.broadcast_to(_rows(B.F, rows)[todo] + np.asarray(B.G, dtype=np.int64),
                           (len(todo), nt))
    Ks = {key: lb.per_thread(todo) for key, lb, _ in boxes}
    if enter is not None and home is not None:
        base = np.where(enter, base, home << segments.shift)
        Ks = {key: np.where(enter, K, 0) for key, K in Ks.items()}
    low = base + sum(np.minimum(0, K * D[key]) for key, K in Ks.items())
    high = base + sum(np.maximum(0, K * D[key]) for key, K in Ks.items())
    first, last, neg = _window(low, high, nb, segments, home)
    clean = (base % nb == 0) & ~neg & (low >= first) & (high <= last)
    bad = (base % nb != 0) | neg | (last < first) | (high < first) | (low > last)
    moving = {key: (K > 0) & (D[key] != 0) for key, K in Ks.items()}
    count = sum(moving.values())
    form, a, b = np.full(base.shape, MANY), base - first, last - base
    for j, key in enumerate(Ks):
        if D[key]:
            one = (count == 1) & moving[key]
            g1, g2 = _passing(base, D[key], first, last, Ks[key])
            form, a, b = np.where(one, 2 + j, form), np.where(one, g1, a), np.where(one, g2, b)
    status = np.where(clean, 0, np.where(bad, 1, form))
    if enter is not None:
        status = np.where(enter, status, 0)
    part = status >= 2
    return np.stack([status, np.where(part, a, 0), np.where(part, b, 0)], axis=-1)


def _window(low, high, nb: int, segments, home):
    """(lo, hi, negative) per thread: the first and last address the
    executor's check accepts in the segment that the addresses [low, high]
    must lie in (the home segment, or the one they all lie in), and whether
    they are all negative (2^64 - x: far past every segment, all fail)."""
    shift, n = segments.shift, len(segments.table)
    if np.any((high >= 1 << shift) & (low < segments.first << shift)):
        raise Unclassifiable("an address checked for faults may lie in a state-space window")
    neg = high < 0
    if home is not None:
        h = np.full(low.shape, home, dtype=np.int64)
    else:
        h = np.where(low >= 0, low, 0) >> shift
        if np.any(~neg & ((low < 0) | (h != (np.where(high >= 0, high, 0) >> shift)))):
            raise Unclassifiable("a checked address may cross segments")
    size = np.where(h < n, segments.table[np.minimum(h, n - 1)], 0)
    return h << shift, (h << shift) + size - nb, neg


def _passing(base, d: int, first, last, K):
    """(g1, g2): the k in [0, K] with first <= base + k*d <= last, an
    interval (d != 0); empty when g1 > g2."""
    if d > 0:
        g1, g2 = -((base - first) // d), (last - base) // d
    else:
        g1, g2 = -((last - base) // -d), (base - first) // -d
    return np.maximum(g1, 0), np.minimum(g2, K)
