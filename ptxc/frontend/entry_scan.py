"""Find the `.entry` functions of PTX text without parsing it, and blank
the ones a process does not need.

``scan_entries(text)`` walks the module's top level (PTX ISA 8.x section
11.1, "Module directives": ``.entry`` / ``.func`` with a body in braces;
comments ``//`` and ``/* */``, strings in ``.file``), skipping comments and
strings, counting braces, and returns one :class:`Entry` per kernel: its
name, the text span from the start of its line (so ``.visible`` / ``.weak``
before it go with it) to its closing brace, and an estimated cost (the
number of ``;``, about one per instruction). It returns None where the
module is not of the simple shape ``ptxc profile``'s split path needs
(ptxc/profile/split.py): a ``.func`` with a body (its slice would be shared
between kernels, passes/slice/slice_pass.py), an ``.entry`` without a body, something
other than linkage words before ``.entry`` on its line, or unbalanced
braces. Then the caller parses the whole module.

``blanked(text, entries, keep)`` is the text with every entry outside
``keep`` replaced by as many newlines, and the spaces of its last line, so
that every kept line and column stays where it was (errors and ``.loc``
lines refer to the file).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|[{}]|\.entry\b|\.func\b', re.S)
_NAME = re.compile(r"\s*([A-Za-z_$%][\w$]*)")
_LINKAGE = re.compile(r"\s*((\.visible|\.weak|\.extern|\.common)\s+)*")


@dataclass(frozen=True)
class Entry:
    name: str
    start: int          # first character of the line that holds `.entry`
    end: int            # one past the closing brace
    cost: int           # `;` in the body: about one per instruction


def scan_entries(text: str) -> list[Entry] | None:
    """The kernels of ``text`` in order, or None (module doc)."""
    out: list[Entry] = []
    depth, pending = 0, None        # pending: (name, start) of an .entry before its '{'
    body = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok == "{":
            if depth == 0 and pending is not None:
                if ";" in text[pending[2]:m.start()]:
                    return None                     # `.entry f(...);` then a later brace
                body = m.start()
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and pending is not None:
                out.append(Entry(pending[0], pending[1], m.end(), text.count(";", body, m.end())))
                pending = None
        elif depth == 0 and tok == ".func":
            if _has_body(text, m.end()):
                return None
        elif depth == 0 and tok == ".entry":
            if pending is not None:
                return None
            pending = _entry_head(text, m.start(), m.end())
            if pending is None:
                return None
    if depth != 0 or pending is not None:
        return None
    return out


def _entry_head(text: str, at: int, after: int):
    """(name, line start, end of the name) of the `.entry` at ``at``, or None."""
    line = text.rfind("\n", 0, at) + 1
    if _LINKAGE.fullmatch(text, line, at) is None:
        return None
    name = _NAME.match(text, after)
    if name is None:
        return None
    return name.group(1), line, name.end()


def _has_body(text: str, pos: int) -> bool:
    """Whether the `.func` whose directive ends at ``pos`` has a body: its
    next '{' comes before its next ';' (comments aside: then we say yes,
    which only costs the fast path)."""
    brace, semi = text.find("{", pos), text.find(";", pos)
    return brace != -1 and (semi == -1 or brace < semi)


def blanked(text: str, entries: list[Entry], keep: set[str]) -> str:
    """``text`` with the entries not in ``keep`` turned into blank lines."""
    parts, pos = [], 0
    for e in entries:
        if e.name in keep:
            continue
        parts.append(text[pos:e.start])
        span = text[e.start:e.end]
        lines = span.count("\n")
        parts.append("\n" * lines + " " * (len(span) - span.rfind("\n") - 1 if lines else len(span)))
        pos = e.end
    parts.append(text[pos:])
    return "".join(parts)
