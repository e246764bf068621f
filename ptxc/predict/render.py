"""Text, JSON and SQLite forms of a prediction + TopDown result (docs/predict.md).

Every modelled number is labelled "modelled"; numbers that are exact counts
are labelled "exact". JSON: one object per launch (``as_json``); SQLite:
tables ``predict`` (one row per launch), ``predict_periods`` (one row per
launch and calculate period, section 3.5) and ``topdown`` (one row per launch and
TopDown node, with its level, parent and whether it is exact or modelled).
"""
from __future__ import annotations

from .topdown import LEVEL1

TREE = (("retire", 1, None, "exact"), ("divergence", 1, None, "exact"),
        ("branch", 2, "divergence", "exact"), ("replay", 2, "divergence", "exact"),
        ("frontend", 1, None, "modelled"), ("backend", 1, None, "modelled"),
        ("backend_core", 2, "backend", "modelled"),
        ("backend_memory", 2, "backend", "modelled"))


PERIODS_SHOWN = 12


def text(r: dict, with_topdown: bool = True) -> str:
    p, occ = r["prediction"], r["occupancy"]
    lines = [f"kernel {r['kernel']} on {r['gpu']}, grid {tuple(r['grid'])} block "
             f"{tuple(r['block'])} ({r['mode']} run)",
             f"  predicted time (modelled)  {p.seconds * 1e6:.3f} us = {p.cycles:.0f} cycles "
             f"at {p.clock_mhz} MHz; {p.bound}-bound (Luo & Suda, section 3)",
             f"  occupancy                  {occ.blocks_per_sm} blocks/SM "
             f"({r['registers'].count} registers: {r['registers'].source}); "
             f"active warps N_act = {p.active_warps}; busiest SM's share = {p.share:.4g}",
             f"  P (3.4) {p.proportion:.4f}  CPD1 (3) {p.cpd1:.4g}  CPD2 (4) {p.cpd2:.4g}  "
             f"CPD {p.cpd:.4g}  Warp_bwt (1) {p.warp_bwt:.4g} B/clock  MPD (2) {p.mpd:g}",
             f"  cycles = computation {p.t_compute:.1f} + T_c {p.t_current:.1f} + "
             f"T_p {p.t_previous:.1f} (sum over periods of passes x eq. 6-13)",
             "  readings  " + " ".join(f"{k}={v}" for k, v in p.readings.items())]
    shown = sorted(p.periods, key=lambda x: -x.cycles)[:PERIODS_SHOWN]
    lines.append(f"  calculate periods (section 3.5), {len(shown)} costliest of "
                 f"{len(p.periods)}:")
    lines.append("    period                     after                      c        m  type"
                 "         T      T_c      T_p     passes      cycles")
    for x in shown:
        lines.append(f"    {x.block + '#' + str(x.index):26s} {x.prev:22s} {x.c:8.1f} {x.m:8.1f}"
                     f"  {x.kind:4d} {x.t:9.1f} {x.t_c:8.1f} {x.t_p:8.1f} {x.weight:10.4g} "
                     f"{x.cycles:11.1f}")
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


MODEL_FIELDS = ("share", "active_warps", "proportion", "cpd1", "cpd2", "cpd", "warp_bwt",
                "mpd", "t_compute", "t_current", "t_previous", "cycles", "readings")
PERIOD_FIELDS = ("block", "index", "prev", "c", "m", "c_prev", "m_prev", "kind", "t", "t_c",
                 "t_p", "weight", "warp_bwt", "mpd")


def as_json(r: dict) -> dict:
    p, inp, occ = r["prediction"], r["inputs"], r["occupancy"]
    td = r["topdown"]
    return {
        "kernel": r["kernel"], "gpu": r["gpu"], "grid": r["grid"], "block": r["block"],
        "mode": r["mode"], "predicted_seconds": p.seconds, "predicted_cycles": p.cycles,
        "bound": p.bound,
        "model": {k: getattr(p, k) for k in MODEL_FIELDS},
        "periods": [{**{k: getattr(x, k) for k in PERIOD_FIELDS}, "cycles": x.cycles}
                    for x in p.periods],
        "inputs": {"blocks": inp.blocks, "warps_per_block": inp.warps_per_block,
                   "occupancy_blocks": inp.occupancy_blocks, "mix": inp.mix,
                   "inst_executed": inp.inst_executed,
                   "thread_inst_executed": inp.thread_inst_executed,
                   "static_costs": list(inp.static_costs),
                   "tasks": {b.key: {"warp_execs": b.execs,
                                     "tasks": [["memory" if t.memory else "computation",
                                                t.cost, t.bytes, t.transactions]
                                               for t in b.tasks]}
                             for blocks in inp.functions for b in blocks}},
        "registers": {"count": r["registers"].count, "source": r["registers"].source},
        "occupancy": {"blocks_per_sm": occ.blocks_per_sm, "warps_per_sm": occ.warps_per_sm},
        "params": {k: {"value": v, "source": r["params"].sources.get(k, "")}
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
    for t in ("predict", "predict_costs", "predict_periods", "topdown"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    con.execute("CREATE TABLE predict (launch INTEGER, kernel TEXT, gpu TEXT, grid TEXT, "
                "block TEXT, mode TEXT, seconds REAL, cycles REAL, bound TEXT, "
                "active_warps INTEGER, proportion REAL, cpd1 REAL, cpd2 REAL, cpd REAL, "
                "warp_bwt REAL, mpd REAL, t_compute REAL, t_current REAL, t_previous REAL, "
                "ipc REAL, warp_efficiency REAL)")
    con.execute("CREATE TABLE predict_periods (launch INTEGER, block TEXT, idx INTEGER, "
                "prev TEXT, c REAL, m REAL, kind INTEGER, t REAL, t_c REAL, t_p REAL, "
                "weight REAL, cycles REAL)")
    con.execute("CREATE TABLE topdown (launch INTEGER, kernel TEXT, node TEXT, level INTEGER, "
                "parent TEXT, kind TEXT, fraction REAL, slots REAL)")


def _rows(con, n: int, r: dict) -> None:
    p, td = r["prediction"], r["topdown"]
    con.execute("INSERT INTO predict VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (n, r["kernel"], r["gpu"], str(tuple(r["grid"])), str(tuple(r["block"])),
                 r["mode"], p.seconds, p.cycles, p.bound, p.active_warps, p.proportion,
                 p.cpd1, p.cpd2, p.cpd, p.warp_bwt, p.mpd, p.t_compute, p.t_current,
                 p.t_previous, td["ipc"], td["warp_efficiency"]))
    con.executemany("INSERT INTO predict_periods VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    [(n, x.block, x.index, x.prev, x.c, x.m, x.kind, x.t, x.t_c, x.t_p,
                      x.weight, x.cycles) for x in p.periods])
    con.executemany("INSERT INTO topdown VALUES (?,?,?,?,?,?,?,?)",
                    [(n, r["kernel"], name, lvl, parent, how, td["fractions"][name],
                      td["slot_counts"][name]) for name, lvl, parent, how in TREE])


__all__ = ["text", "as_json", "write_sqlite", "LEVEL1"]
