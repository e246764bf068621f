"""`ptxc inject` on whole applications (docs/inject.md), built by nvcc at
test time (skipped without it): tests/cuda_apps/inject_poly.cu (one thread,
an output file, no check of its own) and tests/apps/vectorAdd (n = 1: one
CTA of 256 threads, an exact check that exits 1 on FAIL). Both run with
``--ptx`` on their committed PTX, so that the independent model
(tests/inject_model.py) interprets exactly the code that runs. Each drawn
site's class must be the model's for that site (the campaigns are samples;
the model classifies any site of the tiny space, it enumerates nothing
less).
"""
from __future__ import annotations

import re
import sqlite3
import struct
import subprocess
from pathlib import Path

import pytest

import app_harness as H
import inject_model as M

HERE = Path(__file__).parent
POLY_CU = HERE / "cuda_apps" / "inject_poly.cu"
POLY_PTX = HERE / "cuda_apps" / "inject_poly.sm90.ptx"
VADD_CU = HERE / "apps" / "vectorAdd" / "vectorAdd.cu"
VADD_PTX = HERE / "apps" / "vectorAdd" / "vectorAdd.sm90.ptx"
MAX_STEPS = 2000          # as in test_inject.py: flipped loop bounds above 2000 iterations hang


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    H.require_apps()
    out = tmp_path_factory.mktemp("inject-apps")
    return {src.stem: H.build(src, out) for src in (POLY_CU, VADD_CU)}


def inject(exe, args, *options, cwd):
    proc = subprocess.run([H.find_ptxc(), "inject", *map(str, options), "--", str(exe), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def runs_of(report: Path) -> list:
    con = sqlite3.connect(report)
    try:
        return con.execute("SELECT site, outcome, flipped, bit FROM inject_runs ORDER BY run").fetchall()
    finally:
        con.close()


def parse(site: str):
    t, launch, cta, thread, instance, rand = site.split("/")
    return t, int(launch), int(cta), int(thread), int(instance), int(rand)


# ------------------------------------------------------------- inject_poly
def poly_model(site: str, out_addr: int) -> str:
    """The model's class of a site of `inject_poly 2 out.txt`: a fault or a
    hang is a DUE (ptxc stops the app); else the output file differs (SDC)
    or not (masked); stdout is the same line either way."""
    target, _, _, _, instance, rand = parse(site)
    ptx = POLY_PTX.read_text()
    params = {"poly_param_0": out_addr, "poly_param_1": 2}
    gold, out = bytearray(4), bytearray(4)
    M.run(ptx, "poly", params, {"%tid.x": 0}, {out_addr: gold})
    status, _ = M.run(ptx, "poly", params, {"%tid.x": 0}, {out_addr: out},
                      flip=(target, instance, rand), max_blocks=MAX_STEPS)
    if status != "ok":
        return "due"
    return "masked" if out == gold else "sdc"


def test_poly_campaign_matches_the_model(apps, tmp_path):
    exe = apps["inject_poly"]
    golden = subprocess.run([H.find_ptxc(), "run", "--mode", "full", "--", str(exe), "2", "o.txt"],
                            cwd=tmp_path, capture_output=True, text=True)
    out_addr = int(re.search(r"out at (0x[0-9a-f]+)", golden.stdout).group(1), 16)
    report = tmp_path / "r.sqlite"
    code, text, err = inject(exe, ["2", "out.txt"], "--runs", 8, "--seed", 5, "--jobs", 2,
                             "--output", "out.txt", "--max-steps", MAX_STEPS, "--ptx", POLY_PTX,
                             "--report", report, cwd=tmp_path)
    assert code == 0, err
    assert "injection space (register): 17 dynamic instructions in 1 launch" in text
    assert not (tmp_path / "out.txt").exists()          # each run wrote its own copy
    rows = runs_of(report)
    assert len(rows) == 8 and all(r[2] for r in rows)
    for site, outcome, _, bit in rows:
        assert outcome == poly_model(site, out_addr), site
    # the same seed with one job: the same bytes on stdout
    code1, text1, _ = inject(exe, ["2", "out.txt"], "--runs", 8, "--seed", 5, "--jobs", 1,
                             "--output", "out.txt", "--max-steps", MAX_STEPS, "--ptx", POLY_PTX,
                             cwd=tmp_path)
    assert code1 == 0 and text1 == text


def test_poly_replay_one_site(apps, tmp_path):
    """Site register/0/0/0/1/0: bit 0 of n (instance 1, ld.param %r8): n = 3,
    s = 3 * 10 + 2 = 32: an SDC, and the injected run's output file says 32."""
    code, text, err = inject(apps["inject_poly"], ["2", "out.txt"], "--replay", "register/0/0/0/1/0",
                             "--output", "out.txt", "--ptx", POLY_PTX, cwd=tmp_path)
    assert code == 0, err
    assert text.startswith("site register/0/0/0/1/0: SDC; flipped bit 0 of line ")
    assert "(ld.param.u32)" in text.splitlines()[0]


def test_bad_replay_site_is_one_line(apps, tmp_path):
    code, text, err = inject(apps["inject_poly"], ["2", "out.txt"], "--replay", "register/0/0",
                             cwd=tmp_path)
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "bad site 'register/0/0'" in err


# --------------------------------------------------------------- vectorAdd
def lcg_inputs():
    """vectorAdd's host data for n = 1 (its LCG, seed 12345)."""
    seed = 12345
    seed = (seed * 1664525 + 1013904223) & 0xFFFFFFFF
    a = (seed >> 8) / 16777216.0
    seed = (seed * 1664525 + 1013904223) & 0xFFFFFFFF
    b = (seed >> 8) / 16777216.0
    return a, b


def vadd_model(site: str) -> str:
    """The model's class for `vectorAdd 1` (1 CTA of 256 threads, n = 1):
    the flip happens in one thread; every thread runs through the model; a
    bad access is a DUE, and so is a wrong C[0] (the app checks C exactly,
    prints FAIL and exits 1); nothing else can differ (its stdout is the
    same), so the rest is masked. Buffers at distinct made-up addresses: a
    flipped pointer that reaches another buffer reads or writes the wrong
    element, which the exact check catches too."""
    target, _, _, thread, instance, rand = parse(site)
    a, b = lcg_inputs()
    A, B, C = 1 << 40, 2 << 40, 3 << 40
    bufs = {A: bytearray(struct.pack("<f", a)), B: bytearray(struct.pack("<f", b)), C: bytearray(4)}
    params = {f"_Z9vectorAddPKfS0_Pfi_param_{i}": v for i, v in enumerate((A, B, C, 1))}
    ptx = VADD_PTX.read_text()
    for t in range(256):
        status, _ = M.run(ptx, "_Z9vectorAddPKfS0_Pfi", params,
                          {"%tid.x": t, "%ctaid.x": 0, "%ntid.x": 256}, bufs,
                          flip=(target, instance, rand) if t == thread else None)
        if status != "ok":
            return "due"
    expected = struct.unpack("<f", struct.pack("<f", a))[0] + struct.unpack("<f", struct.pack("<f", b))[0]
    got = struct.unpack("<f", bytes(bufs[C]))[0]
    return "masked" if got == struct.unpack("<f", struct.pack("<f", expected))[0] else "due"


def test_vectoradd_campaign_matches_the_model(apps, tmp_path):
    report = tmp_path / "r.sqlite"
    code, text, err = inject(apps["vectorAdd"], ["1"], "--runs", 8, "--seed", 2, "--kernel",
                             "_Z9vectorAddPKfS0_Pfi", "--ptx", VADD_PTX, "--report", report,
                             cwd=tmp_path)
    assert code == 0, err
    # thread 0: ld.param x4, mov x3, mad, then cvta, mul.wide, add, cvta, add, ld x2, add.f32,
    # cvta, add = 18; threads 1..255 stop after the mad: 8 each. 18 + 255 * 8 = 2058.
    assert "injection space (register): 2058 dynamic instructions in 1 launch" in text
    rows = runs_of(report)
    assert len(rows) == 8
    for site, outcome, flipped, _ in rows:
        assert flipped and outcome == vadd_model(site), site
    con = sqlite3.connect(report)
    summary = con.execute("SELECT kernel, runs, masked, sdc, due FROM inject_summary").fetchall()
    con.close()
    n_masked = sum(1 for r in rows if r[1] == "masked")
    assert summary[-1] == ("all", 8, n_masked, 0, 8 - n_masked)


def test_dask_gives_the_same_bytes(apps, tmp_path, dask_address):
    args = ["2", "out.txt"]
    opts = ["--runs", 4, "--seed", 9, "--output", "out.txt", "--max-steps", MAX_STEPS,
            "--ptx", POLY_PTX]
    one = inject(apps["inject_poly"], args, *opts, "--jobs", 1, cwd=tmp_path)
    dask = inject(apps["inject_poly"], args, *opts, "--dask", dask_address, cwd=tmp_path)
    assert one[0] == dask[0] == 0, dask[2]
    assert one[1] == dask[1]
