"""A fast lexer for the PTX grammar (ptx.lark), plugged into lark's LALR parser.

Lark's built-in lexers spend ~5 us per token (they track line and column for
every token). PTX files are large and regular, so this lexer scans with one
master regular expression and computes line numbers lazily from a table of
newline offsets: a token's ``line``/``column`` are filled in as it is made
(cheap bisect), which keeps lark's error reporting exact.

At the start of a statement, a whole one-line instruction whose operands are
all simple (registers, symbols, numbers, bracketed addresses) is one INSTR
token, split by ptxc.syntax with the same operand rules; PTX instructions are
a regular language, so this is lexing (the same holds for a simple
``.reg`` declaration, one REGDECL token), and it cuts the LALR parser's work
(about 4 us per token) by ~7x on typical code. Other instructions (vector or
call operands, several lines) go through the full grammar.

A bracketed address without commas or braces (``[%rd1+-8]``, ``[buf]``,
``[128]``) is one ADDR token and a guard (``@!%p``) one GUARD token: fewer
tokens for the LALR parser, which costs ~4 us per token.

Keywords (``.entry``, ``.reg`` ...) are DOTWORDs whose text equals a string
terminal of the grammar; they get that terminal's type (lark's own
"unless" rule for string-vs-regex collisions).
"""
from __future__ import annotations

import re
from bisect import bisect_right

from lark.lexer import Lexer, Token

# A simple operand: register/symbol (maybe negated), number, or bracketed address.
OPERAND = r"(?:!?[%$A-Za-z_][\w$]*(?:\.[\w$:]+)*|-?[0-9][\w.]*(?:[eE][+-]?[0-9]+)?|\[[^\[\]{},;\n]*\])"

# A whole one-line instruction with only simple operands, e.g.
# `@!%p1 add.s32 %r1, %r2, -1;` (only tried where a statement starts).
_INSTR_RE = re.compile(r"(?:@!?[%$A-Za-z_][\w$]*[ \t]+)?[a-z][\w]*(?:\.[\w$:]+)*"
                       r"(?:[ \t]+" + OPERAND + r"(?:[ \t]*,[ \t]*" + OPERAND + r")*)?[ \t]*;")

# A simple register declaration, e.g. `.reg .u64 %r0;` or `.reg .b32 %r<12>, %x;`
_REGDECL_RE = re.compile(r"\.reg[ \t]+\.[a-z0-9]+[ \t]+[%$A-Za-z_][\w$]*(?:<\d+>)?"
                         r"(?:[ \t]*,[ \t]*[%$A-Za-z_][\w$]*(?:<\d+>)?)*[ \t]*;")

STATEMENT_START = {"SEMICOLON", "LBRACE", "RBRACE", "COLON", "LOC", "FILE_DIR", "SECTION", "INSTR", "REGDECL"}

_TOKEN_RE = re.compile(r"""
  (?P<WS>[ \t\r\n]+|//[^\n]*|/\*.*?\*/)
| (?P<SECTION>\.section[^{]*\{[^}]*\})
| (?P<LOC>\.loc[ \t][^\n]*)
| (?P<FILE_DIR>\.file[ \t][^\n]*)
| (?P<NUMBER>-?(?:0[fF][0-9a-fA-F]{8}(?![\w.])|0[dD][0-9a-fA-F]{16}(?![\w.])|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+U?))
| (?P<ADDR>\[[^\[\]{},;\n]*\])
| (?P<GUARD>@!?[%$A-Za-z_][\w$]*)
| (?P<NAME>[%$A-Za-z_][\w$]*(?:\.[\w$:]+)*)
| (?P<DOTWORD>\.[A-Za-z_][\w:]*)
| (?P<STRING>"(?:\\.|[^"\\\n])*")
| (?P<PUNCT>[{}()\[\],;:<>=+|@!])
""", re.VERBOSE | re.DOTALL)


class PtxLexer(Lexer):
    """Lark lexer interface: ``lex(text)`` yields lark Tokens."""

    def __init__(self, lexer_conf):
        self.keywords: dict[str, str] = {}   # '.entry' -> 'ENTRY', '{' -> 'LBRACE' ...
        for term in lexer_conf.terminals:
            if term.pattern.type == "str":
                self.keywords[term.pattern.value] = term.name

    def lex(self, text, parser_state=None):
        if not isinstance(text, str):      # lark may pass a TextSlice
            text = text.text
        newlines = [m.start() for m in re.finditer("\n", text)]
        keywords = self.keywords
        match, instr, regdecl = _TOKEN_RE.match, _INSTR_RE.match, _REGDECL_RE.match
        pos, end = 0, len(text)
        at_start = True
        while pos < end:
            if at_start:
                c = text[pos]
                m = instr(text, pos) if c.isalpha() or c == "@" else \
                    regdecl(text, pos) if c == "." else None
                if m is not None:
                    start, pos = pos, m.end()
                    line, col = line_col(newlines, start)
                    yield Token("INSTR" if c != "." else "REGDECL", m.group(), start, line, col)
                    continue
            m = match(text, pos)
            if m is None:
                raise_bad_char(text, pos, newlines)
            kind = m.lastgroup
            value = m.group(kind)
            start, pos = pos, m.end()
            if kind == "WS":
                continue
            if kind == "PUNCT" or kind == "DOTWORD":
                kind = keywords.get(value, kind)
                if kind == "PUNCT":
                    raise_bad_char(text, start, newlines)
            line, col = line_col(newlines, start)
            at_start = kind in STATEMENT_START
            yield Token(kind, value, start, line, col)


class BadCharacter(Exception):
    def __init__(self, pos: int, line: int, col: int, char: str):
        super().__init__(f"unexpected character {char!r}")
        self.pos, self.line, self.column, self.char = pos, line, col, char


def line_col(newlines: list[int], pos: int) -> tuple[int, int]:
    """1-based (line, column) of offset ``pos``, from the sorted newline offsets."""
    line = bisect_right(newlines, pos - 1) + 1
    return line, pos - (newlines[line - 2] + 1 if line > 1 else 0) + 1


def raise_bad_char(text: str, pos: int, newlines: list[int]):
    line, col = line_col(newlines, pos)
    raise BadCharacter(pos, line, col, text[pos])
