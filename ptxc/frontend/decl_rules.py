"""What the PTX ISA allows a declaration to say, checked as it is built.

* **Register ranges** (PTX ISA 5.4.x, "Parameterized Variable Names":
  ``.reg .b32 %r<100>;``): the count is a 32-bit unsigned number (ptxas:
  "Constant overflow"), never negative (a syntax error for ptxas).
* **Initializers** (PTX ISA 5.4.4, "Initializers"): only ``.global`` and
  ``.const`` variables take one, never a ``.pred`` or ``.f16``/``.bf16``
  variable. Its braces follow the declaration: a scalar for a scalar, a
  brace list of exactly N items for a ``.vN`` vector, and for an array one
  brace list per dimension with at most that many items (ptxas: "Greater
  number of elements in array initializer"; fewer are zero-filled). An
  integer literal does not initialise a float (``.f32 x = 1`` is refused;
  ``1.0`` is not), a float literal does not initialise an integer (``.bN``
  takes both), and a variable name only an integer of 32 or 64 bits.
* **Sizes ptxc can hold**: the ``.const`` variables of a module take at most
  64 KiB (ptxas: "File uses too much global constant data (0x10004 bytes,
  0x10000 max)"), the ``.global`` ones at most 4 GiB (one segment of ptxc's
  memory, docs/executor.md), the ``.local`` ones of a function at most
  512 KiB per thread (CUDA's per-thread local memory limit), instead of a
  MemoryError when the module is loaded or launched.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ptxc import ir
from ptxc.ir.types import FLOAT_TYPES, TYPE_SIZES

if TYPE_CHECKING:
    from ptxc.frontend.builder import Builder

MAX_RANGE = (1 << 32) - 1           # registers of one .reg range
MAX_CONST = 64 << 10                # bytes of .const per module (ptxas: 0x10000)
MAX_GLOBAL = 4 << 30                # bytes of module .global variables (one segment)
MAX_LOCAL = 512 << 10               # bytes of .local per thread (CUDA)
LIMITS = {"const": (MAX_CONST, "the module's", "64 KiB per module (ptxas' limit)"),
          "global": (MAX_GLOBAL, "the module's", "4 GiB per module (one segment of its memory)"),
          "local": (MAX_LOCAL, "the function's", "512 KiB per thread (CUDA's limit)")}
NO_INIT_TYPES = ("pred", "f16", "bf16", "f16x2", "bf16x2")


def check_range(b: Builder, d) -> None:
    """``.reg .b32 %r<N>``: 0 <= N < 2**32."""
    _, name, count = d
    if not 0 <= count <= MAX_RANGE:
        raise b.error(f"register range {name.text}<{count}>: the count must be 0 to {MAX_RANGE} "
                      f"(PTX ISA: parameterized variable names)", name.line, name.col)


def check_variable(b: Builder, var: ir.Variable) -> None:
    """The initializer of ``var`` against its declaration (PTX ISA 5.4.4)."""
    if var.init is None:
        return
    loc = var.loc
    where = (loc.line, loc.col) if loc is not None else (1, 1)
    if var.space not in ("global", "const"):
        raise b.error(f"variable '{var.name}': a .{var.space} variable cannot have an initializer "
                      f"(PTX ISA 5.4.4: only .global and .const)", *where)
    if var.type in NO_INIT_TYPES:
        raise b.error(f"variable '{var.name}': a .{var.type} variable cannot have an initializer "
                      f"(PTX ISA 5.4.4)", *where)
    problem = _shape(var.init, list(var.dims), var.vec, var.type)
    if problem is not None:
        raise b.error(f"variable '{var.name}': {problem} (PTX ISA 5.4.4, initializers)", *where)


def _shape(init, dims: list, vec: int, t: str) -> str | None:
    if dims:
        if not isinstance(init, list):
            return "an array is initialised with a brace list"
        if dims[0] is not None and len(init) > dims[0]:
            return f"{len(init)} initializers for {dims[0]} elements"
        for item in init:
            problem = _shape(item, dims[1:], vec, t)
            if problem is not None:
                return problem
        return None
    if vec:
        if not isinstance(init, list) or len(init) != vec:
            got = len(init) if isinstance(init, list) else 1
            return f"a .v{vec} element takes {vec} values in braces, got {got}"
        for item in init:
            problem = _shape(item, [], 0, t)
            if problem is not None:
                return problem
        return None
    if isinstance(init, list):
        return "a scalar is initialised with a value, not a brace list"
    return _value(init, t)


def _value(item, t: str) -> str | None:
    if isinstance(item, tuple) and len(item) == 2 and item[0] == "generic":
        item = item[1]
    if isinstance(item, ir.Sym):
        if t[0] in "bsu" and TYPE_SIZES.get(t, 0) in (4, 8):
            return None
        return f"the address of '{item.name}' cannot initialise a .{t} value"
    if isinstance(item, ir.Imm):
        if t[0] == "b":
            return None
        if t in FLOAT_TYPES and item.kind == "int":
            return f"the integer {item.text[:40]} cannot initialise a .{t} value (write a float literal)"
        if t not in FLOAT_TYPES and item.kind != "int":
            return f"the float {item.text[:40]} cannot initialise a .{t} value"
    return None


class SizeTotals:
    """Running totals of the module's .const and .global bytes; ``add``
    raises at the variable that passes the limit."""

    def __init__(self):
        self.total = {"const": 0, "global": 0}

    def add(self, b: Builder, var: ir.Variable) -> None:
        if var.space not in self.total or "extern" in " ".join(var.linkage):
            return
        self.total[var.space] += var.size
        check_size(b, var, self.total[var.space])


def check_size(b: Builder, var: ir.Variable, total: int) -> None:
    """Refuse ``var`` when the bytes of its space, ``total`` with it, pass the limit."""
    most, whose, limit = LIMITS.get(var.space, (None, "", ""))
    if most is not None and total > most:
        loc = var.loc
        raise b.error(f"variable '{var.name}' ({var.size} bytes) brings {whose} .{var.space} "
                      f"variables to {total} bytes; ptxc holds at most {limit}",
                      *((loc.line, loc.col) if loc is not None else (1, 1)))
