"""Rendering of a ModuleProfile (ptxc/profile/module_profile.py): text, CSV, JSON
(described for users in docs/profile.md, "Output").

Text: one row per kernel (its launch and the main counters of METRICS.md),
the module total (with how many rows hold one CTA's counters), then the
per-CTA rows, the rows run on zero-filled inputs, the launches read from a
file, the inferred launches (PTX line and constant), the kernels not
launched and why, and where the time went.

CSV: the count pass's columns (HyPA's, docs/count.md; built by
``passes.count.csv_dynamic`` and ``passes.count_render.render_csv``), one
row per kernel, followed by ``grid``, ``block``, ``launch`` (explicit /
file / inferred / one CTA: grid unknown), ``status``, ``note`` (where the
launch came from, what a per-CTA row holds, or why a kernel did not run)
and ``inputs`` (``zero-filled: P ...`` or empty), and a last row
``(module total)``.

JSON: ``{"file", "mode", "kernels": [...], "total": {...}, "timings": {...}}``
with each kernel's full profile (``Profile.to_dict()``).
"""
from __future__ import annotations

import json

from ptxc.ir.names import short
from ptxc.profile.module_profile import FILE, ONE_CTA, RAN

TOTAL_NAME = "(module total)"
EXTRA_COLUMNS = ("grid", "block", "launch", "status", "note", "inputs")
SHORT_SOURCE = {ONE_CTA: "one CTA"}


def dims_text(d) -> str:
    return "x".join(str(x) for x in d) if d else ""


def note_of(row) -> str:
    if row.status != RAN:
        return row.reason
    if row.inferred is not None:
        return "inferred from " + row.inferred.explain()
    if row.per_cta:
        return f"{per_cta_text(row)}; {row.no_launch}"
    if row.source == FILE:
        return f"from {row.where}"
    return ""


def per_cta_text(row) -> str:
    """What a per-CTA row's counters are."""
    text = (f"counters of one CTA, (0,0,0) of a 1x1x1 grid, block {row.block_from} "
            f"{dims_text(row.block)}; not scaled to a launch")
    if row.reads_nctaid:
        text += "; the kernel reads %nctaid, which is 1 here"
    return text


def inputs_of(row) -> str:
    return "zero-filled: " + " ".join(row.zero_filled) if row.zero_filled else ""


def launch_text(row) -> str:
    text = SHORT_SOURCE.get(row.source, row.source)
    return text + " (zeros)" if row.zero_filled else text


def flops(prof) -> int:
    return (prof.flop_count_sp + prof.flop_count_dp + prof.flop_count_hp
            + prof.flop_count_sp_special)


# ------------------------------------------------------------------- text
TEXT_HEADER = ("kernel", "launch", "grid", "block", "inst", "slice%", "inst_executed",
               "thread_inst", "br_eff%", "div_br", "flops", "ms")


def text_row(row) -> list[str]:
    p = row.profile
    name = short(row.kernel)                     # demangled (ptxc/ir/names.py)
    if p is None:
        return [name, row.status, dims_text(row.grid), dims_text(row.block)] + [""] * 8
    sf = "" if p.slice_fraction is None else f"{100 * p.slice_fraction:.1f}"
    return [name, launch_text(row), dims_text(row.grid), dims_text(row.block),
            str(p.static_inst),
            sf, str(p.inst_executed), str(p.thread_inst_executed), f"{p.branch_efficiency:.2f}",
            str(p.divergent_branch), str(flops(p)), f"{1000 * row.seconds:.1f}"]


def total_row(mp) -> list[str]:
    t = mp.total()
    fl = sum(t[k] for k in ("flop_count_sp", "flop_count_dp", "flop_count_hp",
                            "flop_count_sp_special"))
    ms = sum(r.seconds for r in mp.ran)
    return [f"total ({total_status(t)})", "", "", "", "", "",
            str(t["inst_executed"]), str(t["thread_inst_executed"]),
            "-" if t["branch_efficiency"] is None else f"{t['branch_efficiency']:.2f}",
            str(t["divergent_branch"]), str(fl), f"{1000 * ms:.1f}"]


def total_status(t: dict) -> str:
    """'109 of 109 ran, 57 per-CTA rows: counters of one CTA, 2 zero-filled'."""
    text = f"{t['kernels_run']} of {t['kernels']} ran"
    if t["per_cta_rows"]:
        text += f", {t['per_cta_rows']} per-CTA rows: counters of one CTA"
    if t["zero_filled_rows"]:
        text += f", {t['zero_filled_rows']} on zero-filled inputs"
    return text


LABEL_SPAN = 6      # the total row's label may run over the (empty) launch..slice% cells


def table(rows: list[list[str]]) -> list[str]:
    """Aligned columns; the last row (the total) has one label spanning the
    first LABEL_SPAN columns, whose other cells are empty (a label longer
    than that gets a line of its own above the numbers)."""
    *body, last = rows
    widths = [max(len(r[i]) for r in rows[:-1] + [[""] + last[1:]]) for i in range(len(rows[0]))]
    span = sum(widths[:LABEL_SPAN]) + 2 * (LABEL_SPAN - 1)
    lines = [cells_text(r, widths) for r in body]
    label = last[0]
    if len(label) > span:
        lines.append(label)
        label = ""
    lines.append(cells_text([label.ljust(span)] + last[LABEL_SPAN:], [span] + widths[LABEL_SPAN:],
                            left=1))
    return lines


def cells_text(row: list[str], widths: list[int], left: int = 4) -> str:
    return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                     for i, (c, w) in enumerate(zip(row, widths))).rstrip()


def render_text(mp) -> str:
    lines = [f"profile {mp.module.filename}: {len(mp.rows)} kernels, {mp.mode} runs"]
    lines += table([list(TEXT_HEADER)] + [text_row(r) for r in mp.rows] + [total_row(mp)])
    lines += notes_text(mp)
    inferred = [r for r in mp.rows if r.source == "inferred"]
    if inferred:
        lines.append(f"inferred launches ({len(inferred)}):")
        lines += [f"  {r.kernel}: {r.inferred.explain()}" for r in inferred]
    for status, title in (("not launched", "not launched"), ("error", "errors")):
        rows = [r for r in mp.rows if r.status == status]
        if rows:
            lines.append(f"{title} ({len(rows)}):")
            lines += [f"  {short(r.kernel)}: {r.reason}" for r in rows]
    lines += value_profile_lines(mp)
    lines.append("time: " + timings_text(mp.timings))
    return "\n".join(lines) + "\n"


def value_profile_lines(mp) -> list[str]:
    """--value-profile: SASSI's Table 2 per kernel (docs/value-profile.md)."""
    from ptxc.launcher.value_profile import summary_lines
    done = [r for r in mp.ran if r.profile.value_profile is not None]
    if not done:
        return []
    lines = ["value profile (docs/value-profile.md):"]
    for r in done:
        lines.append(f"  {r.kernel}:")
        lines += summary_lines(r.profile.value_profile["summary"], "    ")
    return lines


def notes_text(mp) -> list[str]:
    """The per-CTA rows, the zero-filled inputs and the file launches."""
    lines = []
    one = [r for r in mp.ran if r.per_cta]
    if one:
        lines.append(f"per-CTA rows ({len(one)}): no launch known, so each ran one CTA, (0,0,0) "
                     "of a 1x1x1 grid; its counters are that CTA's, not scaled to a launch "
                     "(give --launch or --launches for whole launches):")
        lines += [f"  {r.kernel}: block {r.block_from} {dims_text(r.block)}"
                  + ("; reads %nctaid, which is 1 here" if r.reads_nctaid else "")
                  + f"; {r.no_launch}" for r in one]
    zeros = [r for r in mp.ran if r.zero_filled]
    if zeros:
        lines.append(f"zero-filled inputs ({len(zeros)}): control flow read zero-filled memory "
                     "(--zero-fill); the counters are those of all-zero data:")
        lines += [f"  {r.kernel}: {', '.join(r.zero_filled)}" for r in zeros]
    filed = [r for r in mp.rows if r.source == FILE]
    if filed:
        lines.append(f"launches from a file ({len(filed)}):")
        lines += [f"  {r.kernel}: {r.where}" for r in filed]
    return lines


def timings_text(t: dict) -> str:
    order = ("parse", "slice", "infer", "codegen", "llvm", "launches")
    return ", ".join(f"{k} {t[k]:.3f} s" for k in order if k in t)


# -------------------------------------------------------------------- csv
def count_report(mp) -> dict:
    """The count pass's report restricted to the profiled kernels, with each
    row's dynamic columns and a last pseudo-kernel holding the totals."""
    from ptxc.profile.count_pass import csv_dynamic, module_header
    from ptxc.passes.count.static import module_counts
    if mp.counts_total is not None:         # a split run: every row has its counts
        report = {**module_header(mp.module), "functions": {}, "total": mp.counts_total}
    else:
        report = {**module_header(mp.module), **module_counts(mp.module)}
    functions = {}
    for row in mp.rows:
        fc = row.counts if row.counts is not None else report["functions"][row.kernel]
        if row.profile is not None:
            fc["csv_dynamic"] = csv_dynamic(row.kernel, fc, row.profile.to_dict(), row.seconds)
        fc.update(grid=dims_text(row.grid), block=dims_text(row.block), launch=row.source,
                  status=row.status, note=note_of(row), inputs=inputs_of(row))
        functions[row.kernel] = fc
    functions[TOTAL_NAME] = total_counts(mp, list(functions.values()))
    report["functions"] = functions
    return report


def total_counts(mp, fcs: list) -> dict:
    """Static counts summed over the rows, dynamic columns over the kernels that ran."""
    from ptxc.passes.count.static import empty_counts, finish, merge
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
            "status": total_status(t)}


def render_csv(mp) -> str:
    from ptxc.passes.count.render import CSV_COLUMNS, render_csv as count_csv
    from ptxc.valueprof.run_report import PCTS
    report = count_report(mp)
    extra = ()
    if any(r.profile.value_profile is not None for r in mp.ran):      # --value-profile
        extra = tuple(f"vp_{k}" for k in PCTS)
        for r in mp.ran:
            s = r.profile.value_profile["summary"]
            report["functions"][r.kernel].update({f"vp_{k}": s[k] for k in PCTS})
    return count_csv(report, CSV_COLUMNS + EXTRA_COLUMNS + extra)


# ------------------------------------------------------------------- json
def to_dict(mp) -> dict:
    from ptxc.ir.source_lines import SourceMap
    from ptxc.report.source_profile import with_source
    smap = SourceMap(mp.module)
    kernels = []
    for r in mp.rows:
        k = {"kernel": r.kernel, "status": r.status,
             "launch": {"source": r.source, "grid": list(r.grid) if r.grid else None,
                        "block": list(r.block) if r.block else None,
                        "inferred_from": r.inferred.to_dict() if r.inferred else None,
                        **launch_extra(r)}}
        if r.reason:
            k["reason"] = r.reason
        if r.profile is not None:
            k["seconds"] = round(r.seconds, 6)
            k["profile"] = (r.profile_json if r.profile_json is not None
                            else with_source(r.profile.to_dict(), mp.module, smap))
        kernels.append(k)
    return {"file": mp.module.filename, "mode": mp.mode, "kernels": kernels,
            "total": mp.total(), "timings": {k: round(v, 6) for k, v in mp.timings.items()}}


def launch_extra(r) -> dict:
    """The fields of ``launch`` beyond source/grid/block/inferred_from."""
    one = None
    if r.per_cta:
        one = {"cta": [0, 0, 0], "why": r.no_launch, "reads_nctaid": r.reads_nctaid,
               "note": "counters of this one CTA, not scaled to a launch"}
    return {"per_cta": r.per_cta, "one_cta": one, "block_from": r.block_from or None,
            "file": r.where or None, "inputs": r.inputs if r.status == RAN else None,
            "zero_filled": list(r.zero_filled)}


def render_json(mp) -> str:
    return json.dumps(to_dict(mp), indent=2) + "\n"


def render(mp, fmt: str) -> str:
    return {"text": render_text, "csv": render_csv, "json": render_json}[fmt](mp)
