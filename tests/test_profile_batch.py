"""``ptxc profile DIR|FILES...`` (ptxc/profile/batch.py and friends): the
inputs and their order, the same bytes from a serial run, ``--jobs 2`` and a
Dask cluster, the grand total against sums computed here from the
per-module rows, a module or kernel that fails (and a worker process that
crashes) as an error row, the SQLite report, the progress line.

Modules: tests/cuda/launch_infer.sm90.ptx and tests/cuda/profile_batch.sm90.ptx
(nvcc 13, -arch=sm_90 -O3; the commands are in tests/cuda/README.md),
examples/branchy.ptx (no kernel can be launched without --launch), a file
that is not PTX, and copies of the corpus XLA module (skipped without it).
"""
from __future__ import annotations

import csv
import io
import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import CORPUS
from ptxc.cli.main import cli
from ptxc.launcher.profile import TOTALS
from ptxc.profile.batch import CRASH_MESSAGE, Progress, module_files, run_batch

HERE = Path(__file__).resolve().parent
INFER = HERE / "cuda" / "launch_infer.sm90.ptx"
BATCH = HERE / "cuda" / "profile_batch.sm90.ptx"
BRANCHY = HERE.parent / "examples" / "branchy.ptx"
XLA = CORPUS / "xla" / "module_0000.ptx"
BAD = "// not PTX\nthis is not a directive;\n"


@pytest.fixture
def batch_dir(tmp_path):
    """a/launch_infer.ptx, a/z_batch.ptx, b/branchy.ptx, b/bad.ptx."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(INFER, tmp_path / "a" / "launch_infer.ptx")
    shutil.copy(BATCH, tmp_path / "a" / "z_batch.ptx")
    shutil.copy(BRANCHY, tmp_path / "b" / "branchy.ptx")
    (tmp_path / "b" / "bad.ptx").write_text(BAD)
    (tmp_path / "b" / "notes.txt").write_text("not a module")
    return tmp_path


def profile(*args):
    r = CliRunner().invoke(cli, ["profile", *map(str, args)], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def serial(*args):
    """``ptxc profile --jobs 1``: in this process (no pool to start)."""
    return profile("--jobs", 1, *args)


# ------------------------------------------------------------- inputs
def test_directory_is_searched_recursively_in_sorted_order(batch_dir):
    d = str(batch_dir)
    assert module_files([d]) == [f"{d}/a/launch_infer.ptx", f"{d}/a/z_batch.ptx",
                                 f"{d}/b/bad.ptx", f"{d}/b/branchy.ptx"]
    # files in the order given, a directory expanded where it stands
    assert module_files([f"{d}/b/branchy.ptx", f"{d}/a"]) == [
        f"{d}/b/branchy.ptx", f"{d}/a/launch_infer.ptx", f"{d}/a/z_batch.ptx"]


def test_directory_without_modules_is_an_error(tmp_path):
    code, out, err = profile(tmp_path, BATCH)
    assert code == 1 and f"no *.ptx file under the directory '{tmp_path}'" in err
    assert "Traceback" not in err


# ------------------------------------------------- identical outputs
@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_serial_and_two_jobs_give_the_same_bytes(batch_dir, fmt):
    one = profile("--jobs", 1, "--format", fmt, batch_dir)
    two = profile("--jobs", 2, "--format", fmt, batch_dir)
    assert one[0] == two[0] == 1            # bad.ptx failed
    assert one[1] == two[1]
    assert "duration_ms" not in one[1] and '"seconds"' not in one[1] and " ms" not in one[1]


def test_dask_gives_the_same_bytes(batch_dir, dask_address):
    for fmt in ("text", "csv", "json"):
        one = profile("--jobs", 1, "--format", fmt, batch_dir)
        dask = profile("--dask", dask_address, "--format", fmt, batch_dir)
        assert one[0] == dask[0] == 1 and one[1] == dask[1]


def test_without_distributed_dask_says_how_to_install(batch_dir, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)  # import fails
    code, out, err = profile("--dask", "tcp://127.0.0.1:8786", batch_dir)
    assert code == 1 and err.strip() == ("ptxc: error: --dask needs Dask's distributed "
                                         "package: pip install 'ptxc[dask]'")


# ------------------------------------------------------------- totals
def test_grand_total_is_the_sum_of_the_modules(batch_dir):
    code, out, _ = serial("--format=json", batch_dir)
    d = json.loads(out)
    good = [m for m in d["modules"] if "error" not in m]
    assert [m["file"] for m in good] == [f"{batch_dir}/a/launch_infer.ptx",
                                         f"{batch_dir}/a/z_batch.ptx", f"{batch_dir}/b/branchy.ptx"]
    ran = [k for m in good for k in m["kernels"] if k["status"] == "ran"]
    t = d["total"]
    for name in TOTALS:                       # summed here over the kernels' own profiles
        assert t[name] == sum(k["profile"][name] for k in ran), name
    assert t["threads"] == sum(math.prod(k["launch"]["grid"]) * math.prod(k["launch"]["block"])
                               for k in ran)
    assert (t["modules"], t["modules_failed"]) == (4, 1)
    assert t["kernels"] == sum(len(m["kernels"]) for m in good) == 9 + 2 + 2
    # launch_infer.ptx: 4 inferred launches + 4 per-CTA rows (param_bound's bound
    # is a parameter nobody gave); z_batch: 2 inferred; branchy has neither
    # .reqntid nor .maxntid, so its 2 kernels get no per-CTA row
    assert t["kernels_run"] == len(ran) == 4 + 4 + 2
    # METRICS.md: branch_efficiency = 100 (branch - divergent) / branch, over the sums
    assert t["branch_efficiency"] == pytest.approx(
        100 * (t["branch"] - t["divergent_branch"]) / t["branch"], abs=1e-6)
    assert t["warp_execution_efficiency"] == pytest.approx(
        100 * t["thread_inst_executed"] / (32 * t["inst_executed"]), abs=1e-6)


def test_profile_batch_grids_by_hand(batch_dir):
    # profile_batch.cu: odd_scale i < 300 with .reqntid 64 -> grid ceil(300/64) = 5;
    # tri_loop i < 100 with .reqntid 32 -> grid ceil(100/32) = 4.
    code, out, _ = serial("--format=json", BATCH, INFER)
    assert code == 0
    k = {k["kernel"]: k for k in json.loads(out)["modules"][0]["kernels"]}
    assert k["odd_scale"]["launch"]["grid"] == [5, 1, 1]
    assert k["tri_loop"]["launch"]["grid"] == [4, 1, 1]


def test_each_module_is_its_single_file_profile(batch_dir):
    """A module of the batch has the rows of `ptxc profile FILE`, without the times."""
    _, out, _ = serial("--format=json", batch_dir)
    batch = {m["file"]: m for m in json.loads(out)["modules"]}
    path = f"{batch_dir}/a/launch_infer.ptx"
    _, single, _ = serial("--format=json", path)
    single = json.loads(single)
    single.pop("timings")
    for k in single["kernels"]:
        k.pop("seconds", None)
    assert batch[path] == single


def test_csv_rows_and_totals(batch_dir):
    code, out, _ = serial("--format=csv", batch_dir)
    rows = list(csv.DictReader(io.StringIO(out)))
    kernels = [r for r in rows if r["kernel"] and not r["kernel"].startswith("(")]
    module_totals = [r for r in rows if r["kernel"] == "(module total)"]
    grand = rows[-1]
    assert grand["kernel"] == "(grand total)" and len(module_totals) == 3
    failed = [r for r in rows if r["status"] == "error"]
    assert [r["file"] for r in failed] == [f"{batch_dir}/b/bad.ptx"]
    assert "syntax error" in failed[0]["note"]
    for col in ("static_inst", "slice_inst", "branch", "class_integer", "flop_count_sp"):
        assert int(grand[col]) == sum(int(r[col]) for r in kernels), col
    ran = [r for r in kernels if r["status"] == "ran"]
    for col in ("dynamic_inst", "divergent_branch", "threads"):
        assert int(grand[col]) == sum(int(r[col]) for r in ran), col
    assert float(grand["slice_fraction"]) == pytest.approx(
        int(grand["slice_inst"]) / int(grand["static_inst"]), abs=1e-6)


def test_text_lists_rows_totals_and_errors(batch_dir):
    code, out, err = serial(batch_dir)
    lines = out.splitlines()
    assert lines[0] == "profile 4 modules: 13 kernels, hybrid runs"
    assert lines[1].split()[:2] == ["file", "kernel"] and lines[1].split()[-1] == "flops"
    assert any(line.split()[:2] == [f"{batch_dir}/a/z_batch.ptx", "tri_loop"] for line in lines)
    assert any(line.startswith(f"{batch_dir}/b/bad.ptx") and "(module failed)" in line
               for line in lines)
    assert any(line.startswith("(grand total)") and "4 modules, 1 failed; 10 of 13 ran" in line
               for line in lines)
    assert "module errors (1):" in out and f"  {batch_dir}/b/bad.ptx:2:1: error" in out
    assert code == 1 and err.splitlines()[-1] == (
        f"ptxc: error: 1 module(s) failed: {batch_dir}/b/bad.ptx (see the report)")


def test_timings_are_opt_in(batch_dir):
    code, out, _ = serial("--timings", "--format=json", f"{batch_dir}/a")
    d = json.loads(out)
    assert code == 0 and "parse" in d["modules"][0]["timings"]
    assert all("seconds" in k for k in d["modules"][0]["kernels"] if k["status"] == "ran")
    _, text, _ = serial("--timings", f"{batch_dir}/a")
    assert text.splitlines()[1].split()[-1] == "ms"


# ------------------------------------------------------------ failures
def test_unreadable_file_and_failing_kernel_are_rows(batch_dir):
    missing = batch_dir / "missing.ptx"
    code, out, err = serial("--format=json", "--kernel", "scale_lt", "--mode", "full",
                             "--arg", "scale_lt:0=zeros:f32:4", "--arg", "scale_lt:1=zeros:f32:4",
                             missing, INFER, BATCH)
    d = json.loads(out)
    assert d["modules"][0] == {"file": str(missing),
                               "error": f"error: cannot read '{missing}': No such file or directory"}
    # 4 floats (16 bytes) for 1000 threads: thread 4 of CTA 0 reads in[4] at byte 16
    (k,) = d["modules"][1]["kernels"]
    assert k["status"] == "error" and "thread (4,0,0)" in k["reason"]
    assert "right after the end of buffer of parameter scale_lt_param_1 (16 bytes at" in k["reason"]
    assert d["modules"][2]["kernels"] == []           # --kernel names none of its kernels
    assert code == 1 and "1 module(s) failed" in err and f"1 kernel(s) failed: {INFER}:scale_lt" in err


def test_unknown_kernel_name_is_an_error(batch_dir):
    code, out, err = serial("--kernel", "nosuch", f"{batch_dir}/a")
    assert code == 1 and "no module has a kernel named 'nosuch'" in err


def test_crashed_worker_is_an_error_row(batch_dir):
    """A worker process killed by SIGSEGV breaks the pool: its module is an
    error row and every other module still gets its rows."""
    from batch_crash_worker import crash_on_name
    shutil.copy(BATCH, batch_dir / "b" / "crash.ptx")
    paths = module_files([str(batch_dir)])
    opts = {"mode": "hybrid"}
    crashed = run_batch(paths, opts, jobs=2, worker=crash_on_name)
    serial = run_batch(paths, opts, jobs=1)
    by_name = {Path(r["file"]).name: r for r in crashed}
    assert by_name["crash.ptx"]["error"] == CRASH_MESSAGE
    assert [r for r in crashed if r["file"] != str(batch_dir / "b" / "crash.ptx")] == \
        [r for r in serial if r["file"] != str(batch_dir / "b" / "crash.ptx")]


# -------------------------------------------------------------- SQLite
def test_sqlite_report(batch_dir, tmp_path):
    db_path = tmp_path / "batch.sqlite"
    code, out, _ = serial("--format=json", "--report", db_path, batch_dir)
    d = json.loads(out)
    db = sqlite3.connect(db_path)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    assert (meta["modules"], meta["modules_failed"], meta["kernels_run"]) == ("4", "1", "10")
    mods = db.execute("SELECT file, status, error, thread_inst_executed FROM modules "
                      "ORDER BY id").fetchall()
    assert [m[1] for m in mods] == ["ok", "ok", "error", "ok"]
    assert "syntax error" in mods[2][2]
    (per_kernel,) = db.execute("SELECT SUM(thread_inst_executed) FROM kernels "
                               "WHERE status = 'ran'").fetchone()
    assert per_kernel == sum(m[3] or 0 for m in mods) == d["total"]["thread_inst_executed"]
    rows = db.execute("SELECT k.kernel, k.grid_x, k.block_x FROM kernels k JOIN modules m "
                      "ON k.module_id = m.id WHERE m.file LIKE '%z_batch.ptx' "
                      "ORDER BY k.id").fetchall()
    assert rows == [("odd_scale", 5, 64), ("tri_loop", 4, 32)]    # grids as derived above
    (branches,) = db.execute("SELECT COUNT(*) FROM branches").fetchone()
    assert branches == sum(len(k["profile"]["per_branch"]) for m in d["modules"]
                           for k in m.get("kernels", []) if "profile" in k)


def test_single_file_report(tmp_path):
    db_path = tmp_path / "one.sqlite"
    code, out, _ = profile("--report", db_path, BATCH)
    assert code == 0 and out.startswith(f"profile {BATCH}: 2 kernels")   # today's text
    db = sqlite3.connect(db_path)
    assert db.execute("SELECT COUNT(*) FROM kernels WHERE status = 'ran'").fetchone() == (2,)


# ------------------------------------------------------------ progress
class FakeTty(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_on_a_terminal_only():
    tty, pipe = FakeTty(), io.StringIO()
    for stream in (tty, pipe):
        p = Progress(2, stream)
        p()
        p()
        p.clear()
    assert "ptxc: 2/2 modules done" in tty.getvalue() and tty.getvalue().endswith("\r\033[K")
    assert pipe.getvalue() == ""


# ----------------------------------------------------------------- XLA
@pytest.mark.skipif(not XLA.exists(), reason=f"XLA corpus module not found at {XLA}")
def test_xla_copies_serial_equals_parallel(tmp_path):
    for i in range(2):
        shutil.copy(XLA, tmp_path / f"dump_{i}.ptx")
    one = profile("--jobs", 1, "--format=json", tmp_path)
    two = profile("--jobs", 2, "--format=json", tmp_path)
    assert one[0] == two[0] == 0 and one[1] == two[1]
    d = json.loads(one[1])
    one = d["modules"][0]["total"]
    assert all(m["total"] == one for m in d["modules"])
    assert one["kernels"] == 109 and d["total"]["kernels_run"] == 2 * one["kernels_run"]
    for name in TOTALS:
        assert d["total"][name] == 2 * one[name]


def test_one_launch_file_for_a_batch(batch_dir, tmp_path):
    """Each module takes the entries for the kernels it has: odd_scale
    (profile_batch.cu, .reqntid 64) gets grid 3 from the file instead of its
    inferred 5; launch_infer.ptx's kernels are not named and keep theirs."""
    lf = tmp_path / "launches.json"
    lf.write_text(json.dumps([{"kernel": "odd_scale", "grid": 3}]))
    code, out, _ = serial("--format=json", "--launches", lf, BATCH, INFER)
    assert code == 0
    mods = json.loads(out)["modules"]
    k = {k["kernel"]: k for k in mods[0]["kernels"]}
    assert k["odd_scale"]["launch"]["grid"] == [3, 1, 1]
    assert k["tri_loop"]["launch"]["grid"] == [4, 1, 1]
    assert all(k["status"] == "ran" for k in mods[1]["kernels"] if k["launch"]["source"] == "inferred")


def test_a_launch_file_kernel_no_module_has_is_an_error(batch_dir, tmp_path):
    lf = tmp_path / "launches.csv"
    lf.write_text("kernel,grid\nnosuch,2\n")
    code, _, err = serial("--launches", lf, BATCH, INFER)
    assert code == 1 and "no module has a kernel named 'nosuch'" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[{\"kernel\": 1}")
    code, _, err = serial("--launches", bad, BATCH, INFER)
    assert code == 1 and "bad.json" in err
