"""The memory part of the count report (a launch with memory counters):
the launch totals named as nvprof names them, the distribution of sectors
per global request (SASSI's PMF), and the memory instructions ranked worst
first (ptxc.passes.count.memory_ranking), as text lines or as CSV rows (``count{csv=memory}``).
docs/count.md shows the layout; docs/metrics.md defines every number.
"""
from __future__ import annotations

import csv
import io

from ptxc.passes.count.memory_ranking import ROW_KEYS

CSV_MEMORY_COLUMNS = ("file", "kernel", "mode") + ROW_KEYS + ("source_file", "source_line")
SOURCE_KEYS = ("source_file", "source_line")    # CUDA location (docs/report.md); empty without .loc
TABLE = (("rank", "rank"), ("line", "line"), ("instr", None), ("opcode", "opcode"),
         ("space", "space"), ("requests", "requests"), ("transactions", "transactions"),
         ("tx/req", "transactions_per_request"), ("eff%", "efficiency"),
         ("conflicts", "bank_conflicts"), ("addresses", "addresses"), ("wasted B", "wasted_bytes"))


def memory_text(dyn: dict | None) -> list[str]:
    """Text lines of the memory counters of a profile dict (none when off)."""
    if not dyn or not dyn.get("memory_counters"):
        return []
    totals = dyn["memory"]
    lines = [f"  memory counters ({dyn.get('mode', '?')} run, shared banks of "
             f"{totals['shared_bank_bytes']} bytes):"]
    for key, value in totals.items():
        if not isinstance(value, list) and key != "shared_bank_bytes":
            lines.append(f"    {key} = {_fmt(value)}")
    for prefix, what in (("gld", "global loads"), ("gst", "global stores")):
        pmf = _pmf(totals[f"{prefix}_sectors_hist"])
        if pmf:
            lines.append(f"    sectors per request, {what} (PMF): {pmf}")
    rows = dyn.get("memory_ranking") or []
    lines.append("  memory instructions, worst first (wasted bytes = moved - requested):")
    if not rows:
        return lines + ["    (none executed)"]
    return lines + ["    " + line for line in _table(rows)]


def _pmf(hist: list) -> str:
    n = sum(hist)
    return "  ".join(f"{k + 1}: {v / n:.3f}" for k, v in enumerate(hist) if v) if n else ""


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _table(rows: list[dict]) -> list[str]:
    cells = [[head for head, _ in TABLE]]
    for r in rows:
        cells.append([f"{r['function']}:{r['index']}" if key is None else _fmt(r[key])
                      for _, key in TABLE])
    widths = [max(len(c[i]) for c in cells) for i in range(len(TABLE))]
    return ["  ".join(c.ljust(w) if i in (2, 3, 4) else c.rjust(w)
                      for i, (c, w) in enumerate(zip(row, widths))).rstrip() for row in cells]


def render_memory_csv(report: dict) -> str:
    """One row per ranked memory instruction of each launched kernel."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_MEMORY_COLUMNS)
    for name, fc in report["functions"].items():
        dyn = fc.get("dynamic") or {}
        for r in dyn.get("memory_ranking") or []:
            w.writerow([report["file"], name, dyn.get("mode")]
                       + ["" if r.get(k) is None else r[k] for k in ROW_KEYS + SOURCE_KEYS])
    return buf.getvalue()
