"""The formula nodes of CTA equivalence (docs/cta-equivalence.md, rule 4:
integer formulas of %ctaid, %tid and launch constants; rule 5: at most one
induction variable per comparison; rule 6: affine ones in fault checks).

A :class:`Node` is one operation of a formula (op, width, how its bits are
read by default, arguments); its *kind* is the set of atom sorts it depends
on: ``c`` (CTA), ``t`` (thread); empty for launch constants. The bottom of
passes/cta: passes/cta/expr.py builds nodes from SSA values,
passes/cta/exit_values.py adds ``select`` and ``atexit`` nodes,
passes/cta/evaluator.py evaluates them for a launch. Also here: the integer
types and comparison modifiers a formula accepts, :func:`type_info`, and
:func:`iv_loops`, the loops whose induction variables a formula holds.
"""
from __future__ import annotations

from ptxc.ir.types import SIGNED_TYPES, TYPE_SIZES

INT_TYPES = frozenset(("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                       "b8", "b16", "b32", "b64"))
C, T = "c", "t"
# comparison modifiers -> (comparison, forced signedness or None: the type's)
SET_CMPS = {"eq": ("eq", None), "ne": ("ne", None), "lt": ("lt", None), "le": ("le", None),
            "gt": ("gt", None), "ge": ("ge", None), "lo": ("lt", False), "ls": ("le", False),
            "hi": ("gt", False), "hs": ("ge", False)}
EMPTY: frozenset = frozenset()


class Node:
    """One expression node. ``data``: the constant, (param index, byte offset,
    type), the launch constant's name, an atom's axis, or the loop of an iv;
    ``signed``: how the node's bits are read by default."""
    __slots__ = ("op", "args", "width", "signed", "kind", "data", "has_iv")

    def __init__(self, op: str, width: int, signed: bool = False, args: tuple = (),
                 data=None, kind: frozenset | None = None):
        self.op, self.width, self.signed, self.args, self.data = op, width, signed, args, data
        self.kind = kind if kind is not None else frozenset().union(*(a.kind for a in args))
        self.has_iv = op == "iv" or any(a.has_iv for a in args)

    @property
    def mixed(self) -> bool:
        return len(self.kind) == 2

    def __repr__(self) -> str:
        inner = ", ".join(map(repr, self.args)) if self.args else repr(self.data)
        return f"{self.op}{self.width}({inner})"


def const(value: int, width: int = 64) -> Node:
    return Node("const", width, True, data=int(value), kind=EMPTY)


def type_info(t: str) -> tuple[int, bool]:
    return 8 * TYPE_SIZES[t], t in SIGNED_TYPES


def iv_loops(node: Node) -> list:
    """The loops whose induction variables ``node`` holds (first seen first)."""
    found: list = []

    def walk(n: Node) -> None:
        if n.op == "iv":
            if not any(n.data is x for x in found):
                found.append(n.data)
            return
        for a in n.args:
            if a.has_iv:
                walk(a)
    walk(node)
    return found
