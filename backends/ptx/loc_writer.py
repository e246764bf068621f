"""``.loc`` debug directives for the PTX emitter (PTX ISA 11.x "Debugging
Directives": ``.loc file line col[, function_name label[+off], inlined_at file
line col]``).

The parser keeps every ``.loc`` line: each instruction carries the run of
``.loc`` lines in effect (``Instr.dbg``, texts in source order) and whether
that run stood directly before it (``Instr.dbg_new``). ``LocWriter`` prints a
run where it stood in the source, and again wherever the run in effect changes
(instructions dropped by ``keep``, code laid out differently), so line
attribution survives.

ptxas rejects ``inlined_at F L C`` unless an earlier ``.loc`` in the function
used location ``F L C`` ("Source location ... used in inlined_at directive must
be used in a preceding .loc directive"). Before printing such a line the writer
prints the function's first ``.loc`` for ``F L C`` (with its own inlined_at
chain) if it has not been printed yet; for unchanged nvcc output this never
adds a line.
"""
from __future__ import annotations

import re

_KEY = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_INLINED_AT = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")


def loc_key(text: str) -> tuple | None:
    """(file, line, col) of a ``.loc`` line, as strings, or None."""
    m = _KEY.match(text)
    return m.groups() if m else None


def inlined_at_key(text: str) -> tuple | None:
    """(file, line, col) named by the ``inlined_at`` attribute of a ``.loc`` line."""
    m = _INLINED_AT.search(text)
    return m.groups() if m else None


def first_definitions(fn) -> dict:
    """location -> the first ``.loc`` text of ``fn`` that uses it (layout order)."""
    defs: dict = {}
    for blk in fn.blocks:
        for ins in blk.instrs:
            for text in ins.dbg or ():
                defs.setdefault(loc_key(text), text)
    for text in fn.attrs.get("trailing_dbg", ()):
        defs.setdefault(loc_key(text), text)
    return defs


class LocWriter:
    """The ``.loc`` lines to print before each instruction of one function."""

    def __init__(self, fn):
        self.defs = first_definitions(fn)
        self.current = None          # the run printed last
        self.seen: set = set()       # locations printed so far

    def before(self, ins) -> list[str]:
        if ins.dbg is None or (not ins.dbg_new and ins.dbg == self.current):
            return []
        self.current = ins.dbg
        return self.run(ins.dbg)

    def run(self, texts) -> list[str]:
        out: list[str] = []
        for text in texts:
            self.put(text, out, frozenset())
        return out

    def put(self, text: str, out: list, active: frozenset) -> None:
        at = inlined_at_key(text)
        if at is not None and at not in self.seen and at not in active:
            self.put(self.defs.get(at) or ".loc\t" + " ".join(at), out, active | {at})
        out.append(text)
        key = loc_key(text)
        if key is not None:
            self.seen.add(key)
