"""The self-contained HTML report (docs/report.md): one file with inline CSS,
JavaScript and SVG, and nothing fetched from the network.

``page(model)`` returns the page for a model of ptxc/report/html_model.py: the
model is embedded as JSON in ``<script type="application/json"
id="ptxc-data">`` (``</`` escaped), and report.js (ptxc/report/assets)
builds the sortable kernel table and, for the kernel clicked, the CFG, the
source view (CUDA beside PTX) and the plots from it.
"""
from __future__ import annotations

import json
from html import escape
from importlib import resources

from ptxc.errors import PtxcError


def _asset(name: str) -> str:
    return resources.files("ptxc.report").joinpath("assets", name).read_text(encoding="utf-8")


def page(model: dict) -> str:
    data = json.dumps(model, separators=(",", ":"), default=list).replace("</", "<\\/")
    title = escape(model.get("title", "ptxc report"))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{title}</title>
<style>
{_asset("report.css")}
</style>
</head>
<body>
<header><h1>{title}</h1><div class="cmd">{escape(model.get("command", ""))}</div></header>
<main>
<h2>Kernels</h2>
<p class="note">Click a column to sort, a kernel to see its CFG, source view and plots. Counters as defined in ptxc's docs/metrics.md (nvprof's names).</p>
<table id="kernels"><thead></thead><tbody></tbody></table>
<section id="detail" hidden>
<h2 id="detail-title"></h2>
<div class="tabs"><button data-tab="cfg">CFG</button><button data-tab="source">Source</button><button data-tab="plots">Plots</button></div>
<div class="legend">heat: <span style="background:rgba(240,173,78,.6)"></span>instructions executed
<span style="background:rgba(217,83,79,.6)"></span>divergent branches
<span style="background:rgba(74,120,194,.6)"></span>wasted memory bandwidth; CFG: fill = divergence (white 0% .. red 100%), border = memory efficiency (black 100% .. thick blue 0%), dashed = not executed. Hover for details.</div>
<div id="panel-cfg" class="panel"></div>
<div id="panel-source" class="panel"></div>
<div id="panel-plots" class="panel"></div>
</section>
</main>
<script type="application/json" id="ptxc-data">{data}</script>
<script>
{_asset("report.js")}
</script>
</body>
</html>
"""


def write(path: str, model: dict) -> None:
    """Write the page; a file that cannot be written is one error line."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page(model))
    except OSError as err:
        raise PtxcError(f"cannot write the HTML report {path}: {err.strerror}") from None
