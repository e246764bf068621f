"""``ptxc run --topdown`` on a CUDA application (tests/cuda_apps/counts.cu,
built with nvcc at test time; skipped without nvcc): predictions and
TopDown per launch and per kernel in JSON, text and SQLite; hybrid = full.

counts.cu launches fill<<<3, 128>>> once. On the H100 model (132 SMs) the
busiest SM runs ceil(3 / 132) = 1 of the 3 CTAs: f = 1/3. The launch's
counters, derived by hand in tests/test_runtime_apps.py, are inst_executed =
148 and thread_inst_executed = 4656; no replays (stores only, one 128-byte
line per request), so Divergence's slots = branch loss =
f x (148 - 4656 / 32) = 2.5 / 3.
"""
from __future__ import annotations

import math
import sqlite3

import pytest

from runtime_apps import AppBuilder, run_ptxc


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("predict_apps")).build("counts")


def test_run_topdown_json_and_sqlite(app):
    runs = {m: run_ptxc(app, mode=m, options=["--topdown"]) for m in ("hybrid", "full")}
    for run in runs.values():
        assert run.returncode == 0, run.proc.stderr
        pred = run.summary["predict"]
        (launch,) = pred["launches"]
        l1 = launch["topdown"]["level1"]
        assert math.fsum(l1.values()) == pytest.approx(1.0)
        assert launch["model"]["share"] == pytest.approx(1 / 3)
        lost = (148 - 4656 / 32) / 3
        td = launch["topdown"]
        assert l1["divergence"] * td["slots"] == pytest.approx(lost)
        (kernel,) = pred["kernels"]
        assert (kernel["kernel"], kernel["module"]) == ("_Z4fillPii", "fatbin1")
        assert kernel["launches"] == 1
        assert kernel["seconds"] == pytest.approx(launch["predicted_seconds"])
        rows = sqlite3.connect(run.report).execute(
            "SELECT launch, node, level FROM topdown ORDER BY rowid").fetchall()
        assert [r[1] for r in rows] == ["retire", "divergence", "branch", "replay", "frontend",
                                        "fetch", "sync", "branch_resolving",
                                        "instruction_fetch", "decode", "backend",
                                        "memory_bound", "core_bound"]
        assert {r[0] for r in rows} == {launch["id"]}
    assert runs["hybrid"].summary["predict"]["launches"][0]["predicted_cycles"] == \
        runs["full"].summary["predict"]["launches"][0]["predicted_cycles"]


def test_run_topdown_csv_refused(app):
    run = run_ptxc(app, options=["--topdown", "--format", "csv"])
    assert run.returncode == 2
    assert "--topdown prints text or JSON, not CSV" in run.proc.stderr
