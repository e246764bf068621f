"""The Evaluator: the values of formula nodes (passes/cta/nodes.py) for the
CTAs of one chunk and every thread of the block, with PTX's exact integer
semantics (CTA equivalence, the formulas of rule 4; docs/cta-equivalence.md,
"Classes of a launch").

A value stays separable, ``Sep(F, G)`` (passes/cta/values.py), through
sums, differences, constant multiples, truncations, extensions that fit
their type and ``or``/``xor`` of disjoint CTA-only and thread-only bits;
otherwise it is ``Exact``, per CTA, per thread or per (CTA, thread) pair.
Values after a loop and at a join (``atexit``, ``select``:
passes/cta/exit_values.py) are evaluated exactly per (CTA, thread) by
:func:`evaluate`, from the loop's K(c, t) (passes/cta/loop_bounds.py).
"""
from __future__ import annotations

import numpy as np

from ptxc.passes.cta.loop_bounds import loop_bound
from ptxc.passes.cta.nodes import Node
from ptxc.passes.cta.values import (LIMIT, TESTS, Exact, Sep, Unclassifiable, bound, canon, fits,
                                    guard, lo)


class Evaluator:
    """Node values for the CTAs of one chunk and every thread of the block."""

    def __init__(self, grid, block, params: bytes, offsets: list):
        self.grid, self.block = grid, block
        self.params, self.offsets = params, offsets
        lin = np.arange(block[0] * block[1] * block[2], dtype=np.int64).reshape(1, -1)
        self.tid = (lin % block[0], (lin // block[0]) % block[1], lin // (block[0] * block[1]))
        self.lane, self.warp = lin % 32, lin // 32
        self.nthreads = lin.shape[1]
        self.thread_memo: dict[int, object] = {}
        self.memo: dict[int, object] = {}
        self.cta = None
        self.exact_allowed = True
        self.ids: dict = {}         # fault checks over loops: CTA triples -> ids (cta_fault_loops)

    def set_ctas(self, begin: int, end: int) -> None:
        c = np.arange(begin, end, dtype=np.int64).reshape(-1, 1)
        gx, gy = self.grid[0], self.grid[1]
        self.cta = (c % gx, (c // gx) % gy, c // (gx * gy))
        self.memo = {}

    def value(self, node: Node):
        memo = self.memo if "c" in node.kind else self.thread_memo
        got = memo.get(id(node))
        if got is None:
            got = memo[id(node)] = self._eval(node)
        return got

    # ------------------------------------------------------------ leaves
    def _eval(self, node: Node):
        op, kind = node.op, node.kind
        if op == "const":
            return Exact(canon(node.data, node.width, node.signed), kind)
        if op == "param":
            return Exact(self._param(*node.data), kind)
        if op == "launch":
            name, axis = node.data
            return Exact((self.block if name == "%ntid" else self.grid)[axis], kind)
        if op in ("ctaid", "tid", "laneid", "warpid"):
            leaf = {"ctaid": lambda: self.cta[node.data], "tid": lambda: self.tid[node.data],
                    "laneid": lambda: self.lane, "warpid": lambda: self.warp}[op]()
            return Exact(leaf, kind)
        if op == "iv":
            raise Unclassifiable("an induction variable outside a loop test")
        if node.mixed:
            s = self._separable(node)
            if s is not None:
                return s
        return Exact(canon(self._exact(node), node.width, node.signed), kind)

    def _param(self, index: int, offset: int, t: str) -> int:
        from ptxc.ir.types import TYPE_SIZES
        size = TYPE_SIZES[t]
        pos = self.offsets[index] + offset
        raw = self.params[pos:pos + size]
        if len(raw) != size:
            raise Unclassifiable("parameter bytes missing")
        return int.from_bytes(raw, "little", signed=t.startswith("s"))

    # ------------------------------------------------ separable values
    def as_sep(self, node: Node) -> Sep | None:
        """The value as F + G (an exact value of one kind is one part)."""
        v = self.value(node)
        if isinstance(v, Sep):
            return v
        if not v.kind:
            return Sep(0, int(v.X))
        if len(v.kind) == 2:
            return None
        return Sep(v.X, 0) if "c" in v.kind else Sep(0, v.X)

    def _separable(self, node: Node) -> Sep | None:
        """F + G for add/sub/neg/mul-by-constant/trunc/ext/disjoint or-xor,
        or None when the node needs exact evaluation."""
        op = node.op
        if op in ("add", "sub"):
            a, b = (self.as_sep(x) for x in node.args)
            if a is None or b is None:
                return None
            sign = 1 if op == "add" else -1
            return guard(Sep(a.F + sign * b.F, a.G + sign * b.G))
        if op == "neg":
            a = self.as_sep(node.args[0])
            return None if a is None else Sep(-a.F, -a.G)
        if op == "trunc":
            return self.as_sep(node.args[0])
        if op == "ext":
            a = self.as_sep(node.args[0])
            return a if a is not None and fits(a, node.args[0].width, node.data) else None
        if op == "mul":
            return self._scaled(node)
        if op in ("or", "xor"):
            return self._disjoint(node)
        return None

    def _scaled(self, node: Node) -> Sep | None:
        consts = [k for k, a in enumerate(node.args) if not a.kind]
        if not consts:
            return None
        k = int(self.value(node.args[consts[0]]).X)
        x = self.as_sep(node.args[1 - consts[0]])
        if x is None or (bound(x.F) + bound(x.G)) * abs(k) >= LIMIT:
            return None
        return Sep(x.F * k, x.G * k)

    def _disjoint(self, node: Node) -> Sep | None:
        """``or``/``xor`` of a CTA-only and a thread-only value whose bits do
        not overlap: their sum."""
        w = node.width
        parts = [self.value(a) for a in node.args]
        if any(not isinstance(p, Exact) or len(p.kind) != 1 for p in parts) or \
                parts[0].kind == parts[1].kind:
            return None
        a, b = (canon(p.X, w, False) for p in parts)
        if w >= 64 and (lo(a) < 0 or lo(b) < 0):
            return None
        ora = int(np.bitwise_or.reduce(a, axis=None)) if isinstance(a, np.ndarray) else int(a)
        orb = int(np.bitwise_or.reduce(b, axis=None)) if isinstance(b, np.ndarray) else int(b)
        if ora & orb:
            return None
        return Sep(a, b) if "c" in node.args[0].kind else Sep(b, a)

    # ------------------------------------------------- exact values
    def exact(self, node: Node):
        v = self.value(node)
        if isinstance(v, Exact):
            return v.X
        if not self.exact_allowed:
            raise Unclassifiable("too many CTA x thread values to evaluate exactly")
        return canon(v.F + v.G, node.width, node.signed)

    def _exact(self, node: Node):
        op, w, s = node.op, node.width, node.signed
        if "c" in node.kind and "t" in node.kind and not self.exact_allowed:
            raise Unclassifiable("too many CTA x thread values to evaluate exactly")
        if op in ("select", "atexit"):
            return evaluate(self, node)
        xs = [self.exact(a) for a in node.args]
        if op in ("add", "sub", "mul", "neg", "and", "or", "xor", "trunc"):
            return _ring_or_bits(op, xs)
        if op == "ext":
            return canon(xs[0], node.args[0].width, node.data)
        if op == "mul24":
            return canon(xs[0], 24, s) * canon(xs[1], 24, s)
        if op == "shl":
            amount = np.minimum(canon(xs[1], 32, False), w)
            return np.where(amount >= w, 0, canon(xs[0], w, False) << np.minimum(amount, w - 1))
        if op == "shr":
            return _shr(xs[0], xs[1], w, s)
        if op in ("div", "rem"):
            return _divrem(op, xs[0], xs[1], w, s)
        if op in ("min", "max"):
            a, b = canon(xs[0], w, s), canon(xs[1], w, s)
            return (np.minimum if op == "min" else np.maximum)(a, b)
        if op == "set":
            cmp, signed = node.data
            sw = node.args[0].width
            return np.where(TESTS[cmp](canon(xs[0], sw, signed), canon(xs[1], sw, signed)), -1, 0)
        raise Unclassifiable(f"operation {op}")


def _ring_or_bits(op, xs):
    if op == "add":
        return xs[0] + xs[1]
    if op == "sub":
        return xs[0] - xs[1]
    if op == "mul":
        return xs[0] * xs[1]
    if op == "neg":
        return -xs[0]
    if op == "trunc":
        return xs[0]
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    return f(xs[0], xs[1])


def _shr(a, b, w: int, signed: bool):
    amount = np.minimum(canon(b, 32, False), w)
    if signed:
        return canon(a, w, True) >> np.minimum(amount, w - 1)
    if w >= 64:
        ua = np.asarray(a, dtype=np.int64).view(np.uint64)
        r = np.where(amount >= 64, np.uint64(0), ua >> np.minimum(amount, 63).astype(np.uint64))
        return np.asarray(r).view(np.int64)
    return np.where(amount >= w, 0, canon(a, w, False) >> np.minimum(amount, w - 1))


def _divrem(op, a, b, w: int, signed: bool):
    """PTX division (truncating); a zero divisor is left to the full run."""
    if w >= 64:
        raise Unclassifiable("64-bit division")
    a, b = canon(a, w, signed), canon(b, w, signed)
    if np.any(np.asarray(b) == 0):
        raise Unclassifiable("division by zero")
    q = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b) if signed else a // b
    return q if op == "div" else a - q * b


# ------------------------------------- values after a loop and at a join
def evaluate(ev, node: Node):
    """Exact value (int64, congruent modulo 2^width) of a select or atexit node."""
    if node.op == "select":
        cond, a, b = (ev.exact(x) for x in node.args)
        return np.where(np.asarray(cond) != 0, a, b)
    loop, test = node.data
    rows = len(ev.cta[0])
    K = loop_bound(ev, test).per_thread(np.arange(rows))
    return _substitute(ev, node.args[0], loop, K)


def _substitute(ev, node: Node, loop, K):
    """node's value with every iv of ``loop`` at iteration K (ring ops only)."""
    if not node.has_iv:
        return np.asarray(ev.exact(node), dtype=np.int64)
    if node.op == "iv":
        init = np.asarray(ev.exact(node.args[0]), dtype=np.int64)
        step = np.asarray(ev.exact(node.args[1]), dtype=np.int64)
        with np.errstate(over="ignore"):
            return init + K * step                  # wraps modulo 2^64, like the bits
    xs = [_substitute(ev, a, loop, K) for a in node.args]
    if node.op == "add":
        return xs[0] + xs[1]
    if node.op == "sub":
        return xs[0] - xs[1]
    if node.op == "neg":
        return -xs[0]
    if node.op == "trunc":
        return xs[0]
    raise Unclassifiable(f"operation {node.op} on an induction variable after its loop")
