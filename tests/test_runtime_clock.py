"""``ptxc run --clock model|host`` (docs/runtime.md, "The summary and the
report"; ptxc/runtime/gpu_time.py): the summary's times and
cudaEventElapsedTime are each launch's modelled GPU time (Luo & Suda on the
``--gpu`` model) under the default ``model`` clock, ptxc's host time under
``host``.

tests/cuda_apps/gpu_clock.cu, built with nvcc at test time (skipped
without nvcc): events around 3 launches of fill<<<3, 128>>> and a blocking
copy (launches 1-3), around one cudaGraphLaunch of two scale<<<3, 128>>>
nodes (launches 4, 5) and, with ``heavy``, around heavy<<<1, 1024>>>
(launch 6: 96 registers per thread under ptxas, so its block fits on no
SM and the model cannot predict it). The modelled times are compared with
an independent ``ptxc predict`` of the same PTX (``--keep-ptx``) and
launch, and each elapsed time with the sum of the report's ``gpu_s`` of
the launches between its events. The summary and report functions are also
checked in-process on launches of examples/branchy.ptx (no nvcc needed).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

import ptxc
from ptxc.runtime import gpu_time, report
from ptxc.runtime.server import LaunchRecord
from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "branchy.ptx")
FILL, SCALE, HEAVY = "_Z4fillPii", "_Z5scalePiii", "_Z5heavyPKfPfi"


def ptxc_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxc.cli", *args], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=cwd)


def printed(stdout: str) -> dict:
    """{'launches_ms': value, ...} of the application's output."""
    return {w[0]: float(w[1]) for w in (ln.split() for ln in stdout.splitlines())
            if len(w) == 2 and w[0].endswith("_ms")}


def db_rows(path: str, sql: str) -> list:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(sql)]
    finally:
        db.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("clock_apps")).build("gpu_clock")


@pytest.fixture(scope="module")
def model_run(app, tmp_path_factory):
    """The default clock, text summary: (process, summary text, report, PTX folder)."""
    if shutil.which("ptxas") is None:
        pytest.skip("needs ptxas: launch 6 is unpredictable by its ptxas register count")
    work = tmp_path_factory.mktemp("clock_model")
    summary, rep, ptx = work / "summary.txt", work / "r.sqlite", work / "ptx"
    proc = subprocess.run([sys.executable, "-m", "ptxc.cli", "run", "-o", str(summary),
                           "--report", str(rep), "--keep-ptx", str(ptx), "--", app, "3", "heavy"],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=work)
    assert proc.returncode == 0, proc.stderr
    return proc, summary.read_text(), str(rep), ptx


def predicted_seconds(ptx_dir, kernel: str, *args: str) -> float:
    """``ptxc predict`` of a <<<3, 128>>> launch of ``kernel`` on the kept PTX."""
    ptx = os.path.join(ptx_dir, "fatbin1.compute_90.ptx")
    proc = ptxc_cli("predict", ptx, "--kernel", kernel, "--grid", "3", "--block", "128",
                    "--gpu", "h100", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["predicted_seconds"]


def test_modelled_time_is_ptxc_predicts(model_run):
    _, text, rep, ptx = model_run
    launches = db_rows(rep, "SELECT id, kernel, gpu_s FROM launches ORDER BY id")
    assert [r["kernel"] for r in launches] == [FILL] * 3 + [SCALE] * 2 + [HEAVY]
    fill = predicted_seconds(ptx, FILL, "--arg", "0=zeros:i32:300", "--arg", "1=300")
    scale = predicted_seconds(ptx, SCALE, "--arg", "0=zeros:i32:300", "--arg", "1=300",
                              "--arg", "2=2")
    assert fill > 0 and scale > 0
    for r in launches[:5]:
        assert r["gpu_s"] == pytest.approx(fill if r["kernel"] == FILL else scale, rel=1e-12)
    kernels = {r["kernel"]: r for r in db_rows(rep, "SELECT * FROM kernels")}
    assert kernels[FILL]["gpu_s"] == pytest.approx(3 * fill, rel=1e-12)
    assert kernels[FILL]["gpu_max_s"] == pytest.approx(fill, rel=1e-12)
    row = next(ln for ln in text.splitlines() if ln.endswith(" fill(int*, int)"))
    cols = row.split()
    total = 3 * fill + 2 * scale
    assert cols[:6] == [f"{100 * 3 * fill / total:.2f}%", gpu_time.fmt_time(3 * fill), "3",
                        gpu_time.fmt_time(fill), gpu_time.fmt_time(fill),
                        gpu_time.fmt_time(fill)]
    assert "GPU time modelled on h100 (Luo & Suda; docs/predict.md)" in text
    head = next(ln for ln in text.splitlines() if ln.lstrip().startswith("Time(%)"))
    assert head.split() == ["Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Compile", "Run",
                            "Name"]
    meta = {r["key"]: r["value"] for r in db_rows(rep, "SELECT * FROM meta")}
    assert meta["clock"] == "model" and meta["memory_counters"] == "True"


def test_event_elapsed_time_is_the_modelled_launches(model_run):
    proc, _, rep, _ = model_run
    ms = printed(proc.stdout)
    gpu = {r["id"]: r["gpu_s"] for r in db_rows(rep, "SELECT id, gpu_s FROM launches")}
    # e0-e1: launches 1-3 (the copy adds nothing); e1-e2: the graph's nodes 4, 5
    assert ms["launches_ms"] == pytest.approx(1e3 * sum(gpu[i] for i in (1, 2, 3)), rel=1e-6)
    assert ms["graph_ms"] == pytest.approx(1e3 * (gpu[4] + gpu[5]), rel=1e-6)
    assert "PASS" in proc.stdout.split()


def test_unpredictable_launch_is_a_dash_and_a_note(model_run):
    proc, text, rep, _ = model_run
    assert math.isnan(printed(proc.stdout)["heavy_ms"])
    assert proc.stderr.count("cudaEventElapsedTime: a kernel launch between the two events "
                             "has no modelled GPU time") == 1
    (heavy,) = db_rows(rep, f"SELECT gpu_s FROM launches WHERE kernel = '{HEAVY}'")
    assert heavy["gpu_s"] is None
    (row,) = [ln for ln in text.splitlines() if ln.endswith(" heavy(float const*, float*, int)")
              and not ln.startswith(("==", "Kernel:"))]
    assert row.split()[:6] == ["-", "-", "1", "-", "-", "-"]
    (note,) = [ln for ln in text.splitlines() if "not modelled" in ln]
    assert note.endswith("heavy(float const*, float*, int): 1 of 1 launch (launch 6) not "
                         f"modelled: kernel '{HEAVY}': a block of 1024 threads does not fit "
                         "on an SM of h100 (registers)")
    assert "Traceback" not in proc.stderr + text


def test_host_clock_keeps_host_time(app):
    run = run_ptxc(app, "2", options=["--clock", "host"])
    assert run.returncode == 0, run.proc.stderr
    meta = run.summary["meta"]
    assert meta["clock"] == "host" and meta["memory_counters"] is False
    assert all(r["gpu_s"] is None for r in run.summary["launches"] + run.summary["kernels"])
    assert all(r["wall_s"] > 0 for r in run.summary["launches"])
    assert {r["value"] for r in run.rows("SELECT value FROM meta WHERE key = 'clock'")} == {"host"}
    ms = printed(run.proc.stdout)
    # host time between the events: at least the host time of the launches between them
    assert ms["launches_ms"] >= 1e3 * sum(r["wall_s"] for r in run.summary["launches"][:2])


# ------------------------------------------------------- in-process (no nvcc)
@pytest.fixture(scope="module")
def launches():
    m = ptxc.load(EXAMPLE)
    out = []
    for i, n in enumerate((500, 300)):
        a = np.arange(512, dtype=np.float32)
        b = np.random.default_rng(i).random(512, dtype=np.float32)
        p = ptxc.launch(m, "vecadd_branchy", 4, 128, [a, b, np.zeros(512, np.float32), n],
                        mode="full", memory_counters=True)
        out.append(LaunchRecord(i + 1, "vecadd_branchy", "fatbin1", (4, 1, 1), (128, 1, 1), 0, 0,
                                "full", p, 0.01 * (i + 1), 0.001, ptx_module=m))
    return out


def test_summary_under_each_clock(launches):
    from dataclasses import replace
    from ptxc.predict.app_report import LaunchPredictor
    rs = [replace(r) for r in launches]
    predictor = LaunchPredictor("a100")
    for r in rs:
        predictor.predict(r)
    meta = {"pid": 7, "clock": "model", "gpu_model": "a100"}
    text = report.summary_text(rs, meta)
    assert "==7== GPU time modelled on a100 (Luo & Suda; docs/predict.md)" in text
    row = next(ln for ln in text.splitlines() if ln.endswith(" vecadd_branchy"))
    total = rs[0].gpu_s + rs[1].gpu_s
    assert row.split()[:3] == ["100.00%", gpu_time.fmt_time(total), "2"]
    (k,) = report.kernel_rows(rs)
    assert k["gpu_s"] == pytest.approx(total) and k["gpu_min_s"] == min(r.gpu_s for r in rs)
    assert k["run_s"] == pytest.approx(sum(r.profile.timings["run"] for r in rs))
    host = report.summary_text(rs, {**meta, "clock": "host"})
    assert "==7== Host time (--clock host)" in host and "modelled" not in host
    row = next(ln for ln in host.splitlines() if ln.endswith(" vecadd_branchy"))
    assert row.split()[1] == gpu_time.fmt_time(0.03)              # the wall times 0.01 + 0.02


def test_kernel_without_prediction_has_no_time(launches):
    from dataclasses import replace
    rs = [replace(launches[0], prediction_error="the reason")]
    text = report.summary_text(rs, {"pid": 7, "clock": "model", "gpu_model": "h100"})
    row = next(ln for ln in text.splitlines() if ln.endswith(" vecadd_branchy")
               and not ln.startswith(("==", "Kernel:")))
    assert row.split()[:6] == ["-", "-", "1", "-", "-", "-"]
    assert "==7== -: vecadd_branchy: 1 of 1 launch (launch 1) not modelled: the reason" in text
    assert report.kernel_rows(rs)[0]["gpu_s"] is None
    assert report.launch_row(rs[0])["gpu_s"] is None


def test_topdown_reuses_the_runs_predictions(launches, monkeypatch):
    """A launch predicted during the run (--clock model) is not predicted
    again for --topdown: one prediction per launch."""
    from dataclasses import replace
    from ptxc.predict import app_report
    rs = [replace(r) for r in launches]
    app_report.launch_results(rs, "h100")
    first = [r.prediction for r in rs]
    monkeypatch.setattr(app_report, "analyse", lambda *a, **k: pytest.fail("predicted twice"))
    again = app_report.launch_results(rs, "h100")
    assert [r for _, r in again] == first


def test_predictor_reuses_static_costs_with_the_same_results(launches, monkeypatch):
    """LaunchPredictor computes a module's static costs (Table 1 per
    instruction, static shared memory) once for all its launches; each
    launch's prediction and TopDown equal a fresh analyse() of that launch
    alone, so launches of other counts (n = 500, 300) do not share numbers."""
    from dataclasses import replace
    from ptxc.gpus.kernel_resources import module_registers
    from ptxc.predict import analyse, app_report, static_costs
    rs = [replace(r) for r in launches * 2]
    m = rs[0].ptx_module
    regs = module_registers(m, m.to_ptx(), 80)["vecadd_branchy"]
    fresh = [analyse(m, r.profile.to_dict(), "a100", regs) for r in launches]
    built = []
    monkeypatch.setattr(static_costs.ModuleCosts, "_function_rows",
                        lambda self, f, real=static_costs.ModuleCosts._function_rows:
                        built.append(f.name) or real(self, f))
    app_report.launch_results(rs, "a100")
    assert built == ["vecadd_branchy"]
    for r, want in zip(rs, fresh * 2):
        assert r.prediction["prediction"] == want["prediction"]
        assert r.prediction["topdown"] == want["topdown"]
    assert fresh[0]["prediction"] != fresh[1]["prediction"]


def test_analyse_refuses_static_costs_of_other_parameters(launches):
    from ptxc.gpus.kernel_resources import module_registers
    from ptxc.predict import analyse
    from ptxc.predict.params import load_params
    from ptxc.predict.static_costs import ModuleCosts
    m = launches[0].ptx_module
    regs = module_registers(m, m.to_ptx(), 80)["vecadd_branchy"]
    with pytest.raises(ValueError, match="other model parameters"):
        analyse(m, launches[0].profile.to_dict(), "a100", regs,
                static=ModuleCosts(m, load_params("a100", None)))


def test_model_view_is_to_dict_where_they_overlap(launches):
    """The predictor reads Profile.model_view(): to_dict's own values for
    every member it has (with and without memory counters)."""
    from dataclasses import replace
    for prof in (launches[0].profile, replace(launches[0].profile, memory_counters=False)):
        view, full = prof.model_view(), prof.to_dict()
        assert view == {k: full[k] for k in view}
        assert ("per_memory_instr" in view) == prof.memory_counters


def test_a_block_the_module_lacks_is_refused(launches):
    """A launch profile naming a block the module does not have (the module
    transformed after the launch) is one PtxcError, never a smaller count."""
    from ptxc.errors import PtxcError
    from ptxc.gpus.kernel_resources import module_registers
    from ptxc.predict import analyse
    m = launches[0].ptx_module
    regs = module_registers(m, m.to_ptx(), 80)["vecadd_branchy"]
    prof = launches[0].profile.model_view()
    prof["per_block"] = {**prof["per_block"], "vecadd_branchy:no_such_block":
                         {"warp_execs": 1, "thread_execs": 32}}
    with pytest.raises(PtxcError, match="names block 'vecadd_branchy:no_such_block', which "
                                        "the module does not have"):
        analyse(m, prof, "a100", regs)
