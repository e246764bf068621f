"""``--html FILE`` of ``ptxc opt``, ``ptxc profile`` and ``ptxc run``: the
report model (ptxc/report/html_model.py) of what the command ran, written as one
self-contained page (ptxc/report/html_report.py); docs/report.md.

The kernel table's numbers are copied from the command's ``--format json``
document, which the page embeds whole (``report``): for ``ptxc run`` its
``kernels`` rows (summed over launches), for ``ptxc profile`` each kernel's
``profile``, for ``ptxc opt`` the launched kernel's ``dynamic`` counters.
Time share is the kernel's share of the run's kernel time (``ptxc run``:
``gpu_s``, the modelled GPU time, under ``--clock model``, else ``wall_s``;
``seconds`` of ``ptxc profile``; one kernel for ``opt``).
Each kernel's launch statistics (ptxc/report/launch_stats.py) are for the
command's GPU model (``--gpu``); for ``ptxc run`` those of its first launch.
"""
from __future__ import annotations

import json
import os
import sys

from ptxc.report import html_report
from ptxc.report.html_model import COLUMNS, kernel_view, merge_profiles
from ptxc.report.launch_stats import launch_stats, registers_of
from ptxc.report.source_views import module_dir


def _counters(src: dict, memory: dict | None, launches: int, seconds, share) -> dict:
    out = {"launches": launches, "time_s": seconds, "time_share": share}
    for key, _ in COLUMNS:
        if key in src:
            out[key] = src[key]
        elif memory and key in memory:
            out[key] = memory[key]
        else:
            out.setdefault(key, None)
    return out


def _share(part, total):
    return round(100.0 * part / total, 2) if part is not None and total else None


def _model(title: str, report: dict, kernels: list) -> dict:
    return {"title": title, "command": " ".join(os.path.basename(a) if i == 0 else a
                                                for i, a in enumerate(sys.argv)),
            "report": report, "columns": [list(c) for c in COLUMNS], "kernels": kernels}


# ------------------------------------------------------------------ opt
def opt_html(path: str, result, module, gpu_key: str | None = None) -> None:
    try:
        report = json.loads(result.to_json()) if result.results else {}
    except TypeError:                                  # as cli.render_reports
        report = {r.name: r.to_json() for r in result.results}
    kernels = []
    count = report.get("count") or {}
    shared = int(((result.am.options.get("launch") or {}) if result.am else {}).get("shared") or 0)
    for name, fc in (count.get("functions") or {}).items():
        dyn = fc.get("dynamic")
        if not dyn:
            continue
        counters = _counters(dyn, dyn.get("memory"), 1, None, 100.0)
        stats = launch_stats(module, name, dyn["grid"], dyn["block"], shared, gpu_key)
        kernels.append(kernel_view(module, name, dyn, counters, dirs=[module_dir(module)],
                                   launch=stats))
    html_report.write(path, _model(f"ptxc opt: {os.path.basename(module.filename)}", report,
                                   kernels))


# -------------------------------------------------------------- profile
def profile_html(path: str, mp, gpu_key: str | None = None) -> None:
    from ptxc.profile.module_render import to_dict
    report = to_dict(mp)
    total = sum(k.get("seconds", 0.0) for k in report["kernels"])
    kernels = []
    regs = registers_of(mp.module, gpu_key) if any(k.get("profile") for k in report["kernels"]) \
        else {}
    for k in report["kernels"]:
        p = k.get("profile")
        if p is None:
            continue
        counters = _counters(p, p.get("memory"), 1, k["seconds"], _share(k["seconds"], total))
        stats = launch_stats(mp.module, k["kernel"], p["grid"], p["block"], 0, gpu_key, regs)
        kernels.append(kernel_view(mp.module, k["kernel"], p, counters,
                                   dirs=[module_dir(mp.module)], launch=stats))
    html_report.write(path, _model(f"ptxc profile: {os.path.basename(mp.module.filename)}",
                                   report, kernels))


# ------------------------------------------------------------------ run
def run_html(path: str, launches, meta: dict, gpu_key: str | None = None) -> None:
    from ptxc.report.kernel_names import group, labels
    from ptxc.runtime.report import summary_json
    report = json.loads(summary_json(launches, meta))
    clock = "gpu_s" if meta.get("clock") == "model" else "wall_s"     # ptxc run --clock
    total = sum(k[clock] for k in report["kernels"] if k[clock] is not None)
    groups = group(launches)                 # kernels are (name, module) pairs
    names = labels(groups)
    kernels = []
    for k in report["kernels"]:
        rs = groups.get((k["kernel"], k["module"]), [])
        module = getattr(rs[0], "ptx_module", None) if rs else None
        if module is None:
            continue
        prof = merge_profiles([r.profile.to_dict() for r in rs])
        counters = _counters(k, None, k["launches"], k[clock], _share(k[clock], total))
        first = rs[0]
        stats = launch_stats(module, k["kernel"], first.grid, first.block, first.shared_bytes,
                             gpu_key)
        kernels.append(kernel_view(module, k["kernel"], prof, counters,
                                   names[k["kernel"], k["module"]],
                                   dirs=[os.getcwd()], launch=stats))
    title = f"ptxc run: {os.path.basename(str(meta.get('application', '?')))}"
    if meta.get("interrupted"):
        title += f" (interrupted: {meta['interrupted']})"
    html_report.write(path, _model(title, report, kernels))
