"""Rendering of the count report: a text table per function, or CSV rows.

Text: per function, one row per basic block and a total row, then the module
total. CSV: one row per kernel, with HyPA's module-level columns first (see
docs/count.md for the mapping of HyPA's column names to ours).
"""
from __future__ import annotations

import csv
import io

from ptxc.ir.opcodes import CLASSES

from ptxc.passes.count.memory_table import memory_text
from ptxc.passes.count.static import FLOP_KEYS

_SHORT = {"integer": "int", "fp32": "f32", "fp64": "f64", "fp16": "f16", "tensor": "tc",
          "load": "ld", "store": "st", "atomic": "atom", "control": "ctl", "barrier": "bar",
          "special": "sfu", "conversion": "cvt", "move": "mov", "other": "oth"}

CSV_COLUMNS = (
    "file", "ptx_version", "target", "address_size", "file_instructions", "kernels",
    "kernel", "threads", "static_inst", "slice_inst", "slice_fraction", "dynamic_inst",
    "fp_inst", "dynamic_fp_inst", "executed_inst", "percent_executed", "divergent_branch",
    "branch_efficiency", "duration_ms", "branch", "cond_branch",
) + tuple(f"class_{c}" for c in CLASSES) + FLOP_KEYS


def _row(name: str, c: dict, sliced: bool) -> list[str]:
    cells = [name, str(c["static_inst"])]
    if sliced:
        cells.append(str(c.get("slice_inst", 0)))
    cells += [str(c["classes"][k]) for k in CLASSES]
    cells += [str(c["flops_total"]), str(c["branch"]), str(c["cond_branch"])]
    return cells


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        first = r[0].ljust(widths[0])
        rest = "  ".join(cell.rjust(w) for cell, w in zip(r[1:], widths[1:]))
        out.append(("  " + first + "  " + rest).rstrip())
    return out


def _header(sliced: bool) -> list[str]:
    return (["block", "inst"] + (["slice"] if sliced else [])
            + [_SHORT[c] for c in CLASSES] + ["flops", "br", "cbr"])


def function_text(name: str, fc: dict) -> list[str]:
    sliced = "slice_inst" in fc
    kind = "kernel" if fc["kernel"] else "func"
    lines = [f"count {kind} @{name}: {fc['static_inst']} instructions"
             + (f", {fc['slice_inst']} in the slice ({100 * fc['slice_fraction']:.1f}%)"
                if sliced else "")]
    rows = [_header(sliced)] + [_row(b["block"], b, sliced) for b in fc["blocks"]]
    rows.append(_row("total", fc, sliced))
    lines += _table(rows)
    lines.append("  " + _detail(fc))
    return lines


def _detail(c: dict) -> str:
    flops = " ".join(f"{k}={c['flops'][k]}" for k in FLOP_KEYS)
    mem = " ".join(f"{k}={v}" for k, v in c["memory"].items()) or "none"
    return f"memory: {mem}; static flops: {flops}"


def dynamic_text(name: str, dyn: dict | None, note: str | None) -> list[str]:
    if note:
        return [f"  dynamic: {note}"]
    if not dyn:
        return []
    lines = [f"  dynamic counters ({dyn.get('mode', '?')} run):"]
    for key, value in dyn.items():
        if isinstance(value, (int, float, str)) and key != "mode":
            lines.append(f"    {key} = {value}")
    return lines + device_launch_text(dyn.get("device_launches") or [])


def device_launch_text(rows: list) -> list[str]:
    """The grids the launch's kernels launched (dynamic parallelism), one
    line each in the order they ran (Profile.device_launch_rows)."""
    if not rows:
        return []
    lines = [f"  device-side launches: {len(rows)} grids, each a launch of its own, in run order "
             f"(parent -1: the launch above):"]
    for k, r in enumerate(rows):
        dims = "x".join(map(str, r["grid"])) + ", " + "x".join(map(str, r["block"]))
        lines.append(f"    [{k}] {r['kernel']}<<<{dims}, {r['shared_bytes']}>>> {r['stream']}, "
                     f"parent {r['parent']}, depth {r['depth']}: inst_executed = {r['inst_executed']}, "
                     f"thread_inst_executed = {r['thread_inst_executed']}, "
                     f"divergent_branch = {r['divergent_branch']}")
    return lines


def render_text(report: dict) -> str:
    lines = []
    for name, fc in report["functions"].items():
        lines += function_text(name, fc)
        lines += dynamic_text(name, fc.get("dynamic"), fc.get("dynamic_note"))
        lines += memory_text(fc.get("dynamic"))
    t = report["total"]
    lines.append(f"count module {report['file']}: {t['functions']} functions "
                 f"({t['kernels']} kernels), {t['static_inst']} instructions, "
                 f"{t['fp_inst']} fp, {t['branch']} branches ({t['cond_branch']} conditional)")
    lines.append("  " + _detail(t))
    if report.get("note"):
        lines.append(f"  note: {report['note']}")
    return "\n".join(lines) + "\n" + printf_text(report)


def printf_text(report: dict) -> str:
    """The launch's device printf output, after the report (docs/launch.md)."""
    out = []
    for name, fc in report["functions"].items():
        dyn = fc.get("dynamic") or {}
        grids = [(name, dyn.get("printf") or [])] + [
            (f"{name}'s device-side launch [{k}] {row['kernel']}", row.get("printf") or [])
            for k, row in enumerate(dyn.get("device_launches") or [])]
        for who, records in grids:
            if records:
                out.append(f"--- device printf output of {who} ({len(records)} records) ---\n")
                out.extend(r.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                           for r in records)
    return "".join(out)


def render_csv(report: dict, columns: tuple = CSV_COLUMNS) -> str:
    """One row per kernel; ``columns`` past CSV_COLUMNS are read from the
    function's entry (``ptxc profile`` adds its launch columns that way)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for name, fc in report["functions"].items():
        if fc["kernel"]:
            w.writerow([_csv_value(report, name, fc, col) for col in columns])
    return buf.getvalue()


def _csv_value(report: dict, name: str, fc: dict, col: str):
    t = report["total"]
    dyn = fc.get("csv_dynamic") or {}
    module_cols = {"file": report["file"], "ptx_version": report["ptx_version"],
                   "target": report["target"], "address_size": report["address_size"],
                   "file_instructions": t["static_inst"], "kernels": t["kernels"],
                   "kernel": name}
    if col in module_cols:
        return module_cols[col]
    if col.startswith("class_"):
        return fc["classes"][col[6:]]
    if col in FLOP_KEYS:
        return fc["flops"][col]
    if col in dyn:
        return "" if dyn[col] is None else dyn[col]
    value = fc.get(col, "")
    return "" if value is None else value
