"""Which allocation an access's address started from (its provenance).

An executor address is ``segment << SHIFT | offset`` (backends/llvm/
layout.py): a buffer is a segment, and an offset that overflows its 32 (or,
with ``.address_size 32``, 24) bits carries into the *next* segment, another
buffer. Checking ``offset + size <= size(segment)`` alone would then let a
store 4 GiB past the end of buffer ``a`` write buffer ``b``. So every global
or generic access whose address derives from one pointer (the provenance
analysis of passes/memory/provenance_flow.py over passes/memory/regions.py:
arithmetic, moves and conversions of one *base*) must also lie in the
segment that base points into. The bases: a kernel pointer parameter (or a
pointer field of a by-value struct parameter), the module's ``.global``
variables (segment 5), and a pointer-wide value loaded from memory (an
array of pointers, a ``-G`` stack slot, a pointer argument of a called
``.func``, a pointer a call returns), whose value the executor keeps for the
check. A base mixed from two pointers, shuffled, or chased around a loop
(``p = p->next``) is unknown: such an access is checked against the segment
it lands in only; docs/executor.md says so.

C and CUDA make an access outside the object a pointer was derived from
undefined behaviour (LLVM's ``inbounds``); on a GPU such an access faults or
corrupts another allocation, so ptxc reports it as out of bounds.

:func:`module_program` is the module's call structure
(passes/slice/calls.Program), built once and shared by this analysis and
CTA equivalence (passes/cta/equivalence.py, which imports this module:
it reads the provenance of a fault check's address, docs/cta-equivalence.md,
rule 6).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.passes.memory.measured import address_operand, state_space
from ptxc.passes.slice.calls import Program


def checked_address(ins):
    """(address operand, state space) of a global/generic access whose
    provenance is checked, or None."""
    if ins.opcode in ("ld", "ldu", "st", "atom", "red"):
        op, space = address_operand(ins), state_space(ins)
    elif ins.opcode == "cp" and len(ins.srcs) > 1:
        op, space = ins.srcs[1], "global"
    else:
        return None
    if space not in ("global", "generic") or not isinstance(op, ir.Addr):
        return None
    return op, space


def origins(ins, address_bits: int):
    """The bases the address of ``ins`` may derive from: a list of
    ('param', parameter, offset) for a pointer-wide kernel parameter read
    at that byte offset, ('globals',) for .global variables and ('loaded',
    result) for a pointer-wide load result of the access's function; None
    when some base is unknown (not checked). At run time the address must
    lie in the segment of the one candidate whose value is a buffer pointer
    (a 64-bit index parameter, ``a + i`` with ``i`` from ``ld.param``, is a
    candidate too, but its value names no buffer); with none or several, it
    is not checked (backends/llvm/instruments/provenance_ir.py)."""
    from ptxc.passes.memory.regions import UNKNOWN, UNKNOWN32
    got = checked_address(ins)
    fn = ins.block.function if ins.block is not None else None
    if got is None or fn is None or not isinstance(got[0].base, ir.Value):
        return None
    out = []
    for base in regions(fn, address_bits).of(got[0].base):
        if base == UNKNOWN32:
            continue
        cand = _candidate(fn, base, address_bits)
        if cand is None:
            return None
        out.append(cand)
    return sorted(set(out), key=_order) or None


def _candidate(fn, base, address_bits: int):
    from ptxc.passes.memory.regions import UNKNOWN
    if base == UNKNOWN:
        return None
    if base[0] == "param":
        p = next((p for p in fn.params if p.name == base[1]), None)
        ptr_types = ("u64", "b64", "s64") if address_bits == 64 else ("u32", "b32", "s32")
        if p is None or (not p.dims and p.type not in ptr_types):
            return None
        return ("param", p, base[2])
    if base[0] == "sym" and getattr(base[1], "space", None) == "global":
        return ("globals",)
    if base[0] == "loaded":
        return base
    return None


def _order(cand):
    if cand[0] == "param":
        return (0, cand[1].name, cand[2])
    if cand[0] == "loaded":
        return (2, cand[1].instr.loc.line if cand[1].instr.loc else 0, cand[1].name)
    return (1, "", 0)


def module_program(module) -> Program:
    """The call structure of ``module``, built once (the slice's
    remove_unkept drops it with the module's slice variants)."""
    program = module.attrs.get("cta_program")
    if program is None:
        program = module.attrs["cta_program"] = Program(module)
    return program


def regions(fn, address_bits: int):
    """The provenance analysis of ``fn`` (cached on the function for the
    module's current IR)."""
    from ptxc.passes.memory.provenance_flow import ProvenanceRegions
    cache = fn.module.attrs.setdefault("provenance_regions", {})
    got = cache.get(fn.name)
    if got is None or got[0] is not fn or got[2] != address_bits:
        got = cache[fn.name] = (fn, ProvenanceRegions(fn, module_program(fn.module), address_bits),
                                address_bits)
    return got[1]


def loaded_roots(fn, address_bits: int) -> frozenset:
    """ids of the load results of ``fn`` some check reads (their values are
    kept in shadow slots), cached with the analysis."""
    r = regions(fn, address_bits)
    got = getattr(r, "roots_used", None)
    if got is None:
        got = set()
        for ins in fn.instructions():
            for cand in origins(ins, address_bits) or ():
                if cand[0] == "loaded":
                    got.add(id(cand[1]))
        got = r.roots_used = frozenset(got)
    return got
