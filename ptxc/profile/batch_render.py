"""Rendering of a batch of module profiles (ptxc/profile/batch.py): text,
CSV, JSON (docs/profile.md, "Many modules").

Every format has one row per kernel with its file, each module's total (as
``ptxc profile FILE`` computes it, module_render.py), a row for a
module that failed, and a grand total over the modules: the METRICS.md
counters summed, ``branch_efficiency`` and ``warp_execution_efficiency``
recomputed from the sums (as ``ModuleProfile.total`` does for one module).
The rows are the workers' plain data (``profile_batch.module_result``), so
the output depends only on the results, in input order. A batch stopped by
Ctrl-C or SIGTERM (``interrupted``: the signal's name) reports the modules
that finished; each of the others is marked as not profiled
(``batch.interrupted_result``), and the text says so after its first line.
"""
from __future__ import annotations

import csv
import io
import json

GRAND = "(grand total)"
MODULE_FAILED = "(module failed)"
MODULE_INTERRUPTED = "(not profiled: interrupted)"


def ok(results) -> list[dict]:
    return [r for r in results if r["error"] is None]


def stopped(results) -> list[dict]:
    """The modules an interrupt kept from being profiled (batch.interrupted_result)."""
    return [r for r in results if r.get("interrupted")]


def interrupt_text(results, signal: str) -> str:
    """'interrupted (SIGINT): 2 of 5 modules profiled; 3 not profiled (2 were
    running)'."""
    left = stopped(results)
    running = sum(r["interrupted"] == "running" for r in left)
    return (f"interrupted ({signal}): {len(results) - len(left)} of {len(results)} modules "
            f"profiled; {len(left)} not profiled"
            + (f" ({running} {'was' if running == 1 else 'were'} running)" if running else ""))


# ------------------------------------------------------------ totals
def grand_total(results) -> dict:
    """The sum of the module totals; the two efficiencies from the sums."""
    from ptxc.launcher.profile import TOTALS
    from ptxc.profile.module_profile import add_efficiencies
    totals = [r["json"]["total"] for r in ok(results)]
    out = {k: sum(t.get(k, 0) for t in totals)
           for k in TOTALS + ("threads", "kernels_run", "kernels", "per_cta_rows",
                              "zero_filled_rows")}
    out["modules"] = len(results)
    left = len(stopped(results))
    out["modules_failed"] = len(results) - len(totals) - left
    if left:
        out["modules_interrupted"] = left
    add_efficiencies(out)
    return out


def kernel_rows(results, status: str) -> list[tuple]:
    """(file, kernel, reason) of the kernels with this status, in order."""
    return [(r["file"], k["kernel"], k.get("reason", "")) for r in ok(results)
            for k in r["json"]["kernels"] if k["status"] == status]


# -------------------------------------------------------------- text
def render_text(results, mode: str, timings: bool = False, interrupted: str | None = None) -> str:
    from ptxc.profile.module_profile import FAILED, SKIPPED
    from ptxc.profile.module_render import TEXT_HEADER
    header = [h for h in TEXT_HEADER if timings or h != "ms"]
    g = grand_total(results)
    lines = [f"profile {len(results)} modules: {g['kernels']} kernels, {mode} runs"]
    if interrupted:
        lines.append(interrupt_text(results, interrupted) + "; the profiled ones are reported")
    rows = [["file"] + header]
    for r in results:
        if r["error"] is not None:
            label = MODULE_INTERRUPTED if r.get("interrupted") else MODULE_FAILED
            rows.append([r["file"], label] + [""] * (len(header) - 1))
        rows += [[r["file"]] + cells for cells in r["text"]]
    rows.append(grand_text_row(g, header, results))
    lines += table(rows)
    for title, items in (("not launched", kernel_rows(results, SKIPPED)),
                         ("kernel errors", kernel_rows(results, FAILED))):
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines += [f"  {f}: {k}: {why}" for f, k, why in items]
    failed = [r for r in results if r["error"] is not None and not r.get("interrupted")]
    if failed:
        lines.append(f"module errors ({len(failed)}):")
        lines += [f"  {_where(r['file'], r['error'])}" for r in failed]
    left = stopped(results)
    if left:
        lines.append(f"not profiled, interrupted ({len(left)}):")
        lines += [f"  {r['file']}: {r['interrupted']}" for r in left]
    return "\n".join(lines) + "\n"


def grand_text_row(g: dict, header: list, results) -> list[str]:
    """``(grand total)`` in the file column, what ran in the kernel column
    (as a module's ``total (R of K ran)``), then the summed counters under
    their headers."""
    failed = f", {g['modules_failed']} failed" if g["modules_failed"] else ""
    if g.get("modules_interrupted"):
        failed += f", {g['modules_interrupted']} not profiled"
    from ptxc.profile.module_render import total_status
    cells = {"kernel": f"{g['modules']} modules{failed}; {total_status(g)}",
             "inst_executed": str(g["inst_executed"]),
             "thread_inst": str(g["thread_inst_executed"]),
             "br_eff%": "-" if g["branch_efficiency"] is None else f"{g['branch_efficiency']:.2f}",
             "div_br": str(g["divergent_branch"]),
             "flops": str(sum(g[k] for k in ("flop_count_sp", "flop_count_dp", "flop_count_hp",
                                             "flop_count_sp_special")))}
    if "ms" in header:
        ms = sum(k.get("seconds", 0.0) for r in ok(results) for k in r["json"]["kernels"])
        cells["ms"] = f"{1000 * ms:.1f}"
    return [GRAND] + [cells.get(h, "") for h in header]


def table(rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell: file, kernel, launch, grid and
    block left-aligned, the numbers right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [("  ".join(c.ljust(w) if i < 5 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths)))).rstrip() for r in rows]


def _where(file: str, error: str) -> str:
    """The error, prefixed by its file unless it starts with it (file:line:col)."""
    return error if error.startswith(file + ":") else f"{file}: {error}"


# --------------------------------------------------------------- csv
def csv_columns(timings: bool) -> list[str]:
    from ptxc.profile.module_render import EXTRA_COLUMNS
    from ptxc.passes.count.render import CSV_COLUMNS
    return [c for c in CSV_COLUMNS + EXTRA_COLUMNS if timings or c != "duration_ms"]


# Columns of the grand total row that are not sums.
NOT_SUMMED = {"file", "ptx_version", "target", "address_size", "kernel", "grid", "block",
              "launch", "status", "note", "slice_fraction", "percent_executed",
              "branch_efficiency"}


def render_csv(results, mode: str, timings: bool = False, interrupted: str | None = None) -> str:
    from ptxc.profile.module_render import TOTAL_NAME
    cols = csv_columns(timings)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in results:
        if r["error"] is not None:
            status = "interrupted" if r.get("interrupted") else "error"
            w.writerow([{"file": r["file"], "status": status, "note": r["error"]}.get(c, "")
                        for c in cols])
        for row in r["csv"]:
            w.writerow([row.get(c, "") for c in cols])
    totals = [row for r in ok(results) for row in r["csv"] if row.get("kernel") == TOTAL_NAME]
    grand = grand_csv_row(totals, grand_total(results), cols)
    w.writerow([grand.get(c, "") for c in cols])
    return buf.getvalue()


def grand_csv_row(totals: list[dict], g: dict, cols) -> dict:
    """The module total rows summed column by column; the ratios recomputed."""
    from ptxc.profile.module_render import total_status
    out = {"kernel": GRAND, "status": total_status(g),
           "note": f"{g['modules']} modules, {g['modules_failed']} failed"
                   + (f", {g['modules_interrupted']} not profiled (interrupted)"
                      if g.get("modules_interrupted") else "")}
    for c in cols:
        vals = [_number(t.get(c, "")) for t in totals]
        vals = [v for v in vals if v is not None]
        if c not in NOT_SUMMED and vals:
            s = sum(vals)
            out[c] = round(s, 3) if isinstance(s, float) else s
    if out.get("static_inst") and "slice_inst" in out:
        out["slice_fraction"] = round(out["slice_inst"] / out["static_inst"], 6)
    if out.get("dynamic_inst") and "executed_inst" in out:
        out["percent_executed"] = round(100 * out["executed_inst"] / out["dynamic_inst"], 3)
    out["branch_efficiency"] = g["branch_efficiency"]
    return out


def _number(text: str):
    if text == "" or text is None:
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return None


# -------------------------------------------------------------- json
def to_dict(results, mode: str, interrupted: str | None = None) -> dict:
    modules = [r["json"] if r["error"] is None else
               {"file": r["file"], "error": r["error"],
                **({"interrupted": r["interrupted"]} if r.get("interrupted") else {})}
               for r in results]
    out = {"mode": mode, "modules": modules, "total": grand_total(results)}
    if interrupted:
        out["interrupted"] = interrupted
    return out


def render_json(results, mode: str, timings: bool = False, interrupted: str | None = None) -> str:
    return json.dumps(to_dict(results, mode, interrupted), indent=2) + "\n"


def render(results, fmt: str, mode: str, timings: bool = False,
           interrupted: str | None = None) -> str:
    """The batch report in ``fmt``; ``interrupted``: the signal that stopped it."""
    return {"text": render_text, "csv": render_csv, "json": render_json}[fmt](
        results, mode, timings, interrupted)
