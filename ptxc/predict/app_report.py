"""``ptxc run --topdown``: predicted time and TopDown per launch and per kernel
of a CUDA application (docs/predict.md).

Per launch: :func:`ptxc.predict.analyse` on the launch's profile (the run
collects the memory counters). Per kernel: the launches' predicted times
add up, and the TopDown slot counts (IPC x cycles of each node) add up
before they are divided by the summed slots (IPC_MAX x cycles), so a
kernel's fractions of IPC_MAX are slot-weighted over its launches and its
Level 1 still sums to 1 (eq. 4.1). A kernel is a (name, module) pair, as everywhere in the
run report (runtime/kernel_keys.py): JSON ``kernels`` is a list of rows
with ``kernel`` and ``module``.
"""
from __future__ import annotations

import json

from . import analyse, render
from .render import TREE
from .topdown import LEVEL1, LEVEL2


def launch_results(launches, gpu_key: str) -> list:
    """[(LaunchRecord, result)] for every launch that has its module."""
    from ptxc.gpus.kernel_resources import module_registers
    regs_cache: dict = {}
    out = []
    for rec in launches:
        module = getattr(rec, "ptx_module", None)
        if module is None:
            continue
        if id(module) not in regs_cache:
            from ptxc.gpus.architecture import gpu
            regs_cache[id(module)] = module_registers(module, module.to_ptx(), gpu(gpu_key).sm)
        r = analyse(module, rec.profile.to_dict(), gpu_key, regs_cache[id(module)][rec.kernel],
                    rec.shared_bytes)
        out.append((rec, r))
    return out


def kernel_totals(results) -> dict:
    """{(kernel, module): {"launches", "seconds", "slots", "fractions"}} (module doc)."""
    out: dict = {}
    for rec, r in results:
        k = out.setdefault((r["kernel"], rec.module), {"launches": 0, "seconds": 0.0, "slots": 0.0,
                                         "slot_counts": dict.fromkeys(
                                             r["topdown"]["slot_counts"], 0.0)})
        k["launches"] += 1
        k["seconds"] += r["prediction"].seconds
        k["slots"] += r["topdown"]["slots"]
        for name, v in r["topdown"]["slot_counts"].items():
            k["slot_counts"][name] += v
    for k in out.values():
        k["fractions"] = {n: v / k["slots"] for n, v in k["slot_counts"].items()}
    return out


def text(results) -> str:
    from ptxc.report.kernel_names import labels
    lines = ["", "==PTXC== Predicted time and TopDown per kernel (modelled; docs/predict.md)"]
    totals = kernel_totals(results)
    if not totals:
        lines.append("  no launch to predict")
    readable = labels(totals)
    for name, k in totals.items():
        fr = k["fractions"]
        parts = "  ".join(f"{n} {100 * fr[n]:.1f}%" for n in LEVEL1)
        lines.append(f"  {readable[name]}: {k['launches']} launch(es), {k['seconds'] * 1e6:.3f} us; {parts}")
        lines.append("      " + "  ".join(f"{n} {100 * fr[n]:.1f}%" for n in LEVEL2))
    return "\n".join(lines) + "\n"


def as_json(results) -> dict:
    return {"launches": [{"id": rec.id, **render.as_json(r)} for rec, r in results],
            "kernels": [{"kernel": n, "module": m,
                         **{k: v for k, v in d.items() if k != "slot_counts"}}
                        for (n, m), d in kernel_totals(results).items()]}


def merge_json(summary: str, results) -> str:
    """The run's JSON summary with a "predict" member added."""
    doc = json.loads(summary)
    doc["predict"] = as_json(results)
    return json.dumps(doc, indent=2, default=str) + "\n"


def write_sqlite(path: str, results) -> None:
    """Tables predict / predict_periods / topdown (render.write_sqlite), keyed by
    the launch ids of the run's ``launches`` table."""
    import sqlite3
    con = sqlite3.connect(path)
    try:
        render._tables(con)
        for rec, r in results:
            render._rows(con, rec.id, r)
        con.commit()
    finally:
        con.close()


__all__ = ["launch_results", "kernel_totals", "text", "as_json", "merge_json",
           "write_sqlite", "TREE"]
