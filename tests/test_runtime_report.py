"""The summary and the SQLite report (ptxc/runtime/report.py) on Profiles of
real launches (examples/branchy.ptx run with ptxc.launch), and the `ptxc
run` command line on programs that make no CUDA call (no nvcc needed)."""
import json
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

import ptxc
from ptxc.launcher import profile
from ptxc.runtime import report
from ptxc.runtime.server import LaunchRecord

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "branchy.ptx")


@pytest.fixture(scope="module")
def launches():
    m = ptxc.load(EXAMPLE)
    out = []
    for i, n in enumerate((500, 300, 512)):
        a = np.arange(512, dtype=np.float32)
        b = np.random.default_rng(i).random(512, dtype=np.float32)
        p = ptxc.launch(m, "vecadd_branchy", 4, 128, [a, b, np.zeros(512, np.float32), n],
                        mode="full")
        out.append(LaunchRecord(i + 1, "vecadd_branchy", "fatbin1", (4, 1, 1), (128, 1, 1), 0, 0,
                                "full", p, 0.01 * (i + 1), 0.001))
    return out


def test_kernel_rows_sum_the_launches(launches):
    (row,) = report.kernel_rows(launches)
    assert row["launches"] == 3
    for k in profile.TOTALS:
        assert row[k] == sum(getattr(r.profile, k) for r in launches)
    b = row["branch"]
    assert row["branch_efficiency"] == pytest.approx(100.0 * (b - row["divergent_branch"]) / b)
    assert row["wall_s"] == pytest.approx(0.06) and row["wall_max_s"] == pytest.approx(0.03)


def test_summary_formats(launches):
    meta = {"application": "./app", "pid": 7, "mode": "full", "gpu": "H100"}
    text = report.summary_text(launches, meta)
    assert "==7== ptxc profiling result: ./app (mode full, GPU H100, 3 launches)" in text
    assert "vecadd_branchy" in text and "branch_efficiency" in text
    mins = [r.profile.inst_executed for r in launches]
    line = next(ln for ln in text.splitlines() if " inst_executed " in ln)
    assert line.split()[:4] == ["3", "inst_executed", str(min(mins)), str(max(mins))]
    rows = report.summary_csv(launches, meta).splitlines()
    assert rows[0].startswith("kernel,module,launches,graph_launches,inst_executed") and len(rows) == 2
    data = json.loads(report.summary_json(launches, meta))
    assert [r["id"] for r in data["launches"]] == [1, 2, 3] and data["meta"]["pid"] == 7
    assert "no kernel was launched" in report.summary_text([], meta)
    stopped = {**meta, "launches": 0, "stopped": "k.ptx:3:1: error: kernel k1, CTA (0,0,0), ..."}
    text = report.summary_text([], stopped)
    assert "no kernel was launched" not in text
    assert "==7== the run stopped in kernel k1 (the error above); no earlier launches completed" in text
    text = report.summary_text(launches, {**stopped, "launches": 3})
    assert "the run stopped in kernel k1 (the error above); 3 earlier launches completed, " \
        "reported below" in text and "branch_efficiency" in text


def test_sqlite_tables(launches, tmp_path):
    path = str(tmp_path / "r.sqlite")
    report.write_sqlite(path, launches, {"mode": "full", "stopped": None})
    db = sqlite3.connect(path)
    cols = [c[1] for c in db.execute("PRAGMA table_info(launches)")]
    assert set(profile.TOTALS + profile.DERIVED) <= set(cols)
    assert db.execute("SELECT COUNT(*) FROM launches").fetchone() == (3,)
    assert db.execute("SELECT SUM(inst_executed) FROM launches").fetchone() == \
        db.execute("SELECT inst_executed FROM kernels").fetchone()
    nb = sum(len(r.profile.per_branch) for r in launches)
    assert db.execute("SELECT COUNT(*) FROM branches").fetchone() == (nb,)
    assert db.execute("SELECT value FROM meta WHERE key='stopped'").fetchone() == (None,)
    report.write_sqlite(path, launches[:1], {})           # replaces the file
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM launches").fetchone() == (1,)


def test_new_counters_become_columns(launches, tmp_path, monkeypatch):
    """A counter added to the Profile (as another helper's coalescing
    counters will be) is a column of every table without editing report.py."""
    monkeypatch.setattr(profile, "TOTALS", profile.TOTALS + ("gld_transactions",))
    for i, r in enumerate(launches):
        monkeypatch.setattr(r.profile, "gld_transactions", 10 * (i + 1), raising=False)
    path = str(tmp_path / "r.sqlite")
    report.write_sqlite(path, launches, {})
    db = sqlite3.connect(path)
    assert db.execute("SELECT gld_transactions FROM kernels").fetchone() == (60,)
    assert "gld_transactions" in report.summary_csv(launches, {}).splitlines()[0]


def ptxc_run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "ptxc.cli", "run", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_run_needs_a_program():
    r = ptxc_run()
    assert r.returncode == 2 and "Missing argument" in r.stderr


def test_run_missing_program():
    r = ptxc_run("--", "./no-such-program")
    assert r.returncode == 1 and "cannot run './no-such-program': no such program" in r.stderr


def test_run_program_without_cuda(tmp_path):
    r = ptxc_run("-o", str(tmp_path / "s.txt"), "--", "sh", "-c", "echo hi; exit 3")
    assert r.returncode == 3 and r.stdout == "hi\n"
    assert "made no call to the CUDA runtime" in r.stderr
    assert "no kernel was launched" in (tmp_path / "s.txt").read_text()


def test_run_program_killed_by_signal():
    r = ptxc_run("--", "sh", "-c", "kill -9 $$")
    assert r.returncode == 137 and "killed by SIGKILL" in r.stderr


def test_unknown_gpu():
    r = ptxc_run("--gpu", "rtx9090", "--", "true")
    assert r.returncode == 1 and "unknown GPU model 'rtx9090'" in r.stderr


def test_graph_note_names_the_graph_launches():
    """Five launches of one kernel, four run by graph launches 1, 2, 3 and 5."""
    from types import SimpleNamespace
    rs = [SimpleNamespace(graph=g) for g in (1, 2, 0, 3, 5)]
    assert report.graph_note(rs) == " (4 of 5 launches by cudaGraphLaunch 1-3, 5)"
    assert report.graph_note(rs[2:3]) == ""
    assert report.graph_note(rs[:1]) == " (1 of 1 launch by cudaGraphLaunch 1)"


def test_same_name_in_two_modules_is_two_kernels(launches):
    """The fixture's three launches, the last moved to a second module: two
    kernel rows (2 + 1 launches, each summing its own launches) and two
    names in the text, told apart by their module."""
    from dataclasses import replace
    two = launches[:2] + [replace(launches[2], module="fatbin2")]
    rows = report.kernel_rows(two)
    assert [(r["module"], r["launches"]) for r in rows] == [("fatbin1", 2), ("fatbin2", 1)]
    assert rows[1]["inst_executed"] == launches[2].profile.inst_executed
    text = report.summary_text(two, {})
    assert "Kernel: vecadd_branchy [fatbin1]\n" in text
    assert "Kernel: vecadd_branchy [fatbin2]\n" in text
    assert "Kernel: vecadd_branchy\n" in report.summary_text(launches, {})
