"""Wrong inputs get a one-line hint (ptxc/frontend/input_hint.py,
docs/user-guide.md "Input"), told by content, not by name, for every
command that reads PTX.
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli

HERE = Path(__file__).parent
CU = (HERE / "cuda" / "names.cu").read_text()


def elf(e_type: int, e_machine: int) -> bytes:
    """The first bytes of a 64-bit little-endian ELF file."""
    return b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", e_type, e_machine) + bytes(44)


HINTS = {   # file name, content -> the message after 'ptxc: error: PATH '
    "app.cu": (CU, "is CUDA source, not PTX: compile it with nvcc -ptx -arch=sm_90 {p} -o app.ptx"),
    "kernel.ptx": ("#include <cstdio>\n__global__ void k() {}\n",          # by content, not name
                   "is CUDA source, not PTX: compile it with nvcc -ptx -arch=sm_90 {p} -o kernel.ptx"),
    "app": (elf(2, 62), "is an executable, not PTX: run it with ptxc run -- {p}"),
    "lib.so": (elf(3, 62), "is an executable, not PTX: run it with ptxc run -- {p}"),
    "k.cubin": (elf(2, 190), "is a cubin (compiled device code), not PTX: give ptxc the PTX "
                             "(nvcc -ptx -arch=sm_90 FILE.cu -o k.ptx)"),
    "k.o": (elf(1, 62), "is an object file, not PTX: give ptxc the PTX (nvcc -ptx -arch=sm_90 "
                        "FILE.cu), or link the application and run it with ptxc run -- ./app"),
    "k.fatbin": (b"\x50\xed\x55\xba\x01\x00\x10\x00" + bytes(16),
                 "is a CUDA fat binary, not PTX: give ptxc the PTX (nvcc -ptx -arch=sm_90 FILE.cu "
                 "-o k.ptx), or run the application with ptxc run -- ./app"),
    "data.ptx": (b".version 8.0\x00\x01", "is a binary file (a NUL byte at offset 12), not PTX text"),
}
COMMANDS = {"opt": ["opt", "--pass=cfg"], "profile": ["profile"], "occupancy": ["occupancy"],
            "predict": ["predict", "--kernel", "k", "--grid", "1", "--block", "1"],
            "inject": ["inject", "--kernel", "k", "--block", "1"]}


def run(*argv, input=None):
    r = CliRunner().invoke(cli, [str(a) for a in argv], input=input, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", sorted(HINTS))
def test_wrong_input_hint(command, name, tmp_path):
    content, hint = HINTS[name]
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    code, out, err = run(*COMMANDS[command], path)
    assert (code, out) == (1, "")
    assert err.splitlines() == [f"ptxc: error: {path} " + hint.format(p=path)]


def test_hint_for_standard_input():
    code, out, err = run("opt", "--pass=cfg", "-", input=CU)
    assert err == ("ptxc: error: <stdin> is CUDA source, not PTX: compile it with nvcc -ptx "
                   "-arch=sm_90 kernel.cu -o kernel.ptx\n")
    code, out, err = run("opt", "--pass=cfg", "-", input=elf(2, 62))
    assert err == "ptxc: error: <stdin> is an executable, not PTX: run it with ptxc run -- ./app\n"


def test_empty_file(tmp_path):
    path = tmp_path / "empty.ptx"
    path.write_text("\n  \n")
    code, out, err = run("opt", "--pass=cfg", path)
    assert (code, err) == (1, f"{path}:1:1: error: empty file: no PTX module (nvcc -ptx "
                              f"-arch=sm_90 FILE.cu -o empty.ptx writes one)\n")


def test_ptx_that_only_mentions_cuda_still_parses():
    text = (HERE / "cuda" / "names.sm90.ptx").read_text()
    m = ptxc.parse("// __global__ #include <x>\n" + text, "k.ptx")
    assert len(m.kernels) == 5


def test_a_ptx_error_in_text_that_is_not_cuda_is_unchanged(tmp_path):
    path = tmp_path / "bad.ptx"
    path.write_text(".version 8.0\n.target sm_90\nfoo bar;\n")
    code, out, err = run("opt", "--pass=cfg", path)
    assert err.splitlines()[0] == f"{path}:3:1: error: syntax error: unexpected 'foo'"
