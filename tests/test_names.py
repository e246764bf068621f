"""The one naming rule for kernels and parameters (ptxc/ir/names.py,
docs/user-guide.md "Kernel and parameter names") over every command that
takes a kernel or a parameter, its messages, the demangler behind it
(ptxc/ir/demangle.py, checked against c++filt when it is installed) and the
DWARF parameter names of -G builds (ptxc/ir/dwarf_names.py).

The kernels are those of tests/cuda/names.cu: ``vadd`` (C++),
``scale<float>`` and ``scale<double>`` (one base name for two kernels),
``ns::fill`` and the ``extern "C"`` ``plain``.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli
from ptxc.ir import names as N
from ptxc.ir.demangle import parse

HERE = Path(__file__).parent
PTX = str(HERE / "cuda" / "names.sm90.ptx")
GPTX = str(HERE / "cuda" / "names.sm90.G.ptx")

VADD, SCALE_F, SCALE_D, FILL, PLAIN = ("_Z4vaddPKfS0_Pfi", "_Z5scaleIfEvPT_S0_i",
                                        "_Z5scaleIdEvPT_S0_i", "_ZN2ns4fillEPiii", "plain")
LISTING = ("vadd(float const*, float const*, float*, int) [_Z4vaddPKfS0_Pfi], "
           "void scale<float>(float*, float, int) [_Z5scaleIfEvPT_S0_i], "
           "void scale<double>(double*, double, int) [_Z5scaleIdEvPT_S0_i], plain, "
           "ns::fill(int*, int, int) [_ZN2ns4fillEPiii]")
AMBIGUOUS = ("kernel name 'scale' is ambiguous: it names void scale<float>(float*, float, int) "
             "[_Z5scaleIfEvPT_S0_i], void scale<double>(double*, double, int) "
             "[_Z5scaleIdEvPT_S0_i] (give the signature or the PTX name)")

# every form of the rule, and the kernel it names
FORMS = [
    (VADD, VADD),                                              # 1. the PTX name
    ("vadd(float const*, float const*, float*, int)", VADD),   # 2. the signature
    ("vadd(float const *,float const*,float*,int)", VADD),     #    spaces do not count
    ("void scale<double>(double*, double, int)", SCALE_D),     #    a template's, return type
    ("scale<float>(float*, float, int)", SCALE_F),             #    ... or not
    ("scale<float>", SCALE_F),                                 # 3. with template arguments
    ("ns::fill", FILL),                                        # 4. qualified
    ("vadd", VADD),                                            #    the base name
    ("fill", FILL),
    (PLAIN, PLAIN),                                            # an extern "C" kernel
]
# every argument each kernel needs (by index), for commands that launch it
ARGS = {VADD: ["0=zeros:f32:32", "1=zeros:f32:32", "2=zeros:f32:32", "3=32"],
        SCALE_F: ["0=zeros:f32:32", "1=2", "2=32"], SCALE_D: ["0=zeros:f64:32", "1=2", "2=32"],
        FILL: ["0=zeros:i32:32", "1=7", "2=32"], PLAIN: ["0=zeros:i32:32", "1=32"]}


def ptxc_cli(*argv):
    r = CliRunner().invoke(cli, [str(a) for a in argv], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def launch_args(key, kernel):
    return [x for a in ARGS[kernel] for x in ("--arg", a)]


# ------------------------------------------------- the commands, one row each
# (argv for kernel name KEY that names KERNEL, the kernel the output shows chosen)
def opt_cmd(key, kernel, tmp_path):
    code, out, err = ptxc_cli("opt", "--pass=count", "--format=json", "--kernel", key, "--grid", 1,
                              "--block", 32, *launch_args(key, kernel), PTX)
    assert code == 0, err
    fns = json.loads(out)["count"]["functions"]
    return [n for n, f in fns.items() if "dynamic" in f]


def predict_cmd(key, kernel, tmp_path):
    code, out, err = ptxc_cli("predict", PTX, "--kernel", key, "--grid", 1, "--block", 32,
                              "--format", "json", *launch_args(key, kernel))
    assert code == 0, err
    return [json.loads(out)["kernel"]]


def occupancy_cmd(key, kernel, tmp_path):
    code, out, err = ptxc_cli("occupancy", PTX, "--kernel", key, "--regs", 32)
    assert code == 0, err
    return [_ptx_name_of(k) for k in re.findall(r"^kernel (.+) on h100", out, re.M)]


def _ptx_name_of(shown: str) -> str:
    return next(k for k in ARGS if N.short(k, 100) == shown)


def profile_kernel_cmd(key, kernel, tmp_path):
    code, out, err = ptxc_cli("profile", "--kernel", key, "--format", "json", PTX)
    return [k["kernel"] for k in json.loads(out)["kernels"]]


def profile_launch_cmd(key, kernel, tmp_path):
    argv = [x for a in ARGS[kernel] for x in ("--arg", f"{key}:{a}")]
    code, out, err = ptxc_cli("profile", "--launch", f"{key}:1:32", *argv, "--format", "json",
                              PTX)
    assert code == 0, err
    return [k["kernel"] for k in json.loads(out)["kernels"] if k["launch"]["source"] == "explicit"]


def launch_file_cmd(key, kernel, tmp_path):
    lf = tmp_path / "l.json"
    lf.write_text(json.dumps([{"kernel": key, "grid": 1, "block": 32,
                               "args": dict(a.split("=", 1) for a in ARGS[kernel])}]))
    code, out, err = ptxc_cli("profile", "--launches", lf, "--format", "json", PTX)
    assert code == 0, err
    return [k["kernel"] for k in json.loads(out)["kernels"] if k["launch"]["source"] == "file"]


def inject_cmd(key, kernel, tmp_path):
    code, out, err = ptxc_cli("inject", "--runs", 1, "--jobs", 1, "--kernel", key, "--grid", 1,
                              "--block", 32, *launch_args(key, kernel), PTX)
    assert code == 0, err
    return [_ptx_name_of(re.search(r"in 1 launch of (.+); 1 runs", out).group(1))]


def print_ir_cmd(key, kernel, tmp_path):
    code, out, err = ptxc_cli("opt", f"--pass=print-ir{{function={key}}}", PTX)
    assert code == 0, err
    return re.findall(r"\.entry (\S+)\(", out)


COMMANDS = {"opt": opt_cmd, "predict": predict_cmd, "occupancy": occupancy_cmd,
            "profile --kernel": profile_kernel_cmd, "profile --launch/--arg": profile_launch_cmd,
            "launch file": launch_file_cmd, "inject FILE.ptx": inject_cmd,
            "print-ir{function}": print_ir_cmd}
CHEAP = ("occupancy", "profile --kernel", "print-ir{function}")     # no compile: every form
SOME = (0, 1, 4, 6, 7)                                              # the others: one per level


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("form", range(len(FORMS)))
def test_every_command_takes_every_form(command, form, tmp_path):
    if command not in CHEAP and form not in SOME:
        pytest.skip("a launching command: one form per level of the rule")
    key, kernel = FORMS[form]
    if command == "print-ir{function}" and "," in key:
        pytest.skip("a pipeline option holds no comma: print-ir{function=...} takes no signature")
    assert COMMANDS[command](key, kernel, tmp_path) == [kernel]


# ------------------------------------------- a name that names none, or two
def errors_of(*argv):
    code, out, err = ptxc_cli(*argv)
    assert code == 1, (out, err)
    return err.splitlines()


BAD_KERNEL = {
    "opt": lambda k: ["opt", "--pass=count", "--kernel", k, "--grid", 1, "--block", 32, PTX],
    "predict": lambda k: ["predict", PTX, "--kernel", k, "--grid", 1, "--block", 32],
    "occupancy": lambda k: ["occupancy", PTX, "--kernel", k],
    "profile --kernel": lambda k: ["profile", "--kernel", k, PTX],
    "profile --launch": lambda k: ["profile", "--launch", f"{k}:1:32", PTX],
    "profile --arg": lambda k: ["profile", "--arg", f"{k}:n=1", PTX],
    "inject FILE.ptx": lambda k: ["inject", "--runs", 1, "--kernel", k, "--grid", 1, PTX],
}


@pytest.mark.parametrize("command", sorted(BAD_KERNEL))
def test_unknown_kernel_lists_every_kernel(command):
    assert errors_of(*BAD_KERNEL[command]("nope")) == \
        [f"ptxc: error: {PTX}: no kernel named 'nope' (kernels: {LISTING})"]


@pytest.mark.parametrize("command", sorted(BAD_KERNEL))
def test_ambiguous_kernel_lists_the_candidates(command):
    assert errors_of(*BAD_KERNEL[command]("scale")) == [f"ptxc: error: {PTX}: {AMBIGUOUS}"]


def test_launch_file_names(tmp_path):
    lf = tmp_path / "l.json"
    lf.write_text('[{"kernel": "nope", "grid": 1}]')
    assert errors_of("profile", "--launches", lf, PTX) == \
        [f"ptxc: error: {lf}: $[0]: no kernel named 'nope' in {PTX} (kernels: {LISTING})"]
    lf.write_text('[{"kernel": "vadd", "grid": 1}, {"kernel": "_Z4vaddPKfS0_Pfi", "grid": 2}]')
    assert errors_of("profile", "--launches", lf, PTX) == \
        [f"ptxc: error: {lf}: $[1]: kernel '_Z4vaddPKfS0_Pfi' already has a launch ({lf} $[0])"]


def test_print_ir_function_names():
    assert errors_of("opt", "--pass=print-ir{function=scale}", PTX) == \
        [f"ptxc: error: {PTX}: function name 'scale' is ambiguous: it names void "
         f"scale<float>(float*, float, int) [_Z5scaleIfEvPT_S0_i], void scale<double>(double*, "
         f"double, int) [_Z5scaleIdEvPT_S0_i] (give the signature or the PTX name)"]


def test_choose_a_kernel_lists_them():
    assert errors_of("opt", "--pass=count", "--grid", 1, "--block", 32, PTX) == \
        [f"ptxc: error: {PTX}: choose a kernel with --kernel (kernels: {LISTING})"]


def test_profile_launch_and_arg_split_a_qualified_name():
    from ptxc.cli.profile import _kernel_arg_callback, _launch_callback
    assert _launch_callback(None, None, ["ns::fill:4:32", "k:2,2", "vadd(float*):3"]) == {
        "ns::fill": ((4, 1, 1), (32, 1, 1)), "k": ((2, 2, 1), None), "vadd(float*)": ((3, 1, 1), None)}
    assert _kernel_arg_callback(None, None, ["ns::fill:n=5", "k:a=zeros:f32:8"]) == {
        "ns::fill": ["n=5"], "k": ["a=zeros:f32:8"]}


# -------------------------------------------------------------- parameters
PARAMS = "(parameters: 0 a, 1 b, 2 c, 3 n)"                 # the -G build's names
PTX_PARAMS = "(parameters: 0 param_0, 1 param_1, 2 param_2, 3 param_3)"
HEAD = "error: kernel vadd(float const*, float const*, float*, int): no parameter named 'N' "
BAD_PARAM = {
    "opt": lambda f: ["opt", "--pass=count", "--kernel", "vadd", "--grid", 1, "--block", 32,
                      "--arg", "N=64", f],
    "predict": lambda f: ["predict", f, "--kernel", "vadd", "--grid", 1, "--block", 32,
                          "--arg", "N=64"],
    "inject FILE.ptx": lambda f: ["inject", "--kernel", "vadd", "--block", 32, "--arg", "N=64", f],
}


@pytest.mark.parametrize("command", sorted(BAD_PARAM))
@pytest.mark.parametrize("ptx, listing", [(GPTX, PARAMS), (PTX, PTX_PARAMS)])
def test_unknown_parameter_lists_the_parameters(command, ptx, listing):
    lines = errors_of(*BAD_PARAM[command](ptx))
    line = N.find_kernel(ptxc.load(ptx), VADD).loc.line
    assert lines[0] == f"{ptx}:{line}:17: {HEAD}{listing}"
    assert lines[1] == ".visible .entry _Z4vaddPKfS0_Pfi("
    assert lines[2] == " " * 16 + "^"
    assert lines[3] == "parameters:"
    assert lines[4].startswith("  0: .u64 _Z4vaddPKfS0_Pfi_param_0")


@pytest.mark.parametrize("ptx, listing", [(GPTX, PARAMS), (PTX, PTX_PARAMS)])
def test_profile_arg_lists_the_parameters(ptx, listing):
    code, out, err = ptxc_cli("profile", "--arg", "vadd:N=64", ptx)
    assert code == 1
    assert f"  vadd(...): kernel vadd(float const*, float const*, float*, int): no parameter " \
           f"named 'N' {listing}" in out.splitlines()


def test_launch_file_parameter_names(tmp_path):
    lf = tmp_path / "l.json"
    lf.write_text('{"vadd": {"grid": 1, "block": 32, "args": {"N": 1}}}')
    assert errors_of("profile", "--launches", lf, GPTX) == \
        [f"ptxc: error: {lf}: $.vadd.args.N: {HEAD[7:]}{PARAMS}"]


@pytest.mark.parametrize("name", ["0", "_Z4vaddPKfS0_Pfi_param_0", "param_0", "a"])
def test_parameter_forms(name):
    fn = N.find_kernel(ptxc.load(GPTX), "vadd")
    assert N.param_index(fn, name) == 0
    assert N.param_index(fn, "n") == 3


def test_source_names_come_from_the_dwarf_only():
    assert N.source_names(N.find_kernel(ptxc.load(GPTX), "vadd")) == ["a", "b", "c", "n"]
    assert N.source_names(N.find_kernel(ptxc.load(PTX), "vadd")) == [None] * 4
    with pytest.raises(ptxc.PtxcError, match=re.escape(f"no parameter named 'a' {PTX_PARAMS}")):
        N.param_index(N.find_kernel(ptxc.load(PTX), "vadd"), "a")


def test_launch_api_takes_source_names():
    import numpy as np
    a, b = np.arange(32, dtype=np.float32), np.ones(32, dtype=np.float32)
    c = np.zeros(32, dtype=np.float32)
    ptxc.launch(ptxc.load(GPTX), "vadd", 1, 32, {"a": a, "b": b, "c": c, "n": 32}, mode="full")
    assert (c == a + 1).all()


def test_dwarf_names_of_every_debug_build():
    from ptxc.ir.dwarf_names import param_names
    m = ptxc.load(str(HERE / "cuda" / "divergence.sm90.G.ptx"))
    assert param_names(m) == {"div_ifelse_param_0": "out", "div_nested_param_0": "out",
                              "div_store_param_0": "a", "div_store_param_1": "b",
                              "div_2d_param_0": "out", "div_3d_param_0": "out",
                              "div_3d_param_1": "out2"}
    assert param_names(ptxc.load(str(HERE / "cuda" / "divergence.sm90.ptx"))) == {}


# ---------------------------------------------------------------- demangling
DEMANGLED = [
    ("_Z4vaddPKfS0_Pfi", "vadd(float const*, float const*, float*, int)"),
    ("_Z6kernelIfEvPT_i", "void kernel<float>(float*, int)"),
    ("_ZN2ns4vaddEPf", "ns::vadd(float*)"),
    ("_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()"),
    ("_Z1fPFviE", "f(void (*)(int))"),
    ("_ZN5ShapeD0Ev", "Shape::~Shape()"),                  # destructors, constructors and
    ("_ZN1AIiEC2Ev", "A<int>::A()"),                        # const members: c++filt's output
    ("_ZNK6Circle4areaEf", "Circle::area(float) const"),
    ("_Z1fPA4_i", "f(int (*) [4])"),
    ("_Z1fRA4_i", "f(int (&) [4])"),
    ("_Z1fILi3EEvv", "void f<3>()"),
    ("_Z1fILb1EEvv", "void f<true>()"),
    ("_Z1fILj3EEvv", "void f<3u>()"),
    ("_Z1fILin3EEvv", "void f<-3>()"),
    ("_Z1fILc65EEvv", "void f<(char)65>()"),
    ("_Z1fIL4Kind1EEvv", "void f<(Kind)1>()"),
    ("_Z1fI3FooI3BarIiEEEvv", "void f<Foo<Bar<int> > >()"),
    ("_ZN3cub17CUB_200200_900_NS11EmptyKernelIvEEvv",
     "void cub::CUB_200200_900_NS::EmptyKernel<void>()"),
    ("_Z1fKPf", "f(float* const)"),
    ("_Z1fRKf", "f(float const&)"),
    ("_Z1fOf", "f(float&&)"),
    ("_ZL3fooi", "foo(int)"),
    ("_Z3fooB5cxx11v", "foo[abi:cxx11]()"),
    ("_Z1fSt6vectorIiSaIiEE", "f(std::vector<int, std::allocator<int> >)"),
    ("_Z1fPVKi", "f(int const volatile*)"),
    ("_Z1fDhDnDF16_u6__bf16", "f(half, decltype(nullptr), _Float16, __bf16)"),
    ("_Z1fIJifEEvDpT_", "void f<int, float>(int, float)"),
    ("_Z1fIJEEvv", "void f<>()"),
    ("_ZN2ns1fINS_1AEEEvT_", "void ns::f<ns::A>(ns::A)"),
    ("_Z5scaleIdLi4EEvPT_S1_", "void scale<double, 4>(double*, double*)"),
    ("_Z1fN2ns3FooIiEES1_", "f(ns::Foo<int>, ns::Foo<int>)"),
    ("_Z1fPK6float4PS_", "f(float4 const*, float4*)"),
    ("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE",
     "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float> >"
     "(cutlass::gemm::kernel::Gemm<float>::Params)"),
]


@pytest.mark.parametrize("mangled, text", DEMANGLED)
def test_demangler_without_cxxfilt(mangled, text, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *_: None)      # no c++filt
    assert parse(mangled).text == text


def test_not_read_is_none_and_kept_without_cxxfilt(monkeypatch):
    for name in ("vecadd_branchy", "_Z", "_ZZ4tilePKfPfE3buf", "_Z1fPFPFviEiE", "_ZN1ACI1Ev", "_ZNVK1A1fEv"):
        assert parse(name) is None
    monkeypatch.setattr(shutil, "which", lambda *_: None)
    monkeypatch.setattr(N, "_readable", {})
    assert N.demangle("_ZZ4tilePKfPfE3buf") == "_ZZ4tilePKfPfE3buf"


ENTRY = re.compile(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(_Z\w+)")


def corpus() -> list[str]:
    """The table's names and every mangled kernel and function of the shipped PTX."""
    found = {m for m, _ in DEMANGLED}
    for path in list(HERE.rglob("*.ptx")) + list((HERE.parent / "examples").glob("*.ptx")):
        found.update(ENTRY.findall(path.read_text(errors="replace")))
    return sorted(found)


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="c++filt not installed")
def test_demangler_agrees_with_cxxfilt():
    names = corpus()
    assert len(names) > 40
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                         text=True).stdout.splitlines()
    mine = {n: parse(n) for n in names}
    assert [n for n in names if mine[n] is None] == []      # every kernel of the corpus is read
    assert {n: mine[n].text for n in names} == dict(zip(names, out))


def test_short_names():
    assert N.short(VADD) == "vadd(...)"                 # 46 characters: without the parameters
    assert N.short(VADD, 60) == "vadd(float const*, float const*, float*, int)"
    assert N.short("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE") == "Kernel<...>(...)"
    assert N.short(SCALE_F, 28) == "scale<float>(...)"
    assert N.short("fusion_" + "x" * 50, 20) == "fusion_xxxxxxxxxx..."


def test_inject_table_shows_short_demangled_names():
    from ptxc.inject.stats import summarise, table
    rows = summarise([{"kernel": "_Z14dynproc_kerneliPiS_S_iiiiiiPbb", "outcome": "masked"},
                      {"kernel": "_Z1kPi [fatbin2]", "outcome": "sdc"}])
    lines = table(rows).splitlines()
    assert lines[2][:28] == "dynproc_kernel(...)".ljust(28)
    assert lines[3][:28] == "k(int*) [fatbin2]".ljust(28)


def test_progress_line_names_the_kernel_demangled(monkeypatch):
    """backends/llvm/launch_wait.py draws `ptxc: kernel K: ...` with K short."""
    from ptxc.backends.llvm import launch_wait
    seen = []
    monkeypatch.setattr(launch_wait, "run_threads",
                        lambda loop, n, state, total, label, frame=None:
                        (seen.append(label), [loop(k) for k in range(n)]))
    import numpy as np
    ptxc.launch(ptxc.load(PTX), "vadd", 1, 32, [np.zeros(32, np.float32)] * 3 + [32], mode="full")
    assert seen == ["kernel vadd(...)"]
    text = launch_wait.line("kernel vadd(...)", 1, 4, 3.0)
    assert text.startswith("ptxc: kernel vadd(...): 1/4 CTAs")


# ------------------------------------------------------ run-time messages
def test_opt_out_of_bounds_shows_the_ptx_line_and_the_cuda_line():
    lineinfo = str(HERE / "cuda" / "names.sm90.lineinfo.ptx")
    code, out, err = ptxc_cli("opt", "--pass=count", "--kernel", "vadd", "--grid", 2, "--block", 32,
                              "--arg", "0=zeros:f32:32", "--arg", "1=zeros:f32:32",
                              "--arg", "2=zeros:f32:32", "--arg", "3=64", "--mode", "full",
                              lineinfo)
    lines = err.splitlines()
    assert code == 1 and len(lines) == 3
    m = re.fullmatch(rf"{re.escape(lineinfo)}:(\d+):2: error: kernel vadd\(float const\*, float "
                     r"const\*, float\*, int\), CTA \(1,0,0\), thread \(0,0,0\): out-of-bounds "
                     r"access at line (\d+) \(ld\.global\.f32\) from (\S+)/names\.cu:10, "
                     r"address 0x[0-9a-f]+ \(right after the end of buffer of parameter "
                     r"_Z4vaddPKfS0_Pfi_param_\d \(128 bytes at 0x[0-9a-f]+\)\)", lines[0])
    assert m and m.group(1) == m.group(2), lines[0]
    assert lines[1].lstrip().startswith("ld.global.f32") and lines[2] == " ^"


def test_opt_missing_argument_points_at_the_parameter():
    code, out, err = ptxc_cli("opt", "--pass=count", "--kernel", "vadd", "--grid", 1, "--block", 32,
                              "--arg", "0=zeros:f32:32", "--arg", "1=zeros:f32:32", "--mode",
                              "full", PTX)
    lines = err.splitlines()
    p = N.find_kernel(ptxc.load(PTX), VADD).params[2].loc
    assert code == 1 and lines[:4] == [
        f"{PTX}:{p.line}:{p.col}: error: kernel vadd(float const*, float const*, float*, int): "
        f"missing argument for parameter 2 '_Z4vaddPKfS0_Pfi_param_2'",
        " .param .u64 _Z4vaddPKfS0_Pfi_param_2,",
        " " * (p.col - 1) + "^", "parameters:"]
