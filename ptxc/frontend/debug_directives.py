"""The debugging directives, checked as the module is built (PTX ISA 11.5,
"Debugging Directives"). ptxc keeps them as text (the emitter writes them
back, ptxc.ir.source_lines reads them), so what ptxas would refuse is
refused here, located, instead of failing later:

* ``.file index "name"[, timestamp, size]``: the index fits 32 bits
  (ptxas: "Constant overflow") and names one file (ptxas: "Duplicate file
  index").
* ``.loc file line column[, function_name label[+offset], inlined_at file
  line column]``: integers that fit 32 bits, nothing else.
* ``.section name { ... }`` (DWARF data, e.g. ``.debug_str``): labels
  ``name:`` and data directives ``.b8``, ``.b16``, ``.b32``, ``.b64``, each
  with a comma-separated list of integers or labels (``label+offset``); a
  ``.b8``/``.b16`` value fits its width (ptxas: "Value out of range for
  type .b8").

Each check returns None or ``(message, line offset, column)`` relative to the
directive's text; the builder places it in the file.
"""
from __future__ import annotations

import re

MAX32 = (1 << 32) - 1
_NUM = r"(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(?![0-9A-Za-z_])"   # PTX ISA 4.5.1
_TRAIL = r"[ \t]*;?[ \t]*(?://[^\n]*|/\*.*?\*/[ \t]*)?"
_LOC = re.compile(r"\.loc[ \t]+(" + _NUM + r")[ \t]+(" + _NUM + r")[ \t]+(" + _NUM + r")"
                  r"(?:[ \t]*,[ \t]*function_name[ \t]+[$%\w.]+(?:[ \t]*[+-][ \t]*" + _NUM + r")?)?"
                  r"(?:[ \t]*,[ \t]*inlined_at[ \t]+(" + _NUM + r")[ \t]+(" + _NUM + r")[ \t]+(" + _NUM + r"))?"
                  + _TRAIL + r"$", re.S)
_FILE = re.compile(r"\.file[ \t]+(" + _NUM + r")[ \t]+\"(?:[^\"\\\n]|\\.)*\""
                   r"(?:[ \t]*,[ \t]*" + _NUM + r"[ \t]*,[ \t]*" + _NUM + r")?" + _TRAIL + r"$", re.S)
_WHAT = ("file index", "line", "column", "inlined_at file index", "inlined_at line", "inlined_at column")


_SMALL = r"[ \t]+(?:0|[1-9][0-9]{0,8})"      # a number that fits 32 bits, surely
_PLAIN_LOC = re.compile(r"\.loc" + _SMALL * 3 + r"[ \t]*$")


def check_loc(text: str) -> tuple | None:
    """A ``.loc`` line: None or (message, 0, column)."""
    if _PLAIN_LOC.match(text):                # the common form, at a glance
        return None
    m = _LOC.match(text)
    if m is None:
        return (f"malformed .loc directive: {_shown(text)} (PTX ISA 11.5: .loc file line column"
                f"[, function_name label, inlined_at file line column])", 0, 1)
    for k in range(1, 7):
        if m.group(k) is not None and _value(m.group(k)) > MAX32:
            return (f".loc {_WHAT[k - 1]} {_shown(m.group(k))} does not fit in 32 bits "
                    f"(PTX ISA 11.5: .loc)", 0, m.start(k) + 1)
    return None


def file_index(text: str) -> int | None:
    """The index of a well-formed ``.file`` line (check_file passed)."""
    m = _FILE.match(text)
    return _value(m.group(1)) if m else None


def check_file(text: str) -> tuple | None:
    """A ``.file`` line: None or (message, 0, column)."""
    m = _FILE.match(text)
    if m is None:
        return (f"malformed .file directive: {_shown(text)} (PTX ISA 11.5: .file index \"name\""
                f"[, timestamp, size])", 0, 1)
    if _value(m.group(1)) > MAX32:
        return (f".file index {_shown(m.group(1))} does not fit in 32 bits (PTX ISA 11.5: .file)",
                0, m.start(1) + 1)
    return None


_SECTION_HEAD = re.compile(r"\.section[ \t\n]+([$%\w.]+)[ \t\n]*\{")
_SEC_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<label>[A-Za-z_$%.][\w$.]*)[ \t]*:
  | (?P<data>\.b(?:8|16|32|64))(?![\w.$])
  | (?P<num>-?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*))(?![\w.$])
  | (?P<sym>[A-Za-z_$%.][\w$.]*(?:[ \t]*[+-][ \t]*(?:0[xX][0-9a-fA-F]+|[0-9]+))?)
  | (?P<comma>,)
  | (?P<end>\})
""", re.X | re.S)
_WIDTH = {".b8": 8, ".b16": 16, ".b32": 64, ".b64": 64}   # .b32/.b64: any 64-bit literal


def check_section(text: str) -> tuple | None:
    """A ``.section`` block: None or (message, line offset, column)."""
    head = _SECTION_HEAD.match(text)
    if head is None:
        return "malformed .section directive (PTX ISA 11.5: .section name { ... })", 0, 1
    pos, state, width = head.end(), "start", 0
    while pos < len(text):
        m = _SEC_TOKEN.match(text, pos)
        kind = m.lastgroup if m is not None else None
        if kind == "ws":
            pos = m.end()
            continue
        bad = None
        if kind in ("label", "data", "end") and state in ("start", "after_item"):
            if kind == "data":
                state, data = "want_item", m.group("data")
                width = _WIDTH[data]
            elif kind == "end":
                return None if m.end() == len(text) else _at(text, m.end(), "text after the section's '}'")
        elif kind in ("num", "sym") and state == "want_item":
            state = "after_item"
            if kind == "num":
                value = _value(m.group("num"))
                if not -(1 << (width - 1)) <= value < (1 << width):
                    bad = f"value {_shown(m.group('num'))} does not fit {data}"
        elif kind == "comma" and state == "after_item":
            state = "want_item"
        else:
            word = m.group(0) if m is not None else text[pos:pos + 1]
            bad = f"unexpected {_shown(word)}"
        if bad is not None:
            return _at(text, pos, bad)
        pos = m.end()
    return _at(text, len(text) - 1, "unterminated section")


def _value(text: str) -> int:
    """An integer literal of _NUM (hexadecimal, octal, decimal), maybe negative."""
    neg = text.startswith("-")
    body = text[1:] if neg else text
    if body[:2] in ("0x", "0X"):
        value = int(body[2:], 16)
    elif len(body) > 1 and body[0] == "0":
        value = int(body[1:], 8)
    elif len(body) > 40:        # fits no .bN for sure; int() refuses > 4300 decimal digits
        value = 1 << 200
    else:
        value = int(body)
    return -value if neg else value


def _at(text: str, pos: int, what: str) -> tuple:
    line = text.count("\n", 0, pos)
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return (f"malformed .section data: {what} (PTX ISA 11.5: labels and .b8/.b16/.b32/.b64 "
            f"lists of integers or labels)", line, col)


def _shown(text: str) -> str:
    text = text.strip()
    text = text if len(text) <= 40 else text[:40] + "..."
    return "'" + text.encode("unicode_escape").decode("ascii") + "'"
