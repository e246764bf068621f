"""The HTML report without a browser (ptxc/html_*.py; docs/report.md): the page
is one self-contained file that embeds the command's JSON report, the SVGs
are well-formed, the CFG layout finds the loops, launches are summed.
(tests/test_html_browser.py checks the page in Chromium.)

Input: tests/cuda/srcline.sm90.lineinfo.ptx (tests/cuda/README.md), launch as
in tests/test_source_lines.py. Its CFG (read off the PTX): bb0 -> bb1 |
$L__BB0_5 (the bound check), bb1 -> bb2 | $L__BB0_4 (the loop skip), bb2 ->
$L__BB0_3, $L__BB0_3 -> $L__BB0_3 (the one back edge) | $L__BB0_4,
$L__BB0_4 -> $L__BB0_5.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli
from ptxc.report.html_cfg import back_edges, cfg_svg, layers
from ptxc.report.html_model import merge_profiles
from ptxc.report.html_plots import divergence_svg, sectors_svg
from test_source_lines import LINEINFO, run_kernel

OPT = ["opt", "--pass=count", "--kernel", "srcline", "--grid", "1", "--block", "64",
       "--arg", "0=arange:f32:64", "--arg", "1=zeros:f32:64", "--arg", "2=48", "--arg", "3=2",
       "--memory-counters"]


def embedded(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="ptxc-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def test_page_is_self_contained_and_embeds_the_json_report(tmp_path):
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, OPT + ["--html", str(out), str(LINEINFO)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    js = CliRunner().invoke(cli, OPT + ["--format", "json", str(LINEINFO)], catch_exceptions=False)
    html = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)   # nothing fetched
    assert "<link" not in html and "@import" not in html
    model = embedded(html)
    report = json.loads(js.output)
    dyn, shown = report["count"]["functions"]["srcline"]["dynamic"], model["kernels"][0]
    for key in ("inst_executed", "divergent_branch", "branch_efficiency"):
        assert shown["counters"][key] == dyn[key]
    assert model["report"]["count"]["functions"]["srcline"]["dynamic"]["per_block"] == dyn["per_block"]


def test_svgs_are_well_formed():
    module, dyn = run_kernel(LINEINFO, "full")
    fn = module.kernels[0]
    root = ET.fromstring(cfg_svg(fn, dyn))
    ns = "{http://www.w3.org/2000/svg}"
    blocks = root.findall(f"{ns}g")
    assert [g.get("data-block") for g in blocks] == [b.name for b in fn.blocks]
    assert {g.get("data-block"): int(g.get("data-warp-execs")) for g in blocks} == {
        e["block"]: e["warp_execs"] for e in dyn["per_block"].values()}
    assert len(root.findall(f"{ns}path[@class='edge back']")) == 1
    ET.fromstring(sectors_svg([{"label": "x", "hist": [0, 3, 1] + [0] * 29}]))
    ET.fromstring(divergence_svg([{"label": "b <1>", "warp_execs": 4, "divergent": 1,
                                   "taken": 10, "not_taken": 22}]))


def test_layout_layers_and_back_edges():
    fn = ptxc.load(str(LINEINFO)).kernels[0]
    names = [b.name for b in fn.blocks]
    back = back_edges(fn)
    assert {(names[a], names[b]) for a, b in back} == {("$L__BB0_3", "$L__BB0_3")}
    lay = dict(zip(names, layers(fn, back)))
    # longest forward path from bb0: bb0 bb1 bb2 $L__BB0_3 $L__BB0_4 $L__BB0_5
    assert [lay[n] for n in names] == [0, 1, 2, 3, 4, 5]


def test_merge_sums_launches():
    module, dyn = run_kernel(LINEINFO, "full")
    merged = merge_profiles([dyn, dyn])
    for key, e in dyn["per_block"].items():
        assert merged["per_block"][key]["warp_execs"] == 2 * e["warp_execs"]
    for key, e in dyn["per_memory_instr"].items():
        got = merged["per_memory_instr"][key]["global"]
        assert got["transactions"] == 2 * e["global"]["transactions"]
        assert got["sectors_hist"] == [2 * x for x in e["global"]["sectors_hist"]]
    assert dyn["per_memory_instr"][key]["global"]["efficiency"] is not None   # input untouched


def test_unwritable_html_path_is_one_error(tmp_path):
    bad = tmp_path / "no-such-dir" / "r.html"
    r = CliRunner().invoke(cli, OPT + ["--html", str(bad), str(LINEINFO)])
    assert r.exit_code == 1
    assert "cannot write the HTML report" in r.output and "Traceback" not in r.output


def test_profile_html_of_several_modules_is_refused(tmp_path):
    r = CliRunner().invoke(cli, ["profile", "--html", str(tmp_path / "x.html"), str(LINEINFO),
                                 str(LINEINFO)])
    assert r.exit_code == 2
    assert "take one module" in r.output
