"""What a run measured: the nvprof-style summary and the SQLite report.

Every launch is a server.LaunchRecord holding its Profile. The columns are
driven by ptxc.launcher.profile.TOTALS (summed over launches) and
ptxc.launcher.profile.DERIVED (computed per launch, and for a kernel from the summed
totals by the Profile's own properties), read when a report is made, so a
counter added to the Profile becomes a column of every table here without
editing this file.

SQLite tables (docs/runtime.md has the schema): ``meta`` (key, value),
``launches`` (one row per launch; ``graph``: the cudaGraphLaunch that ran
it; ``parent``: for a grid a kernel launched, the id of the launch whose
grid launched it), ``kernels`` (aggregated per kernel: per (name, module), never per name
alone, runtime/kernel_keys.py),
``branches`` (per launch and conditional branch: SASSI's numbers). With
``ptxc run --memory-counters`` the launches and kernels get the memory
totals as columns (docs/metrics.md) and ``memory_instructions`` has one row
per launch, memory instruction and space. The time table and the time
columns follow ``ptxc run --clock`` (gpu_time.py: ``gpu_s`` is the modelled
GPU time).
"""
from __future__ import annotations

import csv
import io
import json

from ptxc.launcher import profile
from ptxc.check import memcheck as memcheck_report
from ptxc.report import source_views
from ptxc.valueprof import run_report as vpr
from ptxc.launcher.results_memory import RATIOS, add_ratios, scalar_totals
from ptxc.report.sqlite_tables import new_database, table as _table

from ptxc.report import kernel_names as kernel_keys
from ptxc.report.kernel_names import demangle

from . import gpu_time

TIME_COLUMNS = ("wall_s", "compile_s", "run_s", "gpu_s")   # gpu_s: --clock model (gpu_time.py)


# ------------------------------------------------------------- rows
def launch_row(r) -> dict:
    p = r.profile
    row = {"id": r.id, "kernel": r.kernel, "module": r.module,
           "grid_x": r.grid[0], "grid_y": r.grid[1], "grid_z": r.grid[2],
           "block_x": r.block[0], "block_y": r.block[1], "block_z": r.block[2],
           "shared_bytes": r.shared_bytes, "stream": r.stream, "graph": graph_of(r),
           "parent": getattr(r, "parent", 0) or None, "mode": r.mode}
    row.update((k, getattr(p, k)) for k in profile.TOTALS)
    row.update((k, float(getattr(p, k))) for k in profile.DERIVED)
    row["static_inst"] = p.static_inst
    row["slice_fraction"] = p.slice_fraction
    row["wall_s"] = r.wall_s
    row["compile_s"] = r.compile_s
    row["run_s"] = float(p.timings.get("run", 0.0))
    row["gpu_s"] = gpu_time.launch_gpu_s(r)
    if p.memory_counters:
        row.update(scalar_totals(p.memory))
    return row


def graph_of(r):
    """The number of the cudaGraphLaunch that ran launch ``r`` (1, 2, ...
    over the run), None when the application launched it itself."""
    return getattr(r, "graph", 0) or None


def memory_totals(rs) -> dict:
    """The memory totals of several launches of one kernel: integer sums and
    the ratios derived from them ({} without memory counters)."""
    mems = [r.profile.memory for r in rs if r.profile.memory_counters]
    if not mems:
        return {}
    total = {k: sum(m[k] for m in mems) for k, v in scalar_totals(mems[0]).items()
             if k not in RATIOS and k != "shared_bank_bytes"}
    total["shared_bank_bytes"] = mems[0]["shared_bank_bytes"]
    add_ratios(total)
    return {k: total[k] for k in scalar_totals(mems[0])}


def kernel_rows(launches) -> list[dict]:
    """One row per kernel, i.e. per (name, module) (in order of first
    launch), totals summed."""
    rows = []
    for (kernel, module), rs in kernel_keys.group(launches).items():
        total = profile.Profile(kernel=kernel, mode=rs[0].mode, grid=(0, 0, 0), block=(0, 0, 0))
        for k in profile.TOTALS:
            setattr(total, k, sum(getattr(r.profile, k) for r in rs))
        walls = [r.wall_s for r in rs]
        row = {"kernel": kernel, "module": module, "launches": len(rs),
               "graph_launches": sum(1 for r in rs if graph_of(r))}
        row.update((k, getattr(total, k)) for k in profile.TOTALS)
        row.update((k, float(getattr(total, k))) for k in profile.DERIVED)
        row.update({"wall_s": sum(walls), "wall_avg_s": sum(walls) / len(walls),
                    "wall_min_s": min(walls), "wall_max_s": max(walls),
                    "compile_s": sum(r.compile_s for r in rs)})
        row.update(gpu_time.kernel_columns(rs))     # run_s, gpu_*: ptxc run --clock
        row.update(memory_totals(rs))
        row.update(vpr.kernel_columns(rs))          # --value-profile (docs/value-profile.md)
        rows.append(row)
    return rows


MEMORY_INSTR_COLUMNS = ("requests", "transactions", "lines", "requested_bytes",
                        "transactions_per_request", "efficiency", "ideal_transactions",
                        "bank_conflicts", "addresses", "addresses_per_request")


def memory_instruction_rows(launches) -> list[dict]:
    """One row per launch, measured memory instruction and space."""
    rows = []
    for r in launches:
        for e in r.profile.per_memory_instr.values():
            for part in ("global", "shared"):
                if part not in e:
                    continue
                row = {"launch_id": r.id, "kernel": r.kernel, "module": r.module,
                       "function": e["function"],
                       "index": e["index"], "line": e["line"], "opcode": e["opcode"],
                       "kind": e["kind"], "space": part}
                row.update((c, e[part].get(c)) for c in MEMORY_INSTR_COLUMNS)
                row.update(source_views.memory_columns(r, e))
                rows.append(row)
    return rows


def branch_rows(launches) -> list[dict]:
    rows = []
    for r in launches:
        for key, b in r.profile.per_branch.items():
            function, _, block = key.partition(":")
            rows.append({"launch_id": r.id, "kernel": r.kernel, "module": r.module,
                         "function": function,
                         "block": block, **b, **source_views.branch_columns(r, key)})
    return rows


# ------------------------------------------------------------ SQLite
def _memory_template(launches) -> dict:
    """The memory columns (empty when no launch collected memory counters)."""
    first = next((r.profile.memory for r in launches if r.profile.memory_counters), None)
    if first is None:
        return {}
    return {k: (0.0 if k in RATIOS else 0) for k in scalar_totals(first)}


def _template_launch(launches=()) -> dict:
    t = {"id": 0, "kernel": "", "module": "", "grid_x": 0, "grid_y": 0, "grid_z": 0,
         "block_x": 0, "block_y": 0, "block_z": 0, "shared_bytes": 0, "stream": 0, "graph": 0,
         "parent": 0, "mode": ""}
    t.update((k, 0) for k in profile.TOTALS)
    t.update((k, 0.0) for k in profile.DERIVED)
    t.update({"static_inst": 0, "slice_fraction": 0.0})
    t.update((k, 0.0) for k in TIME_COLUMNS)
    t.update(_memory_template(launches))
    return t


def _template_kernel(launches=()) -> dict:
    t = {"kernel": "", "module": "", "launches": 0, "graph_launches": 0}
    t.update((k, 0) for k in profile.TOTALS)
    t.update((k, 0.0) for k in profile.DERIVED)
    t.update({"wall_s": 0.0, "wall_avg_s": 0.0, "wall_min_s": 0.0, "wall_max_s": 0.0,
              "compile_s": 0.0})
    t.update(gpu_time.KERNEL_TEMPLATE)
    t.update(_memory_template(launches))
    t.update(vpr.column_template(launches))
    return t


BRANCH_TEMPLATE = {"launch_id": 0, "kernel": "", "module": "", "function": "", "block": "",
                   "line": 0,
                   "warp_execs": 0, "active": 0, "taken": 0, "not_taken": 0, "divergent": 0,
                   "source_file": "", "source_line": 0}
MEMORY_INSTR_TEMPLATE = {"launch_id": 0, "kernel": "", "module": "", "function": "", "index": 0,
                         "line": 0,
                         "opcode": "", "kind": "", "space": "",
                         **{c: (0.0 if "_per_" in c or c == "efficiency" else 0)
                            for c in MEMORY_INSTR_COLUMNS}, "source_file": "", "source_line": 0}


def write_sqlite(path: str, launches, meta: dict) -> None:
    """Write the report (an existing file is replaced)."""
    db = new_database(path, meta)
    try:
        _table(db, "launches", [launch_row(r) for r in launches], _template_launch(launches),
               key="id")
        _table(db, "kernels", kernel_rows(launches), _template_kernel(launches))
        _table(db, "branches", branch_rows(launches), BRANCH_TEMPLATE)
        _table(db, "source_lines", source_views.source_line_rows(launches),
               source_views.SOURCE_LINE_TEMPLATE)
        if any(r.profile.memory_counters for r in launches):
            _table(db, "memory_instructions", memory_instruction_rows(launches),
                   MEMORY_INSTR_TEMPLATE)
        if memcheck_report.checked(launches):          # --on-error=continue (docs/check.md)
            _table(db, "errors", memcheck_report.error_rows(launches),
                   memcheck_report.ERROR_TEMPLATE)
        if vpr.profiled(launches):                     # --value-profile (docs/value-profile.md)
            _table(db, "value_profile", vpr.summary_rows(launches), vpr.SUMMARY_TEMPLATE)
            _table(db, "value_profile_instructions", vpr.instruction_rows(launches),
                   vpr.INSTR_TEMPLATE)
        db.commit()
    finally:
        db.close()


# ----------------------------------------------------------- summary
def _num(v) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def stop_line(meta: dict) -> str:
    """'the run stopped in kernel K (...)' when ptxc stopped the application
    in a kernel (``meta['stopped']``: the rendered error), else ''."""
    import re
    stopped = meta.get("stopped")
    if not stopped:
        return ""
    found = re.search(r"error: kernel (.+?), CTA \(", stopped)
    where = f"in kernel {demangle([found.group(1)])[found.group(1)]}" if found else ""
    done = meta.get("launches")
    return (f"the run stopped {where} (the error above); "
            f"{'no' if not done else done} earlier launch{'es' if done != 1 else ''} completed"
            f"{'' if not done else ', reported below'}").replace("stopped  (", "stopped (")


def interrupt_text(meta: dict) -> str:
    """'interrupted (SIGINT) during launch 4 (kernel K), which is not
    counted; 3 earlier launches completed' when Ctrl-C or SIGTERM ended the
    run (``meta['interrupted']``), else ''."""
    signal = meta.get("interrupted")
    if not signal:
        return ""
    done = meta.get("launches") or 0
    kernel = meta.get("interrupted_kernel")
    if kernel:
        return (f"interrupted ({signal}) during launch {done + 1} (kernel "
                f"{demangle([kernel])[kernel]}), which is not counted; "
                f"{done or 'no'} earlier launch{'' if done == 1 else 'es'} completed")
    return (f"interrupted ({signal}) between launches; "
            f"{done or 'no'} launch{'' if done == 1 else 'es'} completed")


def summary_text(launches, meta: dict) -> str:
    tag = f"=={meta.get('pid', 0)}=="
    lines = [f"{tag} ptxc profiling result: {meta.get('application', '?')} "
             f"(mode {meta.get('mode')}, GPU {meta.get('gpu')}, {len(launches)} launches)"]
    kernels = kernel_rows(launches)
    stop = stop_line(meta)
    if stop:
        lines.append(f"{tag} {stop}")
    interrupt = interrupt_text(meta)
    if interrupt:
        lines.append(f"{tag} {interrupt}{', reported below' if launches else ''}")
        stop = interrupt
    if not kernels:
        if not stop:
            lines.append(f"{tag} no kernel was launched")
        return "\n".join(lines) + "\n"
    groups = kernel_keys.group(launches)
    readable = kernel_keys.labels(groups)
    lines += gpu_time.time_lines(tag, kernels, readable, meta, groups)   # --clock model|host
    lines.append(f"{tag} Metric result:")
    lines.append(f"{'Invocations':>11}  {'Metric Name':<32}  {'Min':>14}  {'Max':>14}  {'Avg':>16}")
    for k in kernels:
        rs = groups[k["kernel"], k["module"]]
        lines.append(f"Kernel: {readable[k['kernel'], k['module']]}{graph_note(rs)}{device_note(rs)}")
        for name, vals, percent in _metric_values(rs):
            lines.append(_metric_line(len(rs), name, vals, percent))
    text = "\n".join(lines) + "\n"
    if memcheck_report.checked(launches):
        text += f"{tag} Memory errors (--on-error=continue):\n" + memcheck_report.launches_text(launches)
    if vpr.profiled(launches):
        text += f"{tag} " + vpr.summary_text(launches, readable)
    return text


def graph_note(rs) -> str:
    """' (2 of 3 launches by cudaGraphLaunch 1-2)' for a kernel's launches
    that graph launches ran ('' when none did)."""
    numbers = sorted({graph_of(r) for r in rs if graph_of(r)})
    if not numbers:
        return ""
    n = sum(1 for r in rs if graph_of(r))
    spans, start = [], numbers[0]
    for a, b in zip(numbers, numbers[1:] + [None]):
        if b != a + 1:
            spans.append(str(a) if a == start else f"{start}-{a}")
            start = b
    return (f" ({n} of {len(rs)} launch{'es' if len(rs) != 1 else ''} by cudaGraphLaunch "
            f"{', '.join(spans)})")


def device_note(rs) -> str:
    """' (3 of 4 launches by the device)' for a kernel launched by kernels
    (dynamic parallelism; '' when none was)."""
    n = sum(1 for r in rs if getattr(r, "parent", 0))
    if not n:
        return ""
    return f" ({n} of {len(rs)} launch{'es' if len(rs) != 1 else ''} by the device)"


def _metric_values(rs):
    """(name, per-launch values, is a percentage) of every metric of a kernel's
    launches; memory ratios skip the launches where they are undefined."""
    for name in profile.TOTALS + profile.DERIVED:
        yield name, [getattr(r.profile, name) for r in rs], name in profile.DERIVED
    mems = [r.profile.memory for r in rs if r.profile.memory_counters]
    for name in (scalar_totals(mems[0]) if mems else ()):
        if name == "shared_bank_bytes":
            continue
        vals = [m[name] for m in mems if m[name] is not None]
        if vals:
            yield name, vals, name.endswith("efficiency")


def _metric_line(n: int, name: str, vals: list, percent: bool) -> str:
    avg = sum(vals) / len(vals)
    if percent:
        lo, hi, avg_text = f"{min(vals):.2f}%", f"{max(vals):.2f}%", f"{avg:.2f}%"
    else:
        lo, hi = _num(min(vals)), _num(max(vals))
        avg_text = str(int(avg)) if float(avg).is_integer() else f"{avg:.2f}"
    return f"{n:>11}  {name:<32}  {lo:>14}  {hi:>14}  {avg_text:>16}"


def summary_csv(launches, meta: dict) -> str:
    rows = kernel_rows(launches)
    out = io.StringIO()
    cols = list(_template_kernel(launches))
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([r[c] for c in cols])
    return out.getvalue()


def summary_json(launches, meta: dict) -> str:
    doc = {"meta": meta, "kernels": kernel_rows(launches),
           "launches": [launch_row(r) for r in launches]}
    if memcheck_report.checked(launches):
        doc["memcheck"] = memcheck_report.launches_json(launches)
    if vpr.profiled(launches):
        doc["value_profile"] = vpr.summary_json(launches)
    return json.dumps(doc, indent=2, default=list) + "\n"


FORMATS = {"text": summary_text, "csv": summary_csv, "json": summary_json}
