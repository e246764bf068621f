"""CTA classes of one launch: evaluate the atoms of the CTA-equivalence
condition (passes/cta/equivalence.py) for every CTA and group the CTAs whose
signatures agree (docs/cta-equivalence.md has the proof of exactness).

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

Signatures (two or more integer columns per atom): for ``a cmp b`` with
separable operands, all true / all false / (mixed, F(c)) where ``F + G =
a - b`` (equal F gives equal outcomes in every thread); with exact operands,
all true / all false / (mixed, the packed outcome bits of every thread). For
a loop exit test ``B + k*S cmp b``: the number of iterations that stay in the
loop when it is the same for every thread, else mixed with F(c) (or a
number for the CTA's row of iterations when B is exact, and for exit tests
``!=``/``==``: passes/cta/countdown.py). :class:`LoopBound` holds what an
exit test says, for atoms, atoms inside the loop and fault checks over it.
CTAs with equal signatures form a class; the smallest linear CTA id of a
class is its representative.
"""
from __future__ import annotations

import numpy as np

from ptxc.passes.cta.expr import Node

CHUNK = 1 << 18                 # CTAs evaluated at once
EXACT_CHUNK = 1 << 20           # CTA x thread values per chunk in exact evaluation
EXACT_TOTAL = 1 << 26           # CTA x thread values of a whole launch in exact evaluation
LIMIT = 1 << 62                 # magnitudes kept below this (int64 exact)
FALSE, TRUE, MIXED, COUNT = 0, 1, 2, 3
SEPARABLE, EXACT = 0, 1                 # the first column of an atom: how it was evaluated


class Unclassifiable(Exception):
    """This launch's values break a range or size check: run every CTA."""


class CtaClasses:
    """``reps`` (representative linear CTA ids, ascending), ``counts``
    (members per class) and ``cta_class`` (class index of every CTA)."""

    def __init__(self, reps: np.ndarray, counts: np.ndarray, cta_class: np.ndarray):
        self.reps, self.counts, self.cta_class = reps, counts, cta_class

    def __len__(self) -> int:
        return len(self.reps)


def classify(condition, kernel, grid, block, params: bytes, offsets: list,
             segments: "SegmentSizes | None" = None) -> CtaClasses:
    """The classes of a launch (raises Unclassifiable). ``segments``: the
    launch's buffer sizes, needed when the condition has fault checks."""
    if condition.checks and segments is None:
        raise Unclassifiable("the fault checks need the launch's buffer sizes")
    nctas = grid[0] * grid[1] * grid[2]
    nthreads = block[0] * block[1] * block[2]
    ev = Evaluator(grid, block, params, offsets)
    chunk = min(CHUNK, max(1, EXACT_CHUNK // nthreads))
    ev.exact_allowed = nctas * nthreads <= EXACT_TOTAL
    rows: dict[tuple, int] = {}
    reps, counts = [], []
    cta_class = np.empty(nctas, dtype=np.int64)
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
    return CtaClasses(reps[order], counts[order], rank[cta_class])


class SegmentSizes:
    """The sizes (bytes) of the segments >= layout.SEG_GLOBALS of a launch
    (the module's .global variables, its buffers), as the executor's segment
    table holds them; ``shift``: bits of offset in an address."""

    def __init__(self, sizes: dict, shift: int, first: int = 5):
        self.shift, self.first = shift, first
        n = max([first, *sizes]) + 1
        self.table = np.zeros(n, dtype=np.int64)
        for seg, size in sizes.items():
            self.table[seg] = size

    def key(self) -> tuple:
        return self.shift, tuple(self.table.tolist())


def fault_signature(ev, check, segments: SegmentSizes) -> list:
    """Columns of the fault check ``check`` for the chunk's CTAs: the packed
    bits of the threads whose address would fail the executor's check
    (ops_mem / runtime_ir.RESOLVE: segment in the table, offset + size
    within it, natural alignment; provenance_ir: the home segment). Equal
    bits in two CTAs whose traces agree mean the same lanes fail at the same
    executions (docs/cta-equivalence.md). A separable address F(c) + G(t)
    is first tested per CTA over G's range: a CTA whose whole range lies in
    its home segment, aligned, has all-zero bits without evaluating every
    thread; only the others are evaluated exactly. An address over loop
    iterations is classified by passes/cta/fault_loops.py."""
    if check.loops:
        from ptxc.passes.cta.fault_loops import loop_fault_signature
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


def clean_ctas(F, G, nbytes: int, segments: SegmentSizes, home) -> np.ndarray:
    """CTAs (bool per row of F) whose every address F + G(t) lies, aligned,
    within one buffer segment (its home segment when it has one)."""
    lo, hi = F + int(G.min()), F + int(G.max())
    seg = np.where(lo >= 0, lo, 0) >> segments.shift
    n = len(segments.table)
    size = segments.table[np.minimum(seg, n - 1)]
    ok = (lo >= 0) & (seg == (np.where(hi >= 0, hi, 0) >> segments.shift)) & \
        (seg >= segments.first) & (seg < n) & \
        ((hi & ((1 << segments.shift) - 1)) + nbytes <= size)
    if home is not None:
        ok &= seg == home
    if np.any(G % nbytes):
        return np.zeros_like(ok)
    return ok & (F % nbytes == 0)


def bad_lanes(x: np.ndarray, nbytes: int, segments: SegmentSizes, home) -> np.ndarray:
    """The executor's verdict (True: the access fails) for addresses ``x``
    (uint64)."""
    seg = x >> np.uint64(segments.shift)
    if np.any((seg >= 1) & (seg < segments.first)):
        raise Unclassifiable("an address checked for faults lies in a state-space window")
    off = (x & np.uint64((1 << segments.shift) - 1)).astype(np.int64)
    n = len(segments.table)
    size = np.where(seg < n, segments.table[np.minimum(seg, n - 1).astype(np.int64)], 0)
    bad = (off + nbytes > size) | ((x & np.uint64(nbytes - 1)) != 0)
    if home is not None:
        bad |= seg != np.uint64(home)
    return bad


def home_segment(ev, check, segments: SegmentSizes, nsegs: int):
    """The segment the address must lie in (passes/memory/provenance.py, as
    backends/llvm/instruments/provenance_ir.py decides it at run time), or None."""
    homes = []
    for cand in check.origins:
        if cand[0] == "globals":
            homes.append(segments.first)
            continue
        seg = (ev._param(cand[1], cand[3], cand[2]) % (1 << 64)) >> segments.shift
        if segments.first <= seg < nsegs:
            homes.append(seg)
    return homes[0] if len(homes) == 1 else None


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
            from ptxc.passes.cta.exit_values import evaluate
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


# ------------------------------------------------------------- atoms
def signature(ev: Evaluator, atom) -> list:
    """Signature columns of one atom for the CTAs of the current chunk."""
    if atom.stay is not None:
        return _loop_signature(ev, atom)
    if atom.bound is not None:
        return _inner_signature(ev, atom)
    a, b = operand(ev, atom.a, atom), operand(ev, atom.b, atom)
    if a is not None and b is not None:
        return [SEPARABLE] + _separable_outcomes(atom.cmp, a.F - b.F, a.G - b.G)
    x = canon(ev.exact(atom.a), atom.width, atom.signed)
    y = canon(ev.exact(atom.b), atom.width, atom.signed)
    return [EXACT] + _exact_outcomes(atom.cmp, x, y, ev.nthreads)


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


TESTS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
         "eq": np.equal, "ne": np.not_equal}


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


# -------------------------------------------------------------- loops
def _loop_signature(ev: Evaluator, atom) -> list:
    """Signature of a loop exit test ``a cmp b`` where one side is ``B + k*S``."""
    return loop_bound(ev, atom).cols


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


def loop_bound(ev: Evaluator, test) -> LoopBound:
    """The LoopBound of an exit test: ``<``, ``<=``, ``>``, ``>=`` here,
    ``==``/``!=`` in passes/cta/countdown.py."""
    key = ("loop_bound", id(test))              # shared by the test's users, per chunk
    if key not in ev.memo:
        ev.memo[key] = _loop_bound(ev, test)
    return ev.memo[key]


def _loop_bound(ev: Evaluator, test) -> LoopBound:
    if test.cmp in ("eq", "ne"):
        from ptxc.passes.cta.countdown import countdown_bound
        return countdown_bound(ev, test)
    E, P, k_hi, k_lo = loop_counts(ev, test)
    if k_hi is None:                    # E per CTA and thread: K(c, t) exactly
        from ptxc.passes.cta.countdown import row_ids
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


def _inner_signature(ev: Evaluator, atom) -> list:
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
