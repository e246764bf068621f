"""An instruction's opcode word: the base opcode, its modifiers and its operand counts.

``known_opcode`` splits ``add.s32`` into ``add`` and ``("s32",)`` and looks the
base up in the opcode table (ptxc.ir.opcodes): an unknown opcode is a located
PtxcError. ``check_arity`` rejects a wrong number of operands where the
opcode's arity is fixed, ``check_isa`` an instruction whose types or operands
the PTX ISA does not allow (ptxc.ir.isa_rules), at the operand at fault.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ptxc import ir
from ptxc.frontend.scopes import Var
from ptxc.ir.isa_rules import CHECKED, check_instr
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


_ISA_OK: set = set()          # (opcode word, operand signature) already checked
_WORD_OK: set = set()         # opcode words of WORD_ONLY opcodes already checked
WORD_ONLY = frozenset(("ld", "ldu", "st", "cvt"))   # rules on the opcode word alone


def check_isa(builder: Builder, ins, word: str, operands: list, skip: set, line: int,
              col: int) -> None:
    """Reject ``ins`` (just built from the opcode ``word`` and the syntax
    ``operands``) when it breaks a rule of ptxc.ir.isa_rules; the error
    points at the operand at fault. An instruction whose opcode word and
    operand types were seen before is not checked again."""
    opcode = ins.opcode
    if opcode not in CHECKED or word in _WORD_OK:
        return
    if opcode in WORD_ONLY:             # ld, st, cvt: their types only (isa_rules)
        if check_instr(opcode, ins.mods, 0, [], skip) is None:
            _WORD_OK.add(word)
            return
    ops = ins.dsts + ins.srcs
    if skip:
        sig = (word, *[_signature(o, skip) for o in ops])
    else:                               # registers (the common case) give their type directly
        sig = (word, *[o.type if o.__class__ is Var else _signature(o, skip) for o in ops])
    if sig in _ISA_OK:
        return
    found = check_instr(ins.opcode, ins.mods, len(ins.dsts), ops, skip)
    if found is None:
        if len(_ISA_OK) < 100_000:
            _ISA_OK.add(sig)
        return
    message, k = found
    at = operand_col(operands[k]) if k is not None and k < len(operands) else None
    raise builder.error(message, line, at or col)


def check_guard(builder: Builder, name, value, skip: set) -> None:
    """A guard ``@p`` is a predicate register (PTX ISA 9.3, predicated execution)."""
    if value.type != "pred" and value.name not in skip:
        raise builder.error(f"guard {name.text} is .{value.type}; a guard is a .pred register "
                            f"(PTX ISA 9.3, predicated execution)", name.line, name.col)


def _signature(op, skip: set):
    """What the ISA rules read of one operand: its register's type, else its class."""
    t = getattr(op, "type", None)
    if t is not None:
        return None if op.name in skip else t
    if op.__class__ is ir.Not:
        return ("!", op.value.type)
    if op.__class__ is ir.Pair:
        return ("|", getattr(op.first, "type", None), getattr(op.second, "type", None))
    return op.__class__


def operand_col(op) -> int | None:
    """The column of a syntax operand (ptxc.frontend.syntax), where known."""
    col = getattr(op, "col", None)
    if col is not None:
        return col
    if isinstance(op, (tuple, list)):
        for part in op:
            found = operand_col(part)
            if found is not None:
                return found
    return None
