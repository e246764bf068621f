"""The ``count`` pass: static counts per kernel and basic block, and, when a
launch is configured, the dynamic counters of METRICS.md.

Static counts: see count_static (classes of ptxc.ir.opcodes, memory by state
space, METRICS.md FLOP weights, branches). Dynamic counts: when
``am.options['launch']`` is a dict (the CLI's --kernel/--grid/--block/--arg),
the kernel is run by the JIT executor (``ptxc.launcher.launch_from_options``):
in hybrid mode when the slice ran earlier in the pipeline (the functions
carry ``attrs['sliced']``) unless the launch asks for ``mode: full``, else in
full mode; the profile's ``to_dict()`` is reported under ``dynamic``. Without a
launch, or before the executor exists, the report is static only and says so.

Output (``am.options['format']``): text tables (default), ``json`` (the
``data`` dict; keys as in METRICS.md), or ``csv`` (one row per kernel with
HyPA's module-level columns; docs/count.md; ``count{csv=memory}``: one row
per memory instruction of a launch with memory counters, worst first).
The launch's profile dict is also left in ``module.attrs['launch_profile']``
for ``--emit=dot`` (passes/cfg.py colours the CFG with it).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ptxc.ir.passmanager import ALL, Pass, PassResult
from ptxc.report.source_profile import with_source

from ptxc.passes.count.memory_table import render_memory_csv
from ptxc.passes.count.render import render_csv, render_text
from ptxc.passes.count.static import FP_CLASSES, module_counts

CSV_TABLES = ("kernels", "memory", "values")
STATIC_NOTE = "static counts only (no launch configuration: give --kernel/--grid/--block)"
NO_JIT_NOTE = "static counts only: the JIT executor (ptxc.launcher) is not available"


def module_header(module) -> dict:
    return {
        "file": module.filename,
        "ptx_version": module.version,
        "target": ",".join(module.target),
        "address_size": module.address_size,
    }


def launch_mode(module, opts: dict) -> str:
    if opts.get("mode") == "full":
        return "full"
    sliced = any(f.attrs.get("sliced") for f in module.functions if not f.is_decl)
    return "hybrid" if sliced else "full"


def run_launch(module, opts: dict):
    """(profile dict, mode, seconds) or (None, note) when no executor exists."""
    try:
        from ptxc.launcher.api import launch_from_options
    except ImportError:
        return None, NO_JIT_NOTE, None, None
    mode = launch_mode(module, opts)
    t0 = time.perf_counter()
    profile = launch_from_options(module, opts, mode)
    seconds = time.perf_counter() - t0
    data = profile.to_dict() if hasattr(profile, "to_dict") else dict(profile)
    return data, None, mode, seconds


def _block_execs(dyn: dict, kernel: str) -> dict:
    """{block name: thread executions} of ``kernel`` from a profile dict
    (``per_block``: "function:block" -> {warp_execs, thread_execs, ...})."""
    out = {}
    for key, b in (dyn.get("per_block") or {}).items():
        fname, _, bname = key.rpartition(":")
        if isinstance(b, dict) and "thread_execs" in b and fname in (kernel, ""):
            out[bname] = b["thread_execs"]
    return out


def csv_dynamic(name: str, fc: dict, dyn: dict, seconds: float) -> dict:
    """HyPA's dynamic columns from a profile and the static block counts."""
    execs = _block_execs(dyn, name)
    out = {
        "threads": _threads(dyn),
        "dynamic_inst": dyn.get("thread_inst_executed"),
        "divergent_branch": dyn.get("divergent_branch"),
        "branch_efficiency": dyn.get("branch_efficiency"),
        "duration_ms": round(1000 * seconds, 3),
    }
    if execs:
        blocks = {b["block"]: b for b in fc["blocks"]}
        out["dynamic_fp_inst"] = sum(n * sum(blocks[k]["classes"][c] for c in FP_CLASSES)
                                     for k, n in execs.items() if k in blocks)
        if "slice_inst" in fc:
            done = sum(n * blocks[k]["slice_inst"] for k, n in execs.items() if k in blocks)
            out["executed_inst"] = done
            total = out["dynamic_inst"]
            out["percent_executed"] = round(100 * done / total, 3) if total else None
    return out


def _threads(dims_of: dict):
    total = 1
    for key in ("grid", "block"):
        dims = dims_of.get(key)
        if isinstance(dims, int):
            dims = (dims,)
        if not isinstance(dims, (tuple, list)) or not all(isinstance(d, int) for d in dims):
            return None
        for d in dims:
            total *= d
    return total


def count_report(module, am) -> dict:
    report = {**module_header(module), **module_counts(module)}
    opts = am.options.get("launch")
    if not isinstance(opts, dict):
        report["note"] = STATIC_NOTE
        return report
    dyn, note, mode, seconds = run_launch(module, opts)
    if dyn is None:
        report["note"] = note
        return report
    name = dyn.get("kernel") or opts.get("kernel")
    module.attrs["launch_profile"] = dyn
    fc = report["functions"].get(name)
    if fc is not None:
        fc["dynamic"] = with_source({"mode": mode, **dyn}, module)
        fc["csv_dynamic"] = csv_dynamic(name, fc, dyn, seconds)
    return report


@dataclass(frozen=True)
class CountPass(Pass):
    name = "count"
    summary = "static instruction counts per kernel and block (and dynamic counters with a launch)"
    csv: str = "kernels"
    values = {"csv": CSV_TABLES}

    def __post_init__(self):
        if self.csv not in CSV_TABLES:
            raise ValueError(f"option 'csv' must be one of {', '.join(CSV_TABLES)}; got '{self.csv}'")

    def run(self, module, am) -> PassResult:
        if am.options.get("by") == "source":           # refuse before the launch runs
            from ptxc.report.source_views import require_lines
            require_lines(module)
        report = count_report(module, am)
        fmt = am.options.get("format", "text")
        if fmt == "csv":
            text = render_memory_csv(report) if self.csv == "memory" else \
                value_profile_csv(module) if self.csv == "values" else render_csv(report)
        else:
            text = render_text(report) + memcheck_text(module) + hazards_text(module) + \
                value_profile_text(module)
        if am.options.get("by") == "source":           # docs/report.md
            from ptxc.report.source_views import count_view
            view = count_view(report, module, fmt)
            text = view if fmt == "csv" else text + view
        data = _strip_private(report)
        return PassResult(self.name, text, data, ALL)


def memcheck_text(module) -> str:
    """The memcheck report of a ``--check memcheck`` launch ('' otherwise; docs/check.md)."""
    mc = (module.attrs.get("launch_profile") or {}).get("memcheck")
    if not mc:
        return ""
    from ptxc.check.memcheck import sanitizer_text
    from ptxc.launcher.access_errors import MemcheckError
    errors = [MemcheckError(**{**e, "block": tuple(e["block"]), "thread": tuple(e["thread"])})
              for e in mc["errors"]]
    return "\n" + sanitizer_text(errors, mc["error_count"])


def hazards_text(module) -> str:
    """The racecheck / synccheck reports of a ``--check`` launch (docs/check.md)."""
    from ptxc.check.hazards import profile_text
    return profile_text(module.attrs.get("launch_profile"))


def value_profile_text(module) -> str:
    """The value profile of a ``--value-profile`` launch ('' otherwise;
    docs/value-profile.md)."""
    dyn = module.attrs.get("launch_profile") or {}
    vp = dyn.get("value_profile")
    if not vp:
        return ""
    from ptxc.valueprof.tables import rows_text
    return "\n" + rows_text(vp["instructions"], vp["summary"], dyn.get("kernel", ""))


def value_profile_csv(module) -> str:
    """``count{csv=values}``: one row per instruction and destination
    register of a ``--value-profile`` launch (a header alone otherwise)."""
    from ptxc.valueprof.tables import csv_text
    vp = (module.attrs.get("launch_profile") or {}).get("value_profile")
    return csv_text(vp["instructions"] if vp else [])


def _strip_private(report: dict) -> dict:
    for fc in report["functions"].values():
        fc.pop("csv_dynamic", None)
    return report
