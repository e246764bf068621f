"""PTX numeric literals -> ir.Imm, with a located error for malformed ones.

PTX ISA 9.0, section 4.5 (Constants):

- 4.5.1 integer constants are 64 bits, signed or unsigned: hexadecimal
  ``0[xX][0-9a-fA-F]+U?``, decimal ``[1-9][0-9]*U?``, octal ``0[0-7]*U?`` and
  binary ``0[bB][01]+U?``; a leading ``-`` negates.  A literal whose
  magnitude needs more than 64 bits is refused (it has no PTX value).
- 4.5.2 floating-point constants: decimal (``1.5``, ``2e3``; represented as
  f64), or the exact bit patterns ``0[fF]`` + 8 hex digits (f32) and
  ``0[dD]`` + 16 hex digits (f64).  A decimal literal that overflows f64 is
  refused.

Anything else in a number's place (``0fZZ00000000``, ``08``, ``3f80R000``,
``6.5`` where an integer is needed) raises :class:`ptxc.errors.PtxcSyntax`
(a PtxcError) at the literal's line and column.
"""
from __future__ import annotations

import math
import re

from ptxc import ir
from ptxc.errors import PtxcSyntax

_INT_RE = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?")
_FLOAT_RE = re.compile(r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+")
_HEXFLOAT_RE = re.compile(r"0([fF])[0-9a-fA-F]{8}|0([dD])[0-9a-fA-F]{16}")
_LIMIT = 1 << 64
_SHOWN = 40          # characters of a bad literal quoted in the message


def shown(text: str) -> str:
    """A literal for a message: at most ``_SHOWN`` characters, escaped."""
    text = text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"
    return text.encode("unicode_escape").decode("ascii")


def _fail(message: str, line: int, col: int):
    raise PtxcSyntax(message, line, col)


def parse_number(tok, line: int | None = None, col: int | None = None) -> ir.Imm:
    """A NUMBER token (or its text, with ``line``/``col``) -> ir.Imm."""
    text = str(tok)
    line = getattr(tok, "line", None) if line is None else line
    col = getattr(tok, "column", None) if col is None else col
    neg = text.startswith("-")
    body = text[1:] if neg else text
    m = _HEXFLOAT_RE.fullmatch(body)
    if m is not None:
        if m.group(1):
            return ir.Imm(text, int(body[2:], 16) ^ (0x80000000 if neg else 0), "f32")
        return ir.Imm(text, int(body[2:], 16) ^ (1 << 63 if neg else 0), "f64")
    if _INT_RE.fullmatch(body):
        return ir.Imm(text, (-1 if neg else 1) * _int_value(body.rstrip("U"), text, line, col), "int")
    if _FLOAT_RE.fullmatch(body):
        value = float(body)
        if math.isinf(value):
            _fail(f"floating-point literal {shown(text)} is out of range (overflows f64)", line, col)
        return ir.Imm(text, -value if neg else value, "float")
    if body[:2] in ("0f", "0F", "0d", "0D") and re.fullmatch(r"0[fFdD][0-9a-fA-F]+", body):
        want = 8 if body[1] in "fF" else 16
        _fail(f"malformed number {shown(text)}: a hexadecimal float literal 0{body[1]} takes "
              f"exactly {want} hex digits, got {len(body) - 2}", line, col)
    _fail(f"malformed number {shown(text)}", line, col)


def _int_value(digits: str, text: str, line, col) -> int:
    c = digits[1:2]
    if c in ("x", "X"):
        value = int(digits[2:], 16)
    elif c in ("b", "B"):
        value = int(digits[2:], 2)
    elif digits[0] == "0":                      # octal, as in C
        value = int(digits, 8)
    elif len(digits) > 20:                      # > 2**64 for sure; int() refuses > 4300 digits
        value = _LIMIT
    else:
        value = int(digits)
    if value >= _LIMIT:
        _fail(f"integer literal {shown(text)} does not fit in 64 bits", line, col)
    return value


def parse_int(tok, line: int | None = None, col: int | None = None, what: str = "an integer") -> int:
    """An integer literal -> int; a float or malformed literal is a located error."""
    imm = parse_number(tok, line, col)
    if imm.kind != "int":
        _fail(f"expected {what}, got {shown(str(tok))}",
              getattr(tok, "line", None) if line is None else line,
              getattr(tok, "column", None) if col is None else col)
    return imm.value
