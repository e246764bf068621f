"""Rendering of a ModuleProfile (ptxc/module_profile.py): text, CSV, JSON.

Text: one row per kernel (its launch and the main counters of METRICS.md),
the module total, then which launches were inferred (PTX line and constant),
which kernels were not launched and why, and where the time went.

CSV: the count pass's columns (HyPA's, docs/count.md; built by
``passes.count.csv_dynamic`` and ``passes.count_render.render_csv``), one
row per kernel, followed by ``grid``, ``block``, ``launch`` (explicit /
inferred), ``status`` and ``note`` (the inferred launch's source or the
reason a kernel did not run), and a last row ``(module total)``.

JSON: ``{"file", "mode", "kernels": [...], "total": {...}, "timings": {...}}``
with each kernel's full profile (``Profile.to_dict()``).
"""
from __future__ import annotations

import json

from .module_profile import RAN

TOTAL_NAME = "(module total)"
EXTRA_COLUMNS = ("grid", "block", "launch", "status", "note")


def dims_text(d) -> str:
    return "x".join(str(x) for x in d) if d else ""


def note_of(row) -> str:
    if row.status == RAN and row.inferred is not None:
        return "inferred from " + row.inferred.explain()
    return row.reason


def flops(prof) -> int:
    return (prof.flop_count_sp + prof.flop_count_dp + prof.flop_count_hp
            + prof.flop_count_sp_special)


# ------------------------------------------------------------------- text
TEXT_HEADER = ("kernel", "launch", "grid", "block", "inst", "slice%", "inst_executed",
               "thread_inst", "br_eff%", "div_br", "flops", "ms")


def text_row(row) -> list[str]:
    p = row.profile
    if p is None:
        return [row.kernel, row.status, dims_text(row.grid), dims_text(row.block)] + [""] * 8
    sf = "" if p.slice_fraction is None else f"{100 * p.slice_fraction:.1f}"
    return [row.kernel, row.source, dims_text(row.grid), dims_text(row.block), str(p.static_inst),
            sf, str(p.inst_executed), str(p.thread_inst_executed), f"{p.branch_efficiency:.2f}",
            str(p.divergent_branch), str(flops(p)), f"{1000 * row.seconds:.1f}"]


def total_row(mp) -> list[str]:
    t = mp.total()
    fl = sum(t[k] for k in ("flop_count_sp", "flop_count_dp", "flop_count_hp",
                            "flop_count_sp_special"))
    ms = sum(r.seconds for r in mp.ran)
    return [f"total ({t['kernels_run']} of {t['kernels']} ran)", "", "", "", "", "",
            str(t["inst_executed"]), str(t["thread_inst_executed"]),
            f"{t['branch_efficiency']:.2f}", str(t["divergent_branch"]), str(fl), f"{1000 * ms:.1f}"]


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [("  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(r, widths)))).rstrip() for r in rows]


def render_text(mp) -> str:
    lines = [f"profile {mp.module.filename}: {len(mp.rows)} kernels, {mp.mode} runs"]
    lines += table([list(TEXT_HEADER)] + [text_row(r) for r in mp.rows] + [total_row(mp)])
    inferred = [r for r in mp.rows if r.source == "inferred"]
    if inferred:
        lines.append(f"inferred launches ({len(inferred)}):")
        lines += [f"  {r.kernel}: {r.inferred.explain()}" for r in inferred]
    for status, title in (("not launched", "not launched"), ("error", "errors")):
        rows = [r for r in mp.rows if r.status == status]
        if rows:
            lines.append(f"{title} ({len(rows)}):")
            lines += [f"  {r.kernel}: {r.reason}" for r in rows]
    lines.append("time: " + timings_text(mp.timings))
    return "\n".join(lines) + "\n"


def timings_text(t: dict) -> str:
    order = ("parse", "slice", "infer", "codegen", "llvm", "launches")
    return ", ".join(f"{k} {t[k]:.3f} s" for k in order if k in t)


# -------------------------------------------------------------------- csv
def count_report(mp) -> dict:
    """The count pass's report restricted to the profiled kernels, with each
    row's dynamic columns and a last pseudo-kernel holding the totals."""
    from .passes.count import csv_dynamic, module_header
    from .passes.count_static import module_counts
    report = {**module_header(mp.module), **module_counts(mp.module)}
    functions = {}
    for row in mp.rows:
        fc = report["functions"][row.kernel]
        if row.profile is not None:
            fc["csv_dynamic"] = csv_dynamic(row.kernel, fc, row.profile.to_dict(), row.seconds)
        fc.update(grid=dims_text(row.grid), block=dims_text(row.block), launch=row.source,
                  status=row.status, note=note_of(row))
        functions[row.kernel] = fc
    functions[TOTAL_NAME] = total_counts(mp, list(functions.values()))
    report["functions"] = functions
    return report


def total_counts(mp, fcs: list) -> dict:
    """Static counts summed over the rows, dynamic columns over the kernels that ran."""
    from .passes.count_static import empty_counts, finish, merge
    total = empty_counts()
    for fc in fcs:
        merge(total, fc)
    total = finish(total, any("slice_inst" in fc for fc in fcs))
    t = mp.total()
    dyn = [fc["csv_dynamic"] for fc in fcs if "csv_dynamic" in fc]
    summed = {k: sum(d.get(k) or 0 for d in dyn)
              for k in ("dynamic_inst", "dynamic_fp_inst", "executed_inst", "divergent_branch")}
    summed["threads"] = t["threads"]
    summed["branch_efficiency"] = t["branch_efficiency"]
    summed["duration_ms"] = round(sum(d.get("duration_ms") or 0 for d in dyn), 3)
    if "slice_inst" in total and summed["dynamic_inst"]:
        summed["percent_executed"] = round(100 * summed["executed_inst"] / summed["dynamic_inst"], 3)
    return {"kernel": True, **total, "blocks": [], "csv_dynamic": summed,
            "status": f"{t['kernels_run']} of {t['kernels']} ran"}


def render_csv(mp) -> str:
    from .passes.count_render import CSV_COLUMNS, render_csv as count_csv
    return count_csv(count_report(mp), CSV_COLUMNS + EXTRA_COLUMNS)


# ------------------------------------------------------------------- json
def to_dict(mp) -> dict:
    kernels = []
    for r in mp.rows:
        k = {"kernel": r.kernel, "status": r.status,
             "launch": {"source": r.source, "grid": list(r.grid) if r.grid else None,
                        "block": list(r.block) if r.block else None,
                        "inferred_from": r.inferred.to_dict() if r.inferred else None}}
        if r.reason:
            k["reason"] = r.reason
        if r.profile is not None:
            k["seconds"] = round(r.seconds, 6)
            k["profile"] = r.profile.to_dict()
        kernels.append(k)
    return {"file": mp.module.filename, "mode": mp.mode, "kernels": kernels,
            "total": mp.total(), "timings": {k: round(v, 6) for k, v in mp.timings.items()}}


def render_json(mp) -> str:
    return json.dumps(to_dict(mp), indent=2) + "\n"


def render(mp, fmt: str) -> str:
    return {"text": render_text, "csv": render_csv, "json": render_json}[fmt](mp)
