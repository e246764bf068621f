"""Parse PTX text into an SSA-form ir.Module.

lark's LALR parser (grammar ptx.lark, built once per process and cached on
disk by lark) runs with ptxc.frontend.lexer.PtxLexer and the ptxc.frontend.syntax transformer,
so no parse tree is built; ptxc.frontend.builder then makes the IR. Every syntax error
becomes a PtxcError with file:line:col and the offending line.
"""
from __future__ import annotations

import gc
import os
from functools import lru_cache

from ptxc.errors import PtxcError, PtxcSyntax, SrcLoc, nth_line

GRAMMAR = os.path.join(os.path.dirname(__file__), "ptx.lark")


@lru_cache(maxsize=1)
def _parser():
    import lark
    from ptxc.frontend.lexer import PtxLexer
    from ptxc.frontend.syntax import ToTuples
    with open(GRAMMAR, encoding="utf-8") as f:
        grammar = f.read()
    return lark.Lark(grammar, parser="lalr", lexer=PtxLexer, transformer=ToTuples(),
                     start="start", cache=_cache_path(), maybe_placeholders=False)


def _cache_path():
    """A per-user cache file for the compiled grammar (or True: lark's temp dir)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "ptxc")
    try:
        os.makedirs(folder, exist_ok=True)
        from ptxc.version import __version__
        return os.path.join(folder, f"ptx-grammar-{__version__}-{os.path.getmtime(GRAMMAR):.0f}.lark")
    except OSError:
        return True


def parse_module(text: str, filename: str = "<string>"):
    """PTX text -> ir.Module (SSA). Raises PtxcError on bad input."""
    def error(msg, line, col):
        return PtxcError(msg, SrcLoc(filename, line, col), nth_line(text, line))

    from ptxc.frontend.input_hint import empty_hint, source_hint
    if not text.strip():
        raise PtxcError(empty_hint(filename), SrcLoc(filename, 1, 1))
    paused = gc.isenabled()
    gc.disable()              # the parse allocates ~10 objects per token; GC passes cost ~30%
    try:
        return _parse(text, filename, error)
    except PtxcError:
        hint = source_hint(text, filename)      # CUDA source: say how to make PTX of it
        if hint:
            raise PtxcError(hint) from None
        raise
    finally:
        if paused:
            gc.enable()


def _parse(text, filename, error):
    import lark
    from ptxc.frontend.builder import Builder
    from ptxc.frontend.lexer import LexError
    from ptxc.frontend.ptx_numbers import shown
    try:
        items = _parser().parse(text)
    except LexError as e:
        raise error(e.message, e.line, e.column) from None
    except PtxcSyntax as e:             # raised by a ptxc.frontend.syntax callback
        raise error(e.message, e.line, e.col) from None
    except lark.exceptions.UnexpectedEOF:
        raise eof_error(error, text.split("\n")) from None
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            raise eof_error(error, text.split("\n")) from None
        raise error(f"syntax error: unexpected '{shown(str(tok))}'", tok.line, tok.column) from None
    except lark.exceptions.VisitError as e:
        orig = e.orig_exc
        if isinstance(orig, PtxcSyntax):
            raise error(orig.message, orig.line, orig.col) from None
        if isinstance(orig, PtxcError):
            raise orig from None
        line = getattr(getattr(e, "obj", None), "line", 1) or 1
        raise error(f"malformed input: {orig}", line, 1) from None
    try:
        return Builder(filename, text).build(items)
    except PtxcSyntax as e:             # a literal the builder parsed
        raise error(e.message, e.line, e.col) from None


def eof_error(error, lines: list[str]) -> PtxcError:
    """'unexpected end of file', placed just after the last non-blank line."""
    last = len(lines)
    while last > 1 and not lines[last - 1].strip():
        last -= 1
    return error("unexpected end of file (truncated module?)", last, len(lines[last - 1]) + 1)


def load_module(path: str):
    """Read a PTX file (must be UTF-8) and parse it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PtxcError(f"cannot read '{path}': {e.strerror or e}") from None
    return parse_module(decode(data, path), path)


def decode(data: bytes, filename: str) -> str:
    """UTF-8 text, or a PtxcError pointing at the first invalid byte (or
    saying what the binary file is: input_hint.py)."""
    from ptxc.frontend.input_hint import binary_hint
    hint = binary_hint(data, filename)
    if hint:
        raise PtxcError(hint)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        text_line = data.split(b"\n")[line - 1].decode("utf-8", "replace")
        raise PtxcError(f"invalid UTF-8 byte 0x{data[e.start]:02x}: PTX must be text",
                        SrcLoc(filename, line, col), text_line) from None
