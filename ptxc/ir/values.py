"""Values and operands of the IR (docs/ir.md): SSA definitions and what
instructions read besides them.

Values (SSA definitions: instruction results, special registers, function
arguments, undefined values) keep ordered use lists. Operands that are not
values (immediates, symbols, labels, addresses, vectors) are small
frozen-ish objects that may *contain* values; ``values_in`` lists the values
an operand reads and ``map_values`` rebuilds it with others. core.py holds
the instructions, blocks, functions and modules that use them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from ptxc.ir.core import Block, Instr


# ---------------------------------------------------------------- values

class Value:
    """Anything an instruction can read as a register: an SSA definition."""
    __slots__ = ("type", "name", "reg", "uses", "__weakref__")

    def __init__(self, type: str, name: str, reg: str | None = None):
        self.type = type          # PTX type of the register: 'u32', 'pred', 'f32' ...
        self.name = name          # printed SSA name, e.g. '%f9.1'
        self.reg = reg            # PTX register it lives in, e.g. '%f9' (None: not a register)
        self.uses: list[Instr] = []  # users in insertion order, one entry per read

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class Result(Value):
    """A value defined by an instruction (or a phi)."""
    __slots__ = ("instr", "index")

    def __init__(self, type: str, name: str, reg: str, instr: "Instr", index: int):
        super().__init__(type, name, reg)
        self.instr = instr
        self.index = index


class SpecialReg(Value):
    """A PTX special register such as %tid.x, %ctaid.y, %laneid, %clock64."""
    __slots__ = ()

    def __init__(self, name: str, type: str = "u32"):
        super().__init__(type, name, name)


class Argument(Value):
    """The incoming value of a ``.reg`` parameter of a .func (old-style ABI)."""
    __slots__ = ()


class Undef(Value):
    """A register read before any write on some path (its content is undefined)."""
    __slots__ = ()


# -------------------------------------------------------------- operands

class Imm:
    """An immediate: ``text`` as written (kept for emission), ``value`` parsed.

    ``kind`` is 'int', 'float' (decimal), 'f32' (0fXXXXXXXX) or 'f64' (0dXXXXXXXXXXXXXXXX).
    For 'f32'/'f64' ``value`` is the raw bit pattern as an int.
    """
    __slots__ = ("text", "value", "kind")

    def __init__(self, text: str, value, kind: str):
        self.text, self.value, self.kind = text, value, kind

    def __repr__(self) -> str:
        return f"Imm({self.text})"


class Sym:
    """A reference to a named symbol (variable, param, function), plus offset."""
    __slots__ = ("name", "offset")

    def __init__(self, name: str, offset: int = 0):
        self.name, self.offset = name, offset

    def __repr__(self) -> str:
        return f"Sym({self.name}{'+' + str(self.offset) if self.offset else ''})"


class Addr:
    """A memory operand ``[base+offset]``; base is a Value, a Sym or None ([imm])."""
    __slots__ = ("base", "offset")

    def __init__(self, base, offset: int = 0):
        self.base, self.offset = base, offset


class Vec:
    """A vector operand ``{a, b, c, d}``: items are Values, Imms or Sink.

    ``reg`` names the vector register when the operand was written as one
    (``.reg .v4 .u32 v`` used as ``v``); the emitter writes it back that way.
    """
    __slots__ = ("items", "reg")

    def __init__(self, items: list, reg: str | None = None):
        self.items, self.reg = items, reg


class Bracket:
    """A multi-part memory operand such as ``[tex, {x, y}]`` (textures, surfaces)."""
    __slots__ = ("items",)

    def __init__(self, items: list):
        self.items = items


class RegOffset:
    """A register plus a constant as a source operand, ``%r + 1`` (ptxas accepts it)."""
    __slots__ = ("value", "offset")

    def __init__(self, value: Value, offset: int):
        self.value, self.offset = value, offset


class Pair:
    """A predicate pair destination ``p|q`` (setp, shfl); items Value or Sink."""
    __slots__ = ("first", "second")

    def __init__(self, first, second):
        self.first, self.second = first, second


class Not:
    """A negated predicate source operand ``!p``."""
    __slots__ = ("value",)

    def __init__(self, value: Value):
        self.value = value


class Sink:
    """The sink operand ``_``: a destination whose value is discarded."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


SINK = Sink()


class LabelRef:
    """A branch target: the label text and, once blocks exist, the Block."""
    __slots__ = ("name", "block")

    def __init__(self, name: str, block: "Block | None" = None):
        self.name, self.block = name, block


class ParenList:
    """A parenthesised operand list of ``call``: ``(retval0)`` or ``(p0, p1)``."""
    __slots__ = ("items",)

    def __init__(self, items: list):
        self.items = items


def values_in(operand) -> Iterator[Value]:  # noqa: C901
    """Every Value read by one operand, in textual order."""
    if isinstance(operand, Value):
        yield operand
    elif isinstance(operand, Addr):
        if isinstance(operand.base, Value):
            yield operand.base
        elif isinstance(operand.base, Bracket):       # [tex, {x, y}]
            yield from values_in(operand.base)
    elif isinstance(operand, Vec):
        for item in operand.items:
            yield from values_in(item)
    elif isinstance(operand, (ParenList, Bracket)):
        for item in operand.items:
            yield from values_in(item)
    elif isinstance(operand, (Not, RegOffset)):
        yield operand.value


def map_values(operand, fn):
    """A copy of ``operand`` with every contained Value v replaced by fn(v)."""
    if isinstance(operand, Value):
        return fn(operand)
    if isinstance(operand, Addr):
        if isinstance(operand.base, Bracket):
            return Addr(map_values(operand.base, fn), operand.offset)
        return Addr(fn(operand.base), operand.offset) if isinstance(operand.base, Value) else operand
    if isinstance(operand, Vec):
        return Vec([map_values(i, fn) for i in operand.items], operand.reg)
    if isinstance(operand, (ParenList, Bracket)):
        return type(operand)([map_values(i, fn) for i in operand.items])
    if isinstance(operand, Not):
        return Not(fn(operand.value))
    if isinstance(operand, RegOffset):
        return RegOffset(fn(operand.value), operand.offset)
    return operand


COMPOSITE = _COMPOSITE = (Addr, Vec, ParenList, Bracket, Not, RegOffset)   # operands holding values
