"""Values of the CTA-equivalence evaluation of a launch, and their range
checks (docs/cta-equivalence.md, "Classes of a launch": the integers must
be the bits the comparisons of rules 4-6 see). The bottom of the launch side
of passes/cta: every module that evaluates the condition for a launch
imports it.

Values (numpy, broadcast over a chunk of CTAs x the threads of a block):

* ``Exact(X)``: the value's bits with PTX's integer semantics, canonical for
  its width (signed or unsigned representative; 64-bit values are int64).
  X has shape () for a launch constant, (chunk, 1) for a CTA-only value,
  (1, threads) for a thread-only value, (chunk, threads) otherwise.
* ``Sep(F, G)``: the integer ``F[cta] + G[thread]`` (F of shape (chunk, 1),
  G of shape (1, threads)), kept for sums, differences and constant
  multiples; its bits are the integer modulo 2^width. Wherever a value is
  *interpreted* (a widening ``cvt``/``mul.wide``, a comparison) the integer
  must lie in the type's range over all CTAs and threads; if it may not, the
  value becomes Exact (every CTA x thread pair, exact by construction).

The range checks (:func:`lo`, :func:`hi`, :func:`bound`, :func:`canon`,
:func:`type_range`, :func:`sep_range`, :func:`fits`, :func:`guard`) raise
:class:`Unclassifiable` where a launch breaks one (then every CTA runs);
:func:`operand` reads a comparison operand as F + G; :class:`LoopBound`
holds what an exit test says (passes/cta/loop_bounds.py,
passes/cta/countdown.py). FALSE, TRUE, MIXED and COUNT are the kinds in the
first column of a signature (passes/cta/classes.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ptxc.passes.cta.nodes import Node

if TYPE_CHECKING:
    from ptxc.passes.cta.evaluator import Evaluator

LIMIT = 1 << 62                 # magnitudes kept below this (int64 exact)
FALSE, TRUE, MIXED, COUNT = 0, 1, 2, 3


class Unclassifiable(Exception):
    """This launch's values break a range or size check: run every CTA."""


# ----------------------------------------------------------------- values
class Exact:
    """Canonical bits (see the module doc) of a value of ``kind`` (the node's:
    which of CTA and thread it depends on; the shape alone cannot tell when
    a chunk has one CTA)."""
    __slots__ = ("X", "kind")

    def __init__(self, X, kind: frozenset):
        self.X, self.kind = X, kind


class Sep:
    """The integer ``F[cta] + G[thread]``."""
    __slots__ = ("F", "G")

    def __init__(self, F, G):
        self.F, self.G = F, G


def lo(x) -> int:
    return int(np.min(x)) if isinstance(x, np.ndarray) else int(x)


def hi(x) -> int:
    return int(np.max(x)) if isinstance(x, np.ndarray) else int(x)


def bound(x) -> int:
    return max(abs(lo(x)), abs(hi(x)))


def canon(x, width: int, signed: bool):
    """``x`` modulo 2^width, as the signed or unsigned representative
    (64-bit values are always signed: numpy int64 wraps modulo 2^64)."""
    if width >= 64:
        if isinstance(x, np.ndarray):
            return x.astype(np.int64, copy=False)
        return ((int(x) + (1 << 63)) % (1 << 64)) - (1 << 63)
    m = 1 << width
    if isinstance(x, np.ndarray):
        r = x & (m - 1)
        return np.where(r >= (m >> 1), r - m, r) if signed else r
    r = int(x) % m
    return r - m if signed and r >= (m >> 1) else r


def type_range(width: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)


def sep_range(s: Sep) -> tuple[int, int]:
    return lo(s.F) + lo(s.G), hi(s.F) + hi(s.G)


def fits(s: Sep, width: int, signed: bool) -> bool:
    low, high = type_range(width, signed)
    a, b = sep_range(s)
    return low <= a and b <= high


def guard(s: Sep) -> Sep:
    if bound(s.F) + bound(s.G) >= LIMIT:
        raise Unclassifiable("values too large")
    return s


TESTS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
         "eq": np.equal, "ne": np.not_equal}


def operand(ev: Evaluator, node: Node, atom) -> Sep | None:
    """A comparison operand as F + G of the integer the comparison sees,
    or None when only exact evaluation can tell."""
    if node.mixed:
        s = ev.as_sep(node)
        ok = s is not None and bound(s.F) + bound(s.G) < LIMIT and fits(s, atom.width, atom.signed)
        return s if ok else None
    v = canon(ev.exact(node), atom.width, atom.signed)     # reinterpret the bits
    if bound(v) >= LIMIT:
        return None
    if np.ndim(v) == 0:
        return Sep(0, int(v))
    return Sep(v, 0) if "c" in node.kind else Sep(0, v)


class LoopBound:
    """What an exit test says about the chunk's CTAs: ``k_hi``/``k_lo`` (per
    CTA: the most and fewest iterations K(c, t) a thread stays, over its
    threads), ``cols`` (the test's signature: COUNT and K when every thread
    stays K times, else MIXED and a number that fixes K(c, t) for every t)
    and ``per_thread(rows)``: K(c, t) for the CTAs ``rows`` (rows x threads)."""

    def __init__(self, k_hi, k_lo, mixed, per_thread):
        self.k_hi = np.asarray(k_hi, dtype=np.int64).reshape(-1)
        self.k_lo = np.asarray(k_lo, dtype=np.int64).reshape(-1)
        uniform = self.k_hi == self.k_lo
        self.cols = [np.where(uniform, COUNT, MIXED),
                     np.where(uniform, self.k_hi, np.asarray(mixed).reshape(-1))]
        self.per_thread = per_thread
