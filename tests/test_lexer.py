"""The fast lexer's shortcuts (a whole simple instruction, or a whole simple
.reg declaration, as one token) must give exactly the IR that the full
grammar gives."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import ptxc
import ptxc.lexer as lexer
from corpus import corpus_files

FILES = sorted((Path(__file__).parent / "cuda").glob("*.ptx"))


def ir_or_error(path) -> str:
    try:
        module = ptxc.load(str(path))
        return module.print_ir() + module.to_ptx()
    except ptxc.PtxcError as e:
        return "error: " + e.render()


def grammar_only(monkeypatch):
    """Turn the shortcuts off: every statement goes through the grammar."""
    monkeypatch.setattr(lexer, "_INSTR_RE", re.compile(r"(?!)"))
    monkeypatch.setattr(lexer, "_REGDECL_RE", re.compile(r"(?!)"))


def test_shortcut_matches_grammar_on_test_kernels(monkeypatch):
    fast = [ir_or_error(f) for f in FILES]
    grammar_only(monkeypatch)
    assert [ir_or_error(f) for f in FILES] == fast


def test_shortcut_matches_grammar_on_corpus_sample(monkeypatch):
    files = corpus_files()[::7]
    if not files:
        pytest.skip("shared PTX corpus not found")
    fast = [ir_or_error(f) for f in files]
    grammar_only(monkeypatch)
    assert [ir_or_error(f) for f in files] == fast


@pytest.mark.parametrize("line", [
    "@!%p1 add.s32 %r1, %r2, -1;",
    "ld.global.nc.f32 %f1, [%rd1+-8];",
    "mov.f32 %f2, 0f3F800000;",
    "bra.uni $L__BB0_2;",
    "setp.lt.and.s32 %p1, %r1, 5, !%p2;",
    "ret;",
])
def test_simple_instruction_is_one_token(line):
    assert lexer._INSTR_RE.fullmatch(line)


@pytest.mark.parametrize("line", [
    "ld.global.v2.f32 {%f1, %f2}, [%rd1];",      # vector operand
    "call.uni (r), f, (p);",                      # call lists
    "setp.lt.s32 %p1|%p2, %r1, 5;",               # predicate pair
    "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [t, {%f5, %f6}];",
])
def test_complex_instruction_uses_the_grammar(line):
    assert lexer._INSTR_RE.fullmatch(line) is None


def test_column_of_operand_error_inside_shortcut():
    text = ".version 8.0\n.target sm_90\n.entry k()\n{\n  mov.u32 %r9, 1;\n}\n"
    with pytest.raises(ptxc.PtxcError) as err:
        ptxc.parse(text, "c.ptx")
    assert err.value.loc.line == 5 and err.value.loc.col == 11


@pytest.mark.parametrize("line, simple", [
    (".reg .u64 %r0;", True),
    (".reg .b32 %r<12>, %x;", True),
    (".reg .v4 .f32 %v;", False),
    (".reg .align 8 .b8 %a;", False),
])
def test_register_declaration_shortcut(line, simple):
    assert (lexer._REGDECL_RE.fullmatch(line) is not None) == simple
