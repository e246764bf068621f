"""Front end: syntax coverage, IR shape and clean errors for bad input."""
from __future__ import annotations

import pytest

import ptxc
from ptxc import PtxcError, ir

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u64 p0", decls: str = "") -> str:
    return HEADER + f"{decls}\n.visible .entry k({params})\n{{\n{body}\n}}\n"


def only_fn(text: str) -> ir.Function:
    return ptxc.parse(text, "t.ptx").functions[-1]


def test_module_header_and_kernels():
    m = ptxc.parse(HEADER + ".visible .entry k() .reqntid 128, 2\n{\n ret;\n}\n", "t.ptx")
    assert m.version == "8.0" and m.target == ["sm_90"] and m.address_size == 64
    assert [k.name for k in m.kernels] == ["k"]
    assert m.kernels[0].reqntid == (128, 2, 1) and m.kernels[0].maxntid is None


def test_target_suffixes_and_debug():
    m = ptxc.parse(".version 9.0\n.target sm_90a, debug\n.entry k() { ret; }\n", "t.ptx")
    assert m.target == ["sm_90a", "debug"]


def test_register_ranges_vectors_guards_and_addresses():
    fn = only_fn(kernel("""
        .reg .pred %p<3>; .reg .b32 %r<4>; .reg .b64 %rd<3>; .reg .f32 %f<5>;
        ld.param.u64 %rd1, [p0];
        mov.u32 %r1, %tid.x;
        setp.lt.s32 %p1|%p2, %r1, 10;
        @!%p1 add.s32 %r1, %r1, -1;
        ld.global.v2.f32 {%f1, %f2}, [%rd1+-8];
        mov.f32 %f3, 0f3F800000;
        st.global.f32 [%rd1+4], %f3;
        ret;"""))
    instrs = fn.blocks[0].instrs
    setp = instrs[2]
    assert isinstance(setp.dsts[0], ir.Pair) and len(setp.results) == 2
    add = instrs[3]
    assert add.guard_neg and add.prior == [instrs[1].results[0]]
    ld = instrs[4]
    assert isinstance(ld.dsts[0], ir.Vec) and len(ld.results) == 2
    assert ld.srcs[0].offset == -8 and ld.srcs[0].base is instrs[0].results[0]
    imm = instrs[5].srcs[0]
    assert imm.kind == "f32" and imm.value == 0x3F800000
    assert fn.special["%tid.x"].type == "u32"


def test_scopes_shadow_registers():
    fn = only_fn(kernel("""
        .reg .b32 %r1;
        mov.u32 %r1, 1;
        {
            .reg .b32 %r1;
            mov.u32 %r1, 2;
        }
        add.u32 %r1, %r1, 3;
        ret;"""))
    outer, inner, add = fn.blocks[0].instrs[:3]
    assert add.srcs[0] is outer.results[0]          # the inner %r1 does not leak out
    assert inner.scope is not outer.scope and inner.scope.parent is outer.scope


def test_call_with_prototype_and_params():
    text = HEADER + """
.func (.param .b32 ret) f(.param .b32 a) { .reg .b32 %r<2>; ld.param.b32 %r1, [a];
  st.param.b32 [ret], %r1; ret; }
.entry k() {
  .reg .b32 %r<3>;
  mov.u32 %r1, 5;
  { .param .b32 p; .param .b32 r;
    st.param.b32 [p], %r1;
    call.uni (r), f, (p);
    ld.param.b32 %r2, [r]; }
  ret;
}"""
    m = ptxc.parse(text, "t.ptx")
    call = [i for i in m.kernels[0].instructions() if i.opcode == "call"][0]
    # call (ret), f, (args): the return list is the destination operand
    assert isinstance(call.dsts[0], ir.ParenList) and call.dsts[0].items[0].name == "r"
    assert call.srcs[0].name == "f" and isinstance(call.srcs[1], ir.ParenList)
    assert m.function("f").rets[0].name == "ret"


def test_brx_idx_targets():
    fn = only_fn(kernel("""
        .reg .b32 %r<2>;
        mov.u32 %r1, %tid.x;
        ts: .branchtargets L0, L1;
        brx.idx %r1, ts;
    L0: ret;
    L1: ret;""", params=""))
    assert [b.name for b in fn.blocks[0].succs] == ["L0", "L1"]


def test_fall_through_and_guarded_exit_edges():
    fn = only_fn(kernel("""
        .reg .pred %p1; .reg .b32 %r1;
        mov.u32 %r1, %tid.x;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 exit;
        add.u32 %r1, %r1, 1;
    L: ret;""", params=""))
    b0, b1 = fn.blocks[0], fn.blocks[1]
    assert b0.succs == [b1] and b1.succs == []
    assert b1.label is None            # L is not a branch target: no block split


def test_round_trip_is_byte_stable():
    text = kernel("""
        .reg .b32 %r<3>;
        mov.u32 %r1, %tid.x;
    $L__BB0_1:
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, 4;
        @%p1 bra $L__BB0_1;
        ret;""", params="", decls="")
    text = text.replace(".reg .b32 %r<3>;", ".reg .b32 %r<3>; .reg .pred %p1;")
    m = ptxc.parse(text, "t.ptx")
    again = ptxc.parse(m.to_ptx(), "t.ptx")
    assert again.print_ir() == m.print_ir()
    assert again.to_ptx() == m.to_ptx()
    assert ptxc.parse(text, "t.ptx").print_ir() == m.print_ir()   # deterministic


# ------------------------------------------------------------------ bad input

def error_of(text: str) -> PtxcError:
    with pytest.raises(PtxcError) as err:
        ptxc.parse(text, "bad.ptx")
    return err.value


@pytest.mark.parametrize("text, line, fragment", [
    ("", 1, "empty file"),
    ("   \n\n", 1, "empty file"),
    ("garbage here ;", 1, "syntax error"),
    (kernel("frobnicate.u32 %r1;"), 7, "unknown opcode 'frobnicate'"),
    (kernel(".reg .b32 %r1;\nadd.s32 %r1, %r1;"), 8, "takes 3 operands, got 2"),
    (kernel("mov.u32 %r9, 1;"), 7, "undeclared register '%r9'"),
    (kernel("bra NOWHERE;"), 7, "undefined label 'NOWHERE'"),
    (kernel(".reg .b32 %r1;\nmov.u32 %r1, 1;")[:-10], 8, "end of file"),
    (".target sm_90\n.entry k() { ret; }", 1, "missing .version"),
    (kernel("mov.u32 %r1, 1 # 2;"), 7, "unexpected character"),
])
def test_bad_input_errors(text, line, fragment):
    err = error_of(text)
    assert fragment in err.message
    assert err.loc.file == "bad.ptx" and err.loc.line == line
    rendered = err.render()
    assert rendered.startswith(f"bad.ptx:{line}:") and ": error: " in rendered


def test_non_utf8_bytes(tmp_path):
    path = tmp_path / "bin.ptx"
    path.write_bytes(HEADER.encode() + b"\xff\xfe junk\n")
    with pytest.raises(PtxcError) as err:
        ptxc.load(str(path))
    assert "invalid UTF-8 byte 0xff" in err.value.message and err.value.loc.line == 4


def test_missing_file():
    with pytest.raises(PtxcError, match="cannot read"):
        ptxc.load("/nonexistent/file.ptx")


def test_error_render_has_caret():
    err = error_of(kernel("frobnicate.u32 %r1;"))
    text, caret = err.render().split("\n")[1:3]
    assert text.strip() == "frobnicate.u32 %r1;"
    assert caret.index("^") == text.index("frobnicate")


def test_register_plus_constant_operand_reads_the_register():
    # `st [x], temp + 1` (ZLUDA's reg_local; ptxas accepts it): the store must
    # depend on temp, not on a symbol named temp.
    fn = only_fn(kernel("""
        .reg .b64 temp; .local .u64 x;
        ld.param.u64 temp, [p0];
        st.local.u64 [x], temp + 1;
        ret;"""))
    ld, st = fn.blocks[0].instrs[:2]
    assert isinstance(st.srcs[1], ir.RegOffset) and st.srcs[1].offset == 1
    assert list(st.operand_values()) == [ld.results[0]]
    assert "temp+1" in fn.module.to_ptx()
