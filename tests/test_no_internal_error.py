"""No internal error (exit status 70) and no Python text for bad input
(issue 27): huge variables, an argument file that is not an array, a DWARF
byte of 256, and whatever the code generator or LLVM cannot handle in a
kernel the verifier accepted (a located 'not supported yet', no file left
behind)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner

import ptxc
from ptxc import PtxcError
from ptxc.backends.llvm.ops.table import OPS
from ptxc.cli.main import cli
from ptxc.ir.source_lines import debug_strings

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
KERNEL = HEAD + """\
.visible .entry k(.param .u64 p)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [p];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	add.s32 %r2, %r1, 7;
	st.global.u32 [%rd2], %r2;
	ret;
}
"""
ADD_LINE = 11                  # the add.s32 of KERNEL


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def write(tmp_path, text: str, name: str = "k.ptx") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("space,limit", [("global", "4 GiB per module (one segment of its memory)"),
                                         ("const", "64 KiB per module (ptxas' limit)")])
def test_64_gib_variable_is_refused_where_declared(tmp_path, space, limit):
    path = write(tmp_path, HEAD + f".{space} .u32 big[17179869184];\n" + KERNEL[len(HEAD):])
    r = run("opt", "--pass=verify", path)
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (
        f"{path}:4:{len(space) + 8}: error: variable 'big' (68719476736 bytes) brings the "
        f"module's .{space} variables to 68719476736 bytes; ptxc holds at most {limit}")


def test_global_past_a_32_bit_segment_is_refused_at_launch(tmp_path):
    """A 32-bit module's .global variables live in one 16 MiB segment: 20 MB
    is refused at the variable, not spilled into the next segment."""
    text = (".version 8.0\n.target sm_75\n.address_size 32\n.global .u32 g[5000000];\n"
            ".visible .entry k(.param .u32 p)\n{\n\tret;\n}\n")
    with pytest.raises(PtxcError) as info:
        ptxc.launch(ptxc.parse(text, "g.ptx"), "k", (1, 1, 1), (32, 1, 1), [0])
    assert info.value.headline() == (
        "g.ptx:4:14: error: not supported yet: variable 'g' brings the module's .global "
        "variables past 16 MiB, one segment of ptxc's memory in a module of .address_size 32")


@pytest.mark.parametrize("content,why", [
    (b"", "an empty file (write it with numpy.save)"),
    (b"1 2 3\n", "not a NumPy .npy file (write it with numpy.save)"),
    (b"\x93NUMPY\x01\x00", "not a valid .npy file"),
])
def test_argument_file_that_is_not_an_array(tmp_path, content, why):
    path = write(tmp_path, KERNEL)
    arg = tmp_path / "a.npy"
    arg.write_bytes(content)
    r = run("opt", "--pass=count", "--kernel", "k", "--grid", "1", "--block", "32",
            "--arg", f"0=@{arg}", path)
    assert r.exit_code == 1
    first = r.output.splitlines()[0]
    assert first.startswith(f"{path}:4:17: error: kernel k: cannot read '{arg}': {why}")
    assert "Error" not in r.output and "Traceback" not in r.output


def test_argument_from_dev_null(tmp_path):
    path = write(tmp_path, KERNEL)
    r = run("opt", "--pass=count", "--kernel", "k", "--grid", "1", "--block", "32",
            "--arg", "0=@/dev/null", path)
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (f"{path}:4:17: error: kernel k: cannot read '/dev/null': "
                                        "an empty file (write it with numpy.save)")


def test_argument_npy_file_loads(tmp_path):
    path = write(tmp_path, KERNEL)
    arg = tmp_path / "ok.npy"
    np.save(arg, np.zeros(32, np.uint32))
    r = run("opt", "--pass=count", "--kernel", "k", "--grid", "1", "--block", "32",
            "--arg", f"0=@{arg}", path)
    assert r.exit_code == 0, r.output


def test_debug_str_byte_of_256():
    """Refused by the parser (table in test_isa_rules.py); a module made
    otherwise still reads its strings, each byte taken modulo 256."""
    section = ".section .debug_str { $L__info_string0: .b8 104, 0x69, 256, 0 }"
    with pytest.raises(PtxcError, match="value '256' does not fit .b8"):
        ptxc.parse(KERNEL + section + "\n", "k.ptx")

    class Module:
        items = [("section", section)]
    assert debug_strings(Module) == {"$L__info_string0": "hi"}


# ------------------------------------------------------- the code generator
def test_lowering_exception_is_a_located_not_supported(monkeypatch):
    """Any exception a lowering raises becomes 'not supported yet' at the
    instruction, as written, when it executes: never Python's text."""
    def broken(cg, ins):
        raise KeyError("s128")
    monkeypatch.setitem(OPS, "add", broken)
    monkeypatch.setenv("PTXC_CACHE", "0")
    with pytest.raises(PtxcError) as info:
        ptxc.launch(ptxc.parse(KERNEL, "k.ptx"), "k", (1, 1, 1), (32, 1, 1),
                    [np.zeros(32, np.uint32)], mode="full")
    assert info.value.headline() == (
        f"k.ptx:{ADD_LINE}:2: error: kernel k, CTA (0,0,0), thread (0,0,0): not supported yet: "
        f"add.s32 %r2, %r1, 7 (this form of add) at line {ADD_LINE}")


def test_invalid_llvm_ir_is_placed_at_the_instruction(monkeypatch, tmp_path):
    """LLVM IR that LLVM refuses (a code generator bug) is reported at the
    PTX instruction whose code LLVM named, and no file is left behind."""
    def bad_ir(cg, ins):
        cg.f.emit("%nonsense = add i32 %undefined_value, 1")
    monkeypatch.setitem(OPS, "add", bad_ir)
    monkeypatch.setenv("PTXC_CACHE", "0")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("PTXC_KEEP_IR", raising=False)
    monkeypatch.delenv("PTXC_DEBUG", raising=False)
    with pytest.raises(PtxcError) as info:
        ptxc.launch(ptxc.parse(KERNEL, "k.ptx"), "k", (1, 1, 1), (32, 1, 1),
                    [np.zeros(32, np.uint32)], mode="full")
    assert info.value.headline() == (
        f"k.ptx:{ADD_LINE}:2: error: not supported yet: add.s32 %r2, %r1, 7 "
        "(ptxc cannot compile this form of add)")
    assert info.value.render().split("\n")[1] == " add.s32 %r2, %r1, 7;"
    assert os.listdir(tmp_path) == []


def test_invalid_llvm_ir_kept_on_request(monkeypatch, tmp_path):
    def bad_ir(cg, ins):
        cg.f.emit("this is not LLVM")
    monkeypatch.setitem(OPS, "add", bad_ir)
    monkeypatch.setenv("PTXC_CACHE", "0")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("PTXC_KEEP_IR", "1")
    with pytest.raises(PtxcError) as info:
        ptxc.launch(ptxc.parse(KERNEL, "k.ptx"), "k", (1, 1, 1), (32, 1, 1),
                    [np.zeros(32, np.uint32)], mode="full")
    assert "not supported yet: add.s32" in info.value.headline()
    # placed at the instruction: the IR is only kept when it cannot be placed
    assert os.listdir(tmp_path) == []
