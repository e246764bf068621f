"""The SQLite report of ``ptxc profile --report FILE.sqlite`` (docs/profile.md).

Tables, in the style of ``ptxc run --report`` (ptxc/runtime/report.py,
docs/runtime.md): ``meta`` (key, value), ``modules`` (one row per input
module, in input order, with its totals or its error; status ``interrupted``
for one that Ctrl-C or SIGTERM kept from being profiled), ``kernels`` (one row
per kernel of every module, with its launch, status and counters) and
``branches`` (one row per kernel and conditional branch: SASSI's numbers,
docs/launch.md). The counter columns come from ``ptxc.launcher.profile.TOTALS``
(summed for a module over the kernels that ran) and ``ptxc.launcher.profile.DERIVED``
(for a module, recomputed from the sums), so a counter added to the Profile
becomes a column without editing this file. The data are the batch
workers' results (``profile_batch.module_result``).
"""
from __future__ import annotations

from ptxc.launcher import profile
from ptxc.report.sqlite_tables import new_database, table as _table


def _counter_template() -> dict:
    t = {k: 0 for k in profile.TOTALS}
    t.update((k, 0.0) for k in profile.DERIVED)
    return t


def module_template(timings: bool) -> dict:
    t = {"id": 0, "file": "", "status": "", "error": "", "mode": "", "kernels": 0,
         "kernels_run": 0, "kernels_not_launched": 0, "kernels_failed": 0, "threads": 0}
    t.update(_counter_template())
    if timings:
        t["seconds"] = 0.0
    return t


def kernel_template(timings: bool) -> dict:
    t = {"id": 0, "module_id": 0, "file": "", "kernel": "", "status": "", "launch": "",
         "grid_x": 0, "grid_y": 0, "grid_z": 0, "block_x": 0, "block_y": 0, "block_z": 0,
         "note": "", "static_inst": 0, "slice_fraction": 0.0, "ctas_launched": 0, "ctas_run": 0}
    t.update(_counter_template())
    if timings:
        t["seconds"] = 0.0
    return t


BRANCH_TEMPLATE = {"kernel_id": 0, "module_id": 0, "kernel": "", "function": "", "block": "",
                   "line": 0, "warp_execs": 0, "active": 0, "taken": 0, "not_taken": 0,
                   "divergent": 0, "source_file": "", "source_line": 0}


# --------------------------------------------------------------- rows
def module_row(i: int, r: dict, timings: bool) -> dict:
    row = {"id": i, "file": r["file"]}
    if r["error"] is not None:     # a failed module, or one an interrupt left unprofiled
        return {**row, "status": "interrupted" if r.get("interrupted") else "error",
                "error": r["error"]}
    d = r["json"]
    t = d["total"]
    statuses = [k["status"] for k in d["kernels"]]
    row.update(status="ok", error=None, mode=d["mode"], kernels=t["kernels"],
               kernels_run=t["kernels_run"], kernels_not_launched=statuses.count("not launched"),
               kernels_failed=statuses.count("error"), threads=t["threads"])
    row.update((k, t[k]) for k in profile.TOTALS)
    row.update((k, None if t[k] is None else float(t[k])) for k in profile.DERIVED)
    if timings:
        row["seconds"] = sum(d.get("timings", {}).values())
    return row


def kernel_row(kid: int, mid: int, file: str, k: dict) -> dict:
    launch = k["launch"]
    row = {"id": kid, "module_id": mid, "file": file, "kernel": k["kernel"],
           "status": k["status"], "launch": launch["source"], "note": k.get("reason") or None}
    for name in ("grid", "block"):
        for axis, v in zip("xyz", launch[name] or (None, None, None)):
            row[f"{name}_{axis}"] = v
    p = k.get("profile")
    if p is not None:
        row.update((c, p[c]) for c in ("static_inst", "slice_fraction", "ctas_launched",
                                       "ctas_run"))
        row.update((c, p[c]) for c in profile.TOTALS)
        row.update((c, float(p[c])) for c in profile.DERIVED)
    if "seconds" in k:
        row["seconds"] = k["seconds"]
    return row


def branch_rows(kid: int, mid: int, k: dict) -> list[dict]:
    p = k.get("profile") or {}
    rows = []
    for key, b in p.get("per_branch", {}).items():
        function, _, block = key.partition(":")
        src = b.get("source") or {}                 # docs/report.md, source attribution
        rows.append({"kernel_id": kid, "module_id": mid, "kernel": k["kernel"],
                     "function": function, "block": block, **b,
                     "source_file": src.get("file"), "source_line": src.get("line")})
    return rows


def all_rows(results, timings: bool):
    modules, kernels, branches = [], [], []
    for mid, r in enumerate(results, 1):
        modules.append(module_row(mid, r, timings))
        for k in (r["json"]["kernels"] if r["error"] is None else []):
            kid = len(kernels) + 1
            kernels.append(kernel_row(kid, mid, r["file"], k))
            branches += branch_rows(kid, mid, k)
    return modules, kernels, branches


# ------------------------------------------------------------- SQLite
def write_sqlite(path: str, results, meta: dict, timings: bool = False) -> None:
    """Write the report (an existing file is replaced)."""
    modules, kernels, branches = all_rows(results, timings)
    db = new_database(path, meta)
    try:
        _table(db, "modules", modules, module_template(timings), key="id")
        _table(db, "kernels", kernels, kernel_template(timings), key="id")
        _table(db, "branches", branches, BRANCH_TEMPLATE)
        db.commit()
    finally:
        db.close()


def report_meta(results, mode: str, grand: dict, interrupted: str | None = None) -> dict:
    """The ``meta`` table: what was profiled and how much of it ran (and,
    when Ctrl-C or SIGTERM stopped the batch, ``interrupted``: the signal,
    ``modules_interrupted``: the modules not profiled)."""
    from ptxc.version import __version__
    meta = {"ptxc_version": __version__, "mode": mode, "modules": grand["modules"],
            "modules_failed": grand["modules_failed"], "kernels": grand["kernels"],
            "kernels_run": grand["kernels_run"],
            "kernels_failed": sum(k["status"] == "error" for r in results
                                  if r["error"] is None for k in r["json"]["kernels"])}
    if interrupted:
        meta.update(interrupted=interrupted,
                    modules_interrupted=grand.get("modules_interrupted", 0))
    return meta
