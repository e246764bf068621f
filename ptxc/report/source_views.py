"""``--by source`` for ``ptxc opt`` (the count pass), ``ptxc profile`` and
``ptxc run``: the per-source-line rows of every launched kernel
(ptxc.report.source_profile) as text or CSV (ptxc.report.source_render); docs/report.md.

Each command's JSON carries the rows anyway (``source_lines`` of a kernel's
profile dict), so ``--by source`` changes only their text and CSV. ``ptxc
run``'s kernels are (name, module) pairs (runtime/kernel_keys.py): its CSV
has a ``module`` column and its JSON ``source_lines`` is a list of
{kernel, module, launches, rows}, rows summed over the kernel's launches.
"""
from __future__ import annotations

import os

from ptxc.errors import PtxcError
from ptxc.report.source_profile import line_rows
from ptxc.ir.source_lines import SourceMap
from ptxc.report.source_render import csv_rows, no_lines_error, read_sources, text

BY_CHOICES = ("ptx", "source")


def render(per_kernel: dict, fmt: str, dirs=()) -> str:
    """Text or CSV of {kernel: rows}."""
    if fmt == "csv":
        return csv_rows(per_kernel)
    paths = {r["file"] for rows in per_kernel.values() for r in rows}
    sources = read_sources(sorted(paths), list(dirs) + [os.getcwd()])
    lines = []
    for kernel, rows in per_kernel.items():
        lines += text(kernel, rows, sources)
    return "\n".join(lines) + "\n"


def module_dir(module) -> str | None:
    name = getattr(module, "filename", None)
    return os.path.dirname(os.path.abspath(name)) if name and name != "<stdin>" else None


# ----------------------------------------------------------------- opt
def require_lines(module) -> None:
    if not SourceMap(module).has_lines:
        raise no_lines_error(module.filename)


def count_rows(report: dict, module) -> dict:
    """{kernel: rows} of the count pass's launched kernel (an error without .loc)."""
    require_lines(module)
    return {name: fc["dynamic"].get("source_lines", [])
            for name, fc in report["functions"].items() if fc.get("dynamic")}


def count_view(report: dict, module, fmt: str) -> str:
    per = count_rows(report, module)
    if not per:
        raise PtxcError("--by source needs a launch (--kernel, --grid, --block) and the "
                        "count pass")
    return render(per, fmt, [module_dir(module)])


# ------------------------------------------------------------- profile
def profile_view(mp, fmt: str) -> str:
    smap = SourceMap(mp.module)
    if not smap.has_lines:
        raise no_lines_error(mp.module.filename)
    per = {r.kernel: line_rows(r.profile.to_dict(), mp.module, smap)
           for r in mp.rows if r.profile is not None}
    return render(per, fmt, [module_dir(mp.module)])


# ----------------------------------------------------------------- run
def run_rows(launches) -> dict:
    """{(kernel, module): rows of its launches} (runtime/kernel_keys.py; modules
    without .loc skipped): the rows of the launches' summed profiles, as the
    HTML page's source view, so ``instructions`` counts each instruction once."""
    from ptxc.report.html_model import merge_profiles
    from ptxc.report.kernel_names import group
    out = {}
    for key, rs in group(launches).items():
        module = getattr(rs[0], "ptx_module", None)
        if module is not None and _smap(module).has_lines:
            merged = merge_profiles([r.profile.to_dict() for r in rs])
            out[key] = line_rows(merged, module, _smap(module))
    return out


def run_view(launches, fmt: str, per: dict | None = None) -> str:
    """The per-source-line text or CSV of ``ptxc run`` (``per``: run_rows,
    when the caller has them)."""
    from ptxc.report.kernel_names import labels
    per = run_rows(launches) if per is None else per
    if launches and not per:
        raise no_lines_error("the application's PTX")
    if fmt == "csv":
        return csv_rows(per)
    shown = labels(per)
    return render({shown[key]: rows for key, rows in per.items()}, fmt)


# ------------------------------------------------ ptxc run: SQLite columns
def _smap(module) -> SourceMap:
    smap = module.attrs.get("source_map")
    if smap is None:
        smap = module.attrs["source_map"] = SourceMap(module)
    return smap


def _columns(loc) -> dict:
    return {"source_file": loc["file"] if loc else None,
            "source_line": loc["line"] if loc else None}


def branch_columns(record, key: str) -> dict:
    """source_file / source_line of branch ``key`` of a launch (None without .loc)."""
    from ptxc.report.source_profile import branch_location
    module = getattr(record, "ptx_module", None)
    if module is None or not _smap(module).has_lines:
        return _columns(None)
    return _columns(branch_location(_smap(module), module, key))


def memory_columns(record, e: dict) -> dict:
    """source_file / source_line of memory instruction entry ``e`` of a launch."""
    from ptxc.report.source_profile import locate
    module = getattr(record, "ptx_module", None)
    if module is None or not _smap(module).has_lines:
        return _columns(None)
    return _columns(locate(_smap(module), module, e["function"], e["index"]))


SOURCE_LINE_TEMPLATE = {"launch_id": 0, "kernel": "", "module": "", "file": "", "line": 0,
                        "instructions": 0,
                        "inst_executed": 0, "thread_inst_executed": 0, "branch": 0,
                        "divergent_branch": 0, "mem_requests": 0, "mem_transactions": 0,
                        "requested_bytes": 0, "moved_bytes": 0, "wasted_bytes": 0,
                        "warp_execution_efficiency": 0.0, "branch_efficiency": 0.0,
                        "memory_efficiency": 0.0, "ptx_lines": ""}


def source_line_rows(launches) -> list[dict]:
    """The ``source_lines`` table: one row per launch and source line."""
    out = []
    for r in launches:
        module = getattr(r, "ptx_module", None)
        if module is None or not _smap(module).has_lines:
            continue
        for row in line_rows(r.profile.to_dict(), module, _smap(module)):
            out.append({"launch_id": r.id, "kernel": r.kernel, "module": r.module, **row,
                        "ptx_lines": " ".join(map(str, row["ptx_lines"]))})
    return out


def run_json(text: str, launches, per: dict | None = None) -> str:
    """The ``ptxc run --format json`` document with ``source_lines``: a list of
    {kernel, module, launches, rows} (one per kernel of run_rows; ``per``:
    run_rows, when the caller has them)."""
    import json
    from ptxc.report.kernel_names import group
    doc = json.loads(text)
    launched = group(launches)
    per = run_rows(launches) if per is None else per
    doc["source_lines"] = [{"kernel": k, "module": m, "launches": len(launched[k, m]),
                            "rows": rows} for (k, m), rows in per.items()]
    return json.dumps(doc, indent=2, default=list) + "\n"
