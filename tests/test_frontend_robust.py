"""Front-end robustness (issue 18): every bad input found by two fuzzers ends
in a located PtxcError, never an internal error; a seeded mutation fuzzer
keeps it that way.

The expected columns are derived from the test text itself (the 1-based
offset of the offending token on its line), not from a run of ptxc.
"""
from __future__ import annotations

import time

import pytest

import ptxc
from ptxc import PtxcError
from ptxc.errors import PtxcSyntax
from ptxc.frontend.lexer import MAX_NESTING

from fuzz import mutator

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
REGS = ".reg .pred %p<3>; .reg .b32 %r<9>; .reg .b64 %rd<9>; .reg .f32 %f<9>;"


def kernel(body: str, decl: str = "") -> str:
    return HEADER + decl + "\n.visible .entry k(.param .u64 p)\n{\n" + REGS + "\n" + body + "\nret;\n}\n"


def located(text: str, token: str, message: str, nth: int = 0) -> None:
    """Parsing ``text`` fails at the ``nth`` occurrence of ``token`` with ``message``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(token, at + 1)
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    with pytest.raises(PtxcError) as info:
        module = ptxc.parse(text, "t.ptx")
        ptxc.run_pipeline(module, "cfg,verify")
    err = info.value
    assert message in err.message
    assert (err.loc.file, err.loc.line, err.loc.col) == ("t.ptx", line, col), err.render()


# (name, PTX, token the error points at, words of the message)
CASES = [
    ("bra to a register", kernel("bra %r1;"), "bra", "needs a label"),
    ("bra.uni to a number", kernel("bra.uni 149;"), "bra.uni", "needs a label"),
    ("guarded bra to a number", kernel("@%p1 bra 149;"), "bra 149", "needs a label"),
    ("hex float, bad digits", kernel("mov.f32 %f1, 0fZZ00000000;"), "0fZZ", "malformed number"),
    ("float with a letter", kernel("mov.f32 %f1, 3f80R000;"), "3f80R000", "malformed number"),
    ("hex float, 6 digits", kernel("mov.f32 %f1, 0f000000;"), "0f000000", "exactly 8 hex digits, got 6"),
    ("hex float, 9 digits", kernel("mov.f32 %f1, 0fFFFFFFFFF;"), "0fFFF", "exactly 8 hex digits, got 9"),
    ("0e prefix", kernel("mov.f32 %f1, 0eC0000000;"), "0eC0", "malformed number"),
    ("bad octal", kernel("mov.u32 %r1, 08;"), "08;", "malformed number"),
    ("bad octal address", kernel("ld.global.u32 %r1, [08];"), "08]", "malformed number"),
    ("hex float in address", kernel("ld.global.u32 %r1, [0f000000];"), "0f000000",
     "exactly 8 hex digits"),
    ("name as array size", kernel("", ".global .b8 g[out_addr];"), "out_addr", "malformed number"),
    ("float as alignment", kernel("", ".global .align 6.5 .b8 g[4];"), "6.5", "expected an integer"),
    ("float as array size", kernel("", ".global .b8 g[6.5];"), "6.5", "expected an integer"),
    ("float as .maxntid", HEADER + ".visible .entry k() .maxntid 6.5 { ret; }\n", "6.5",
     "expected an integer"),
    ("register range of 5000 digits", kernel(".reg .b32 %q<" + "9" * 5000 + ">;"), "9999",
     "does not fit in 64 bits"),
    ("literal of 5000 digits", kernel("mov.u32 %r1, " + "9" * 5000 + ";"), "9999", "does not fit in 64 bits"),
    ("initializer of 5000 digits", kernel("", ".global .u32 g = " + "9" * 5000 + ";"), "9999",
     "does not fit in 64 bits"),
    ("2**64", kernel("mov.u64 %rd1, 18446744073709551616;"), "1844", "does not fit in 64 bits"),
    ("immediate destination", kernel("ld.param.u64 12, [p];"), "ld.param", "cannot be a destination"),
    (".address_size 1e999", HEADER.replace("64", "1e999") + ".entry k() { ret; }\n", "1e999", "out of range"),
    (".address_size 7", HEADER.replace("64", "7") + ".entry k() { ret; }\n", "7\n", "32 or 64"),
    (".version 1e999", HEADER.replace("8.0", "1e999") + ".entry k() { ret; }\n", "1e999", "major.minor"),
    (".func in an address", kernel("ld.param.u64 %rd1, [ .func p];"), "[ .func", "malformed address"),
    ("register as offset", kernel("ld.param.u64 %rd1, [p+%rd1];"), "[p+", "malformed address"),
    (".extern before an instruction", kernel(".extern ret;"), ".extern ret", "state space"),
    ("braces", kernel("{" * 1000 + "}" * 1000), "{" * (MAX_NESTING + 1), "braces nested more than"),
    ("parentheses", kernel("call f, " + "(" * 2000 + ")" * 2000 + ";"), "(" * (MAX_NESTING + 1),
     "parentheses nested more than"),
]


@pytest.mark.parametrize("name,text,token,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_located(name, text, token, message):
    # The braces case: the error is at the 101st '{' of the body; the body's own
    # '{' (after the parameter list) is level 1, so the 101st level is the
    # 100th '{' of the run, i.e. the run's text at offset MAX_NESTING - 1.
    if name == "braces":
        at = text.index("{" * 1000) + MAX_NESTING - 1
        line = text.count("\n", 0, at) + 1
        with pytest.raises(PtxcError) as info:
            ptxc.parse(text, "t.ptx")
        assert (info.value.loc.line, info.value.loc.col) == (line, at - text.rfind("\n", 0, at))
        assert message in info.value.message
        return
    if name == "parentheses":
        at = text.index("(" * 2000) + MAX_NESTING       # the 101st '('
        with pytest.raises(PtxcError) as info:
            ptxc.parse(text, "t.ptx")
        assert info.value.loc.col == at - text.rfind("\n", 0, at)
        assert message in info.value.message
        return
    located(text, token, message)


def test_nesting_up_to_the_limit_parses():
    body = "{ " * (MAX_NESTING - 1) + "mov.u32 %r1, 1;" + " }" * (MAX_NESTING - 1)
    module = ptxc.parse(kernel(body), "t.ptx")
    ptxc.run_pipeline(module, "cfg,verify")
    assert "mov.u32" in module.to_ptx()


@pytest.mark.parametrize("literal,value,kind", [
    ("0f3F800000", 0x3F800000, "f32"),              # PTX ISA 4.5.2: exact f32 bits
    ("-0f3F800000", 0xBF800000, "f32"),             # '-' flips the sign bit
    ("0d3FF0000000000000", 0x3FF0000000000000, "f64"),
    ("010", 8, "int"),                              # octal, as in C
    ("0", 0, "int"),
    ("0b101", 5, "int"),
    ("0xFFFFFFFFFFFFFFFF", 2**64 - 1, "int"),       # the largest 64-bit literal
    ("18446744073709551615U", 2**64 - 1, "int"),
    ("-1", -1, "int"),
    ("1.5e3", 1500.0, "float"),
])
def test_valid_literals_keep_their_values(literal, value, kind):
    from ptxc.frontend.ptx_numbers import parse_number
    imm = parse_number(literal, 1, 1)
    assert (imm.value, imm.kind) == (value, kind)


def test_ptxc_syntax_is_a_ptxc_error():
    assert issubclass(PtxcSyntax, PtxcError)


def test_error_on_a_megabyte_line_is_bounded():
    name = "x" * 1_000_000
    text = HEADER + ".entry k() { mov.u32 %r1, " + name + " junk; }\n"
    with pytest.raises(PtxcError) as info:
        ptxc.parse(text, "t.ptx")
    shown = info.value.render()
    assert len(shown) < 600
    assert "characters" in info.value.message or len(info.value.message) < 200
    # the caret still points at the token named in the message
    src, caret = shown.split("\n")[1:3]
    col = info.value.loc.col
    line = text.split("\n")[info.value.loc.line - 1]
    assert src[caret.index("^"):].startswith(line[col - 1:col + 3])


def test_control_characters_in_the_echo_are_escaped():
    text = HEADER + ".entry k() { mov\x01.u32 %r1, 1; }\n"
    with pytest.raises(PtxcError) as info:
        ptxc.parse(text, "t.ptx")
    assert "\x01" not in info.value.render() and "\\x01" in info.value.render()


def test_seeded_mutation_fuzz():
    """Mutants of the shipped PTX: success or a located PtxcError, nothing else.

    Bounded to ~3 s: as many inputs as fit (at least 200), seed fixed so a
    failure reproduces with ``python tests/fuzz/mutator.py N 18``.
    """
    deadline = time.monotonic() + 3.0
    problems, n = [], 0
    for batch in range(100):
        problems += [p for _, _, _, p in mutator.campaign(100, seed=18 + 1000 * batch)]
        n += 100
        if time.monotonic() > deadline and n >= 200:
            break
    assert problems == [], problems[:5]


# ------------------------------------------------------------ initializer lists
def init_of(text: str):
    return [(v.name, v.init) for v in ptxc.parse(text, "t.ptx").globals]


def imms(init):
    return [(i.text, i.value, i.kind) for i in init]


def test_initializer_fast_path_equals_the_grammar():
    # A comment inside the braces sends the list through the full grammar
    # (the INITLIST token takes only numbers and blanks): both must agree.
    values = "1, 0x10, 010, -3, 0f3F800000, 2.5, 0b11, 255U"
    fast = init_of(HEADER + f".global .b32 g[8] = {{{values}}};\n")
    slow = init_of(HEADER + f".global .b32 g[8] = {{/* c */ {values}}};\n")
    assert imms(fast[0][1]) == imms(slow[0][1]) == [
        ("1", 1, "int"), ("0x10", 16, "int"), ("010", 8, "int"), ("-3", -3, "int"),
        ("0f3F800000", 0x3F800000, "f32"), ("2.5", 2.5, "float"), ("0b11", 3, "int"),
        ("255U", 255, "int")]


def test_initializer_lexed_as_one_token():
    from ptxc.frontend.lexer import PtxLexer
    from ptxc.frontend.parser import _parser
    lexer = PtxLexer(_parser().lexer_conf)
    kinds = [t.type for t in lexer.lex(HEADER + ".global .b8 g[3] = {1, 2,\n 3};\n")]
    # NUMBERs: 8.0 and 64 of the header only ([3] is an ADDR token, the list one INITLIST)
    assert "INITLIST" in kinds and kinds.count("NUMBER") == 2


def test_malformed_number_in_an_initializer_is_located():
    text = HEADER + ".global .b8 g[4] = {1, 2,\n    0fZZ, 4};\n"
    located(text, "0fZZ", "malformed number")


def test_initializer_parse_time_is_linear():
    """Parse CPU time of 4N values over N values: 4 when linear (16 when
    quadratic); the bound leaves room for a loaded machine."""
    def cpu(n):
        vals = ", ".join(str(i % 256) for i in range(n))
        text = HEADER + f".global .b8 g[{n}] = {{{vals}}};\n"
        best = float("inf")
        for _ in range(2):
            t = time.process_time()
            ptxc.parse(text, "t.ptx")
            best = min(best, time.process_time() - t)
        return best
    small, big = cpu(25_000), cpu(100_000)
    assert big / small < 8, (small, big)


def test_section_number_of_5000_digits_is_a_located_error():
    """Found by the seeded fuzz: a decimal .section value longer than Python's
    int() accepts (4300 digits) is 'does not fit', not a ValueError."""
    text = HEADER + ".section .debug_str { l: .b32 " + "7" * 5000 + " }\n"
    with pytest.raises(PtxcError) as info:
        ptxc.parse(text, "t.ptx")
    assert "does not fit .b32" in info.value.render()
