"""Value profiles as tables: merged over the launches of a kernel, as text
and as CSV (docs/value-profile.md; SASSI's case study III, Stephenson et al.,
"Flexible Software Profiling of GPU Architectures", ISCA 2015, Table 2).

A launch's value profile (``Profile.value_profile``) is
``{"instructions": {key: entry}, "summary": {...}}`` where an entry holds,
for one destination register of one instruction (results_value.py):
``ones`` / ``zeros`` (the bits seen 1 / seen 0 over every executing lane),
``writes`` (warp-level), ``scalar_writes`` and ``lanes`` (thread-level).
Profiles of several launches of a kernel merge entry by entry (``merge``):
the masks are OR-ed and the counts summed, so a kernel's summary covers
all its launches, as SASSI's profile covers a whole program run. The
entries and the summary of one launch are ptxc/launcher/value_profile.py.
"""
from __future__ import annotations

from ptxc.launcher.value_profile import make, rows, summary_lines


def merge(profiles) -> dict:
    """One value profile of several launches of one kernel (masks OR-ed,
    counts summed)."""
    out: dict = {}
    for vp in profiles:
        for key, e in vp["instructions"].items():
            m = out.setdefault(key, {**e, "ones": 0, "zeros": 0, "writes": 0,
                                     "scalar_writes": 0, "lanes": 0})
            m["ones"] |= e["ones"]
            m["zeros"] |= e["zeros"]
            for k in ("writes", "scalar_writes", "lanes"):
                m[k] += e[k]
    return make(out)


def text(vp: dict, kernel: str = "") -> str:
    """The per-instruction table and the summary."""
    return rows_text(rows(vp), vp["summary"], kernel)


def rows_text(table: list, summary: dict, kernel: str = "") -> str:
    """``text`` of rows already flattened (``Profile.to_dict()``'s form)."""
    lines = [f"value profile{' of ' + kernel if kernel else ''} "
             "(mask: most significant bit first; 1/0 constant, T varies, X never written)"]
    lines.append(f"  {'function':20s} {'line':>5}  {'opcode':18s} {'register':9s} "
                 f"{'scalar/writes':>15}  mask")
    for r in table:
        lines.append(f"  {r['function'][:20]:20s} {str(r['line'] or '-'):>5}  {r['opcode'][:18]:18s} "
                     f"{r['register'][:9]:9s} {str(r['scalar_writes']) + '/' + str(r['writes']):>15}  "
                     f"{r['mask']}" + (f"  {r['source']}" if r.get("source") else ""))
    lines += summary_lines(summary)
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("function", "index", "line", "opcode", "register", "bits", "mask",
               "constant_bits", "scalar_writes", "writes", "lanes", "source")


def csv_text(table: list) -> str:
    """The rows as CSV (``CSV_COLUMNS``; header first)."""
    import csv
    import io
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in table:
        w.writerow([r[c] for c in CSV_COLUMNS])
    return out.getvalue()
