"""The one exception class for bad input, and source locations.

Every error ptxc raises for bad user input (malformed PTX, unknown opcode,
bad pass name, missing kernel argument, out-of-bounds access at run time) is a
:class:`PtxcError`. The CLI prints ``str(err)`` and exits with status 1; no
traceback is shown for these. :class:`PtxcSyntax` is the PtxcError of a
malformed token, raised by the front end before the file name is known.
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
    the offending line, printed under the message with a caret at ``loc.col``;
    ``notes`` (optional) are more lines printed after them (the parameter
    table of a kernel whose arguments are wrong).
    """

    def __init__(self, message: str, loc: SrcLoc | None = None,
                 source_line: str | None = None, notes: str | None = None):
        self.message = message
        self.loc = loc
        self.source_line = source_line
        self.notes = notes
        super().__init__(self.headline())

    def headline(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        return f"{where}error: {self.message}"

    def render(self) -> str:
        """The headline plus, when known, the source line and a caret.

        The echo is bounded: at most ``ECHO_WIDTH`` characters of the line
        around the column (``...`` marks what is cut), with control
        characters and invalid bytes escaped, so that an error on a 1 MB line
        prints one screen, not the line.
        """
        text = self.headline()
        if len(text) > MAX_MESSAGE:
            text = text[:MAX_MESSAGE] + f"... ({len(text) - MAX_MESSAGE} more characters)"
        if self.source_line is not None and self.loc is not None:
            line, caret = echo_window(self.source_line.rstrip("\n").expandtabs(1), self.loc.col)
            text += "\n" + line + "\n" + " " * caret + "^"
        if self.notes:
            text += "\n" + self.notes
        return text


class PtxcSyntax(PtxcError):
    """A malformed token found by the transformer or the number parser.

    A PtxcError at ``<input>:line:col``; ptxc.frontend.parser re-raises it with the
    file name and the source line.
    """

    def __init__(self, message, line, col):
        line, col = line or 1, col or 1
        super().__init__(message, SrcLoc("<input>", line, col))
        self.line, self.col = line, col


def nth_line(text: str, n: int) -> str | None:
    """Line ``n`` (1-based) of ``text``, or None: found when an error needs
    it, so that a parse keeps no list of the lines of a large file."""
    if n < 1:
        return None
    start = 0
    for _ in range(n - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def module_line(module, loc: SrcLoc | None) -> str | None:
    """The text of ``loc``'s line when ``loc`` is in ``module``'s PTX text
    (``module.source``), for the echo under a message; else None."""
    if loc is None or module is None or loc.file != getattr(module, "filename", None):
        return None
    return nth_line(getattr(module, "source", "") or "", loc.line)


MAX_MESSAGE = 1000     # characters of a headline
ECHO_WIDTH = 160       # characters of a source line echoed under a message


def echo_window(line: str, col: int) -> tuple[str, int]:
    """(the part of ``line`` to print around 1-based ``col``, escaped; the caret's offset)."""
    at = max(col - 1, 0)
    start = 0 if len(line) <= ECHO_WIDTH else max(0, min(at - ECHO_WIDTH // 2, len(line) - ECHO_WIDTH))
    head = "..." if start else ""
    stop = start + ECHO_WIDTH
    tail = "..." if stop < len(line) else ""
    before = head + _escaped(line[start:at])
    return before + _escaped(line[at:stop]) + tail, len(before)


def _escaped(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def render_error(err: PtxcError) -> str:
    """``err.render()``; errors without a source location get a ``ptxc:`` prefix."""
    text = err.render()
    if err.loc is None and not text.startswith("ptxc:"):
        text = "ptxc: " + text
    return text
