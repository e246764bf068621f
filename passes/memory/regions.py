"""Pointer provenance: which memory object an address may point into.

A small forward data-flow analysis over SSA values (a "base-object" analysis in
the style of Steensgaard-free allocation-site points-to, restricted to one
function): every value gets the set of *bases* it may be derived from.

    ('sym', Variable)   the address of a named variable (``mov %rd, smem;``,
                        ``[smem+8]``), through any arithmetic
    ('param', name)     the value of a kernel parameter wide enough to hold a
                        pointer (``ld.param.u64 %rd, [k_param_0]``)
    UNKNOWN             a pointer-wide value of unknown origin (loaded from
                        memory, returned by a call, shuffled, ...)
    UNKNOWN32           a narrower loaded value: it may be a 32-bit shared or
                        local window address, but it cannot become a 64-bit
                        global/generic pointer except through cvta or by
                        packing/shifting/bit operations (which turn it into
                        UNKNOWN)

Arithmetic, moves and conversions take the union of their operands' bases
(a guarded definition also its old value's), phis the union of their incoming
values; immediates, special registers and comparisons have none. The sets only
grow, so iterating the function's instructions until nothing changes
terminates. The region of an address is its single base, or *unknown* when the
set is empty or holds more than one base. The exact byte offset is kept for the
simple chains ``sym`` / ``sym + imm`` (used for the constant-offset rule).

This analysis names the memory a branch depends on in the slice report, and
decides disjointness in the slice's ``memory=refined`` mode (see
docs/slice.md for the rules and their soundness argument).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.ir.opcodes import ARITH, BITS, COMPARE, CONVERT, MOVE, SFU
from ptxc.ir.types import TYPE_SIZES

UNKNOWN = ("unknown",)
UNKNOWN32 = ("unknown32",)
EMPTY: frozenset = frozenset()

# results of these opcode families carry their operands' bases; the others
# (loads, atomics, shuffles, tensor ops, textures ...) produce unknown values
_PROPAGATE = frozenset((ARITH, BITS, CONVERT, MOVE, SFU, COMPARE))
# operations that can assemble a pointer out of narrow pieces
_WIDENING = frozenset(("or", "xor", "and", "bfi", "prmt", "shf", "cvta", "mapa", "lop3"))
# results that are never addresses
_NO_BASE = frozenset(("setp", "set", "vote", "testp", "isspacep", "istypep", "popc",
                      "clz", "bfind", "activemask", "elect", "match"))


def _width(v: ir.Value) -> int:
    return TYPE_SIZES.get(v.type, 8)


class Regions:
    """Bases of every value of one function, computed on construction."""

    def __init__(self, fn, program, address_size: int = 64):
        self.fn = fn
        self.program = program
        self.ptr_bytes = 4 if address_size == 32 else 8
        self.bases: dict[int, frozenset] = {}
        self._solve()

    # --------------------------------------------------------- data flow
    def _solve(self) -> None:
        """Worklist over SSA uses: an instruction is revisited only when one
        of its operands' sets grew (sets only grow, so this terminates)."""
        work = [i for i in self.fn.instructions() if i.results]
        work.reverse()
        queued = {id(i) for i in work}
        while work:
            ins = work.pop()
            queued.discard(id(ins))
            for k, res in enumerate(ins.results):
                new = self._transfer(ins, k, res)
                if new == self.bases.get(id(res), EMPTY):
                    continue
                self.bases[id(res)] = new
                for user in res.uses:
                    if user.results and id(user) not in queued:
                        queued.add(id(user))
                        work.append(user)

    def of(self, v) -> frozenset:
        if isinstance(v, ir.Result):
            return self.bases.get(id(v), EMPTY)
        if isinstance(v, ir.Undef):
            return frozenset((UNKNOWN,))
        return EMPTY

    def _union(self, values) -> frozenset:
        out = EMPTY
        for v in values:
            b = self.of(v)
            if b:
                out = out | b
        return out

    def _transfer(self, ins: ir.Instr, k: int, res: ir.Result) -> frozenset:
        op = ins.opcode
        if op == "phi":
            return self._union(ins.srcs)
        if op in _NO_BASE or res.type == "pred":
            return EMPTY
        prior = self.of(ins.prior[k]) if k < len(ins.prior) else EMPTY
        if op in ("ld", "ldu"):
            return prior | self._load_bases(ins, res)
        if ins.info is not None and ins.info.family in _PROPAGATE:
            return prior | self._propagate(ins, res)
        return prior | self._opaque(res)

    def _opaque(self, res) -> frozenset:
        return frozenset((UNKNOWN if _width(res) >= self.ptr_bytes else UNKNOWN32,))

    def _propagate(self, ins: ir.Instr, res) -> frozenset:
        bases = EMPTY
        packed = False
        for src in ins.srcs:
            if isinstance(src, ir.Sym):
                bases = bases | self._sym_base(ins, src.name)
            elif isinstance(src, ir.Vec):
                packed = True
            for v in ir.values_in(src):
                bases = bases | self.of(v)
        if UNKNOWN32 in bases and self._widens(ins, res, packed):
            bases = (bases - {UNKNOWN32}) | {UNKNOWN}
        return bases

    def _widens(self, ins: ir.Instr, res, packed: bool) -> bool:
        if packed or ins.opcode in _WIDENING:
            return True
        if ins.opcode == "shl" and _width(res) >= 8:
            amount = ins.srcs[1] if len(ins.srcs) > 1 else None
            return not isinstance(amount, ir.Imm) or amount.value >= 32
        return False

    def _sym_base(self, ins: ir.Instr, name: str) -> frozenset:
        target = self.program.resolve(ins, name)
        if isinstance(target, ir.Variable):
            return frozenset((("sym", target),))
        return EMPTY

    def _load_bases(self, ins: ir.Instr, res) -> frozenset:
        addr = next((s for s in ins.srcs if isinstance(s, ir.Addr)), None)
        if addr is not None and isinstance(addr.base, ir.Sym) and "param" in "".join(ins.mods):
            var = self.program.resolve(ins, addr.base.name)
            if self.fn.is_kernel and any(p is var for p in self.fn.params):
                if _width(res) >= self.ptr_bytes:
                    return frozenset((("param", var.name),))
                return EMPTY
        return self._opaque(res)

    # ------------------------------------------------------------ regions
    def region(self, ins: ir.Instr, addr, space: str):
        """The single base an address points into, or None (unknown)."""
        if addr is None or addr.base is None:
            return None
        if isinstance(addr.base, ir.Sym):
            var = self.program.resolve(ins, addr.base.name)
            return ("sym", var) if isinstance(var, ir.Variable) else None
        bases = self.of(addr.base)
        if UNKNOWN32 in bases and space in ("global", "generic") and self.ptr_bytes == 8 \
                and _width(addr.base) == 8:
            bases = bases - {UNKNOWN32}
        if len(bases) != 1:
            return None
        (base,) = bases
        return None if base in (UNKNOWN, UNKNOWN32) else base

    def exact_offset(self, ins: ir.Instr, addr) -> int | None:
        """The byte offset into the region when it is a compile-time constant."""
        if addr is None:
            return None
        if isinstance(addr.base, ir.Sym):
            return addr.base.offset + addr.offset
        off = _const_offset(addr.base, 8)
        return None if off is None else off + addr.offset


def _const_offset(v, depth: int) -> int | None:
    """Offset of ``v`` from its symbol for chains of mov/cvta/add-immediate."""
    if depth == 0 or not isinstance(v, ir.Result) or v.instr.guard is not None:
        return None
    ins = v.instr
    srcs = ins.srcs
    if ins.opcode in ("mov", "cvta") and len(srcs) == 1:
        if isinstance(srcs[0], ir.Sym):
            return srcs[0].offset
        return _const_offset(srcs[0], depth - 1)
    if ins.opcode in ("add", "sub") and len(srcs) == 2 and isinstance(srcs[1], ir.Imm) \
            and isinstance(srcs[1].value, int):
        inner = _const_offset(srcs[0], depth - 1)
        if inner is None:
            return None
        return inner + srcs[1].value if ins.opcode == "add" else inner - srcs[1].value
    return None


def region_name(region) -> str:
    """'param NAME', the symbol's name, or '?' for an unknown region."""
    if region is None:
        return "?"
    if region[0] == "param":
        return f"param {region[1]}"
    return region[1].name
