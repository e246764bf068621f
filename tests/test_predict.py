"""Luo & Suda's model (ptxc/predict/luo_suda.py) on synthetic inputs where
every term is computed by hand, the parameter table (params.py) and the
``ptxc predict`` command."""
from __future__ import annotations

import json
import os
import sqlite3
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from ptxc.cli.main import cli
from ptxc.errors import PtxcError
from ptxc.predict.luo_suda import Inputs, predict
from ptxc.predict.params import ModelParams, default_params, load_params

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPDOWN_PTX = os.path.join(ROOT, "tests", "cuda", "topdown.sm90.ptx")

# A toy GPU: 2 SMs, 1 scheduler, 1000 MHz; round parameters.
TOY = SimpleNamespace(key="toy", sm_count=2, clock_mhz=1000, schedulers_per_sm=1)
PARAMS = ModelParams("toy", {"a": 400, "b": 4, "c": 20, "d": 20, "n": 100, "m": 1000,
                             "shared_cycles_per_transaction": 1, "cost_fp32": 1,
                             "cost_integer": 2, "cost_issue": 1, "cost_memory_issue": 2},
                     {})


def toy_inputs(**kw) -> Inputs:
    base = dict(kernel="k", blocks=4, warps_per_block=2, occupancy_blocks=1,
                mix={"fp32": 100, "integer": 40, "load": 20, "control": 10},
                inst_executed=170, thread_inst_executed=4080,
                global_requests=20, global_transactions=80, global_lines=20,
                shared_requests=8, shared_transactions=16, shared_bank_conflicts=8,
                ilp=2.5, mlp=1.0)
    base.update(kw)
    return Inputs(**base)


def test_worked_example():
    # 4 blocks on 2 SMs: ceil(4/2) = 2 blocks on the busiest SM, f = 2/4 = 0.5;
    # occupancy allows 1 block at a time: N = 1 x 2 warps = 2.
    # CPD1 = 2, CPD2 = ILP = 2.5, CPD = 5, d / CPD = 20 / 5 = 4.
    # fp32:    T_i = max(1, 4) = 4, count 0.5 x 100 = 50 -> 200 cycles
    # integer: T_i = max(2, 4) = 4, count 20 -> 80
    # load:    T_i = cost_memory_issue = 2, count 10 -> 20
    # control: T_i = max(cost_issue 1, 4) = 4, count 5 -> 20;   T_comp = 320
    # global: k = 80 / 20 = 4; L = a + b (k - 1) = 400 + 12 = 412;
    #   MPD1 = N x MLP = 2; MPD2 = L / (b k) = 412 / 16 = 25.75; MPD = min(2, 25.75, 100) = 2
    #   T_i = 412 / 2 = 206, count 10 -> 2060
    # shared: k = 2; T_i = max(2 x 1, c / CPD = 4) = 4, count 4 -> 16;  T_mem = 2076
    # T_body = max(320, 2076) + 320 / N = 2076 + 160 = 2236
    # T_issue = f x (170 + 18 replays) x 1 = 94 < T_body
    # T = m + T_body = 1000 + 2236 = 3236 cycles = 3.236 us at 1000 MHz
    p = predict(toy_inputs(), TOY, PARAMS, replays=18)
    assert (p.share, p.active_warps, p.cpd1, p.cpd2) == (0.5, 2, 2.0, 2.5)
    assert p.costs["fp32"] == (50, 4, 200)
    assert p.costs["integer"] == (20, 4, 80)
    assert p.costs["load"] == (10, 2, 20)
    assert p.costs["control"] == (5, 4, 20)
    assert p.t_comp == 320
    assert p.request_latency == 412
    assert (p.mpd1, p.mpd2, p.mpd) == (2, 25.75, 2)
    assert p.costs["global memory"] == (10, 206, 2060)
    assert p.costs["shared memory"] == (4, 4, 16)
    assert p.t_mem == 2076
    assert p.t_issue == 94
    assert p.t_body == 2236
    assert p.cycles == 3236
    assert p.seconds == pytest.approx(3.236e-6)
    assert p.bound == "memory"


def test_bandwidth_bound_mpd():
    # Occupancy 8 blocks, but only ceil(4 / 2) = 2 blocks per SM: N = 2 x 2
    # warps = 4; MLP 8 -> MPD1 = 32 loads in flight; k = 4: L = 412, MPD2 = 412 / 16 = 25.75 -> MPD = 25.75;
    # T_i = 412 / 25.75 = 16 = b x k: the request costs its bytes at the
    # SM's bandwidth share.
    p = predict(toy_inputs(occupancy_blocks=8, mlp=8.0), TOY, PARAMS)
    assert p.active_warps == 4
    assert p.mpd == 25.75
    assert p.costs["global memory"][1] == pytest.approx(16)


def test_computation_bound_overlap():
    # No memory, N = 2: T_body = max(T_comp, 0) + 0 / 2 = T_comp.
    inp = toy_inputs(global_requests=0, global_transactions=0, shared_requests=0,
                     shared_transactions=0)
    p = predict(inp, TOY, PARAMS)
    assert p.t_mem == 0 and p.t_body == p.t_comp == 320 and p.bound == "computation"


def test_one_warp_no_overlap():
    # One warp per SM (1 block of 1 warp): T_body = T_comp + T_mem, nothing hidden.
    inp = toy_inputs(blocks=2, warps_per_block=1)
    p = predict(inp, TOY, PARAMS)
    assert p.active_warps == 1
    assert p.t_body == pytest.approx(p.t_comp + p.t_mem)


def test_default_params_gtx260():
    # GTX 260: 111.9 GB/s over 24 SMs at 1242 MHz = 3.754 B/cycle per SM;
    # b = 32 / 3.754 = 8.524 cycles. FP32: 8 SPs, 1 scheduler:
    # cost = max(1, 32 / 8) = 4; FP64: 32 / 1 = 32; SFU: 32 / 2 = 16.
    # d = 22 (Programming Guide, cc 1.x), a = 500 (gpu_models).
    p = default_params("gtx260")
    assert p.b == pytest.approx(32 / (111.9e9 / (24 * 1242e6)), rel=1e-4)
    assert (p.cost_fp32, p.cost_fp64, p.cost_special) == (4, 32, 16)
    assert (p.a, p.d) == (500, 22)
    assert all(p.sources[k] for k in p.values)


def test_default_params_h100():
    # H100: 4 schedulers; FP32 128 per SM -> max(0.25, 0.25); FP64 64 -> 0.5;
    # INT32 64 -> 0.5; SFU 16 -> 2. d = 4.
    p = default_params("h100")
    assert (p.cost_fp32, p.cost_fp64, p.cost_integer, p.cost_special) == (0.25, 0.5, 0.5, 2)
    assert p.d == 4 and p.cost_issue == 0.25


def test_params_file(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"device": "X", "params": {"a": 321.5}}))
    p = load_params("h100", str(f))
    assert p.a == 321.5 and p.sources["a"].startswith("measured")
    f.write_text(json.dumps({"params": {"zz": 1}}))
    with pytest.raises(PtxcError, match="unknown parameter 'zz'"):
        load_params("h100", str(f))
    f.write_text("{")
    with pytest.raises(PtxcError, match="not JSON"):
        load_params("h100", str(f))
    f.write_text(json.dumps({"params": {"cost_issue": 1}}))
    with pytest.raises(PtxcError, match="cost_issue"):
        load_params("h100", str(f))


STRIDED = ["--kernel", "strided", "--grid", "2", "--block", "32",
           "--arg", "0=arange:f32:2048", "--arg", "1=zeros:f32:64", "--arg", "2=32"]


def test_cli_predict_text_json_sqlite(tmp_path):
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--regs", "32",
                                 "--topdown", "--gpu", "a100"])
    assert r.exit_code == 0, r.output
    assert "predicted time (modelled)" in r.output and "divergence" in r.output
    db = tmp_path / "p.sqlite"
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--regs", "32",
                                 "--topdown", "--format", "json", "--report", str(db)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    # 2 CTAs x 1 warp: loads touch 32 lines each, stores 1: replays 2 x 31 = 62
    assert d["topdown"]["replays"]["global"] == 62
    rows = sqlite3.connect(db).execute(
        "SELECT node, fraction FROM topdown WHERE level = 1").fetchall()
    assert sum(f for _, f in rows) == pytest.approx(1.0)


def test_cli_predict_errors():
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--gpu", "k80"])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: unknown GPU model 'k80' (choose one of h100, a100, v100, t4, rtx2060, "
        "gtx260, gtx1070, quadro-rtx4000)"]
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--block", "4096"])
    assert r.exit_code == 1 and "Traceback" not in r.output


BANK2 = ["--pass=count", "--kernel", "bank2", "--grid", "1", "--block", "32",
         "--arg", "0=zeros:f32:32", TOPDOWN_PTX]


def test_opt_topdown():
    # bank2 (tests/test_topdown.py): 2 shared bank conflicts, no other replays.
    r = CliRunner().invoke(cli, ["opt", "--topdown", "--memory-counters", "--gpu", "t4", *BANK2])
    assert r.exit_code == 0, r.output
    assert "replays (exact)  global 0  shared 2  width 0" in r.output
    r = CliRunner().invoke(cli, ["opt", "--topdown", "--memory-counters", "--format", "json",
                                 *BANK2])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert "count" in d and d["topdown"]["replays"]["shared"] == 2
    assert sum(d["topdown"]["level1"].values()) == pytest.approx(1.0)


def test_opt_topdown_needs_memory_counters():
    r = CliRunner().invoke(cli, ["opt", "--topdown", *BANK2])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: kernel 'bank2': the model needs the memory counters "
        "(run the launch with --memory-counters)"]


PROFILE = ["profile", "--launch", "strided:2:32", "--arg", "strided:0=arange:f32:2048",
           "--arg", "strided:1=zeros:f32:64", "--arg", "strided:2=32",
           "--launch", "partial:1:40", "--arg", "partial:0=ones:f32:40",
           "--arg", "partial:1=zeros:f32:40", "--kernel", "strided", "--kernel", "partial"]


def test_profile_topdown(tmp_path):
    # strided: 2 CTAs x 1 warp, 32 lines per load + 1 per store: 2 x 31 = 62
    # global replays; partial (block 40): 24 - 480 / 32 = 9 branch-loss slots
    # (tests/test_topdown.py), one CTA so f = 1.
    db = tmp_path / "p.sqlite"
    r = CliRunner().invoke(cli, [*PROFILE, "--topdown", "--format", "json", "--report", str(db),
                                 TOPDOWN_PTX])
    assert r.exit_code == 0, r.output
    pred = {p["kernel"]: p for p in json.loads(r.output)["predict"]}
    assert pred["strided"]["topdown"]["replays"]["global"] == 62
    td = pred["partial"]["topdown"]
    assert td["level1"]["divergence"] * td["slots"] == pytest.approx(9)
    n = sqlite3.connect(db).execute("SELECT COUNT(*) FROM topdown").fetchone()[0]
    assert n == 2 * 13          # two launches x the 13 nodes of topdown.NODES
    r = CliRunner().invoke(cli, [*PROFILE, "--topdown", TOPDOWN_PTX])
    assert r.exit_code == 0 and "Predicted time and TopDown" in r.output


def test_profile_topdown_one_module(tmp_path):
    r = CliRunner().invoke(cli, ["profile", "--topdown", TOPDOWN_PTX, TOPDOWN_PTX])
    assert r.exit_code == 2 and "--topdown profiles one module" in r.output


def test_profile_topdown_without_buffers():
    # A hybrid row given no buffers (strided's slice reads none) is run again
    # with the memory counters on zero-filled placeholder buffers: the
    # addresses, hence the replays, are those of test_profile_topdown
    # (2 CTAs x 31 extra lines of the a[t * 32] load = 62), and the full
    # row (placeholders too) predicts the same.
    base = ["profile", "--launch", "strided:2:32", "--kernel", "strided", "--topdown",
            "--format", "json"]
    preds = []
    for mode in ("hybrid", "full"):
        r = CliRunner().invoke(cli, [*base, "--arg", "strided:2=32", "--mode", mode, TOPDOWN_PTX])
        assert r.exit_code == 0, r.output
        (pred,) = json.loads(r.output)["predict"]
        assert pred["topdown"]["replays"]["global"] == 62
        preds.append((pred["inputs"], pred["topdown"]))
    assert preds[0] == preds[1]


def test_profile_topdown_row_it_cannot_run():
    # Without the stride the hybrid row runs (no branch reads it) but the
    # addresses need it: the row is listed with the reason, not predicted,
    # and the other rows are not lost.
    r = CliRunner().invoke(cli, ["profile", "--launch", "strided:2:32", "--kernel", "strided",
                                 "--launch", "partial:1:40", "--kernel", "partial",
                                 "--topdown", "--format", "json", TOPDOWN_PTX])
    assert r.exit_code == 0, r.output
    pred = {p["kernel"]: p for p in json.loads(r.output)["predict"]}
    assert "missing argument for parameter 2" in pred["strided"]["error"]
    assert pred["partial"]["topdown"]["level1"]["divergence"] * \
        pred["partial"]["topdown"]["slots"] == pytest.approx(9)
    r = CliRunner().invoke(cli, ["profile", "--launch", "strided:2:32", "--kernel", "strided",
                                 "--topdown", TOPDOWN_PTX])
    assert r.exit_code == 0 and "strided: not predicted: " in r.output
