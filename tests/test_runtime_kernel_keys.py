"""Kernels of one name in two modules stay two kernels in every part of
``ptxc run``'s report (ptxc/report/kernel_names.py; docs/runtime.md, "The
summary and the report"), and a launch run by ``cudaGraphLaunch`` is marked.

tests/cuda_apps/same_name_main.cu + same_name_lib.cu, built with nvcc
-lineinfo at test time (skipped without nvcc): each file has its own
``static __global__ void k(int *)``, so both kernels get the same PTX name in
two fat binaries. main's k runs <<<1, 32>>> twice (the second time as the
kernel node of a captured graph, the run's first cudaGraphLaunch, on the
first created stream, 1), then lib's k runs <<<2, 64>>> once.

Expected numbers, by hand: neither kernel branches (checked on the PTX that
``--keep-ptx`` writes), so each warp executes each of the kernel's S
instructions once: inst_executed = warps x S and thread_inst_executed =
threads x S per launch. With nvcc 13, S = 8 for main's k (ld.param, cvta,
mov %tid.x, add 7, mul.wide, add.s64, st.global, ret) and S = 11 for lib's
(ld.param, cvta, three movs of %ctaid.x / %ntid.x / %tid.x, mad i, mad 3i+1,
mul.wide, add.s64, st.global, ret); the test counts S in the PTX text. Main's
kernel: 2 launches x 1 warp x S_main, 2 x 32 threads x S_main; lib's: 1
launch x 4 warps x S_lib, 128 threads x S_lib. Every instruction has a .loc,
in its own .cu file, so the per-source-line rows of a kernel sum to those
totals and their ``instructions`` to S.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest

from ptxc.report.kernel_names import demangle
from runtime_apps import TIMEOUT, AppBuilder, run_ptxc

LINEINFO = ("-cudart", "shared", "-arch=sm_90", "-lineinfo")
SOURCES = ["same_name_main.cu", "same_name_lib.cu"]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("same_name")).build("same_name", SOURCES, LINEINFO)


def ptx_instructions(path: str, kernel: str) -> list[str]:
    """The instruction lines of ``.entry kernel`` in a PTX file (no
    directives, labels, braces or comments)."""
    body = open(path).read().split(f".entry {kernel}(", 1)[1].split("\n}", 1)[0]
    body = body.split("{", 1)[1]
    return [ln.strip() for ln in body.splitlines()
            if ln.strip() and not ln.strip().startswith((".", "//", "$", "{", "}"))]


@pytest.fixture(scope="module")
def run(app):
    """A full run with JSON, SQLite, --by source, --topdown, --html and the
    PTX kept; plus the expected numbers of both kernels, keyed by module."""
    keep = os.path.join(os.path.dirname(app), "same_name_ptx")
    html = os.path.join(os.path.dirname(app), "same_name.html")
    r = run_ptxc(app, mode="full", options=("--by", "source", "--keep-ptx", keep,
                                             "--topdown", "--html", html))
    assert r.returncode == 0 and "PASS" in r.proc.stdout, r.proc.stderr
    launches = r.summary["launches"]
    main, lib = launches[0]["module"], launches[2]["module"]
    expect = {}
    for module, (runs, warps, threads), source in (
            (main, (2, 1, 32), "same_name_main.cu"), (lib, (1, 4, 128), "same_name_lib.cu")):
        path = os.path.join(keep, f"{module}.compute_90.ptx")
        code = ptx_instructions(path, launches[0]["kernel"])
        assert not any(re.search(r"\bbra\b", c) for c in code) and code[-1] == "ret;"
        assert source in open(path).read()         # the module is that .cu file's
        s = len(code)
        expect[module] = {"static": s, "launches": runs, "inst_executed": runs * warps * s,
                          "thread_inst_executed": runs * threads * s, "source": source}
    return r, expect, html


def test_the_two_kernels_share_one_name(run):
    r, expect, _ = run
    launches = r.summary["launches"]
    assert len({row["kernel"] for row in launches}) == 1
    assert [(row["grid_x"], row["block_x"]) for row in launches] == [(1, 32), (1, 32), (2, 64)]
    main, lib = list(expect)
    assert main != lib and expect[main]["static"] != expect[lib]["static"]


def test_kernels_json_and_sqlite_keep_two_rows(run):
    r, expect, _ = run
    for rows in (r.summary["kernels"], r.rows("SELECT * FROM kernels")):
        assert len(rows) == 2
        for row in rows:
            e = expect[row["module"]]
            assert row["launches"] == e["launches"]
            assert row["inst_executed"] == e["inst_executed"]
            assert row["thread_inst_executed"] == e["thread_inst_executed"]
            assert row["branch"] == 0


def test_graph_launch_marked(run):
    """Launch 2 is the kernel node of the run's first cudaGraphLaunch."""
    r, expect, _ = run
    main, lib = list(expect)
    for rows in (r.summary["launches"], r.rows("SELECT * FROM launches ORDER BY id")):
        assert [(row["graph"], row["stream"]) for row in rows] == [(None, 0), (1, 1), (None, 0)]
    got = {row["module"]: row["graph_launches"] for row in r.summary["kernels"]}
    assert got == {main: 1, lib: 0}


def test_by_source_json_and_sqlite(run):
    r, expect, _ = run
    per = r.summary["source_lines"]
    assert len(per) == 2
    for entry in per:
        e = expect[entry["module"]]
        assert entry["launches"] == e["launches"]
        assert {os.path.basename(x["file"]) for x in entry["rows"]} == {e["source"]}
        assert sum(x["instructions"] for x in entry["rows"]) == e["static"]
        assert sum(x["inst_executed"] for x in entry["rows"]) == e["inst_executed"]
    rows = r.rows("SELECT module, SUM(inst_executed) AS n FROM source_lines GROUP BY module")
    assert {row["module"]: row["n"] for row in rows} == \
        {m: e["inst_executed"] for m, e in expect.items()}
    rows = r.rows("SELECT DISTINCT launch_id, module FROM source_lines ORDER BY launch_id")
    main, lib = list(expect)
    assert [(row["launch_id"], row["module"]) for row in rows] == [(1, main), (2, main), (3, lib)]


def test_topdown_and_html_keep_two_kernels(run):
    """Predicted kernels: one per module, with that module's launch count;
    the HTML page shows both, each with its own counters and name."""
    r, expect, html = run
    pred = {k["module"]: k["launches"] for k in r.summary["predict"]["kernels"]}
    assert pred == {m: e["launches"] for m, e in expect.items()}
    page = open(html).read()
    model = json.loads(re.search(r'<script type="application/json" id="ptxc-data">(.*?)</script>',
                                 page, re.S).group(1))
    kernel = r.summary["launches"][0]["kernel"]
    name = demangle([kernel])[kernel]
    shown = {k["display"]: k["counters"]["inst_executed"] for k in model["kernels"]}
    assert shown == {f"{name} [{m}]": e["inst_executed"] for m, e in expect.items()}


def ptxc_output(app: str, *options) -> str:
    """What ``ptxc run OPTIONS -o FILE`` writes to FILE."""
    out = os.path.join(os.path.dirname(app), "same_name_out.txt")
    cmd = [sys.executable, "-m", "ptxc.cli", "run", *options, "-o", out, "--", app]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=os.path.dirname(app))
    assert proc.returncode == 0 and "PASS" in proc.stdout, proc.stderr
    with open(out) as f:
        return f.read()


def test_text_csv_and_by_source_csv(app, run):
    r, expect, _ = run
    main, lib = list(expect)
    kernel = r.summary["launches"][0]["kernel"]
    name = demangle([kernel])[kernel]
    rows = list(csv.DictReader(io.StringIO(ptxc_output(app, "--format", "csv"))))
    assert {row["module"]: int(row["inst_executed"]) for row in rows} == \
        {m: e["inst_executed"] for m, e in expect.items()}
    rows = list(csv.DictReader(io.StringIO(ptxc_output(app, "--format", "csv", "--by", "source"))))
    sums: dict = {}
    for row in rows:
        sums[row["module"]] = sums.get(row["module"], 0) + int(row["inst_executed"])
    assert sums == {m: e["inst_executed"] for m, e in expect.items()}
    text = ptxc_output(app, "--by", "source")
    assert f"Kernel: {name} [{main}] (1 of 2 launches by cudaGraphLaunch 1)\n" in text
    assert f"Kernel: {name} [{lib}]\n" in text
    assert f"by source line, kernel {name} [{main}]" in text
    assert f"by source line, kernel {name} [{lib}]" in text


def test_inject_keeps_the_two_kernels_apart(app, tmp_path):
    # ptxc inject's space and summary name a launch's kernel with its module
    # when kernels of that name in two modules ran: launches 0 and 1 are
    # main's k (1 CTA of 32 threads each), launch 2 lib's k (2 x 64 = 128
    # threads); every thread of these branch-free kernels executes
    # instructions with a destination register, so the register target's
    # space counts 32, 32 and 128 threads.
    import sqlite3

    from app_harness import find_ptxc
    db = tmp_path / "inject.sqlite"
    proc = subprocess.run([find_ptxc(), "inject", "--runs", "4", "--seed", "1", "--jobs", "2",
                           "--report", str(db), "--", app], cwd=tmp_path,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    con = sqlite3.connect(db)
    space = con.execute("SELECT launch, kernel, threads FROM inject_space "
                        "WHERE target = 'register' ORDER BY launch").fetchall()
    runs = con.execute("SELECT kernel FROM inject_runs").fetchall()
    con.close()
    (l0, k0, t0), (l1, k1, t1), (l2, k2, t2) = space
    assert (l0, l1, l2) == (0, 1, 2) and (t0, t1, t2) == (32, 32, 128)
    assert k0 == k1 != k2
    assert re.fullmatch(r"_Z1kPi \[fatbin\d+\]", k0) and re.fullmatch(r"_Z1kPi \[fatbin\d+\]", k2)
    assert {k for (k,) in runs} <= {k0, k2}
