"""Infer the launch of an XLA-style kernel from its linear-index bound check.

XLA's elementwise (loop) emitter computes a linear index from the CTA and
thread ids, compares it with the number of elements and returns early when it
is out of range, then launches the smallest grid that covers every element
(XLA ``CalculateLaunchDimensions``: ``blocks = ceil(elements / (threads per
block * unroll))``). The kernel therefore says its own grid:

    .reqntid 256, 1, 1                      // threads per CTA
    mov.u32     %r8, %ctaid.x;
    mov.u32     %r9, %tid.x;
    shl.b32     %r10, %r8, 10;              // 1024 * ctaid.x (256 threads x unroll 4)
    shl.b32     %r11, %r9, 2;               //    4 * tid.x
    or.b32      %r1, %r11, %r10;            // disjoint bits: an add
    setp.lt.u32 %p1, %r1, 158700;           // in bounds while index < 158700
    @%p1 bra    LBB0_2;                     // the work
    bra.uni     LBB0_1;                     // LBB0_1: ret

gives block (256,1,1) and grid ceil(158700 / 1024) = 155.

What is matched (over the SSA IR, one conditional branch at a time):

* the kernel has ``.reqntid X, 1, 1`` (the block is known and 1-D) and
  never reads ``%nctaid`` (a grid-stride loop works with any grid);
* the branch predicate is ``setp.CMP`` of an integer *linear index* and an
  immediate, CMP one of lt le gt ge lo ls hi hs (operands in either order,
  ``p|q`` destinations included). A linear index is ``S * %ctaid.x + U * %tid.x``
  with S = U * X (consecutive CTAs cover consecutive ranges), built from
  ``mov``, ``cvt``, ``shl``/``mul.lo``/``mul.wide`` by an immediate or
  ``%ntid.x``, ``mad.lo``/``mad.wide``, ``add`` and ``or`` of operands whose
  set bits cannot overlap (one is a multiple of 2^k, the other below 2^k);
* one successor of the branch only returns (``ret``/``exit``, through
  unconditional ``bra``s): the thread leaves when the index is out of range, so
  the other, in-bounds successor is entered while ``index < B`` for a
  constant B (``lt N``: B = N; ``gt N`` to the exit: B = N + 1; ...);
* the in-bounds successor has the check as its only predecessor, and nothing
  outside the region it dominates has an effect: no memory access but
  ``ld.param``, no store, atomic, call, barrier, warp collective or other
  conditional branch. Threads with ``index >= B`` then do nothing observable,
  and ``grid = ceil(B / S)`` is the smallest grid that reaches every in-bounds
  index: XLA's launch.

Anything else is refused with the reason (``LaunchRefused``): no ``.reqntid``,
a 2-D/3-D block, a read of ``%nctaid``, no bound check, a check that runs after stores (XLA's
unrolled kernels whose first iterations run unguarded), an index with a
constant offset or a stride that does not tile the grid, an index above 2^31.
The ``infer-launch`` pass prints the result for every kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc import ir
from ptxc.ir.passmanager import ALL, Pass, PassResult
from ptxc.ir.types import instr_types

from .cfg import defined_functions
from .domtree import DomTree

SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
INT_TYPES = ("u16", "u32", "u64", "s16", "s32", "s64", "b16", "b32", "b64")
INDEX_LIMIT = 1 << 31          # the largest index must fit in s32 and u32


class LaunchRefused(Exception):
    """The kernel does not show the pattern; ``reason`` says what is missing."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason, self.line = reason, line


@dataclass(frozen=True)
class Affine:
    """``ctaid * %ctaid.x + tid * %tid.x + const`` with non-negative terms."""
    ctaid: int
    tid: int
    const: int

    def __add__(self, o: "Affine") -> "Affine":
        return Affine(self.ctaid + o.ctaid, self.tid + o.tid, self.const + o.const)

    def scale(self, k: int) -> "Affine":
        return Affine(self.ctaid * k, self.tid * k, self.const * k)

    @property
    def is_const(self) -> bool:
        return self.ctaid == 0 and self.tid == 0

    def text(self) -> str:
        parts = [f"{self.ctaid}*%ctaid.x" if self.ctaid else "",
                 f"{self.tid}*%tid.x" if self.tid else "", str(self.const) if self.const else ""]
        return " + ".join(p for p in parts if p) or "0"


@dataclass(frozen=True)
class InferredLaunch:
    """A launch read off the kernel: grid, block, and where it came from."""
    kernel: str
    grid: tuple
    block: tuple
    bound: int              # in bounds while index < bound
    index: Affine
    line: int | None        # the setp's line
    instruction: str        # the setp as written (opcode and operands)

    def explain(self) -> str:
        return (f"line {self.line}: {self.instruction}: index {self.index.text()} < {self.bound}, "
                f"grid = ceil({self.bound}/{self.index.ctaid}) = {self.grid[0]}, "
                f"block = .reqntid {self.block[0]}")

    def to_dict(self) -> dict:
        return {"grid": list(self.grid), "block": list(self.block), "bound": self.bound,
                "index": self.index.text(), "line": self.line, "instruction": self.instruction}


# ------------------------------------------------------------ linear index
class IndexEvaluator:
    """Affine forms of SSA values in %ctaid.x and %tid.x (None: not affine)."""

    def __init__(self, ntid: int):
        self.ntid = ntid
        self.memo: dict[int, Affine | None] = {}

    def of(self, v) -> Affine | None:
        if isinstance(v, ir.Imm):
            return Affine(0, 0, v.value) if v.kind == "int" and v.value >= 0 else None
        if isinstance(v, ir.SpecialReg):
            return {"%ctaid.x": Affine(1, 0, 0), "%tid.x": Affine(0, 1, 0),
                    "%ntid.x": Affine(0, 0, self.ntid)}.get(v.name)
        if not isinstance(v, ir.Result):
            return None
        key = id(v)
        if key not in self.memo:
            self.memo[key] = None            # cycles (phis) stay None
            self.memo[key] = self._instr(v.instr)
        return self.memo[key]

    def _instr(self, ins) -> Affine | None:
        if ins.guard is not None or len(ins.results) != 1 or not _int_typed(ins):
            return None
        op, srcs = ins.opcode, ins.srcs
        args = [self.of(s) for s in srcs]
        if any(a is None for a in args):
            return None
        if op in ("mov", "cvt") and len(args) == 1:
            return args[0]
        if op == "shl" and args[1].is_const and args[1].const < 32:
            return args[0].scale(1 << args[1].const)
        if op == "mul" and ("lo" in ins.mods or "wide" in ins.mods):
            return _product(args[0], args[1])
        if op == "mad" and ("lo" in ins.mods or "wide" in ins.mods):
            p = _product(args[0], args[1])
            return None if p is None else p + args[2]
        if op == "add" and not ({"cc", "sat"} & set(ins.mods)):
            return args[0] + args[1]
        if op == "or":
            return self._disjoint_or(args[0], args[1])
        return None

    def _disjoint_or(self, a: Affine, b: Affine) -> Affine | None:
        """a | b as a + b when no bit can be set in both."""
        for x, y in ((a, b), (b, a)):
            low = _trailing_zeros(x)
            if y.ctaid == 0 and y.tid * (self.ntid - 1) + y.const < (1 << low):
                return x + y
        return None


def _int_typed(ins) -> bool:
    """Every type of the instruction is an integer type (cvt between floats
    and integers, or float moves, do not carry an index)."""
    types = instr_types(ins.mods)
    return bool(types) and all(t in INT_TYPES for t in types)


def _product(a: Affine, b: Affine) -> Affine | None:
    if b.is_const:
        return a.scale(b.const)
    if a.is_const:
        return b.scale(a.const)
    return None


def _trailing_zeros(a: Affine) -> int:
    """Bits known zero at the bottom of every value of ``a``."""
    terms = [t for t in (a.ctaid, a.tid, a.const) if t]
    if not terms:
        return 64
    return min((t & -t).bit_length() - 1 for t in terms)


# ------------------------------------------------------------ the check
def bound_check(ins, index: IndexEvaluator):
    """(comparison, index form, constant) of ``setp`` instruction ``ins`` with the
    index on the left, or None when it does not compare a linear index with an
    immediate."""
    if ins.opcode != "setp" or len(ins.srcs) != 2 or len(ins.mods) != 2:
        return None
    cmp, typ = ins.mods
    cmp = UNSIGNED.get(cmp, cmp)
    if cmp not in SWAP or typ not in INT_TYPES:
        return None
    left, right = ins.srcs
    if isinstance(left, ir.Imm):
        left, right, cmp = right, left, SWAP[cmp]
    if not isinstance(right, ir.Imm) or right.kind != "int":
        return None
    form = index.of(left)
    if form is None or form.ctaid <= 0 or form.tid <= 0:
        return None
    return cmp, form, right.value


def exclusive_bound(cmp: str, value: int, in_bounds_when: bool) -> int | None:
    """B such that the in-bounds side is taken exactly when index < B
    (None: the in-bounds side is a lower bound)."""
    if not in_bounds_when:
        cmp = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}[cmp]
    return {"lt": value, "le": value + 1}.get(cmp)


def only_returns(block) -> bool:
    """The block (through unconditional bra) does nothing but return."""
    seen = set()
    while block is not None and id(block) not in seen:
        seen.add(id(block))
        body = block.body
        if any(i.guard is not None or i.opcode not in ("bra", "ret", "exit") for i in body):
            return False
        last = body[-1] if body else None
        if last is not None and last.opcode in ("ret", "exit"):
            return True
        block = last.srcs[0].block if last is not None else block.fallthrough
    return False


def quiet(ins) -> bool:
    """No effect a thread outside the bounds could have: no memory access but
    ld.param, no store, atomic, call, barrier, collective, conditional branch."""
    info = ins.info
    if info is None or ins.opcode == "call" or info.writes_mem or info.barrier or info.warp \
            or info.side_effect:
        return False
    if info.reads_mem and not (ins.opcode == "ld" and "param" in ins.mods):
        return False
    return not (info.terminator and ins.guard is not None)


# ---------------------------------------------------------- the analysis
def infer_launch(fn, domtree) -> InferredLaunch:
    """The launch of kernel ``fn`` (``domtree``: its DomTreeInfo), or
    LaunchRefused with the reason."""
    ntid = block_of(fn)
    reads_grid_size(fn)
    index = IndexEvaluator(ntid[0])
    first_reason = None
    for block in fn.blocks:
        term = block.terminator
        if term is None or term.opcode != "bra" or term.guard is None:
            continue
        try:
            return match_branch(fn, block, term, index, ntid, domtree)
        except LaunchRefused as e:
            if first_reason is None or (first_reason.line is None and e.line is not None):
                first_reason = e
    if first_reason is not None and first_reason.line is not None:
        raise first_reason
    raise no_check(fn, index)


NO_CHECK = ("no bound check of a linear index (S*%ctaid.x + U*%tid.x compared with a constant) "
            "ends the out-of-range threads")


def no_check(fn, index: IndexEvaluator) -> LaunchRefused:
    """The refusal for a kernel without a usable check; it names the linear
    index when the kernel computes one (XLA omits the check when the grid
    covers the elements exactly, and then the element count is not in the PTX)."""
    for ins in fn.instructions():
        for r in ins.results:
            form = index.of(r)
            if form is not None and form.ctaid > 0 and form.tid > 0:
                line = ins.loc.line if ins.loc else None
                return LaunchRefused(f"the linear index {form.text()} (line {line}) is never "
                                     "compared with a constant, so the PTX does not say how many "
                                     "elements there are (XLA omits the check when the grid fits "
                                     "them exactly)", line)
    return LaunchRefused(NO_CHECK)


def block_of(fn) -> tuple:
    req = fn.reqntid
    if req is None:
        raise LaunchRefused("no .reqntid: the block size is unknown")
    req = tuple(req) + (1,) * (3 - len(req))
    if req[1] != 1 or req[2] != 1:
        raise LaunchRefused(f".reqntid {req} is not one-dimensional")
    return req


def reads_grid_size(fn) -> None:
    """A kernel that reads %nctaid (a grid-stride loop) works with any grid."""
    for ins in fn.instructions():
        for v in ins.operand_values():
            if isinstance(v, ir.SpecialReg) and v.name.startswith("%nctaid"):
                line = ins.loc.line if ins.loc else None
                raise LaunchRefused(f"line {line} reads {v.name} (a grid-stride loop?): the "
                                    "kernel works with any grid, so none can be inferred", line)


def match_branch(fn, block, term, index, ntid, domtree) -> InferredLaunch:
    pred = term.guard
    setp = pred.instr if isinstance(pred, ir.Result) else None
    found = bound_check(setp, index) if setp is not None else None
    if found is None:
        raise LaunchRefused(NO_CHECK)
    cmp, form, value = found
    line = setp.loc.line if setp.loc else None
    taken, other = term.srcs[0].block, block.fallthrough
    true_when = (pred.index == 0) != term.guard_neg      # taken when the compare holds
    if only_returns(taken) and other is not None:
        inside, in_when = other, not true_when
    elif other is not None and only_returns(other):
        inside, in_when = taken, true_when
    else:
        raise LaunchRefused(f"the compare at line {line} does not end the out-of-range threads", line)
    bound = exclusive_bound(cmp, value, in_when)
    if bound is None:
        raise LaunchRefused(f"the check at line {line} is a lower bound", line)
    check_guards_all(fn, block, inside, domtree, line)
    return launch_from(fn, form, bound, ntid, setp, line)


def check_guards_all(fn, check_block, inside, domtree, line) -> None:
    if len(inside.preds) != 1:
        raise LaunchRefused(f"the in-bounds code after line {line} is also reached another way", line)
    for b in fn.blocks:
        if domtree.dominates(inside, b):
            continue
        for ins in b.body:
            if ins is not check_block.terminator and not quiet(ins):
                where = ins.loc.line if ins.loc else "?"
                raise LaunchRefused(f"line {where} ({ins.full_opcode}) runs outside the bound "
                                    f"check at line {line}: out-of-range threads do work, so the "
                                    "bound does not give the grid", line)


def launch_from(fn, form: Affine, bound: int, ntid: tuple, setp, line) -> InferredLaunch:
    if form.const != 0:
        raise LaunchRefused(f"the index at line {line} has a constant offset ({form.text()})", line)
    if form.ctaid != form.tid * ntid[0]:
        raise LaunchRefused(f"the index at line {line} ({form.text()}) does not tile the grid: "
                            f"the %ctaid.x stride is not {ntid[0]} x the %tid.x stride", line)
    if bound <= 0:
        raise LaunchRefused(f"the bound at line {line} admits no thread", line)
    grid = -(-bound // form.ctaid)
    top = form.ctaid * (grid - 1) + form.tid * (ntid[0] - 1)
    if top >= INDEX_LIMIT:
        raise LaunchRefused(f"the index at line {line} reaches {top} (at least 2^31)", line)
    text = f"{setp.full_opcode} " + ", ".join(_operand_text(s) for s in setp.srcs)
    return InferredLaunch(fn.name, (grid, 1, 1), ntid, bound, form, line, text)


def _operand_text(op) -> str:
    if isinstance(op, ir.Imm):
        return op.text
    return getattr(op, "reg", None) or getattr(op, "name", "?")


def infer_module(module, am) -> dict:
    """{kernel name: InferredLaunch or LaunchRefused} for every kernel."""
    out = {}
    for fn in defined_functions(module):
        if not fn.is_kernel:
            continue
        try:
            out[fn.name] = infer_launch(fn, am.get(DomTree, fn))
        except LaunchRefused as e:
            out[fn.name] = e
    return out


@dataclass(frozen=True)
class InferLaunchPass(Pass):
    name = "infer-launch"
    summary = "infer each XLA-style kernel's grid from its linear-index bound check and .reqntid"

    def run(self, module, am) -> PassResult:
        lines, data = [], {}
        for name, r in infer_module(module, am).items():
            if isinstance(r, InferredLaunch):
                lines.append(f"infer-launch @{name}: grid {r.grid} block {r.block} from {r.explain()}")
                data[name] = r.to_dict()
            else:
                lines.append(f"infer-launch @{name}: no launch: {r.reason}")
                data[name] = {"refused": r.reason, "line": r.line}
        return PassResult(self.name, "\n".join(lines) + "\n" if lines else "", data, ALL)
