"""An instruction's opcode word: the base opcode, its modifiers and its operand counts.

``known_opcode`` splits ``add.s32`` into ``add`` and ``("s32",)`` and looks the
base up in the opcode table (ptxc.ir.opcodes): an unknown opcode is a located
PtxcError. ``check_arity`` rejects a wrong number of operands where the
opcode's arity is fixed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ptxc.ir.opcodes import ARITY, lookup

if TYPE_CHECKING:
    from ptxc.frontend.builder import Builder


def expected_arity(opcode: str, mods: tuple):
    """The operand counts an opcode takes, or None when it is not fixed."""
    expected = ARITY.get(opcode)
    if callable(expected):
        expected = expected(mods)
    return expected


def check_arity(builder: Builder, opcode: str, mods: tuple, nops: int, line: int, col: int,
                expected=False):
    """Reject a wrong number of operands for opcodes whose arity is fixed
    (``expected``: expected_arity(opcode, mods) when the caller has it)."""
    if expected is False:
        expected = expected_arity(opcode, mods)
    if expected is None:
        return
    if nops not in expected:
        want = " or ".join(str(e) for e in expected)
        raise builder.error(f"'{'.'.join((opcode,) + mods)}' takes {want} operands, got {nops}",
                            line, col)


_OPCODE_CACHE: dict[str, tuple] = {}


def known_opcode(builder: Builder, text: str, line: int, col: int):
    """(base opcode, modifiers, OpInfo, destination count, operand counts
    (expected_arity)) of an opcode word; unknown -> PtxcError."""
    hit = _OPCODE_CACHE.get(text)
    if hit is not None:
        return hit
    opcode, _, rest = text.partition(".")
    info = lookup(opcode)
    if info is None:
        raise builder.error(f"unknown opcode '{opcode}'", line, col)
    mods = tuple(rest.split(".")) if rest else ()
    hit = _OPCODE_CACHE[text] = (opcode, mods, info, info.num_dsts(mods), expected_arity(opcode, mods))
    return hit
