"""Raw memory counters -> the memory part of a Profile (docs/metrics.md,
"Memory access counters").

The native code keeps, per measured instruction instance and space, the
counter blocks of memcount_ir.py. Here they are summed per instruction of
the text (over the inlined copies of a function), named as nvprof names
them, and totalled per launch; ratios (efficiency, per request) are
derived from the integer sums.
"""
from __future__ import annotations

import numpy as np

from ptxc.launcher.profile_tables import ATOMIC_KINDS, GROUPS, group, tables

SECTOR, LINE = 32, 128


def memory_profile(prof, c, counts) -> None:
    """Fill ``prof.memory`` and ``prof.per_memory_instr`` from the counters:
    each layout's counter blocks summed per entry in one numpy step
    (profile_tables.MemoryTables), then named."""
    prof.memory_counters = bool(c.memory_counters)
    if not c.memory_counters:
        return
    t = tables(c).memory
    sums = {}
    for g, (entry, bases) in t.blocks.items():
        acc = np.zeros((len(t.entries), GROUPS[g]), dtype=np.int64)
        np.add.at(acc, entry, counts[bases[:, None] + np.arange(GROUPS[g])])
        sums[g] = acc.tolist()
    per = {}
    for k, (key, fields, parts) in enumerate(t.entries):
        e = per[key] = dict(fields)
        for part in parts:
            e[part] = named(e["kind"], part, sums[group(e["kind"], part)][k])
            if part in ("global", "shared"):
                derive(e[part], e["kind"], part, c.bank_bytes)
    prof.per_memory_instr = per
    prof.memory = totals(per, c.bank_bytes)


def named(kind: str, part: str, vals: list) -> dict:
    """One counter block (memcount_ir.py layout; summed over instances) by name."""
    if kind in ATOMIC_KINDS:
        return {"requests": vals[0], "addresses": vals[1]}
    if part == "global":
        return {"requests": vals[0], "transactions": vals[1], "lines": vals[2],
                "requested_bytes": vals[3], "sectors_hist": vals[4:]}
    return {"requests": vals[0], "transactions": vals[1], "ideal_transactions": vals[2],
            "requested_bytes": vals[3]}


def ratio(a: int, b: int, scale: float = 1.0):
    return round(scale * a / b, 6) if b else None


def derive(d: dict, kind: str, part: str, bank_bytes: int) -> None:
    """Per-instruction ratios from the sums."""
    if kind in ATOMIC_KINDS:
        d["addresses_per_request"] = ratio(d["addresses"], d["requests"])
        return
    d["transactions_per_request"] = ratio(d["transactions"], d["requests"])
    if part == "global":
        d["efficiency"] = ratio(d["requested_bytes"], SECTOR * d["transactions"], 100)
    else:
        d["bank_conflicts"] = d["transactions"] - d["ideal_transactions"]
        d["efficiency"] = ratio(d["requested_bytes"], 32 * bank_bytes * d["transactions"], 100)


def totals(per: dict, bank_bytes: int) -> dict:
    """The launch totals (nvprof names; docs/metrics.md): integer sums, then
    the ratios derived from them (add_ratios; None marks their place in the
    reports' order)."""
    t = {"shared_bank_bytes": bank_bytes}
    for prefix, kind in (("gld", "load"), ("gst", "store")):
        rows = [e["global"] for e in per.values() if e["kind"] == kind and "global" in e]
        t.update({f"{prefix}_requests": _sum(rows, "requests"),
                  f"{prefix}_transactions": _sum(rows, "transactions"),
                  f"{prefix}_lines": _sum(rows, "lines"),
                  f"{prefix}_requested_bytes": _sum(rows, "requested_bytes"),
                  f"{prefix}_sectors_hist": [sum(col) for col in
                                             zip(*(r["sectors_hist"] for r in rows))] or [0] * 32,
                  f"{prefix}_transactions_per_request": None, f"{prefix}_efficiency": None})
    for word, short, kind in (("load", "ld", "load"), ("store", "st", "store")):
        rows = [e["shared"] for e in per.values() if e["kind"] == kind and "shared" in e]
        tx = _sum(rows, "transactions")
        t.update({f"shared_{word}_requests": _sum(rows, "requests"),
                  f"shared_{word}_transactions": tx,
                  f"shared_{short}_bank_conflict": tx - _sum(rows, "ideal_transactions"),
                  f"shared_{word}_requested_bytes": _sum(rows, "requested_bytes"),
                  f"shared_{word}_transactions_per_request": None})
    t["shared_efficiency"] = None
    for space in ("global", "shared"):
        atom = [e[space] for e in per.values() if e["kind"] == "atomic" and space in e]
        red = [e[space] for e in per.values() if e["kind"] == "reduction" and space in e]
        if space == "global":
            t["global_atomic_requests"] = _sum(atom, "requests")
            t["global_reduction_requests"] = _sum(red, "requests")
        else:
            t["shared_atomic_requests"] = _sum(atom, "requests") + _sum(red, "requests")
        t[f"{space}_atomic_addresses"] = _sum(atom, "addresses") + _sum(red, "addresses")
    add_ratios(t)
    return t


RATIOS = ("gld_transactions_per_request", "gld_efficiency", "gst_transactions_per_request",
          "gst_efficiency", "shared_load_transactions_per_request",
          "shared_store_transactions_per_request", "shared_efficiency")


def add_ratios(t: dict) -> None:
    """Set the RATIOS of totals ``t`` from its integer sums (also for totals
    summed over several launches: ptxc run's per-kernel rows)."""
    for prefix in ("gld", "gst"):
        tx, req = t[f"{prefix}_transactions"], t[f"{prefix}_requests"]
        t[f"{prefix}_transactions_per_request"] = ratio(tx, req)
        t[f"{prefix}_efficiency"] = ratio(t[f"{prefix}_requested_bytes"], SECTOR * tx, 100)
    for word in ("load", "store"):
        t[f"shared_{word}_transactions_per_request"] = ratio(t[f"shared_{word}_transactions"],
                                                             t[f"shared_{word}_requests"])
    asked = t["shared_load_requested_bytes"] + t["shared_store_requested_bytes"]
    moved = t["shared_load_transactions"] + t["shared_store_transactions"]
    t["shared_efficiency"] = ratio(asked, 32 * t["shared_bank_bytes"] * moved, 100)


def scalar_totals(memory: dict) -> dict:
    """The totals that fit one table cell each (the histograms left out)."""
    return {k: v for k, v in memory.items() if not isinstance(v, list)}


def _sum(rows, key: str) -> int:
    return sum(r[key] for r in rows)


def sectors_pmf(hist: list) -> dict:
    """{sectors: fraction of requests} of a 32-bin histogram (SASSI's plot)."""
    n = sum(hist)
    return {k + 1: round(v / n, 6) for k, v in enumerate(hist) if v} if n else {}
