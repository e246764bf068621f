"""Lane strides: how a value changes from one lane of a half warp to the next.

A forward data-flow analysis over SSA values (the affine "divergence /
uniformity" analyses of GPU compilers, e.g. LLVM's UniformityAnalysis and
the stride analysis of Karrenberg & Hack's whole-function vectorisation,
restricted to one coefficient, without their divergent-join rule): every
value gets

    0        uniform: the same in every lane (constants, parameters, %ctaid,
             %ntid, %tid.y and %tid.z, loads from a uniform address)
    k        ``u + k * %tid.x`` with u uniform (k != 0: %tid.x is 1)
    None     anything else (unknown)

assuming that %tid.y/%tid.z do not change inside a half warp (true when
%ntid.x is a multiple of 16). Sums and differences add strides, products and
shifts by constants scale them, phis and guarded definitions (the old value,
``prior``) join them: equal strides stay, different ones give None. The
lattice has height 2 (unset < stride < None), so iterating until nothing
changes terminates. A phi or guarded definition joining two values of the
same stride under divergent control may be no affine value at all: the
analysis does not look at control dependence, which the hint can afford.

The result is only a hint: the code generator tries the memory fast path
(backends/llvm/ops/fast_access.py) on an ld/st whose address stride is 0 or
its access size, where the fast path's run-time test will probably pass;
the test, not this analysis, decides what runs, so a wrong hint costs time,
never a result.
"""
from __future__ import annotations

from ptxc import ir

UNSET = object()
UNIFORM_SPECIALS = ("%ctaid", "%ntid", "%nctaid", "%tid.y", "%tid.z", "%nwarpid", "%smid",
                    "%gridid", "%warpid", "%nsmid")
SCALING = ("mul", "mad", "shl")
OPAQUE = ("atom", "red", "shfl", "vote", "tex", "tld4", "suld", "call", "activemask", "match",
          "redux", "elect")


class LaneStrides:
    """Strides of every value of one function, computed on construction."""

    def __init__(self, fn):
        self.of_id: dict[int, object] = {}
        self._solve(fn)

    def stride(self, operand):
        """The stride of an operand (an address's base for ir.Addr); None
        when unknown."""
        s = self._s(operand)
        return None if s is UNSET else s

    def _s(self, operand):
        if isinstance(operand, ir.Addr):
            return self._s(operand.base) if isinstance(operand.base, ir.Value) else 0
        if isinstance(operand, ir.RegOffset):
            return self._s(operand.value)
        if isinstance(operand, (ir.Imm, ir.Sym)) or operand is None:
            return 0
        if isinstance(operand, ir.SpecialReg):
            return special(operand.name)
        if isinstance(operand, ir.Result):
            return self.of_id.get(id(operand), UNSET)
        return None

    def _solve(self, fn) -> None:
        work = [i for i in fn.instructions() if i.results]
        work.reverse()
        queued = {id(i) for i in work}
        while work:
            ins = work.pop()
            queued.discard(id(ins))
            for k, res in enumerate(ins.results):
                new = self._transfer(ins, k)
                if new is UNSET or new == self.of_id.get(id(res), UNSET):
                    continue
                self.of_id[id(res)] = new
                for user in res.uses:
                    if user.results and id(user) not in queued:
                        queued.add(id(user))
                        work.append(user)

    def _transfer(self, ins: ir.Instr, k: int):
        """The new stride of result ``k`` (UNSET while its operands are)."""
        if ins.opcode == "phi":
            return join(self._s(s) for s in ins.srcs)
        srcs = [self._s(s) for s in ins.srcs]
        if UNSET in srcs:
            return UNSET
        s = self._compute(ins, ins.opcode, srcs)
        return join((s, self._s(ins.prior[k]))) if k < len(ins.prior) else s

    def _compute(self, ins: ir.Instr, op: str, srcs: list):
        if op in ("ld", "ldu"):
            return 0 if srcs and srcs[0] == 0 else None
        if None in srcs:
            return None
        if op in ("mov", "cvt", "cvta") and len(srcs) == 1:
            return srcs[0]
        if op in ("add", "sub") and len(srcs) == 2:
            return srcs[0] + srcs[1] if op == "add" else srcs[0] - srcs[1]
        if op in SCALING and len(srcs) >= 2 and "hi" not in ins.mods:
            return self._scaled(ins, op, srcs)
        if all(s == 0 for s in srcs) and op not in OPAQUE:
            return 0
        return None

    def _scaled(self, ins: ir.Instr, op: str, srcs: list):
        a, b = ins.srcs[0], ins.srcs[1]
        if srcs[0] == 0 and srcs[1] == 0:
            s = 0
        elif op == "shl":
            s = srcs[0] << int(b.value) if isinstance(b, ir.Imm) and b.kind == "int" else None
        elif isinstance(b, ir.Imm) and b.kind == "int":
            s = srcs[0] * int(b.value)
        elif isinstance(a, ir.Imm) and a.kind == "int":
            s = srcs[1] * int(a.value)
        else:
            s = None
        if op == "mad" and s is not None:
            s = s + srcs[2] if len(srcs) > 2 else None
        return s


def special(name: str):
    if name in ("%tid.x", "%tid", "%laneid"):
        return 1
    return 0 if name.startswith(UNIFORM_SPECIALS) else None


def join(strides):
    out = UNSET
    for s in strides:
        if s is UNSET:
            continue
        if out is UNSET:
            out = s
        elif out != s:
            return None
    return 0 if out is UNSET else out
