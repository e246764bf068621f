"""CTA classes of one launch: evaluate the atoms of the CTA-equivalence
condition (passes/cta/equivalence.py) for every CTA and group the CTAs whose
signatures agree (docs/cta-equivalence.md has the proof of exactness).

Signatures (two or more integer columns per atom): for ``a cmp b`` with
separable operands, all true / all false / (mixed, F(c)) where ``F + G =
a - b`` (equal F gives equal outcomes in every thread); with exact operands,
all true / all false / (mixed, the packed outcome bits of every thread). For
a loop exit test ``B + k*S cmp b``: the number of iterations that stay in the
loop when it is the same for every thread, else mixed with F(c) (or a
number for the CTA's row of iterations when B is exact, and for exit tests
``!=``/``==``: passes/cta/countdown.py). LoopBound (passes/cta/values.py,
passes/cta/loop_bounds.py) holds what an exit test says, for atoms, atoms
inside the loop and fault checks over it.
CTAs with equal signatures form a class; the smallest linear CTA id of a
class is its representative.

The top of the launch side of passes/cta. Below it, bottom to top: values
(Exact, Sep and the range checks), segments (the executor's address
check), countdown and loop_bounds (exit tests, rule 5), evaluator (node
values), fault_loops (fault checks over loops, rule 6). Here: classify,
the signature columns of atoms (rule 4) and of fault checks (rule 6).
"""
from __future__ import annotations

import numpy as np

from ptxc.passes.cta.evaluator import Evaluator
from ptxc.passes.cta.fault_loops import loop_fault_signature
from ptxc.passes.cta.loop_bounds import inner_signature, loop_signature
from ptxc.passes.cta.segments import SegmentSizes, bad_lanes, clean_ctas, home_segment
from ptxc.passes.cta.values import (FALSE, LIMIT, MIXED, TESTS, TRUE, Sep, Unclassifiable, canon,
                                    hi, lo, operand)

CHUNK = 1 << 18                 # CTAs evaluated at once
EXACT_CHUNK = 1 << 20           # CTA x thread values per chunk in exact evaluation
EXACT_TOTAL = 1 << 26           # CTA x thread values of a whole launch in exact evaluation
SEPARABLE, EXACT = 0, 1                 # the first column of an atom: how it was evaluated


class CtaClasses:
    """``reps`` (representative linear CTA ids, ascending), ``counts``
    (members per class) and ``cta_class`` (class index of every CTA; None
    when it was not kept: a grid too large for per-CTA numbers)."""

    def __init__(self, reps: np.ndarray, counts: np.ndarray, cta_class: "np.ndarray | None"):
        self.reps, self.counts, self.cta_class = reps, counts, cta_class

    def __len__(self) -> int:
        return len(self.reps)


def classify(condition, kernel, grid, block, params: bytes, offsets: list,
             segments: "SegmentSizes | None" = None, keep: bool = True) -> CtaClasses:
    """The classes of a launch (raises Unclassifiable). ``segments``: the
    launch's buffer sizes, needed when the condition has fault checks;
    ``keep``: keep the class of every CTA (``cta_class``; not for grids
    too large for per-CTA numbers). A condition without atoms or fault
    checks (nothing depends on %ctaid) is one class at once, whatever the
    grid's size (a grid of 65535 x 65535 CTAs)."""
    if condition.checks and segments is None:
        raise Unclassifiable("the fault checks need the launch's buffer sizes")
    nctas = grid[0] * grid[1] * grid[2]
    if not condition.atoms and not condition.checks:
        return CtaClasses(np.zeros(1, dtype=np.int64), np.array([nctas], dtype=np.int64),
                          np.zeros(nctas, dtype=np.int64) if keep else None)
    nthreads = block[0] * block[1] * block[2]
    ev = Evaluator(grid, block, params, offsets)
    chunk = min(CHUNK, max(1, EXACT_CHUNK // nthreads))
    ev.exact_allowed = nctas * nthreads <= EXACT_TOTAL
    rows: dict[tuple, int] = {}
    reps, counts = [], []
    cta_class = np.empty(nctas, dtype=np.int64) if keep else None
    for begin in range(0, nctas, chunk):
        end = min(nctas, begin + chunk)
        ev.set_ctas(begin, end)
        cols = [np.zeros(end - begin, dtype=np.int64)]
        for atom in condition.atoms:
            cols.extend(np.broadcast_to(np.asarray(c, dtype=np.int64).reshape(-1), (end - begin,))
                        if np.size(c) in (1, end - begin) else _bad_shape()
                        for c in signature(ev, atom))
        for check in condition.checks:
            cols.extend(fault_signature(ev, check, segments))
        keys, first, local = unique_rows(np.stack(cols, axis=1))
        mapping = np.empty(len(keys), dtype=np.int64)
        for j, key in enumerate(map(tuple, keys.tolist())):
            cls = rows.get(key)
            if cls is None:
                cls = rows[key] = len(reps)
                reps.append(begin + int(first[j]))
                counts.append(0)
            mapping[j] = cls
        ids = mapping[local.reshape(-1)]
        if cta_class is not None:
            cta_class[begin:end] = ids
        for cls, n in zip(*np.unique(ids, return_counts=True)):
            counts[cls] += int(n)
    return in_cta_order(np.array(reps, dtype=np.int64), np.array(counts, dtype=np.int64),
                        cta_class)


def in_cta_order(reps, counts, cta_class) -> CtaClasses:
    """The classes numbered by ascending representative: the reduced run
    runs them in this order and stops at the first error, which must be the
    error of the smallest failing CTA, as in the run of every CTA."""
    order = np.argsort(reps, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return CtaClasses(reps[order], counts[order], rank[cta_class] if cta_class is not None else None)


def fault_signature(ev, check, segments: SegmentSizes) -> list:
    """Columns of the fault check ``check`` for the chunk's CTAs: the packed
    bits of the threads whose address would fail the executor's check
    (backends/llvm/ops/resolve.py / prelude_ir.RESOLVE: segment in the table, offset + size
    within it, natural alignment; provenance_ir: the home segment). Equal
    bits in two CTAs whose traces agree mean the same lanes fail at the same
    executions (docs/cta-equivalence.md). A separable address F(c) + G(t)
    is first tested per CTA over G's range: a CTA whose whole range lies in
    its home segment, aligned, has all-zero bits without evaluating every
    thread; only the others are evaluated exactly. An address over loop
    iterations is classified by passes/cta/fault_loops.py."""
    if check.loops:
        return loop_fault_signature(ev, check, segments)
    rows = len(ev.cta[0])
    home = home_segment(ev, check, segments, len(segments.table))
    v = ev.value(check.addr)
    if isinstance(v, Sep):
        F = np.broadcast_to(np.asarray(v.F, dtype=np.int64).reshape(-1), (rows,))
        G = np.broadcast_to(np.asarray(v.G, dtype=np.int64).reshape(-1), (ev.nthreads,))
        clean = clean_ctas(F, G, check.nbytes, segments, home)
        bad = np.zeros((rows, ev.nthreads), dtype=bool)
        todo = np.nonzero(~clean)[0]
        if todo.size:
            x = (F[todo, None] + G[None, :]).astype(np.int64).view(np.uint64)
            bad[todo] = bad_lanes(x, check.nbytes, segments, home)
    else:                   # per CTA, per thread or per pair, as the value varies
        x = np.atleast_2d(np.asarray(ev.exact(check.addr), dtype=np.int64)).view(np.uint64)
        bad = np.broadcast_to(bad_lanes(x, check.nbytes, segments, home), (rows, ev.nthreads))
    bits = np.packbits(bad, axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    words = np.ascontiguousarray(bits).view(np.int64)
    return [words[:, k] for k in range(words.shape[1])]


def unique_rows(table: np.ndarray):
    """(distinct rows, index of each one's first occurrence, row -> distinct
    row): the rows are numbered column by column (mixed radix of each
    column's distinct values), which is much faster than sorting whole rows."""
    code = np.zeros(table.shape[0], dtype=np.int64)
    radix = 1
    for j in range(table.shape[1]):
        values, inverse = np.unique(table[:, j], return_inverse=True)
        if len(values) == 1:
            continue
        if radix * len(values) >= LIMIT:
            return np.unique(table, axis=0, return_index=True, return_inverse=True)
        code = code * len(values) + inverse.reshape(-1)
        radix *= len(values)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return table[first], first, inverse


def _bad_shape():
    raise AssertionError("a signature column of the wrong shape")


# ------------------------------------------------------------- atoms
def signature(ev: Evaluator, atom) -> list:
    """Signature columns of one atom for the CTAs of the current chunk."""
    if atom.stay is not None:
        return loop_signature(ev, atom)
    if atom.bound is not None:
        return inner_signature(ev, atom)
    a, b = operand(ev, atom.a, atom), operand(ev, atom.b, atom)
    if a is not None and b is not None:
        return [SEPARABLE] + _separable_outcomes(atom.cmp, a.F - b.F, a.G - b.G)
    x = canon(ev.exact(atom.a), atom.width, atom.signed)
    y = canon(ev.exact(atom.b), atom.width, atom.signed)
    return [EXACT] + _exact_outcomes(atom.cmp, x, y, ev.nthreads)


def _separable_outcomes(cmp: str, F, G) -> list:
    """(kind, value) of ``F + G[t] cmp 0`` over all threads t, per CTA."""
    F = np.asarray(F, dtype=np.int64).reshape(-1)
    gmin, gmax = lo(G), hi(G)
    if cmp in ("lt", "le", "gt", "ge"):
        at_min, at_max = TESTS[cmp](F + gmin, 0), TESTS[cmp](F + gmax, 0)
        all_true, all_false = at_min & at_max, ~at_min & ~at_max
    else:
        hit = np.isin(-F, np.unique(np.asarray(G)))
        eq_all, eq_none = hit & (gmin == gmax), ~hit
        all_true, all_false = (eq_all, eq_none) if cmp == "eq" else (eq_none, eq_all)
    kind = np.where(all_true, TRUE, np.where(all_false, FALSE, MIXED))
    return [kind, np.where(kind == MIXED, F, 0)]


def _exact_outcomes(cmp: str, x, y, nthreads: int) -> list:
    """(kind, packed outcome bits...) from every (CTA, thread) outcome; the
    number of columns depends only on the block size."""
    out = TESTS[cmp](x, y)
    out = np.broadcast_to(out, np.broadcast_shapes(np.shape(out), (1, nthreads)))
    all_true, any_true = out.all(axis=1), out.any(axis=1)
    kind = np.where(all_true, TRUE, np.where(any_true, MIXED, FALSE))
    bits = np.packbits(out, axis=1)
    pad = (-bits.shape[1]) % 8
    words = np.pad(bits, ((0, 0), (0, pad))).view(np.int64)
    words = np.where((kind == MIXED)[:, None], words, 0)
    return [kind] + [words[:, j] for j in range(words.shape[1])]
