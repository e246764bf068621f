"""The `ptxc` command line: options, output routing, error reporting.

Most tests call the click app in-process (CliRunner); a few run the installed
console script to check what a user's shell sees (exit status, no traceback,
fast start).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

import ptxc
from ptxc.cli import opt as cli_opt
from ptxc.cli.main import cli
from ptxc.cli.options import parse_dim
from ptxc.errors import PtxcError
from ptxc.ir.passmanager import ALL, Pass, PassResult

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "branchy.ptx"
BIN = Path(sys.executable).parent

SMALL = """\
.version 7.0
.target sm_70
.address_size 64

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r1, [k_param_1];
	mov.u32 	%r2, %tid.x;
	setp.ge.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L__done;
	cvta.to.global.u64 	%rd2, %rd1;
	st.global.u32 	[%rd2], %r2;
$L__done:
	ret;
}
"""


def have_parser() -> bool:
    try:
        import ptxc.frontend.parser  # noqa: F401
    except ImportError:
        return False
    return True


needs_parser = pytest.mark.skipif(not have_parser(), reason="ptxc.frontend.parser is not written yet")


def run(*args, input=None, env=None):
    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)


def assert_clean_error(result, status=1):
    assert result.exit_code == status, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------- fake module

class FakeModule:
    """Just enough of a Module for the driver: no parser needed."""

    def __init__(self, warnings=()):
        self.filename = "fake.ptx"
        self.functions = []
        self.warnings = list(warnings)

    def print_ir(self):
        return "; fake ir\n"

    def to_ptx(self):
        return "// fake ptx\n"


@dataclass(frozen=True)
class Recorder(Pass):
    name: ClassVar[str] = "recorder"
    summary: ClassVar[str] = "records the pipeline options"
    seen: ClassVar[list] = []

    level: int = 0

    def run(self, module, am):
        Recorder.seen.append((self.level, dict(am.options)))
        fmt = am.options.get("format", "text")
        text = {"text": "recorded\n", "csv": "a,b\n1,2\n", "json": "ignored"}[fmt]
        return PassResult(self.name, text=text, data={"level": self.level}, preserved=ALL)


@dataclass(frozen=True)
class Crasher(Pass):
    name: ClassVar[str] = "crasher"
    summary: ClassVar[str] = "raises"

    kind: str = "internal"

    def run(self, module, am):
        if self.kind == "ptxc":
            raise PtxcError("crasher: something the user did wrong")
        raise RuntimeError("boom")


@pytest.fixture
def fake(monkeypatch):
    """Replace parsing by a FakeModule and register the test passes."""
    module = FakeModule(warnings=["fake.ptx:1:1: warning: a module warning"])
    monkeypatch.setattr(cli_opt, "read_module", lambda path: module)
    import ptxc.passes.registry as reg
    real = reg.get_pass_class
    extra = {"recorder": Recorder, "crasher": Crasher}
    monkeypatch.setattr(reg, "get_pass_class", lambda n: extra.get(n) or real(n))
    monkeypatch.setattr(reg, "pass_names", lambda: sorted(list(reg.PASSES) + list(extra)))
    Recorder.seen.clear()
    return module


# ------------------------------------------------------------ basics

def test_version():
    r = run("--version")
    assert r.exit_code == 0
    assert r.output.strip() == f"ptxc {ptxc.__version__}"


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["opt", "--help"], ["passes", "--help"]])
def test_help(args):
    r = run(*args)
    assert r.exit_code == 0
    assert "Usage: ptxc" in r.output


def test_opt_help_lists_options():
    out = run("opt", "--help").output
    for opt in ("--pass", "--emit", "--format", "--output", "--verify-each", "--kernel",
                "--grid", "--block", "--shared", "--arg", "--mode", "--max-steps", "--threads"):
        assert opt in out


def test_no_command_shows_usage():
    r = run()
    assert "Usage: ptxc" in r.output
    assert "opt" in r.output and "passes" in r.output


def test_passes_lists_every_registered_pass():
    from ptxc.passes.registry import pass_names
    r = run("passes")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    for name in pass_names():
        assert any(line.split()[0] == name for line in lines), name
    print_ir = next(line for line in lines if line.split()[0] == "print-ir")
    assert "print the SSA IR of every function" in print_ir


def test_passes_unavailable_pass_does_not_crash(monkeypatch):
    import ptxc.passes.registry as reg
    monkeypatch.setitem(reg.PASSES, "zz-missing", "ptxc.passes.zz_not_written:Nope")
    r = run("passes")
    assert r.exit_code == 0
    line = next(line for line in r.output.splitlines() if "zz-missing" in line)
    assert "(not available)" in line
    r = run("passes", "--verbose")
    assert r.exit_code == 0
    assert "ModuleNotFoundError" in r.output


def test_passes_verbose_shows_options():
    r = run("passes", "-v")
    assert r.exit_code == 0
    assert "function: str" in r.output     # print-ir{function=NAME}


# ------------------------------------------------------- usage errors

def test_unknown_pass(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(SMALL)
    r = run("opt", "--pass=nope", str(f))
    assert_clean_error(r, 1)
    assert "error: unknown pass 'nope'" in r.stderr
    from ptxc.passes.registry import pass_names
    for name in pass_names():
        assert name in r.stderr


def test_unknown_pass_reported_before_reading_file():
    r = run("opt", "--pass=print-ir,nope", "/no/such/file.ptx")
    assert_clean_error(r, 1)
    assert "unknown pass 'nope'" in r.stderr


def test_bad_pass_option():
    r = run("opt", "--pass=print-ir{colour=red}", "/no/such/file.ptx")
    assert_clean_error(r, 1)
    assert "pass 'print-ir' has no option 'colour'" in r.stderr


def test_unterminated_pipeline():
    r = run("opt", "--pass=print-ir{function=k", "x.ptx")
    assert_clean_error(r, 1)
    assert "unterminated" in r.stderr


def test_bad_option_is_usage_error():
    r = run("opt", "--frobnicate", "x.ptx")
    assert r.exit_code == 2
    assert "No such option" in r.output


def test_bad_emit_choice():
    r = run("opt", "--emit=asm", "x.ptx")
    assert r.exit_code == 2
    assert "--emit" in r.output


def test_missing_file_argument():
    r = run("opt", "--pass=print-ir")
    assert r.exit_code == 2
    assert "Missing argument" in r.output


def test_missing_file():
    r = run("opt", "--pass=", "no/such/file.ptx")
    assert_clean_error(r, 1)
    assert r.stderr.strip() == "ptxc: error: cannot read 'no/such/file.ptx': No such file or directory"


def test_directory_as_file(tmp_path):
    r = run("opt", "--pass=", str(tmp_path))
    assert_clean_error(r, 1)
    assert r.stderr.startswith(f"ptxc: error: cannot read '{tmp_path}'")


# ---------------------------------------------------- launch options

@pytest.mark.parametrize("text,dims", [
    ("4", (4, 1, 1)), ("4,2", (4, 2, 1)), ("4,2,3", (4, 2, 3)),
    (" 8 , 1 ", (8, 1, 1)), ("2x3x4", (2, 3, 4)), ("32X2", (32, 2, 1)),
])
def test_parse_dim(text, dims):
    assert parse_dim(text, "--grid") == dims


@pytest.mark.parametrize("text", ["", "0", "-1", "a", "1,2,3,4", "1,,2", "1.5", "0x10"])
def test_parse_dim_rejects(text):
    import click
    with pytest.raises(click.BadParameter):
        parse_dim(text, "--grid")


@pytest.mark.parametrize("args,msg", [
    (["--grid", "0"], "--grid"),
    (["--block", "1,2,3,4"], "--block"),
    (["--grid", "x"], "--grid"),
    (["--kernel", "k", "--arg", "novalue"], "NAME=VALUE"),
    (["--kernel", "k", "--mode", "fast"], "--mode"),
    (["--kernel", "k", "--max-steps", "0"], "--max-steps"),
    (["--arg", "n=1"], "--kernel"),
    (["--shared", "0"], "--kernel"),
    (["--no-cta-equivalence"], "--kernel"),
])
def test_bad_launch_options(args, msg, fake):
    r = run("opt", "--pass=recorder", *args, "x.ptx")
    assert r.exit_code == 2, r.output
    assert msg in r.output
    assert "Traceback" not in r.output


def test_launch_options_reach_passes(fake):
    r = run("opt", "--pass=recorder{level=3}", "--kernel", "k", "--grid", "4,2",
            "--block", "128", "--shared", "64", "--arg", "n=500", "--arg", "a=random:f32:512:1",
            "--mode", "full", "--max-steps", "1000", "--threads", "2", "--no-cta-equivalence",
            "x.ptx")
    assert r.exit_code == 0, r.output
    (level, options), = Recorder.seen
    assert level == 3
    assert options["format"] == "text"
    assert options["launch"] == {
        "kernel": "k", "grid": (4, 2, 1), "block": (128, 1, 1), "shared": 64,
        "args": ["n=500", "a=random:f32:512:1"], "mode": "full", "max_steps": 1000,
        "threads": 2, "cta_equivalence": False,
    }


def test_launch_defaults(fake):
    r = run("opt", "--pass=recorder", "--grid", "2", "x.ptx")
    assert r.exit_code == 0, r.output
    (_, options), = Recorder.seen
    assert options["launch"] == {"kernel": None, "grid": (2, 1, 1), "block": None,
                                 "shared": 0, "args": [], "mode": "hybrid",
                                 "max_steps": None, "threads": None, "cta_equivalence": True}


def test_no_launch_key_without_launch_options(fake):
    r = run("opt", "--pass=recorder", "x.ptx")
    assert r.exit_code == 0
    (_, options), = Recorder.seen
    assert "launch" not in options


# --------------------------------------------------- output routing

def test_reports_and_warnings(fake):
    r = run("opt", "--pass=recorder,recorder", "x.ptx")
    assert r.exit_code == 0
    assert r.stdout == "recorded\nrecorded\n"
    assert r.stderr == "fake.ptx:1:1: warning: a module warning\n"


def test_format_reaches_passes(fake):
    r = run("opt", "--pass=recorder", "--format=csv", "x.ptx")
    assert r.exit_code == 0
    assert r.stdout == "a,b\n1,2\n"
    assert Recorder.seen[0][1]["format"] == "csv"


def test_format_json(fake):
    r = run("opt", "--pass=recorder{level=2}", "--format=json", "x.ptx")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {"recorder": {"level": 2}}


def test_emit_default_is_none(fake):
    r = run("opt", "--pass=", "x.ptx")
    assert r.exit_code == 0
    assert r.stdout == ""


@pytest.mark.parametrize("emit,text", [("ir", "; fake ir\n"), ("ptx", "// fake ptx\n"),
                                       ("none", "")])
def test_emit_to_stdout(fake, emit, text):
    r = run("opt", "--pass=", f"--emit={emit}", "x.ptx")
    assert r.exit_code == 0
    assert r.stdout == text


def test_emit_to_file(fake, tmp_path):
    out = tmp_path / "out.ptx"
    r = run("opt", "--pass=recorder", "--emit=ptx", "-o", str(out), "x.ptx")
    assert r.exit_code == 0
    assert r.stdout == "recorded\n"          # reports stay on stdout
    assert out.read_text() == "// fake ptx\n"


def test_unwritable_output(fake, tmp_path):
    r = run("opt", "--pass=", "--emit=ptx", "-o", str(tmp_path / "no" / "dir" / "o.ptx"), "x.ptx")
    assert_clean_error(r, 1)
    assert "ptxc: error: cannot write" in r.stderr


def test_pass_error_is_clean(fake):
    r = run("opt", "--pass=crasher{kind=ptxc}", "x.ptx")
    assert_clean_error(r, 1)
    assert "ptxc: error: crasher: something the user did wrong" in r.stderr


def test_internal_error(fake, monkeypatch):
    monkeypatch.delenv("PTXC_DEBUG", raising=False)
    r = run("opt", "--pass=crasher", "x.ptx")
    assert_clean_error(r, 70)
    assert "ptxc: internal error: RuntimeError: boom" in r.stderr


def test_internal_error_debug_traceback(fake, monkeypatch):
    monkeypatch.setenv("PTXC_DEBUG", "1")
    r = run("opt", "--pass=crasher", "x.ptx")
    assert r.exit_code == 70
    assert "Traceback" in r.stderr
    assert "RuntimeError: boom" in r.stderr


# ------------------------------------------------ with the real parser

@needs_parser
def test_print_ir_real_file():
    r = run("opt", "--pass=print-ir", str(EXAMPLE))
    assert r.exit_code == 0, r.output
    assert "vecadd_branchy" in r.stdout
    assert "collatz_steps" in r.stdout


@needs_parser
def test_print_ir_one_function():
    r = run("opt", "--pass=print-ir{function=collatz_steps}", str(EXAMPLE))
    assert r.exit_code == 0, r.output
    assert "collatz_steps" in r.stdout
    assert "vecadd_branchy" not in r.stdout
    r = run("opt", "--pass=print-ir{function=nope}", str(EXAMPLE))
    assert_clean_error(r, 1)
    assert "no function 'nope'" in r.stderr


@needs_parser
def test_stdin():
    r = run("opt", "--pass=", "--emit=ptx", "-", input=SMALL)
    assert r.exit_code == 0, r.output
    assert ".entry k" in r.stdout
    assert ptxc.parse(r.stdout).kernels[0].name == "k"


@needs_parser
def test_stdin_error_location():
    r = run("opt", "--pass=", "-", input=".version 7.0\n.target sm_70\nfoo bar;\n")
    assert_clean_error(r, 1)
    assert r.stderr.startswith("<stdin>:")


@needs_parser
def test_emit_ir_matches_api(tmp_path):
    r = run("opt", "--pass=", "--emit=ir", str(EXAMPLE))
    assert r.exit_code == 0, r.output
    assert r.stdout.rstrip("\n") == ptxc.load(str(EXAMPLE)).print_ir().rstrip("\n")


@needs_parser
def test_emit_ptx_round_trip(tmp_path):
    out = tmp_path / "rt.ptx"
    r = run("opt", "--pass=", "--emit=ptx", "-o", str(out), str(EXAMPLE))
    assert r.exit_code == 0, r.output
    again = ptxc.load(str(out))
    assert [k.name for k in again.kernels] == ["vecadd_branchy", "collatz_steps"]
    assert again.print_ir().replace(str(out), "F") == \
        ptxc.load(str(EXAMPLE)).print_ir().replace(str(EXAMPLE), "F")


@needs_parser
def test_emit_ptx_accepted_by_ptxas(tmp_path):
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    out = tmp_path / "rt.ptx"
    assert run("opt", "--pass=", "--emit=ptx", "-o", str(out), str(EXAMPLE)).exit_code == 0
    p = subprocess.run([ptxas, "-arch=sm_75", str(out), "-o", str(tmp_path / "rt.cubin")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@needs_parser
def test_json_print_ir():
    r = run("opt", "--pass=print-ir", "--format=json", str(EXAMPLE))
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert "vecadd_branchy" in data["print-ir"]


@needs_parser
def test_verify_each():
    try:
        import ptxc.passes.verifier  # noqa: F401
    except ImportError:
        pytest.skip("ptxc.passes.verifier is not written yet")
    r = run("opt", "--pass=print-ir,print-ir", "--verify-each", str(EXAMPLE))
    assert r.exit_code == 0, r.output


# --------------------------------------------------------- bad input

BAD_INPUTS = {
    "empty": b"",
    "garbage": b"\x7fELF this is not PTX at all }}}\n",
    "truncated": SMALL[: SMALL.index("st.global")].encode() + b"st.glo",
    "unknown_opcode": SMALL.replace("cvta.to.global.u64", "frobnicate.u64").encode(),
    "non_utf8": SMALL.replace("$L__done:", "$L__d\xffone:").encode("latin-1"),
    "wrong_operand_count": SMALL.replace("mov.u32 \t%r2, %tid.x;", "mov.u32 \t%r2;").encode(),
    "unbalanced_brace": SMALL.replace("\tret;\n}\n", "\tret;\n").encode(),
}
LOC_RE = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): error: \S")


@needs_parser
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input(case, tmp_path):
    assert BAD_INPUTS[case] != SMALL.encode()
    f = tmp_path / f"{case}.ptx"
    f.write_bytes(BAD_INPUTS[case])
    r = run("opt", "--pass=print-ir", str(f))
    assert_clean_error(r, 1)
    lines = r.stderr.rstrip("\n").split("\n")
    m = LOC_RE.match(lines[0])
    assert m, r.stderr
    assert m.group("file") == str(f)
    if case == "empty":                 # one line: nothing to point at (tests/test_input_hints.py)
        assert lines == [f"{f}:1:1: error: empty file: no PTX module (nvcc -ptx -arch=sm_90 "
                         f"FILE.cu -o empty.ptx writes one)"]
        return
    assert re.fullmatch(r" *\^", lines[-1]), r.stderr          # the caret line
    assert len(lines[-1]) == int(m.group("col"))               # caret under the column
    assert r.stdout == ""


@needs_parser
def test_bad_input_lines():
    """The error points at the offending line."""
    expect = {"unknown_opcode": b"frobnicate", "wrong_operand_count": b"mov.u32",
              "non_utf8": b"\xff"}
    for case, word in expect.items():
        text = BAD_INPUTS[case]
        lineno = next(i for i, line in enumerate(text.split(b"\n"), 1)
                      if word in line)
        r = run("opt", "--pass=", "-", input=text)
        assert_clean_error(r, 1)
        assert r.stderr.startswith(f"<stdin>:{lineno}:"), (case, r.stderr)


# ------------------------------------------------------ console script

def _script():
    path = BIN / "ptxc"
    if not path.exists():
        pytest.skip("the ptxc console script is not installed (pip install -e .)")
    return str(path)


def test_console_script_exit_codes(tmp_path):
    exe = _script()
    env = {k: v for k, v in os.environ.items() if k != "PTXC_DEBUG"}
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == f"ptxc {ptxc.__version__}"
    p = subprocess.run([exe, "opt", "--pass=", str(tmp_path / "missing.ptx")],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert p.stderr.startswith("ptxc: error: cannot read")
    assert "Traceback" not in p.stderr
    p = subprocess.run([exe, "opt", "--bogus"], capture_output=True, text=True, env=env)
    assert p.returncode == 2
    p = subprocess.run([exe, "passes"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "print-ir" in p.stdout


@needs_parser
def test_console_script_bad_input(tmp_path):
    exe = _script()
    f = tmp_path / "bad.ptx"
    f.write_bytes(BAD_INPUTS["unknown_opcode"])
    p = subprocess.run([exe, "opt", "--pass=print-ir", str(f)], capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr.startswith(f"{f}:")
    assert "Traceback" not in p.stderr + p.stdout


def test_cli_import_is_light():
    """Starting the CLI must not import the heavy libraries."""
    code = ("import sys, ptxc.cli.main, ptxc.ir.passmanager, ptxc.passes.pipeline, "
            "ptxc.passes.registry; "
            "print(','.join(m for m in ('lark', 'networkx', 'llvmlite', 'numpy') "
            "if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""
