"""A module's address width: its ``.address_size``, or, without the
directive, what its global and generic accesses take (an IR fact, read by
the executor's address map, backends/llvm/layout.py, and by the passes that
reason about addresses, passes/cta/equivalence.py).

Its own module, not ptxc/ir/types.py: the guess reads instructions'
operands (ptxc/ir/core.py), and core imports types.
"""
from __future__ import annotations

from ptxc.ir import core as ir
from ptxc.ir.types import TYPE_SIZES


def address_bits(module) -> int:
    """32 or 64: the module's ``.address_size``; without the directive, 32 if
    global/generic loads and stores take 32-bit address registers (old PTX
    compiled for 32-bit hosts), else 64."""
    size = getattr(module, "address_size", None)
    if size in (32, 64):
        return size
    cached = module.attrs.get("address_bits")
    if cached is None:
        cached = module.attrs["address_bits"] = _guess_address_bits(module)
    return cached


def _guess_address_bits(module) -> int:
    for fn in module.functions:
        for ins in fn.instructions():
            if ins.opcode not in ("ld", "st", "atom", "red"):
                continue
            if any(m.split("::")[0] in ("shared", "local", "param", "const") for m in ins.mods):
                continue
            for op in list(ins.srcs) + list(ins.dsts):
                if isinstance(op, ir.Addr) and isinstance(op.base, ir.Value):
                    return 32 if TYPE_SIZES.get(op.base.type, 8) == 4 else 64
    return 64
