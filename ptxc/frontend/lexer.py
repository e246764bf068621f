"""A fast lexer for the PTX grammar (ptx.lark), plugged into lark's LALR parser.

Lark's built-in lexers spend ~5 us per token (they track line and column for
every token). PTX files are large and regular, so this lexer scans with one
master regular expression and computes line numbers lazily from a table of
newline offsets: a token's ``line``/``column`` are filled in as it is made
(cheap bisect), which keeps lark's error reporting exact.

At the start of a statement, a whole one-line instruction whose operands are
all simple (registers, symbols, numbers, bracketed addresses) is one INSTR
token, split by ptxc.frontend.syntax with the same operand rules; PTX instructions are
a regular language, so this is lexing (the same holds for a simple
``.reg`` declaration, one REGDECL token), and it cuts the LALR parser's work
(about 4 us per token) by ~7x on typical code. Simple operands include vectors
of registers or numbers (``{%f1, %f2}``); other instructions (call operands,
vectors holding addresses or negations, several lines) go through the full
grammar.

Inside a function body, a run of such statements (simple instructions,
simple ``.reg`` declarations, labels ``name:`` and ``.loc`` lines, with the
blanks and comments between them) is one STMTS token: a sequence of regular
statements is regular too, and the parser then shifts one token for a whole
straight-line stretch instead of one per statement (~4 us each, plus one
reduction of the statement list). The token's text is the source span; its
``value`` is the list of parts ``(kind, text, line, col)``, kind one of
``INSTR``, ``REGDECL``, ``LABEL`` (text: the name) and ``LOC``, which
ptxc.frontend.syntax turns into the same tuples as the grammar rules.

In a function's header, a parameter list of only simple parameters
(``.param`` then dotted words, ``.align N``, a name and array sizes) is one
PARAMS token (value: the list of ``(text, line, col)`` of each parameter).

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

from ptxc.frontend.ptx_numbers import parse_number

# A simple operand: register/symbol (maybe negated), number, bracketed address,
# or a vector of registers/symbols/numbers (`{%f1, %f2, _, 0}`).
_NUMBER = (r"-?(?:0[fF][0-9a-fA-F]{8}(?![\w.])|0[dD][0-9a-fA-F]{16}(?![\w.])|0[xX][0-9a-fA-F]+U?"
           r"|0[bB][01]+U?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+U?)")   # = NUMBER (ptx.lark)
_NAME_OR_NUMBER = r"[%$A-Za-z_][\w$]*(?:\.[\w$:]+)*|" + _NUMBER
_VECTOR = (r"\{[ \t]*(?:" + _NAME_OR_NUMBER + r")(?:[ \t]*,[ \t]*(?:" + _NAME_OR_NUMBER
           + r"))*[ \t]*\}")
OPERAND = r"(?:!?" + _NAME_OR_NUMBER + r"|\[[^\[\]{},;\n]*\]|" + _VECTOR + ")"

# A whole one-line instruction with only simple operands, e.g.
# `@!%p1 add.s32 %r1, %r2, -1;` (only tried where a statement starts).
_INSTR_RE = re.compile(r"(?:@!?[%$A-Za-z_][\w$]*[ \t]+)?[a-z][\w]*(?:\.[\w$:]+)*"
                       r"(?:[ \t]+" + OPERAND + r"(?:[ \t]*,[ \t]*" + OPERAND + r")*)?[ \t]*;")

# A simple register declaration, e.g. `.reg .u64 %r0;` or `.reg .b32 %r<12>, %x;`
_REGDECL_RE = re.compile(r"\.reg[ \t]+\.[a-z0-9]+[ \t]+[%$A-Za-z_][\w$]*(?:<\d+>)?"
                         r"(?:[ \t]*,[ \t]*[%$A-Za-z_][\w$]*(?:<\d+>)?)*[ \t]*;")

# One element of a flat initializer list of numbers (``= {1, 2, 3}``, one
# INITLIST token) and what follows it; parse_number validates the element.
_INIT_ELEM = re.compile(r"[ \t\r\n]*(-?[0-9][\w.+-]*)[ \t\r\n]*([,}])")

# A label at the start of a statement (the NAME of rule `label`, then ':').
_LABEL_RE = re.compile(r"([%$A-Za-z_][\w$]*)[ \t]*:")
_LOC_RE = re.compile(r"\.loc[ \t][^\n]*")
# Blanks and comments between the statements of a run.
_SKIP_RE = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
MAX_NESTING = 100  # braces or parentheses deeper than this are refused (Python recursion)
RUNS = True        # tests turn runs off to compare with one token per statement

# A simple kernel parameter (`.param .u64 .ptr .align 16 p`, `.param .b8 a[16]`)
# and the separators of a parameter list of only such parameters.
_PARAM_RE = re.compile(r"\.param(?:[ \t]+\.(?:align[ \t]+[0-9]+|[a-z][a-z0-9_]*))*[ \t]+"
                       r"[%$A-Za-z_][\w$]*(?:\[[0-9]*\])*")
_PARAM_WORD = re.compile(r"\.[a-z][a-z0-9_]*")
_PARAM_SEP = re.compile(r"[ \t\r\n]*,[ \t\r\n]*")
_PARAM_END = re.compile(r"[ \t\r\n]*\)")

STATEMENT_START = {"SEMICOLON", "LBRACE", "RBRACE", "COLON", "LOC", "FILE_DIR", "SECTION", "INSTR", "REGDECL",
                   "STMTS"}
PARAM_KEYWORDS = {".param"}    # the only keyword a simple parameter may contain

_TOKEN_RE = re.compile(r"""
  (?P<WS>[ \t\r\n]+|//[^\n]*|/\*.*?\*/)
| (?P<SECTION>\.section[^{]*\{[^}]*\})
| (?P<LOC>\.loc[ \t][^\n]*)
| (?P<FILE_DIR>\.file[ \t][^\n]*)
| (?P<NUMBER>-?(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+U?)(?![\w.$]))
| (?P<BADNUM>-?\d[\w.$]*)
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
        depth = 0                          # open braces: > 0 inside a function body
        parens = 0                         # open parentheses
        prev = None                        # the kind of the last token yielded
        runs = RUNS
        while pos < end:
            if at_start:
                if depth and runs:
                    parts, stop = statement_run(text, pos, newlines)
                    if len(parts) > 1:
                        tok = Token("STMTS", text[pos:stop], pos, parts[0][2], parts[0][3])
                        tok.value = parts
                        pos = stop
                        yield tok
                        continue
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
            if kind == "BADNUM":             # raises a located PtxcSyntax
                parse_number(value, *line_col(newlines, start))
                kind = "NUMBER"
            if kind == "PUNCT" or kind == "DOTWORD":
                kind = keywords.get(value, kind)
                if kind == "PUNCT":
                    raise_bad_char(text, start, newlines)
                if kind == "LBRACE" and prev == "EQUAL":
                    found = init_list(text, start, newlines)
                    if found is not None:      # a flat list of numbers: one INITLIST token
                        tok, pos = found
                        prev, at_start = "INITLIST", False
                        yield tok
                        continue
                if kind == "LBRACE":
                    depth += 1
                    if depth > MAX_NESTING:
                        too_deep(text, start, newlines, "braces")
                elif kind == "RBRACE":
                    depth -= 1
                elif kind == "RPAR":
                    parens -= 1
                elif kind == "LPAR":
                    parens += 1
                    if parens > MAX_NESTING:
                        too_deep(text, start, newlines, "parentheses")
                if kind == "LPAR" and not depth and runs:
                    line, col = line_col(newlines, start)
                    yield Token(kind, value, start, line, col)
                    at_start = False
                    found = self.param_list(text, pos, newlines)
                    if found is not None:
                        parts, first, pos = found
                        tok = Token("PARAMS", text[first:pos], first, parts[0][1], parts[0][2])
                        tok.value = parts
                        yield tok
                    continue
            line, col = line_col(newlines, start)
            at_start = kind in STATEMENT_START
            prev = kind
            yield Token(kind, value, start, line, col)

    def param_list(self, text: str, pos: int, newlines: list[int]):
        """A parameter list of simple parameters after '(' at ``pos``: (parts
        (text, line, col), start, end), or None."""
        keywords = self.keywords
        p = _SKIP_RE.match(text, pos).end()
        first, parts = p, []
        while True:
            m = _PARAM_RE.match(text, p)
            if m is None:
                return None
            if any(w in keywords and w not in PARAM_KEYWORDS for w in _PARAM_WORD.findall(m.group())):
                return None
            parts.append((m.group(), *line_col(newlines, p)))
            sep = _PARAM_SEP.match(text, m.end())
            if sep is None:
                return (parts, first, m.end()) if _PARAM_END.match(text, m.end()) else None
            p = sep.end()


def init_list(text: str, pos: int, newlines: list[int]):
    """A flat initializer list of numbers at ``pos`` (``{1, 2, 0f3F800000}``):
    (an INITLIST token whose value is the list of ir.Imm, end), or None.
    One regular-expression match per element, no backtracking state kept
    (a single pattern for the whole list costs memory per element)."""
    from ptxc.ir import Imm
    elem = _INIT_ELEM.match
    values = []
    append = values.append
    p = pos + 1
    while True:
        m = elem(text, p)
        if m is None:
            return None
        t = m.group(1)
        if t.isdigit() and (t[0] != "0" or len(t) == 1) and len(t) < 19:   # decimal: the common case
            append(Imm(t, int(t), "int"))
        else:
            append(parse_number(t, *line_col(newlines, m.start(1))))
        p = m.end()
        if m.group(2) == "}":
            break
    line, col = line_col(newlines, pos)
    tok = Token("INITLIST", text[pos:p], pos, line, col)
    tok.value = values
    return tok, p


def statement_run(text: str, pos: int, newlines: list[int]) -> tuple[list, int]:
    """The simple statements from ``pos`` on: ([(kind, text, line, col)], end
    of the last one)."""
    instr, regdecl, label, loc, skip = (_INSTR_RE.match, _REGDECL_RE.match, _LABEL_RE.match,
                                        _LOC_RE.match, _SKIP_RE.match)
    parts, stop, end = [], pos, len(text)
    while pos < end:
        c = text[pos]
        kind, m = None, None
        if c.isalpha() or c == "@":
            m, kind = instr(text, pos), "INSTR"
        elif c == ".":
            m, kind = regdecl(text, pos), "REGDECL"
            if m is None:
                m, kind = loc(text, pos), "LOC"
        if m is None and c != "@" and c != ".":
            m, kind = label(text, pos), "LABEL"
        if m is None:
            break
        line, col = line_col(newlines, pos)
        parts.append((kind, m.group(1) if kind == "LABEL" else m.group(), line, col))
        stop = m.end()
        pos = skip(text, stop).end()
    return parts, stop


class LexError(Exception):
    """Bad input found by the lexer, at (line, column); ptxc.frontend.parser locates it."""

    def __init__(self, message: str, pos: int, line: int, col: int):
        super().__init__(message)
        self.message, self.pos, self.line, self.column = message, pos, line, col


class BadCharacter(LexError):
    def __init__(self, pos: int, line: int, col: int, char: str):
        super().__init__(f"unexpected character {char!r}", pos, line, col)
        self.char = char


def line_col(newlines: list[int], pos: int) -> tuple[int, int]:
    """1-based (line, column) of offset ``pos``, from the sorted newline offsets."""
    line = bisect_right(newlines, pos - 1) + 1
    return line, pos - (newlines[line - 2] + 1 if line > 1 else 0) + 1


def too_deep(text: str, pos: int, newlines: list[int], what: str):
    line, col = line_col(newlines, pos)
    raise LexError(f"{what} nested more than {MAX_NESTING} levels deep", pos, line, col)


def raise_bad_char(text: str, pos: int, newlines: list[int]):
    line, col = line_col(newlines, pos)
    raise BadCharacter(pos, line, col, text[pos])
