"""The value profile in ``ptxc run``'s report (docs/value-profile.md,
docs/runtime.md): per kernel, the profiles of all its launches merged
(value_profile.merge) and summarised as SASSI's Table 2.

* kernel rows (text metrics, CSV, JSON ``kernels``, SQLite ``kernels``):
  the four percentages as ``vp_*`` columns (``kernel_columns``);
* SQLite ``value_profile``: one row per kernel (``summary_rows``) and
  ``value_profile_instructions``: one row per kernel, instruction and
  destination register (``instruction_rows``);
* text: a section per kernel with the summary (``summary_text``).
"""
from __future__ import annotations

from ptxc.launcher import value_profile as V
from ptxc.valueprof import tables

PCTS = ("static_const_bits_pct", "dynamic_const_bits_pct", "static_scalar_pct",
        "dynamic_scalar_pct")
SUMMARY_TEMPLATE = {"kernel": "", "module": "", "launches": 0, **{k: 0.0 for k in PCTS},
                    "registers": 0, "register_bits": 0, "writes": 0, "scalar_writes": 0}
INSTR_TEMPLATE = {"kernel": "", "module": "", **{c: ("" if c in ("function", "opcode", "register",
                                                                  "mask", "source") else 0)
                                                for c in tables.CSV_COLUMNS}}


def profiled(launches) -> bool:
    return any(r.profile.value_profile is not None for r in launches)


def merged(rs) -> dict | None:
    """The merged value profile of one kernel's launches (None: none profiled)."""
    vps = [r.profile.value_profile for r in rs if r.profile.value_profile is not None]
    return tables.merge(vps) if vps else None


def kernel_columns(rs) -> dict:
    """The ``vp_*`` columns of a kernel row ({} without value profiles)."""
    vp = merged(rs)
    return {} if vp is None else {f"vp_{k}": vp["summary"][k] for k in PCTS}


def column_template(launches) -> dict:
    return {f"vp_{k}": 0.0 for k in PCTS} if profiled(launches) else {}


def groups(launches) -> dict:
    out: dict = {}
    for r in launches:
        out.setdefault((r.kernel, r.module), []).append(r)
    return out


def summary_rows(launches) -> list[dict]:
    rows = []
    for (kernel, module), rs in groups(launches).items():
        vp = merged(rs)
        if vp is not None:
            rows.append({"kernel": kernel, "module": module, "launches": len(rs), **vp["summary"]})
    return rows


def instruction_rows(launches) -> list[dict]:
    rows = []
    for (kernel, module), rs in groups(launches).items():
        vp = merged(rs)
        if vp is not None:
            rows += [{"kernel": kernel, "module": module, **r} for r in V.rows(vp)]
    return rows


def summary_text(launches, readable=None) -> str:
    """Per kernel: SASSI's Table 2 over its launches; ``readable``: the
    shown names, {(kernel, module): name} (runtime/kernel_keys.labels)."""
    readable = readable or {}
    lines = ["Value profile (docs/value-profile.md):"]
    for (kernel, module), rs in groups(launches).items():
        vp = merged(rs)
        if vp is not None:
            lines.append(f"Kernel: {readable.get((kernel, module), kernel)}")
            lines += V.summary_lines(vp["summary"])
    return "\n".join(lines) + "\n"


def summary_json(launches) -> list[dict]:
    """Per kernel: the summary and the merged per-instruction rows."""
    out = []
    for (kernel, module), rs in groups(launches).items():
        vp = merged(rs)
        if vp is not None:
            out.append({"kernel": kernel, "module": module, "launches": len(rs),
                        "summary": vp["summary"], "instructions": V.rows(vp)})
    return out


def add_module_tables(path: str, mp) -> None:
    """``ptxc profile --value-profile --report FILE``: add the tables
    ``value_profile`` and ``value_profile_instructions`` (as above, one
    launch per kernel; ``module`` is the file) to the module report."""
    import sqlite3

    from ptxc.report.sqlite_tables import table as _table
    ran = [r for r in mp.ran if r.profile.value_profile is not None]
    file = mp.module.filename
    summary = [{"kernel": r.kernel, "module": file, "launches": 1,
                **r.profile.value_profile["summary"]} for r in ran]
    instrs = [{"kernel": r.kernel, "module": file, **row}
              for r in ran for row in V.rows(r.profile.value_profile)]
    db = sqlite3.connect(path)
    try:
        _table(db, "value_profile", summary, SUMMARY_TEMPLATE)
        _table(db, "value_profile_instructions", instrs, INSTR_TEMPLATE)
        db.commit()
    finally:
        db.close()
