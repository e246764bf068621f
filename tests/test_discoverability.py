"""What a user finds without reading the code: ``ptxc opt FILE`` without
``--pass`` summarises the module, ``ptxc passes -v`` shows what each option
accepts, and the library gives an instruction's CUDA line
(``Instr.source_line()``) and the PTX instructions the reports count
(``Function.ptx_instructions()``; docs/ir.md).
"""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli

HERE = Path(__file__).parent


def run(*argv, input=None):
    r = CliRunner().invoke(cli, [str(a) for a in argv], input=input, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


# --------------------------------------------------- opt without --pass
def test_opt_without_pass_summarises_the_module():
    code, out, err = run("opt", HERE / "cuda" / "names.sm90.ptx")
    p = HERE / "cuda" / "names.sm90.ptx"
    assert code == 0
    assert out.splitlines() == [
        f"{p}: PTX 9.0, sm_90, 64-bit addresses; 5 kernels, 0 other functions",
        "  kernel vadd(float const*, float const*, float*, int) [_Z4vaddPKfS0_Pfi]: "
        "4 parameters, 22 instructions in 3 blocks",
        "  kernel void scale<float>(float*, float, int) [_Z5scaleIfEvPT_S0_i]: "
        "3 parameters, 16 instructions in 3 blocks",
        "  kernel void scale<double>(double*, double, int) [_Z5scaleIdEvPT_S0_i]: "
        "3 parameters, 16 instructions in 3 blocks",
        "  kernel plain: 2 parameters, 13 instructions in 3 blocks",
        "  kernel ns::fill(int*, int, int) [_ZN2ns4fillEPiii]: 3 parameters, 14 instructions "
        "in 3 blocks"]
    assert err == ("ptxc: no --pass given: the module parsed; run passes with --pass=PIPELINE "
                   "('ptxc passes' lists them)\n")
    assert run("opt", "--pass=", HERE / "cuda" / "names.sm90.ptx")[1:] == ("", "")


# ------------------------------------------------------------ passes -v
def test_passes_verbose_shows_allowed_values():
    code, out, err = run("passes", "-v")
    lines = [x.strip() for x in out.splitlines()]
    for line in ("memory: str = 'launch'  (conservative|refined|noalias|launch)",
                 "criteria: str = 'counters'  (counters|branches|effects)",
                 "addresses: bool = False  (true|false)",
                 "faults: str = ''  (checked|unchecked)",
                 "emit: str = 'marked'  (marked|sliced)",
                 "csv: str = 'kernels'  (kernels|memory|values)",
                 "gpu: str = 'h100'  (h100|a100|v100|t4|rtx2060|gtx260|gtx1070|quadro-rtx4000)",
                 "params: str = ''  (a FILE.json written by ptxc calibrate)",
                 "function: str = ''  (a function's name, any form --kernel takes)"):
        assert line in lines


def test_predict_gpu_values_are_the_models():
    from ptxc.gpus.architecture import GPUS
    from ptxc.predict.predict_pass import PredictPass
    assert set(PredictPass.values["gpu"]) == set(GPUS)


# ------------------------------------------------------------- the library
def test_source_line_of_an_instruction():
    m = ptxc.load(str(HERE / "cuda" / "inlined_loc.sm90.lineinfo.ptx"))
    fn = m.function("inlined_loc")
    adds = [i for i in fn.ptx_instructions() if i.full_opcode == "add.f32"]
    s = adds[0].source_line()
    assert (Path(s.file).name, s.line, s.col, s.function) == ("inlined_loc.cu", 9, 5, "_Z5norm2ff")
    assert [(x.line, x.function) for x in s.inlined_at] == [(21, "_Z5shadeffi"), (38, None)]
    assert str(s) == f"{s.file}:9 (inlined at {s.file}:21 < {s.file}:38)"
    assert all(p.source_line() is None for b in fn.blocks for p in b.phis)
    plain = ptxc.load(str(HERE / "cuda" / "names.sm90.ptx"))
    assert all(i.source_line() is None for i in plain.kernels[0].ptx_instructions())


def test_source_line_agrees_with_the_reports():
    from ptxc.ir.source_lines import SourceMap
    m = ptxc.load(str(HERE / "cuda" / "inlined_loc.sm90.lineinfo.ptx"))
    smap = SourceMap(m)
    for fn in m.functions:
        if fn.is_decl:
            continue
        locs = smap.instr(fn)
        mine = [i.source_line() for i in fn.ptx_instructions()]
        assert [(s.file, s.line) if s else None for s in mine] == \
            [(d["file"], d["line"]) if d else None for d in locs]


def test_ptx_instructions_are_what_static_inst_counts():
    m = ptxc.load(str(HERE.parent / "examples" / "branchy.ptx"))
    fn = m.function("vecadd_branchy")
    assert (len(list(fn.instructions())), len(list(fn.ptx_instructions()))) == (42, 39)
    from ptxc.passes.count.static import module_counts
    counts = module_counts(m)["functions"]
    for f in m.kernels:
        assert counts[f.name]["static_inst"] == len(list(f.ptx_instructions()))


def test_loc_is_a_srcloc():
    from ptxc.errors import SrcLoc
    ins = next(ptxc.load(str(HERE.parent / "examples" / "branchy.ptx")).kernels[0].ptx_instructions())
    assert isinstance(ins.loc, SrcLoc) and str(ins.loc) == f"{ins.loc.file}:{ins.loc.line}:{ins.loc.col}"
