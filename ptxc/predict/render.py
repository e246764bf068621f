"""Text, JSON and SQLite forms of a prediction + TopDown result (docs/predict.md).

Every modelled number is labelled "modelled"; numbers that are exact counts
are labelled "exact". JSON: one object per launch (``as_json``); SQLite:
tables ``predict`` (one row per launch), ``predict_costs`` (one row per
launch and instruction class) and ``topdown`` (one row per launch and
TopDown node, with its level, parent and whether it is exact or modelled).
"""
from __future__ import annotations

from .topdown import LEVEL1

TREE = (("retire", 1, None, "exact"), ("divergence", 1, None, "exact"),
        ("branch", 2, "divergence", "exact"), ("replay", 2, "divergence", "exact"),
        ("frontend", 1, None, "modelled"), ("backend", 1, None, "modelled"),
        ("backend_core", 2, "backend", "modelled"),
        ("backend_memory", 2, "backend", "modelled"))


def text(r: dict, with_topdown: bool = True) -> str:
    p, inp, occ = r["prediction"], r["inputs"], r["occupancy"]
    from ptxc.ir.names import short
    lines = [f"kernel {short(r['kernel'], 100)} on {r['gpu']}, grid {tuple(r['grid'])} block "
             f"{tuple(r['block'])} ({r['mode']} run)",
             f"  predicted time (modelled)  {p.seconds * 1e6:.3f} us = {p.cycles:.0f} cycles "
             f"at {p.clock_mhz} MHz; {p.bound}-bound",
             f"  occupancy                  {occ.blocks_per_sm} blocks/SM "
             f"({r['registers'].count} registers: {r['registers'].source}); "
             f"active warps N = {p.active_warps}; busiest SM's share f = {p.share:.4g}",
             f"  CPD1 {p.cpd1:.4g}  CPD2 (ILP) {p.cpd2:.4g}  MPD1 {p.mpd1:.4g}  "
             f"MPD2 {p.mpd2:.4g}  MPD {p.mpd:.4g}  L {p.request_latency:.4g} cycles",
             f"  T_comp {p.t_comp:.1f}  T_mem {p.t_mem:.1f}  T_issue {p.t_issue:.1f}  "
             f"T_body {p.t_body:.1f}  launch m {p.launch_cycles:.0f} (cycles of one SM)",
             "  class              count/SM        T_i     cycles"]
    for cls, (n, t_i, cyc) in p.costs.items():
        lines.append(f"    {cls:16s} {n:10.1f} {t_i:10.4g} {cyc:10.1f}")
    if with_topdown:
        lines += topdown_text(r["topdown"])
    return "\n".join(lines) + "\n"


def topdown_text(td: dict) -> list:
    fr = td["fractions"]
    out = [f"  TopDown (issue slots of the busiest SM: {td['slots']:.0f}; IPC {td['ipc']:.3f} "
           f"of {td['ipc_max']} modelled; warp efficiency {100 * td['warp_efficiency']:.2f} % "
           "exact)"]
    for name, level, _parent, how in TREE:
        pad = "    " if level == 1 else "      "
        out.append(f"{pad}{name:18s} {100 * fr[name]:6.2f} %  ({how} slots)")
    rp = td["replays"]
    out.append(f"  replays (exact)  global {rp['global']}  shared {rp['shared']}  "
               f"width {rp['width']}")
    return out


def as_json(r: dict) -> dict:
    p, inp, occ = r["prediction"], r["inputs"], r["occupancy"]
    td = r["topdown"]
    return {
        "kernel": r["kernel"], "gpu": r["gpu"], "grid": r["grid"], "block": r["block"],
        "mode": r["mode"], "predicted_seconds": p.seconds, "predicted_cycles": p.cycles,
        "bound": p.bound,
        "model": {k: getattr(p, k) for k in ("share", "active_warps", "cpd1", "cpd2", "mpd1",
                                            "mpd2", "mpd", "request_latency", "t_comp",
                                            "t_mem", "t_issue", "t_body", "launch_cycles")},
        "costs": {c: {"count": n, "t_i": t, "cycles": y} for c, (n, t, y) in p.costs.items()},
        "inputs": {k: getattr(inp, k) for k in ("blocks", "warps_per_block", "occupancy_blocks",
                                                "mix", "inst_executed", "thread_inst_executed",
                                                "global_requests", "global_transactions",
                                                "global_lines", "shared_requests",
                                                "shared_transactions", "shared_bank_conflicts",
                                                "ilp", "mlp")},
        "registers": {"count": r["registers"].count, "source": r["registers"].source},
        "occupancy": {"blocks_per_sm": occ.blocks_per_sm, "warps_per_sm": occ.warps_per_sm},
        "params": {k: {"value": v, "source": r["params"].sources[k]}
                   for k, v in r["params"].values.items()},
        "topdown": {"level1": td["level1"], "level2": td["level2"], "ipc": td["ipc"],
                    "issued_ipc": td["issued_ipc"], "ipc_max": td["ipc_max"],
                    "warp_efficiency": td["warp_efficiency"], "replays": td["replays"],
                    "slots": td["slots"], "modelled": ["ipc", "issued_ipc", "slots",
                                                       "frontend", "backend", "fractions"]},
    }


def write_sqlite(path: str, results: list) -> None:
    """The three tables of the module doc (replaced if they exist)."""
    import sqlite3
    con = sqlite3.connect(path)
    try:
        _tables(con)
        for n, r in enumerate(results):
            _rows(con, n, r)
        con.commit()
    finally:
        con.close()


def _tables(con) -> None:
    for t in ("predict", "predict_costs", "topdown"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    con.execute("CREATE TABLE predict (launch INTEGER, kernel TEXT, gpu TEXT, grid TEXT, "
                "block TEXT, mode TEXT, seconds REAL, cycles REAL, bound TEXT, "
                "active_warps INTEGER, cpd1 REAL, cpd2 REAL, mpd REAL, t_comp REAL, "
                "t_mem REAL, ipc REAL, warp_efficiency REAL)")
    con.execute("CREATE TABLE predict_costs (launch INTEGER, class TEXT, count REAL, "
                "t_i REAL, cycles REAL)")
    con.execute("CREATE TABLE topdown (launch INTEGER, kernel TEXT, node TEXT, level INTEGER, "
                "parent TEXT, kind TEXT, fraction REAL, slots REAL)")


def _rows(con, n: int, r: dict) -> None:
    p, td = r["prediction"], r["topdown"]
    con.execute("INSERT INTO predict VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (n, r["kernel"], r["gpu"], str(tuple(r["grid"])), str(tuple(r["block"])),
                 r["mode"], p.seconds, p.cycles, p.bound, p.active_warps, p.cpd1, p.cpd2,
                 p.mpd, p.t_comp, p.t_mem, td["ipc"], td["warp_efficiency"]))
    con.executemany("INSERT INTO predict_costs VALUES (?,?,?,?,?)",
                    [(n, c, a, b, y) for c, (a, b, y) in p.costs.items()])
    con.executemany("INSERT INTO topdown VALUES (?,?,?,?,?,?,?,?)",
                    [(n, r["kernel"], name, lvl, parent, how, td["fractions"][name],
                      td["slot_counts"][name]) for name, lvl, parent, how in TREE])


__all__ = ["text", "as_json", "write_sqlite", "LEVEL1"]
