"""Text, JSON and SQLite forms of a prediction + TopDown result (docs/predict.md).

Every modelled number is labelled "modelled"; numbers that are exact counts
are labelled "exact". JSON: one object per launch (``as_json``); SQLite:
tables ``predict`` (one row per launch), ``predict_periods`` (one row per
launch and calculate period, section 3.5), ``topdown`` (one row per launch
and TopDown node of the thesis's hierarchy: level, parent, exact or
modelled, IPC, fraction of IPC_MAX, slots, percent of stalls, equation, the
thesis's hardware metric) and ``topdown_figures`` (one row per launch and
scalar figure: IPC_MAX, IPC, IPC_issued, warp efficiency, IPC_STALL,
cycles, with kind and metric).
"""
from __future__ import annotations

from .topdown import LEVEL1, NODES

# (node, level, parent, kind) of the TopDown hierarchy, in print order.
TREE = tuple((name, lvl, parent, kind) for name, lvl, parent, kind, _eq in NODES)


PERIODS_SHOWN = 12


def text(r: dict, with_topdown: bool = True) -> str:
    p, occ = r["prediction"], r["occupancy"]
    from ptxc.ir.names import short
    lines = [f"kernel {short(r['kernel'], 100)} on {r['gpu']}, grid {tuple(r['grid'])} block "
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
    """The TopDown section of the text report (thesis chapter 4)."""
    fig = td["figures"]
    out = [f"  TopDown (Saiz 2021, chapter 4; the busiest SM over {td['cycles']:.0f} cycles; "
           f"metrics of {td['metric_set']})"]
    for name, label in (("ipc_max", "IPC_MAX"), ("ipc", "IPC"), ("ipc_issued", "IPC_issued"),
                        ("ipc_stall", "IPC_STALL")):
        out.append(f"    {label:16s} {fig[name]['value']:10.4f}  ({fig[name]['kind']}; "
                   f"{fig[name]['where']})")
    out.append(f"    {'warp efficiency':16s} {100 * td['warp_efficiency']:9.2f} %  (exact; "
               "Tables 4.1, 4.2)")
    if td["issue_limited"]:
        out.append(f"    note: the time model's {td['model_cycles']:.0f} cycles are fewer than "
                   "the dispatch units need to issue the launch's instructions; TopDown uses "
                   f"{td['cycles']:.0f}")
    out.append(f"    {'node':22s} {'IPC':>8s} {'% IPC_MAX':>10s} {'% stalls':>9s}  kind      eq.")
    for name, level, _parent, how in TREE:
        n = td["nodes"][name]
        pad = "  " * (level - 1)
        pct = "" if n["stall_percent"] is None else f"{n['stall_percent']:9.2f}"
        out.append(f"    {pad + name:22s} {n['ipc']:8.4f} {100 * n['fraction']:10.2f} "
                   f"{pct:>9s}  {how:9s} ({n['equation']})")
    rp = td["replays"]
    out.append(f"  replays (exact)  global {rp['global']}  shared {rp['shared']}  "
               f"width {rp['width']}")
    out.append(f"  barriers {td['barriers']}  branches {td['branches']}  "
               "(warp executions, exact)")
    return out


def topdown_json(td: dict) -> dict:
    """The ``topdown`` member of a launch's JSON object."""
    keep = ("source", "gpu", "compute_capability", "metric_set", "ipc_max", "ipc_max_source",
            "cycles", "model_cycles", "issue_limited", "share", "inst_executed",
            "thread_inst_executed", "inst_issued", "replays", "barriers", "branches",
            "warp_efficiency", "ipc", "ipc_issued", "ipc_stall", "figures", "nodes",
            "level1", "level2", "level3", "slots")
    out = {k: td[k] for k in keep}
    out["exact"] = ["warp_efficiency", "ipc_max", "replays", "barriers", "branches",
                    "inst_executed", "thread_inst_executed", "inst_issued"] + \
        [n for n, *_rest, how in TREE if how == "exact"]
    out["modelled"] = ["cycles", "ipc", "ipc_issued", "ipc_stall", "slots"] + \
        [n for n, *_rest, how in TREE if how == "modelled"]
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
        "topdown": topdown_json(td),
    }


def write_sqlite(path: str, results: list) -> None:
    """The four tables of the module doc (replaced if they exist)."""
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
    for t in ("predict", "predict_costs", "predict_periods", "topdown", "topdown_figures"):
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
                "parent TEXT, kind TEXT, ipc REAL, fraction REAL, slots REAL, "
                "stall_percent REAL, equation TEXT, metric TEXT)")
    con.execute("CREATE TABLE topdown_figures (launch INTEGER, kernel TEXT, figure TEXT, "
                "value REAL, kind TEXT, source TEXT, metric TEXT)")


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
    nodes = td["nodes"]
    con.executemany("INSERT INTO topdown VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    [(n, r["kernel"], name, lvl, parent, how, nodes[name]["ipc"],
                      nodes[name]["fraction"], nodes[name]["slots"],
                      nodes[name]["stall_percent"], nodes[name]["equation"],
                      nodes[name]["metric"]) for name, lvl, parent, how in TREE])
    con.executemany("INSERT INTO topdown_figures VALUES (?,?,?,?,?,?,?)",
                    [(n, r["kernel"], name, f["value"], f["kind"], f["where"], f["metric"])
                     for name, f in td["figures"].items()])


__all__ = ["text", "as_json", "topdown_json", "write_sqlite", "LEVEL1", "TREE"]
