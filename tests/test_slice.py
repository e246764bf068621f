"""Tests of the branch slice (passes/slice*.py), checked with the independent
closure checker (tests/slice_checker.py) and on hand-written PTX."""
from __future__ import annotations

from pathlib import Path

import pytest

import ptxc
from ptxc.errors import PtxcError
from ptxc.passes.slice.slice_pass import mark_slice, remove_unkept
from ptxc.passes.pipeline import make_pass
from slice_checker import check_module

CUDA = Path(__file__).resolve().parent / "cuda"

HEADER = ".version 7.0\n.target sm_80\n.address_size 64\n"


def kernel_ptx(body: str, params: str = ".param .u64 p0, .param .u64 p1, .param .u32 n",
               name: str = "k", decls: str = "") -> str:
    regs = (".reg .pred %p<9>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n"
            ".reg .f32 %f<20>;\n")
    return f"{HEADER}{decls}\n.visible .entry {name}({params})\n{{\n{regs}{body}\n}}\n"


def sliced(text: str, **options):
    m = ptxc.parse(text)
    mark_slice(m, **options)
    return m


def kept_ops(fn) -> list[str]:
    """'+op' / '-op' per instruction (phis left out), in order."""
    return [("+" if i.attrs["slice"] else "-") + i.full_opcode
            for i in fn.instructions() if not i.is_phi]


def find(fn, text: str):
    """The first instruction whose opcode-with-modifiers starts with ``text``."""
    return next(i for i in fn.instructions() if i.full_opcode.startswith(text))


def is_kept(fn, text: str) -> bool:
    return find(fn, text).attrs["slice"]


# ------------------------------------------------------------------ basics

TID_BRANCH = kernel_ptx("""
    ld.param.u64 %rd1, [p0];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, %f1;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
""")


def test_tid_branch_keeps_index_only():
    m = sliced(TID_BRANCH)
    fn = m.kernels[0]
    assert kept_ops(fn) == ["-ld.param.u64", "+ld.param.u32", "+mov.u32", "+setp.ge.u32",
                            "+bra", "-cvta.to.global.u64", "-mul.wide.u32", "-add.s64",
                            "-ld.global.f32", "-add.f32", "-st.global.f32", "+ret"]
    assert check_module(m) == []


def test_marks_contract():
    m = sliced(TID_BRANCH)
    fn = m.kernels[0]
    assert fn.attrs["sliced"] is True
    assert all(isinstance(i.attrs["slice"], bool) for i in fn.instructions())
    rep = fn.attrs["slice_report"]
    assert rep["static_inst"] == 12 and rep["slice_inst"] == 5
    assert rep["slice_fraction"] == pytest.approx(5 / 12, abs=1e-6)
    assert rep["control_inputs"] == {"special": ["%tid.x"], "params": ["n"],
                                     "memory": [], "functions": []}
    # the default: conservative marks until a launch specialises them (memory=launch)
    assert m.attrs["slice"] == {"memory": "launch", "criteria": "counters"}


def test_pass_reports_and_options():
    m = ptxc.parse(TID_BRANCH)
    r = ptxc.run_pipeline(m, "slice{memory=refined}")["slice"]
    assert "5/12 instructions" in r.text
    assert "depend only on: %tid.x, param n" in r.text
    assert r.data["k"]["memory"] == "refined"
    with pytest.raises(PtxcError):
        make_pass("slice", {"memory": "bogus"})
    with pytest.raises(PtxcError):
        make_pass("slice", {"criteria": "everything"})


def test_deterministic_reports():
    a = ptxc.run_pipeline(ptxc.parse(TID_BRANCH), "slice")["slice"].text
    b = ptxc.run_pipeline(ptxc.parse(TID_BRANCH), "slice")["slice"].text
    assert a == b


# ------------------------------------------------------- guards, criteria

GUARDED = kernel_ptx("""
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [p0];
    ld.global.f32 %f1, [%rd1];
    setp.gt.u32 %p1, %r1, 3;
    @%p1 mul.f32 %f1, %f1, %f1;
    st.global.f32 [%rd1], %f1;
    ret;
""")


def test_guard_of_every_guarded_instruction_is_a_criterion():
    m = sliced(GUARDED, memory="noalias")
    fn = m.kernels[0]
    assert is_kept(fn, "setp.gt.u32")
    assert not is_kept(fn, "mul.f32")
    assert check_module(m, memory="noalias") == []


def test_criteria_branches_drops_plain_guards():
    m = sliced(GUARDED, criteria="branches")
    fn = m.kernels[0]
    assert not is_kept(fn, "setp.gt.u32")
    assert check_module(m, criteria="branches") == []


GUARDED_DEF = kernel_ptx("""
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    setp.gt.u32 %p1, %r1, 3;
    @%p1 add.u32 %r2, %r1, 7;
    setp.eq.u32 %p2, %r2, 9;
    @%p2 bra DONE;
    ld.param.u64 %rd1, [p0];
    st.global.u32 [%rd1], %r2;
DONE:
    ret;
""")


def test_guarded_definition_keeps_its_old_value():
    m = sliced(GUARDED_DEF)
    fn = m.kernels[0]
    add = find(fn, "add.u32")
    assert add.attrs["slice"] and add.prior        # the IR carries the old %r2
    assert is_kept(fn, "mov.u32") and find(fn, "mov.u32").results[0].reg == "%r1"
    movs = [i for i in fn.instructions() if i.opcode == "mov"]
    assert all(i.attrs["slice"] for i in movs)      # %ntid.x is the old value
    assert check_module(m) == []


def test_two_writers_on_both_arms():
    m = sliced(kernel_ptx("""
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 16;
        @%p1 bra THEN;
        add.u32 %r5, %r1, 100;
        bra.uni JOIN;
    THEN:
        mul.lo.u32 %r5, %r1, 3;
    JOIN:
        setp.gt.u32 %p2, %r5, 40;
        @%p2 bra DONE;
        ld.param.u64 %rd1, [p0];
        st.global.u32 [%rd1], %r5;
    DONE:
        ret;
    """))
    fn = m.kernels[0]
    assert is_kept(fn, "add.u32") and is_kept(fn, "mul.lo.u32")
    phis = [i for i in fn.instructions() if i.is_phi]
    assert phis and all(p.attrs["slice"] for p in phis)
    assert not is_kept(fn, "st.global")
    assert check_module(m) == []


# ------------------------------------------------------------------ memory

def data_branch(store_space: str, load_space: str, decls: str, store_addr: str,
                load_addr: str) -> str:
    st = "st" + (f".{store_space}" if store_space else "")
    ld = "ld" + (f".{load_space}" if load_space else "")
    return kernel_ptx(f"""
        mov.u32 %r1, %tid.x;
        ld.param.u64 %rd1, [p0];
        ld.param.u64 %rd2, [p1];
        mul.wide.u32 %rd20, %r1, 4;
        {store_addr}
        {st}.u32 [%rd10], %r1;
        bar.sync 0;
        {load_addr}
        {ld}.u32 %r3, [%rd11];
        setp.eq.u32 %p1, %r3, 0;
        @%p1 bra DONE;
        add.u32 %r4, %r1, 1;
    DONE:
        ret;
    """, decls=decls)


def test_conservative_generic_load_sees_shared_store():
    text = data_branch("shared", "", ".shared .align 4 .b8 A[64];",
                       "mov.u64 %rd10, A;", "mov.u64 %rd11, %rd2;")
    m = sliced(text)
    assert is_kept(m.kernels[0], "st.shared")
    assert check_module(m) == []


def test_distinct_spaces_do_not_alias():
    text = data_branch("shared", "global", ".shared .align 4 .b8 A[64];",
                       "mov.u64 %rd10, A;", "mov.u64 %rd11, %rd2;")
    m = sliced(text)
    assert not is_kept(m.kernels[0], "st.shared")


def test_refined_distinct_shared_arrays():
    decls = ".shared .align 4 .b8 A[64];\n.shared .align 4 .b8 B[64];"
    text = data_branch("shared", "shared", decls, "mov.u64 %rd10, A;",
                       "mov.u64 %rd12, B;\n add.s64 %rd11, %rd12, %rd20;")
    assert is_kept(sliced(text).kernels[0], "st.shared")
    m = sliced(text, memory="refined")
    assert not is_kept(m.kernels[0], "st.shared")
    assert check_module(m, memory="refined") == []


def test_refined_same_array_with_index_aliases():
    decls = ".shared .align 4 .b8 A[64];"
    text = data_branch("shared", "shared", decls, "mov.u64 %rd10, A;",
                       "mov.u64 %rd12, A;\n add.s64 %rd11, %rd12, %rd20;")
    assert is_kept(sliced(text, memory="refined").kernels[0], "st.shared")


def test_refined_constant_offsets():
    decls = ".shared .align 4 .b8 A[64];"
    disjoint = data_branch("shared", "shared", decls, "mov.u64 %rd10, A;",
                           "mov.u64 %rd12, A;\n add.s64 %rd11, %rd12, 4;")
    assert not is_kept(sliced(disjoint, memory="refined").kernels[0], "st.shared")
    overlap = data_branch("shared", "shared", decls, "mov.u64 %rd13, A;\n add.s64 %rd10, %rd13, 2;",
                          "mov.u64 %rd12, A;\n add.s64 %rd11, %rd12, 4;")
    assert is_kept(sliced(overlap, memory="refined").kernels[0], "st.shared")


def test_refined_dynamic_shared_arrays_alias():
    decls = ".extern .shared .align 4 .b8 A[];\n.extern .shared .align 4 .b8 B[];"
    text = data_branch("shared", "shared", decls, "mov.u64 %rd10, A;", "mov.u64 %rd11, B;")
    assert is_kept(sliced(text, memory="refined").kernels[0], "st.shared")


def test_pointer_params_alias_unless_noalias():
    text = data_branch("global", "global", "", "cvta.to.global.u64 %rd10, %rd1;",
                       "cvta.to.global.u64 %rd11, %rd2;")
    assert is_kept(sliced(text).kernels[0], "st.global")
    assert is_kept(sliced(text, memory="refined").kernels[0], "st.global")
    m = sliced(text, memory="noalias")
    assert not is_kept(m.kernels[0], "st.global")
    assert m.kernels[0].attrs["slice_report"]["control_inputs"]["memory"] == ["global:param p1"]


def test_refined_shared_symbol_vs_param_pointer():
    text = data_branch("global", "shared", ".shared .align 4 .b8 A[64];",
                       "cvta.to.global.u64 %rd10, %rd1;", "mov.u64 %rd11, A;")
    assert not is_kept(sliced(text).kernels[0], "st.global")    # spaces differ anyway
    gen = data_branch("", "shared", ".shared .align 4 .b8 A[64];",
                      "mov.u64 %rd10, %rd1;", "mov.u64 %rd11, A;")
    assert is_kept(sliced(gen).kernels[0], "st.u32")
    assert not is_kept(sliced(gen, memory="refined").kernels[0], "st.u32")


def test_loaded_pointer_is_unknown_region():
    text = data_branch("global", "global", "", "cvta.to.global.u64 %rd10, %rd1;",
                       "ld.global.u64 %rd11, [%rd2];")
    assert is_kept(sliced(text, memory="noalias").kernels[0], "st.global")


GUARD_FROM_CALL = HEADER + """
.func (.reg .u32 a, .reg .pred b) f(.reg .u32 x)
{
    add.u32 a, x, 1;
    setp.eq.u32 b, x, 7;
    ret;
}
.visible .entry k(.param .u64 p0, .param .u64 p1)
{
    .reg .u64 %rd<4>;
    .reg .u32 %r<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p0];
    ld.param.u64 %rd2, [p1];
    ld.global.u32 %r1, [%rd1];
    call (%r2, %p1), f, (%r1);
    @%p1 st.global.u32 [%rd2], %r2;
    ret;
}
"""


def test_guard_returned_by_a_call_keeps_the_callee_definition():
    """The guard of the store is the call's .reg return b: the seed must keep
    the callee's setp defining b (and x, hence the load), not only the call.
    With noalias the store is not kept, so only the guard rule keeps them
    (the rule for .reg returns keeps every definition of a return register,
    so add.u32 a is kept too)."""
    m = sliced(GUARD_FROM_CALL, memory="noalias")
    f = m.function("f")
    assert is_kept(f, "setp.eq.u32")
    assert is_kept(m.kernels[0], "ld.global.u32") and not is_kept(m.kernels[0], "st.global")
    assert check_module(m, memory="noalias") == []


def test_barrier_is_kept_with_shared_dependence():
    text = data_branch("shared", "shared", ".shared .align 4 .b8 A[64];",
                       "mov.u64 %rd10, A;", "mov.u64 %rd11, A;")
    fn = sliced(text).kernels[0]
    assert is_kept(fn, "bar.sync") and is_kept(fn, "st.shared")


def test_atomic_result_keeps_other_writers():
    m = sliced(kernel_ptx("""
        ld.param.u64 %rd1, [p0];
        st.global.u32 [%rd1+8], 5;
        atom.global.add.u32 %r1, [%rd1], 1;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 bra DONE;
        mov.u32 %r2, 1;
    DONE:
        ret;
    """))
    fn = m.kernels[0]
    assert is_kept(fn, "atom") and is_kept(fn, "st.global")
    assert not is_kept(fn, "mov.u32")
    assert check_module(m) == []


# ------------------------------------------------------------------- calls

CALLS = HEADER + """
.func (.param .b32 ret) f(.param .b32 a, .param .b32 b)
{
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [a];
    add.u32 %r2, %r1, 1;
    st.param.b32 [ret], %r2;
    ret;
}
.visible .entry k(.param .u32 n)
{
    .reg .b32 %r<9>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    {
    .param .b32 a0;
    .param .b32 a1;
    .param .b32 r0;
    st.param.b32 [a0], %r1;
    st.param.b32 [a1], %r2;
    call.uni (r0), f, (a0, a1);
    ld.param.b32 %r3, [r0];
    }
    setp.eq.u32 %p1, %r3, 4;
    @%p1 bra DONE;
    add.u32 %r4, %r3, 1;
DONE:
    ret;
}
"""


def test_interprocedural_parameter_edges():
    m = sliced(CALLS)
    f, k = m.function("f"), m.function("k")
    assert all(i.attrs["slice"] for i in f.instructions())
    stores = [i for i in k.instructions() if i.full_opcode == "st.param.b32"]
    assert [s.attrs["slice"] for s in stores] == [True, False]   # b is never read
    assert is_kept(k, "call") and is_kept(k, "ld.param")
    assert not is_kept(k, "add.u32")
    rep = k.attrs["slice_report"]["control_inputs"]
    assert rep["special"] == ["%tid.x"] and rep["functions"] == ["f"]
    assert check_module(m) == []


SHARED_CALLEE = HEADER + """
.func (.param .b32 ret) load(.param .b64 ptr)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [ptr];
    ld.global.u32 %r1, [%rd1];
    st.param.b32 [ret], %r1;
    ret;
}
.visible .entry uses(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    {
    .param .b64 a0;
    .param .b32 r0;
    st.param.b64 [a0], %rd1;
    call.uni (r0), load, (a0);
    ld.param.b32 %r1, [r0];
    }
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, 1;
DONE:
    ret;
}
.visible .entry ignores(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r2, %tid.x;
    st.global.u32 [%rd1], %r2;
    {
    .param .b64 a0;
    .param .b32 r0;
    st.param.b64 [a0], %rd1;
    call.uni (r0), load, (a0);
    }
    ret;
}
"""


def test_shared_callee_is_closed_in_every_kernel():
    m = sliced(SHARED_CALLEE)
    ign = m.function("ignores")
    # the callee's load is kept (for @uses); in @ignores it runs too, so
    # @ignores' store that it may read and its argument must be kept
    assert is_kept(m.function("load"), "ld.global")
    assert is_kept(ign, "st.global") and is_kept(ign, "mov.u32")
    assert is_kept(ign, "st.param")
    assert check_module(m) == []


EXTERN = HEADER + """
.extern .func (.param .b32 r) vprintf(.param .b64 fmt, .param .b64 args);
.extern .func (.param .b32 r) mystery(.param .b64 x);
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    mov.u64 %rd2, 42;
    {
    .param .b64 a0;
    .param .b64 a1;
    .param .b32 r0;
    st.param.b64 [a0], %rd1;
    st.param.b64 [a1], %rd2;
    call.uni (r0), vprintf, (a0, a1);
    }
    mov.u64 %rd3, 7;
    {
    .param .b64 b0;
    .param .b32 s0;
    st.param.b64 [b0], %rd3;
    call.uni (s0), mystery, (b0);
    }
    ld.global.u32 %r1, [%rd1];
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u32 %r2, 1;
DONE:
    ret;
}
"""


def test_external_calls_are_conservative_except_known_pure():
    m = sliced(EXTERN)
    k = m.kernels[0]
    stores = {i.srcs[0].base.name: i.attrs["slice"] for i in k.instructions()
              if i.full_opcode == "st.param.b64"}
    # vprintf's arguments are printed (host-visible output, docs/slice.md);
    # mystery may write memory the kernel reads
    assert stores == {"a0": True, "a1": True, "b0": True}
    movs = {str(i.srcs[0].value): i.attrs["slice"] for i in k.instructions()
            if i.full_opcode == "mov.u64"}
    assert movs == {"42": True, "7": True}
    assert check_module(m) == []


# ------------------------------------------------------------- emit=sliced

def test_emit_sliced_removes_unkept_and_parses_back():
    m = ptxc.parse(TID_BRANCH)
    r = ptxc.run_pipeline(m, "slice{emit=sliced}")
    assert not r["slice"].preserved
    ops = [i.full_opcode for i in m.kernels[0].instructions() if not i.is_phi]
    assert ops == ["ld.param.u32", "mov.u32", "setp.ge.u32", "bra", "ret"]
    again = ptxc.parse(m.to_ptx())
    assert [i.full_opcode for i in again.kernels[0].instructions()] == ops


def test_remove_unkept_counts():
    m = sliced(TID_BRANCH)
    assert remove_unkept(m) == 7


# ------------------------------------------------------ the nvcc examples

@pytest.mark.parametrize("name", sorted(p.name for p in CUDA.glob("*.ptx")))
@pytest.mark.parametrize("memory", ["conservative", "refined", "noalias"])
def test_checker_accepts_cuda_examples(name, memory):
    m = ptxc.load(str(CUDA / name))
    mark_slice(m, memory=memory)
    assert check_module(m, memory=memory) == []


def test_checker_detects_missing_instructions():
    m = sliced(GUARDED_DEF)
    fn = m.kernels[0]
    find(fn, "setp.gt.u32").attrs["slice"] = False
    assert any("unkept" in e for e in check_module(m))
    m = sliced(data_branch("global", "global", "", "cvta.to.global.u64 %rd10, %rd1;",
                           "cvta.to.global.u64 %rd11, %rd2;"))
    find(m.kernels[0], "st.global").attrs["slice"] = False
    assert any("may reach a kept read" in e for e in check_module(m))
    m = sliced(TID_BRANCH)
    find(m.kernels[0], "bra").attrs["slice"] = False
    assert any("criterion not kept" in e for e in check_module(m))


# ------------------------------------------------------------- the corpus

from corpus import corpus_params  # noqa: E402


@pytest.mark.parametrize("path", corpus_params())
def test_corpus_slice_is_closed(path):
    """Every corpus file: each criterion kept and the slice closed (memory
    rules checked for the conservative default; the data, control, guard and
    parameter rules for noalias too)."""
    try:
        m = ptxc.load(str(path))
    except PtxcError as e:
        pytest.skip(f"does not parse (not the slice's business): {e.headline()}")
    for memory in ("conservative", "noalias"):
        reports = mark_slice(m, memory=memory)
        assert check_module(m, memory=memory) == [], memory
        for name, r in reports.items():
            assert 0 <= r["slice_inst"] <= r["static_inst"], name


def test_select_slice_remembers_each_variant():
    """select_slice computes a variant once and later only re-applies its marks;
    the marks and report objects are those of a fresh mark_slice."""
    from ptxc.passes.slice.slice_pass import select_slice
    src = (Path(__file__).parent / "cuda" / "data_branch.sm90.ptx").read_text()
    fresh = {}
    for memory in ("conservative", "noalias"):
        m = ptxc.parse(src, "data_branch.ptx")
        mark_slice(m, memory=memory)
        fresh[memory] = [i.attrs["slice"] for f in m.functions for i in f.instructions()]
    m = ptxc.parse(src, "data_branch.ptx")
    reports = {}
    for memory in ("conservative", "noalias", "conservative", "noalias"):
        got = select_slice(m, memory=memory)
        assert [i.attrs["slice"] for f in m.functions for i in f.instructions()] == fresh[memory]
        assert m.attrs["slice"]["memory"] == memory
        first = reports.setdefault(memory, got)
        assert got is first                          # remembered, not recomputed
        for f in m.functions:
            assert f.attrs["slice_report"] is got[f.name]
    assert fresh["conservative"] != fresh["noalias"]
