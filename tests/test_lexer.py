"""The fast lexer's shortcuts (a whole simple instruction, a whole simple
.reg declaration, a run of simple statements, a list of simple parameters,
each one token) must give exactly the IR, the source positions and the error
messages that the full grammar gives."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import ptxc
import ptxc.frontend.lexer as lexer
from corpus import corpus_files

FILES = sorted((Path(__file__).parent / "cuda").glob("*.ptx"))


def positions(module) -> str:
    """Where each parameter and instruction of the module was found."""
    out = []
    for fn in module.functions:
        out += [f"{fn.name} param {p.name} {p.loc.line}:{p.loc.col} {p.dims}" for p in fn.params + fn.rets]
        out += [f"{fn.name} {i.full_opcode} {i.loc.line}:{i.loc.col}"
                for b in fn.blocks for i in b.instrs if i.loc is not None]
    return "\n".join(out)


def ir_or_error(path) -> str:
    try:
        module = ptxc.load(str(path))
        return module.print_ir() + module.to_ptx() + positions(module)
    except ptxc.PtxcError as e:
        return "error: " + e.render()


def grammar_only(monkeypatch):
    """Turn the shortcuts off: every statement goes through the grammar."""
    monkeypatch.setattr(lexer, "_INSTR_RE", re.compile(r"(?!)"))
    monkeypatch.setattr(lexer, "_REGDECL_RE", re.compile(r"(?!)"))
    monkeypatch.setattr(lexer, "RUNS", False)


def test_shortcut_matches_grammar_on_test_kernels(monkeypatch):
    fast = [ir_or_error(f) for f in FILES]
    grammar_only(monkeypatch)
    assert [ir_or_error(f) for f in FILES] == fast


def test_runs_match_single_tokens_on_test_kernels(monkeypatch):
    """Runs and parameter lists off, one INSTR/REGDECL token per statement."""
    fast = [ir_or_error(f) for f in FILES]
    monkeypatch.setattr(lexer, "RUNS", False)
    assert [ir_or_error(f) for f in FILES] == fast


# Edited variants of a test kernel, mostly broken: the IR or the error
# (message, line, column) must be the same whichever way it was lexed.
BROKEN = [
    ("add.s32", "addx.s32"),                      # unknown opcode inside a run
    ("%r1,", "%zz1,"),                            # undeclared register inside a run
    ("$L__BB0_2:", "$L__BB0_9:"),                 # undefined label (branch inside a run)
    (".param .u64", ".param .u64 .u64 5"),        # valid, but not a simple parameter
    ("[%rd1]", "[%rd1+]"),                        # malformed address
    ("%r1, 1;", "%r1, 0xZZ;"),                    # malformed number
    (".param .u32", ".param .u32 x, .reg"),       # a keyword inside a parameter list
    ("ret;", "ret"),                              # missing ';' before '}'
]


@pytest.mark.parametrize("old, new", BROKEN)
def test_errors_match_grammar(monkeypatch, tmp_path, old, new):
    texts = [f.read_text() for f in FILES if old in f.read_text()][:3]
    assert texts, f"no test kernel contains {old!r}"
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"k{i}.ptx")
        paths[-1].write_text(text.replace(old, new, 1))
    fast = [ir_or_error(p) for p in paths]
    grammar_only(monkeypatch)
    assert [ir_or_error(p) for p in paths] == fast


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
    "ld.global.v2.f32 {%f1, %f2}, [%rd1];",      # vector of registers
    "mov.b64 %rd1, {%r1, 0};",
])
def test_simple_instruction_is_one_token(line):
    assert lexer._INSTR_RE.fullmatch(line)


@pytest.mark.parametrize("line", [
    "call.uni (r), f, (p);",                      # call lists
    "st.global.v2.f32 [%rd1], {%f1, [%rd2]};",    # an address inside a vector
    "mov.b64 {!%p1, %r2}, %rd1;",                 # a negation inside a vector
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


def test_run_and_parameter_list_are_one_token_each():
    text = (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(\n\t.param .u64 .ptr .align 16 k_p0,\n\t.param .align 8 .b8 k_p1[16]\n)\n"
            "{\n\t.reg .b32 %r<3>;\n$L1:\n\tmov.u32 %r1, 1;\n\tret;\n}\n")
    from ptxc.frontend.parser import _parser
    toks = list(lexer.PtxLexer(_parser().lexer_conf).lex(text))
    kinds = [t.type for t in toks]
    assert kinds.count("PARAMS") == 1 and kinds.count("STMTS") == 1
    stmts = next(t for t in toks if t.type == "STMTS")
    assert [(k, x, line, col) for k, x, line, col in stmts.value] == [
        ("REGDECL", ".reg .b32 %r<3>;", 9, 2), ("LABEL", "$L1", 10, 1),
        ("INSTR", "mov.u32 %r1, 1;", 11, 2), ("INSTR", "ret;", 12, 2)]
    fn = ptxc.parse(text).functions[0]
    # k_p0 is on line 5 after a tab and ".param .u64 .ptr .align 16 " (27 characters): column 29;
    # k_p1 on line 6 after a tab and ".param .align 8 .b8 " (20 characters): column 22
    assert [(p.name, p.loc.line, p.loc.col, p.align, p.dims) for p in fn.params] == [
        ("k_p0", 5, 29, 16, []), ("k_p1", 6, 22, 8, [16])]
