"""The one exception class for bad input, and source locations.

Every error ptxc raises for bad user input (malformed PTX, unknown opcode,
bad pass name, missing kernel argument, out-of-bounds access at run time) is a
:class:`PtxcError`. The CLI prints ``str(err)`` and exits with status 1; no
traceback is shown for these.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SrcLoc:
    """A position in a PTX file: 1-based line and column."""
    file: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class PtxcError(Exception):
    """Bad input: the message is one line that says where and what.

    ``loc`` (optional) is a SrcLoc; ``source_line`` (optional) is the text of
    the offending line, printed under the message with a caret at ``loc.col``.
    """

    def __init__(self, message: str, loc: SrcLoc | None = None,
                 source_line: str | None = None):
        self.message = message
        self.loc = loc
        self.source_line = source_line
        super().__init__(self.headline())

    def headline(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        return f"{where}error: {self.message}"

    def render(self) -> str:
        """The headline plus, when known, the source line and a caret."""
        text = self.headline()
        if self.source_line is not None and self.loc is not None:
            line = self.source_line.rstrip("\n").expandtabs(1)
            text += "\n" + line + "\n" + " " * max(self.loc.col - 1, 0) + "^"
        return text
