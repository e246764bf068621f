"""`.loc` debug directives survive `ptxc opt --pass= --emit=ptx` (issue 16).

PTX ISA "Debugging Directives: .loc": ``.loc file line col[, function_name
label, inlined_at file line col]``. ptxas rejects an ``inlined_at F L C`` whose
location was not used by an earlier ``.loc`` of the function ("Source location
F L C used in inlined_at directive must be used in a preceding .loc
directive"); the old emitter kept only the last ``.loc`` before each
instruction and so dropped the definitions of inlined_at locations.

Inputs are nvcc output committed in tests/cuda (commands in tests/cuda/README.md
and build.sh): inlined_loc.cu has nested ``__forceinline__`` calls (33
inlined_at lines with ``-lineinfo``) and a ``__noinline__`` .func; the other
``-lineinfo``/``-G`` files there are checked too. The checks need no ptxas
(same ``.loc`` sequence, same per-instruction attribution, every inlined_at
location used before); ptxas, when installed, must accept the output.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import ptxc
from ptxc.backends.ptx.emitter import emit_module
from ptxc.backends.ptx.loc_writer import LocWriter

CUDA = Path(__file__).parent / "cuda"
LOC_FILES = sorted(p for p in CUDA.glob("*.ptx") if "\t.loc\t" in p.read_text())
INLINED = CUDA / "inlined_loc.sm90.lineinfo.ptx"
PTXAS = shutil.which("ptxas")

_LOC = re.compile(r"^\s*(\.loc\s.*?)\s*$", re.M)
_KEY = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_AT = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")


def loc_lines(text: str) -> list[str]:
    """The ``.loc`` lines of a PTX text, whitespace-normalised, in order."""
    return [" ".join(m.group(1).split()) for m in _LOC.finditer(text)]


def undefined_inlined_at(text: str) -> list[str]:
    """``.loc`` lines whose inlined_at location no earlier ``.loc`` of the same
    function used (what ptxas rejects). Functions start at ``.entry``/``.func``."""
    bad, seen = [], set()
    for line in text.splitlines():
        if re.search(r"\.(entry|func)\s", line):
            seen = set()
        s = line.strip()
        if not re.match(r"\.loc\s", s):           # not .local
            continue
        at = _AT.search(s)
        if at and at.groups() not in seen:
            bad.append(s)
        seen.add(_KEY.match(s).groups())
    return bad


def round_trip(path: Path) -> str:
    return ptxc.load(str(path)).to_ptx()


def ptxas_check(text: str, tmp_path: Path) -> None:
    if PTXAS is None:
        pytest.skip("ptxas is not installed")
    f = tmp_path / "rt.ptx"
    f.write_text(text)
    p = subprocess.run([PTXAS, "-arch=sm_90", str(f), "-o", str(tmp_path / "rt.cubin")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_inputs_are_there():
    names = {p.name for p in LOC_FILES}
    assert {"inlined_loc.sm90.lineinfo.ptx", "inlined_loc.sm90.G.ptx"} <= names
    assert INLINED.read_text().count("inlined_at") == 33     # grep -c on the nvcc output


def test_checker_finds_a_missing_definition():
    """The checker itself can fail: drop the .loc that defines ``1 30 5``."""
    text = INLINED.read_text()
    assert undefined_inlined_at(text) == []
    broken = text.replace("\t.loc\t1 30 5\n", "", 1)
    assert undefined_inlined_at(broken) != []


@pytest.mark.parametrize("path", LOC_FILES, ids=lambda p: p.name)
def test_loc_sequence_kept(path):
    """Every .loc line, attributes included, in the same order."""
    src = path.read_text()
    out = round_trip(path)
    assert loc_lines(out) == loc_lines(src)
    assert undefined_inlined_at(out) == []


@pytest.mark.parametrize("path", LOC_FILES, ids=lambda p: p.name)
def test_attribution_survives(path, tmp_path):
    """Each instruction has the same .loc run (and the same 'written here') after re-parsing."""
    def runs(m):
        return [[(i.dbg, i.dbg_new) for b in f.blocks for i in b.instrs if not i.is_phi]
                for f in m.functions]
    f = tmp_path / "rt.ptx"
    f.write_text(round_trip(path))
    assert runs(ptxc.load(str(f))) == runs(ptxc.load(str(path)))


def test_multiple_loc_lines_before_one_instruction():
    """nvcc writes a whole inlined_at chain before one instruction; all of it is kept."""
    m = ptxc.load(str(INLINED))
    blend = m.function("_Z5blendffi")
    first = next(i for b in blend.blocks for i in b.instrs
                 if i.dbg and len(i.dbg) == 4)
    # inlined_loc.sm90.lineinfo.ptx, lines 29-32: blend (line 30) -> shade (21) -> norm2 (9) -> sq (5)
    assert [" ".join(t.split()) for t in first.dbg] == [
        ".loc 1 30 5",
        ".loc 1 21 5, function_name $L__info_string0, inlined_at 1 30 5",
        ".loc 1 9 5, function_name $L__info_string1, inlined_at 1 21 5",
        ".loc 1 5 73, function_name $L__info_string2, inlined_at 1 9 5"]
    assert first.dbg_new


def test_debug_str_section_and_labels_survive():
    src, out = INLINED.read_text(), round_trip(INLINED)
    labels = re.findall(r"^(\$L__info_string\d+):", src, re.M)
    assert labels == [f"$L__info_string{i}" for i in range(4)]   # shade, norm2, sq, clampf
    assert re.findall(r"^(\$L__info_string\d+):", out, re.M) == labels
    assert ".section\t.debug_str" in out
    used = set(re.findall(r"function_name (\$L__info_string\d+)", out))
    assert used == set(labels)


@pytest.mark.parametrize("path", LOC_FILES, ids=lambda p: p.name)
def test_ptxas_accepts_round_trip(path, tmp_path):
    ptxas_check(round_trip(path), tmp_path)


def _dropped_definition_module():
    """inlined_loc with the instruction carrying the run that defines ``1 30 5`` in
    _Z5blendffi left out of the emission (as a slice emission may do)."""
    m = ptxc.load(str(INLINED))
    blend = m.function("_Z5blendffi")
    victim = next(i for b in blend.blocks for i in b.instrs
                  if i.dbg_new and any(" ".join(t.split()) == ".loc 1 30 5" for t in i.dbg))
    return m, victim


def test_keep_dropping_the_definition_still_defines_it(tmp_path):
    m, victim = _dropped_definition_module()
    out = emit_module(m, keep=lambda i: i is not victim)
    assert undefined_inlined_at(out) == []
    # inlined_loc.sm90.lineinfo.ptx lines 23-36: the victim is `mul.f32 %f3` (the 4-line run
    # of lines 29-32). The next instruction's own run (line 34) names inlined_at 1 21 5, so
    # the function's first .loc for 1 21 5 (line 30) goes first, and before it the first
    # .loc for 1 30 5 (line 29); lines 31-32 (the inner part of the victim's chain) go with
    # the victim. src[0..6] are lines 23, 29, 30, 31, 32, 34, 36.
    src = loc_lines(INLINED.read_text())
    assert loc_lines(out)[:5] == [src[0], src[1], src[2], src[5], src[6]]
    assert src[4] == ".loc 1 5 73, function_name $L__info_string2, inlined_at 1 9 5"
    ptxas_check(out, tmp_path)


def fake(dbg, new):
    return SimpleNamespace(dbg=dbg, dbg_new=new)


def test_writer_reprints_the_run_in_effect_when_layout_changes():
    """Instruction b inherits run A (not written before it). Written after an
    instruction with run B, A must be printed again; after A itself, not."""
    run_a = (".loc\t1 10 3",)
    run_b = (".loc\t1 20 3",)
    fn = SimpleNamespace(blocks=[], attrs={})
    w = LocWriter(fn)
    assert w.before(fake(run_b, True)) == [".loc\t1 20 3"]
    assert w.before(fake(run_a, False)) == [".loc\t1 10 3"]      # state changed: re-printed
    assert w.before(fake(run_a, False)) == []                    # same state: nothing
    assert w.before(fake(run_a, True)) == [".loc\t1 10 3"]       # written here in the source
    assert w.before(fake(None, False)) == []


def test_writer_defines_inlined_at_location_with_its_chain():
    """A line whose inlined_at location is not yet printed gets the function's first
    .loc for that location first, recursively (its own inlined_at chain)."""
    outer = ".loc\t1 30 5"
    mid = ".loc\t1 21 5, function_name $L__info_string0, inlined_at 1 30 5"
    inner = ".loc\t1 9 5, function_name $L__info_string1, inlined_at 1 21 5"
    blk = SimpleNamespace(instrs=[fake((outer, mid), True), fake((inner,), True)])
    w = LocWriter(SimpleNamespace(blocks=[blk], attrs={}))
    assert w.before(blk.instrs[1]) == [outer, mid, inner]
    assert w.before(fake((inner,), True)) == [inner]             # now defined



def test_label_before_branch_target_label_keeps_its_place():
    """inlined_loc.sm90.G.ptx writes `$L__tmp26:` (a DWARF lexical-block bound) before
    `$L__BB0_7:` (a branch target). ptxas may put the two at different addresses, so the
    order is kept (else the -G .debug_info ranges change; tests/test_ssa_cases.py compares
    the cubins)."""
    src = (CUDA / "inlined_loc.sm90.G.ptx").read_text()
    out = round_trip(CUDA / "inlined_loc.sm90.G.ptx")
    pair = re.compile(r"^(\$L__tmp\d+):\s*\n(\$L__BB\d+_\d+):$", re.M)   # blank lines between
    pairs = pair.findall(src)
    assert ("$L__tmp26", "$L__BB0_7") in pairs
    assert pair.findall(out) == pairs
