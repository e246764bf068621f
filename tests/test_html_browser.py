"""The HTML report in a real browser (issue 16; docs/report.md): headless
Chromium through Playwright (tests/html_browser.py), skipped cleanly when no
browser can start.

Reports: ``ptxc profile --html`` and ``ptxc opt --memory-counters --html`` of
the committed tests/cuda/srcline.sm90.lineinfo.ptx (no nvcc needed), and
``ptxc run --html`` of tests/apps_src/srcline_app.cu (built with nvcc at test
time; skipped without it). Checked: the page loads with no console error and
requests nothing but itself; the kernel table sorts (both directions, by a
number column and by name); clicking a kernel shows its CFG (one SVG block
per basic block, labelled with the warp executions of the JSON report) and
its source view (CUDA beside PTX, the counts of the JSON report's
``source_lines``); every number of the kernel table equals the command's
``--format json`` report of the same run. The screenshot test renders the
example report to PNG (PTXC_UPDATE_SCREENSHOTS=1 writes docs/images/).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import html_browser
import app_harness as H
from test_source_lines import CU, LINEINFO, marker

ROOT = Path(__file__).resolve().parent.parent
OPT_ARGS = ["--kernel", "srcline", "--grid", "1", "--block", "64", "--arg", "0=arange:f32:64",
            "--arg", "1=zeros:f32:64", "--arg", "2=48", "--arg", "3=2", "--memory-counters"]
PROFILE_ARGS = ["--launch", "srcline:1:64", "--arg", "srcline:0=arange:f32:64",
                "--arg", "srcline:1=zeros:f32:64", "--arg", "srcline:2=48",
                "--arg", "srcline:3=2"]


@pytest.fixture(scope="module")
def browser():
    pw, b = html_browser.start()
    yield b
    b.close()
    pw.stop()


def ptxc(*args, cwd=None) -> subprocess.CompletedProcess:
    exe = H.find_ptxc()
    if exe is None:
        pytest.skip("the ptxc command is not installed")
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def shown(v) -> str:
    """A JSON number as the page prints it (report.js: fmt)."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else f"{v:.2f}"
    return str(v)


def table(page) -> list[dict]:
    """The kernel table as {column key: (shown text, data-value)} per row, in page order."""
    return page.eval_on_selector_all(
        "#kernels tbody tr",
        "rows => rows.map(r => Object.fromEntries(Array.from(r.cells).map("
        "c => [c.dataset.key, [c.textContent, c.dataset.value]])))")


@pytest.fixture(scope="module")
def profile_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("html-profile")
    html = d / "profile.html"
    r = ptxc("profile", *PROFILE_ARGS, "--html", html, LINEINFO)
    assert r.returncode == 0, r.stderr
    js = ptxc("profile", *PROFILE_ARGS, "--format", "json", LINEINFO)
    return html, json.loads(js.stdout)


def test_loads_without_errors_or_requests(browser, profile_report):
    html, _ = profile_report
    p = html_browser.Page(browser, html)
    assert p.errors == []
    assert all(u.startswith("file://") and u.endswith(html.name) for u in p.requests), p.requests


def test_table_numbers_equal_the_json_report(browser, profile_report):
    html, report = profile_report
    p = html_browser.Page(browser, html)
    rows = table(p.page)
    (k,) = report["kernels"]
    prof = k["profile"]
    (row,) = rows
    assert row["display"][0] == "srcline"
    for key in ("inst_executed", "thread_inst_executed", "branch", "divergent_branch",
                "branch_efficiency", "warp_execution_efficiency", "flop_count_sp"):
        assert row[key][0] == shown(prof[key]), key
        assert float(row[key][1]) == prof[key]
    assert row["launches"][0] == "1"


def test_click_shows_cfg_and_source_view(browser, profile_report):
    html, report = profile_report
    prof = report["kernels"][0]["profile"]
    p = html_browser.Page(browser, html).page
    p.click("#kernels tbody tr")
    assert p.is_visible("#detail svg.cfg")
    blocks = p.eval_on_selector_all("#detail svg.cfg g.block",
                                    "gs => gs.map(g => [g.dataset.block, +g.dataset.warpExecs])")
    assert {b: n for b, n in blocks} == {e["block"]: e["warp_execs"]
                                         for e in prof["per_block"].values()}
    p.click("button[data-tab=source]")
    assert p.is_visible("table.code.cuda")
    line = marker(CU, "loop")
    cells = p.eval_on_selector(f'table.code.cuda[data-file$="srcline.cu"] tr[data-line="{line}"]',
                               "r => Array.from(r.cells).map(c => c.textContent)")
    row = next(r for r in prof["source_lines"] if r["line"] == line and r["file"].endswith("srcline.cu"))
    assert cells[1] == str(row["inst_executed"])
    assert cells[2] == str(row["divergent_branch"])
    assert "for (int k = 0" in cells[-1]            # the CUDA text read from the .cu file
    assert p.is_visible("table.code.ptx")
    p.click(f'table.code.cuda tr[data-line="{line}"]')  # links the PTX lines of that source line
    linked = p.eval_on_selector_all("table.code.ptx tr.linked", "rs => rs.map(r => +r.dataset.line)")
    assert set(linked) == set(row["ptx_lines"])


def test_source_lines_add_up_to_the_kernel(browser, profile_report):
    """Every instruction is on a CUDA line or in the "no source line" row:
    their inst_executed cells (what the page shows) sum to the kernel's
    (docs/report.md). srcline.sm90.lineinfo.ptx has one such instruction:
    `mov.u32 %r14, 2` after `.loc 1 0 5` (line 0), the loop's preheader:
    the threads i < n = 48 with i & 3 != 0 reach it, 36 of them, in both
    warps of the 64-thread launch: 2 warp and 36 thread executions."""
    html, report = profile_report
    prof = report["kernels"][0]["profile"]
    p = html_browser.Page(browser, html).page
    p.click("#kernels tbody tr")
    p.click("button[data-tab=source]")
    per_line = p.eval_on_selector_all("table.code.cuda[data-file] tr.hit",
                                      "rs => rs.map(r => +r.cells[1].textContent)")
    no_line = p.eval_on_selector("#no-line tr.hit", "r => +r.cells[1].textContent")
    assert no_line == 2
    assert "1 PTX instructions with no .loc line (36 thread instructions" in \
        p.inner_text("#no-line")
    assert sum(per_line) + no_line == prof["inst_executed"]


def test_launch_statistics(browser, profile_report):
    """grid, block, shared memory and occupancy of the launch on the --gpu
    model (h100 by default): srcline has no .shared variable; a 64-thread
    block is 2 warps, and H100's 64 warps and 32 blocks per SM allow 32 such
    blocks. Registers (ptxas's 12 here; 32, ptxc's estimate, without ptxas)
    allow at least as many: 32 registers are 1024 per warp, 16 warps in each
    of the 4 sub-partitions' 16384 registers, 64 warps, 32 blocks."""
    html, _ = profile_report
    p = html_browser.Page(browser, html).page
    stats = dict(p.eval_on_selector_all("#launch-stats .stat",
                                        "ss => ss.map(s => [s.dataset.stat, s.textContent])"))
    assert stats["GPU model"] == "GPU model h100"
    assert stats["grid"] == "grid 1x1x1" and stats["block"] == "block 64x1x1"
    assert stats["static shared"] == "static shared 0 B"
    assert stats["occupancy"].startswith("occupancy 100% (64 of 64 warps, 32 blocks/SM; "
                                         "limited by warps, blocks")
    assert stats["registers/thread"].startswith("registers/thread ")


def test_sort(browser, tmp_path):
    """examples/branchy.ptx: two kernels with different counts (and no .loc:
    the source view says so)."""
    html = tmp_path / "branchy.html"
    r = ptxc("profile", "--launch", "vecadd_branchy:4:128", "--launch", "collatz_steps:2:64",
             "--arg", "vecadd_branchy:0=arange:f32:512", "--arg", "vecadd_branchy:1=random:f32:512:2",
             "--arg", "vecadd_branchy:2=zeros:f32:512", "--arg", "vecadd_branchy:3=500",
             "--arg", "collatz_steps:0=arange:u32:128", "--arg", "collatz_steps:1=zeros:u32:128",
             "--arg", "collatz_steps:2=128", "--html", html, ROOT / "examples" / "branchy.ptx")
    assert r.returncode == 0, r.stderr
    p = html_browser.Page(browser, html)
    assert p.errors == []
    rows = table(p.page)
    assert len(rows) == 2
    values = [float(r["inst_executed"][1]) for r in rows]
    p.page.click('#kernels th[data-key="inst_executed"]')     # first click: descending
    got = [float(r["inst_executed"][1]) for r in table(p.page)]
    assert got == sorted(values, reverse=True)
    p.page.click('#kernels th[data-key="inst_executed"]')
    assert [float(r["inst_executed"][1]) for r in table(p.page)] == sorted(values)
    p.page.click('#kernels th[data-key="display"]')
    names = [r["display"][0] for r in table(p.page)]
    assert names == sorted(names)
    p.page.click("button[data-tab=source]")
    assert "has no .loc line information" in p.page.inner_text("#panel-source")


def test_screenshot_of_the_example_report(browser, tmp_path):
    """`ptxc opt --memory-counters --html` of the srcline kernel, each tab to PNG."""
    for f in (LINEINFO, CU, CU.with_name("srcline_helper.cuh")):   # a short command line in
        shutil.copy(f, tmp_path)                                   # the page's header
    html = tmp_path / "example.html"
    r = ptxc("opt", "--pass=count", *OPT_ARGS, "--html", html.name, LINEINFO.name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    p = html_browser.Page(browser, html)
    assert p.errors == []
    out = ROOT / "docs" / "images" if os.environ.get("PTXC_UPDATE_SCREENSHOTS") else tmp_path
    out.mkdir(exist_ok=True)
    for tab in ("cfg", "source", "plots"):
        p.page.click(f"button[data-tab={tab}]")
        png = out / f"report-{tab}.png"
        p.page.screenshot(path=str(png), full_page=True)
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000
    assert p.page.eval_on_selector_all("#panel-plots svg.sectors rect.bar", "rs => rs.length") > 0
    assert p.page.eval_on_selector_all("#panel-plots svg.divergence rect.divergent",
                                       "rs => rs.length") == 3


# ------------------------------------------------------------- ptxc run
@pytest.fixture(scope="module")
def app(tmp_path_factory):
    nvcc = H.find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: the ptxc run report test needs it")
    why = H.runtime_missing()
    if why:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("html-app")
    exe = d / "srcline_app"
    r = subprocess.run([nvcc, "-cudart", "shared", "-arch=sm_90", "-O3", "-lineinfo",
                        "-I", str(ROOT / "tests" / "cuda"),
                        str(ROOT / "tests" / "apps_src" / "srcline_app.cu"), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d, exe


def test_run_report_numbers(browser, app):
    d, exe = app
    html, summary = d / "run.html", d / "run.json"
    r = ptxc("run", "--memory-counters", "--format", "json", "-o", summary, "--html", html,
             "--", exe, cwd=d)
    assert r.returncode == 0, r.stderr
    assert "PASS" in r.stdout
    report = json.loads(summary.read_text())
    p = html_browser.Page(browser, html)
    assert p.errors == []
    rows = {r["display"][0]: r for r in table(p.page)}
    assert set(rows) == {"srcline", "scale_all"}
    assert report["meta"]["clock"] == "model"         # the time: modelled GPU time (gpu_s)
    total = sum(k["gpu_s"] for k in report["kernels"])
    for k in report["kernels"]:
        row = rows[k["kernel"]]
        for key in ("launches", "inst_executed", "divergent_branch", "branch_efficiency",
                    "gld_efficiency", "gpu_s"):
            col = "time_s" if key == "gpu_s" else key
            assert float(row[col][1]) == k[key], (k["kernel"], key)
        assert float(row["time_share"][1]) == round(100 * k["gpu_s"] / total, 2)
    assert rows["srcline"]["launches"][0] == "2"
