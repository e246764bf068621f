"""The memory instructions of a launch, ranked worst first (docs/metrics.md,
"Memory access counters"; used by Profile.to_dict, the count pass report and
the coloured CFG).

One row per measured instruction and space its lanes reached (a generic
instruction whose lanes went to global and shared memory gives two rows).
Rows are ranked by *wasted bytes*: bytes moved beyond those requested, that
is ``32 * sectors - requested bytes`` for global accesses and
``32 * bank_bytes * transactions - requested bytes`` for shared ones (bank
conflicts), never below 0; ties by more transactions, then text order.
Atomic rows waste nothing by this measure and come last.
"""
from __future__ import annotations

ROW_KEYS = ("rank", "function", "index", "line", "opcode", "kind", "space", "requests",
            "transactions", "transactions_per_request", "lines", "requested_bytes",
            "efficiency", "bank_conflicts", "addresses", "wasted_bytes")


def memory_rows(per_memory_instr: dict, bank_bytes: int) -> list[dict]:
    """Ranked rows (dicts with ROW_KEYS) of the instructions that ran."""
    rows = []
    for e in per_memory_instr.values():
        for space in ("global", "shared"):
            d = e.get(space)
            if d is None or not d["requests"]:
                continue
            rows.append(row(e, space, d, bank_bytes))
    rows.sort(key=lambda r: (-r["wasted_bytes"], -(r["transactions"] or 0),
                             r["function"], r["index"], r["space"]))
    for k, r in enumerate(rows):
        r["rank"] = k + 1
    return rows


def row(e: dict, space: str, d: dict, bank_bytes: int) -> dict:
    r = dict.fromkeys(ROW_KEYS)
    r.update({k: e[k] for k in ("function", "index", "line", "opcode", "kind")})
    r["space"] = space
    r["requests"] = d["requests"]
    if "addresses" in d:                       # atomic / reduction
        r["addresses"] = d["addresses"]
        r["wasted_bytes"] = 0
        return r
    r.update({k: d.get(k) for k in ("transactions", "transactions_per_request",
                                    "requested_bytes", "efficiency")})
    unit = 32 if space == "global" else 32 * bank_bytes
    r["wasted_bytes"] = max(0, unit * d["transactions"] - d["requested_bytes"])
    if space == "global":
        r["lines"] = d["lines"]
    else:
        r["bank_conflicts"] = d["bank_conflicts"]
    return r


def block_efficiency(per_memory_instr: dict, function: str, bank_bytes: int) -> dict:
    """{block name: memory efficiency in % of its loads and stores} of one
    function: requested bytes / bytes moved, over global and shared parts."""
    asked, moved = {}, {}
    for e in per_memory_instr.values():
        if e["function"] != function or e["kind"] not in ("load", "store"):
            continue
        for space, unit in (("global", 32), ("shared", 32 * bank_bytes)):
            d = e.get(space)
            if d is None or not d["requests"]:
                continue
            asked[e["block"]] = asked.get(e["block"], 0) + d["requested_bytes"]
            moved[e["block"]] = moved.get(e["block"], 0) + unit * d["transactions"]
    return {b: 100.0 * asked[b] / moved[b] for b in moved if moved[b]}
