"""Source attribution (issue 16; ptxc/ir/source_lines.py, ptxc/report/source_profile.py,
``--by source``; rules in docs/report.md).

Input: tests/cuda/srcline.cu (+ srcline_helper.cuh), compiled by nvcc 13.0 as
tests/cuda/README.md lists (``-O3 -lineinfo`` and ``-G``) and by clang 14
(``-gline-tables-only``, LLVM's NVPTX back end). Every source line a
test expects is found by its marker comment ``// @NAME`` in the .cu files, never
typed in.

Launch: one CTA of 64 threads, ``a = arange(64)``, ``n = 48``, ``stride = 2``.
Expected numbers, derived by hand from the source (and the numpy model below):

* ``if (i >= n) return`` (@bound): 2 warp executions; warp 1 (threads 32..63)
  splits at 48, warp 0 does not: 1 divergent.
* the loop ``for k < (i & 3)`` (@loop) has two branches in the -O3 PTX (the
  skip test and the back edge; -G has its own, same divergence): the skip test
  diverges in both warps (lanes with i & 3 == 0 skip): 2; the back edge (clang:
  the loop's exit test) runs
  max(i & 3) = 3 times per warp and diverges after iterations 1 and 2
  (threads with trip count 1, then 2, leave): 2 per warp, 4. Total 6.
* the load ``a[(i * stride) % n]`` (@strided_load): 2 requests (one per warp);
  32-byte sectors per warp from the numpy model; wasted = 32 * sectors - 4 * 48.
* the store ``out[i]`` (@store): 2 requests, sectors from the model, 0 wasted.
* the inlined helper line (@scale in srcline_helper.cuh), -O3: its 2 PTX
  instructions (cvt.rn.f32.s32, fma.rn.f32; PTX lines 61-62) run once per
  warp and iteration: 2 * (3 + 3) = 12 warp-level executions, and
  2 * sum(i & 3 for the 48 threads) thread executions; inlined at @call.
"""
from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli
from ptxc.launcher import value_profile
from ptxc.launcher.api import launch
from ptxc.valueprof import tables
from ptxc.ir.source_lines import SourceMap, location_text
from ptxc.report.source_profile import line_rows, with_source

CUDA = Path(__file__).parent / "cuda"
CU = CUDA / "srcline.cu"
HELPER = CUDA / "srcline_helper.cuh"
LINEINFO = CUDA / "srcline.sm90.lineinfo.ptx"
DEBUG = CUDA / "srcline.sm90.G.ptx"
CLANG = CUDA / "srcline.sm80.clang.ptx"
# warp executions of the branches on the @bound line: one `@%p bra` (2 warps); -G
# writes every `if` as `@%p bra` + `bra.uni` (tests/cuda/README.md): 2 more
BOUND_BRANCHES = {LINEINFO: 2, DEBUG: 4, CLANG: 2}
N_THREADS, N, STRIDE = 64, 48, 2


def marker(path: Path, name: str) -> int:
    """The 1-based line of ``path`` with the comment ``// @name``."""
    lines = [k + 1 for k, text in enumerate(path.read_text().splitlines())
             if re.search(rf"//\s*@{name}\b", text)]
    assert len(lines) == 1, (path, name, lines)
    return lines[0]


def model(stride: int = STRIDE):
    """Sectors per warp of the load and the store, and the loop trip counts."""
    i = np.arange(N_THREADS)
    active = i < N
    load = ((i * stride) % N) * 4 // 32
    store = i * 4 // 32
    sectors = {"load": 0, "store": 0}
    for w in range(N_THREADS // 32):
        lanes = slice(32 * w, 32 * w + 32)
        on = active[lanes]
        if on.any():
            sectors["load"] += len(set(load[lanes][on]))
            sectors["store"] += len(set(store[lanes][on]))
    return sectors, (i[active] & 3)


def run_kernel(ptx: Path, mode: str) -> tuple:
    module = ptxc.load(str(ptx))
    a = np.arange(N_THREADS, dtype=np.float32)
    out = np.zeros(N_THREADS, np.float32)
    prof = launch(module, "srcline", grid=(1, 1, 1), block=(N_THREADS, 1, 1),
                  args=[a, out, N, STRIDE], mode=mode, memory_counters=True)
    return module, prof.to_dict()


def by_line(rows: list, path: Path, name: str) -> dict:
    line = marker(path, name)
    found = [r for r in rows if r["file"].endswith(path.name) and r["line"] == line]
    assert len(found) == 1, (name, line, rows)
    return found[0]


# ----------------------------------------------------------- locations
def test_file_table_and_locations_lineinfo():
    module = ptxc.load(str(LINEINFO))
    smap = SourceMap(module)
    assert smap.has_lines
    assert [Path(p).name for p in smap.files.values()] == ["srcline.cu", "srcline_helper.cuh"]
    fn = module.kernels[0]
    body = [i for b in fn.blocks for i in b.body]
    locs = dict(zip(map(id, body), smap.instr(fn)))
    by_op = {}
    for ins in body:
        by_op.setdefault(ins.full_opcode, []).append(locs[id(ins)])
    (ld,) = by_op["ld.global.f32"]
    (st,) = by_op["st.global.f32"]
    assert (Path(ld["file"]).name, ld["line"]) == ("srcline.cu", marker(CU, "strided_load"))
    assert (Path(st["file"]).name, st["line"]) == ("srcline.cu", marker(CU, "store"))
    (fma,) = by_op["fma.rn.f32"]
    assert (Path(fma["file"]).name, fma["line"]) == ("srcline_helper.cuh", marker(HELPER, "scale"))
    assert fma["function"] == "_Z5scalefi"            # the .debug_str label, mangled
    assert [(Path(s["file"]).name, s["line"]) for s in fma["inlined_at"]] == [
        ("srcline.cu", marker(CU, "call"))]
    assert "inlined at" in location_text(fma)
    # `.loc 1 0 5` (compiler-made code) has no line
    assert by_op["mov.u32"][-1] is None or any(x is None for x in smap.instr(fn))


def test_no_loc_means_no_lines():
    module = ptxc.load(str(CUDA / "divergence.sm90.ptx"))
    smap = SourceMap(module)
    assert not smap.has_lines
    assert all(x is None for x in smap.instr(module.kernels[0]))


# ------------------------------------------------------- per-line rows
@pytest.mark.parametrize("ptx", [LINEINFO, DEBUG, CLANG], ids=["lineinfo", "G", "clang"])
def test_line_rows_derived(ptx):
    sectors, trips = model()
    rows = {}
    for mode in ("full", "hybrid"):
        module, dyn = run_kernel(ptx, mode)
        rows[mode] = line_rows(dyn, module)
    assert rows["hybrid"] == rows["full"]            # the hybrid run gives the same rows
    rows = rows["full"]
    bound = by_line(rows, CU, "bound")
    assert (bound["branch"], bound["divergent_branch"]) == (BOUND_BRANCHES[ptx], 1)
    assert by_line(rows, CU, "loop")["divergent_branch"] == 6
    ld = by_line(rows, CU, "strided_load")
    assert (ld["mem_requests"], ld["mem_transactions"]) == (2, sectors["load"])
    assert ld["requested_bytes"] == 4 * N
    assert ld["wasted_bytes"] == 32 * sectors["load"] - 4 * N
    st = by_line(rows, CU, "store")
    assert (st["mem_requests"], st["mem_transactions"], st["wasted_bytes"]) == (
        2, sectors["store"], 32 * sectors["store"] - 4 * N)
    assert sum(r["divergent_branch"] for r in rows) == 7
    if ptx == LINEINFO:
        helper = by_line(rows, HELPER, "scale")
        assert helper["inst_executed"] == 2 * (3 + 3)
        assert helper["thread_inst_executed"] == 2 * int(trips.sum())


def test_rows_sum_to_the_kernel_totals():
    module, dyn = run_kernel(LINEINFO, "full")
    rows = line_rows(dyn, module)
    for key in ("inst_executed", "thread_inst_executed", "branch", "divergent_branch"):
        assert sum(r[key] for r in rows) == dyn[key]


def test_records_carry_the_source():
    module, dyn = run_kernel(LINEINFO, "full")
    dyn = with_source(dyn, module)
    lines = {b["source"]["line"] for b in dyn["per_branch"].values()}
    assert lines == {marker(CU, "bound"), marker(CU, "loop")}
    ranked = {r["opcode"]: r["source_line"] for r in dyn["memory_ranking"]}
    assert ranked == {"ld.global.f32": marker(CU, "strided_load"),
                      "st.global.f32": marker(CU, "store")}
    assert dyn["source_lines"] == line_rows(dyn, module)


# ---------------------------------------------------------------- CLI
OPT_LAUNCH = ["--kernel", "srcline", "--grid", "1", "--block", str(N_THREADS),
              "--arg", "0=arange:f32:64", "--arg", "1=zeros:f32:64", "--arg", f"2={N}",
              "--arg", f"3={STRIDE}", "--memory-counters"]


def cli_run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_opt_by_source_text_and_csv():
    r = cli_run("opt", "--pass=count", *OPT_LAUNCH, "--by", "source", str(LINEINFO))
    assert r.exit_code == 0, r.output
    assert "by source line, kernel srcline" in r.output
    load_text = CU.read_text().splitlines()[marker(CU, "strided_load") - 1].strip()
    assert load_text[:40] in r.output                  # the CUDA source beside the numbers
    r = cli_run("opt", "--pass=count", *OPT_LAUNCH, "--by", "source", "--format", "csv",
                str(LINEINFO))
    rows = list(csv.DictReader(io.StringIO(r.output)))
    ld = [x for x in rows if x["line"] == str(marker(CU, "strided_load"))]
    sectors, _ = model()
    assert ld[0]["mem_transactions"] == str(sectors["load"])


def test_by_source_without_loc_is_one_error():
    r = CliRunner().invoke(cli, ["opt", "--pass=count", "--kernel", "k", "--grid", "1",
                                 "--block", "32", "--by", "source",
                                 str(CUDA / "divergence.sm90.ptx")])
    assert r.exit_code == 1
    assert "has no .loc line information" in r.output
    assert "Traceback" not in r.output


def test_profile_json_csv_and_sqlite(tmp_path):
    args = ["profile", "--launch", f"srcline:1:{N_THREADS}", "--arg", "srcline:0=arange:f32:64",
            "--arg", "srcline:1=zeros:f32:64", "--arg", f"srcline:2={N}",
            "--arg", f"srcline:3={STRIDE}"]
    r = cli_run(*args, "--format", "json", str(LINEINFO))
    prof = json.loads(r.output)["kernels"][0]["profile"]
    assert {b["source"]["line"] for b in prof["per_branch"].values()} == {
        marker(CU, "bound"), marker(CU, "loop")}
    loop = [x for x in prof["source_lines"] if x["line"] == marker(CU, "loop")]
    assert loop[0]["divergent_branch"] == 6
    r = cli_run(*args, "--by", "source", "--format", "csv", str(LINEINFO))
    assert r.output.startswith("file,kernel,line,")
    db = tmp_path / "p.sqlite"
    r = cli_run(*args, "--report", str(db), str(LINEINFO))
    assert r.exit_code == 0, r.output
    got = sqlite3.connect(db).execute(
        "SELECT source_line, divergent FROM branches ORDER BY line").fetchall()
    assert sorted(got) == sorted([(marker(CU, "bound"), 1), (marker(CU, "loop"), 2),
                                  (marker(CU, "loop"), 4)])


def test_memory_csv_has_the_source_columns():
    r = cli_run("opt", "--pass=count{csv=memory}", *OPT_LAUNCH, "--format", "csv", str(LINEINFO))
    rows = {x["opcode"]: x for x in csv.DictReader(io.StringIO(r.output))}
    assert rows["ld.global.f32"]["source_line"] == str(marker(CU, "strided_load"))
    assert rows["st.global.f32"]["source_file"].endswith("srcline.cu")


def test_by_source_needs_count_and_a_launch():
    r = CliRunner().invoke(cli, ["opt", "--pass=cfg", "--by", "source", str(LINEINFO)])
    assert r.exit_code == 2
    assert "need the count pass and a launch" in r.output


# ----------------------------------------------------------- ptxc run
def test_run_by_source_json_and_sqlite(tmp_path):
    """tests/apps_src/srcline_app.cu: srcline launched with stride 2 and 1, then
    scale_all; built with nvcc -lineinfo at test time (skipped without nvcc)."""
    import app_harness as H
    nvcc = H.find_nvcc()
    if nvcc is None or H.runtime_missing():
        pytest.skip("nvcc and ptxc run are needed")
    root = Path(__file__).parent
    exe = tmp_path / "srcline_app"
    r = subprocess.run([nvcc, "-cudart", "shared", "-arch=sm_90", "-O3", "-lineinfo",
                        "-I", str(CUDA), str(root / "apps_src" / "srcline_app.cu"), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out, db = tmp_path / "s.json", tmp_path / "r.sqlite"
    r = subprocess.run([H.find_ptxc(), "run", "--memory-counters", "--by", "source", "--format",
                        "json", "-o", str(out), "--report", str(db), "--", str(exe)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and "PASS" in r.stdout, r.stderr
    per = {e["kernel"]: e["rows"] for e in json.loads(out.read_text())["source_lines"]}
    rows = per["srcline"]
    loop = by_line(rows, CU, "loop")
    assert loop["divergent_branch"] == 2 * 6            # the trip counts do not depend on stride
    ld = by_line(rows, CU, "strided_load")
    assert ld["mem_transactions"] == model(2)[0]["load"] + model(1)[0]["load"]
    got = sqlite3.connect(db).execute(
        "SELECT launch_id, divergent_branch FROM source_lines WHERE kernel = 'srcline' "
        "AND line = ? ORDER BY launch_id", (marker(CU, "loop"),)).fetchall()
    assert got == [(1, 6), (2, 6)]
    app_lines = {x["line"] for x in per["scale_all"] if x["file"].endswith("srcline_app.cu")}
    assert marker(root / "apps_src" / "srcline_app.cu", "scale_all_body") in app_lines


def test_nested_inlining_chain():
    """tests/cuda/inlined_loc.cu, -lineinfo: in the .func blend, sq (inlined in
    norm2, inlined in shade, inlined in blend) gives its first mul.f32 the chain
    norm2's line < shade's line < blend's line; clampf's compare inside shade
    (setp.gt.f32) is at shade's call of clampf < blend's line. Lines found by text."""
    cu = (CUDA / "inlined_loc.cu").read_text().splitlines()

    def line_of(text: str) -> int:
        (n,) = [k + 1 for k, t in enumerate(cu) if text in t]
        return n

    module = ptxc.load(str(CUDA / "inlined_loc.sm90.lineinfo.ptx"))
    smap = SourceMap(module)
    fn = smap.by_name["_Z5blendffi"]
    body = [i for b in fn.blocks for i in b.body]
    locs = smap.instr(fn)
    first = {}
    for ins, loc in zip(body, locs):
        first.setdefault(ins.full_opcode, loc)
    mul = first["mul.f32"]
    assert mul["line"] == line_of("float sq(float x)") and mul["function"] == "_Z2sqf"
    assert [s["line"] for s in mul["inlined_at"]] == [
        line_of("return sq(a) + sq(b);"), line_of("float n = norm2(a, b);"),
        line_of("return shade(b, a, i) - clampf")]
    cmp = first["setp.gt.f32"]
    assert cmp["line"] == line_of("if (v > hi) return hi;")
    assert [s["line"] for s in cmp["inlined_at"]] == [
        line_of("n = clampf(n, 0.0f, sq(b));"), line_of("return shade(b, a, i) - clampf")]


# ------------------------------------------------------- value profiles
def test_value_profile_records_carry_the_source_line():
    """Every value-profile record of the -lineinfo kernel names its CUDA line
    (docs/value-profile.md): the `mad` computing i is on @index, the
    inlined helper's `fma` (`v * (float)k + 0.5f`) on @scale of the header
    (innermost line of the inlining chain), and the loaded value on
    @strided_load; the PTX line of each record keeps its own column."""
    module = ptxc.load(str(LINEINFO))
    a = np.arange(N_THREADS, dtype=np.float32)
    out = np.zeros(N_THREADS, np.float32)
    prof = launch(module, "srcline", grid=(1, 1, 1), block=(N_THREADS, 1, 1),
                  args=[a, out, N, STRIDE], mode="full", value_profile=True)
    rows = value_profile.rows(prof.value_profile)
    # the only record without a line: the `mov` after `.loc 1 0 5` (line 0: none)
    ptx = LINEINFO.read_text().splitlines()
    assert [r["line"] for r in rows if not r["source"]] == \
        [k + 2 for k, t in enumerate(ptx) if t.split() == [".loc", "1", "0", "5"]]

    def sources(opcode_prefix):
        return {r["source"].rsplit("/", 1)[-1] for r in rows if r["opcode"].startswith(opcode_prefix)}
    assert sources("mad.lo") == {f"srcline.cu:{marker(CU, 'index')}"}
    assert sources("ld.global") == {f"srcline.cu:{marker(CU, 'strided_load')}"}
    assert sources("fma.rn") == {f"srcline_helper.cuh:{marker(HELPER, 'scale')}"}
    csv = tables.csv_text(rows).splitlines()
    assert csv[0].endswith(",lanes,source")


def test_check_reports_use_the_last_loc_before_an_instruction():
    """The checkers' source line (access_errors.source_line) is the last
    `.loc` before an instruction even when other instructions stand between
    them: the second `ld.param` (PTX line 30) follows `.loc 1 7 0` (line 26)
    and one more `ld.param`, so it is on srcline.cu's line 7, the kernel's
    signature. Inlined code: the helper's `fma` is on @scale of the header;
    its outermost location is the @call line in the kernel."""
    from ptxc.launcher.access_errors import source_line
    module = ptxc.load(str(LINEINFO))
    fn = module.kernels[0]
    body = [i for b in fn.blocks for i in b.body]
    by_line = {i.loc.line: i for i in body if i.loc}
    ptx = LINEINFO.read_text().splitlines()
    assert ptx[25].split() == [".loc", "1", "7", "0"] and ptx[29].split()[0] == "ld.param.u64"
    signature = next(k + 1 for k, t in enumerate(CU.read_text().splitlines()) if "void srcline(" in t)
    assert source_line(module, by_line[30]).endswith(f"srcline.cu:{signature}")
    fma = next(i for i in body if i.full_opcode.startswith("fma.rn"))
    assert source_line(module, fma).endswith(f"srcline_helper.cuh:{marker(HELPER, 'scale')}")
    assert source_line(module, fma, outermost=True).endswith(f"srcline.cu:{marker(CU, 'call')}")
