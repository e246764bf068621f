"""A launch's per-instruction records at the CUDA source line (docs/report.md,
"Source attribution"; the locations come from ptxc.ir.source_lines).

``annotate(dyn, module)`` adds to a profile dict (``Profile.to_dict()``):
``source`` (the location dict, or None) to every ``per_branch`` entry (the
block's branch instruction) and ``per_memory_instr`` entry, and the flat
columns ``source_file`` / ``source_line`` to every ``memory_ranking`` row.
Other records (value profiles, checker errors) get theirs from
``locate(smap, module, function, index)``.

``line_rows(dyn, module)`` aggregates the launch per source line: every
instruction counts its block's warp and thread executions (METRICS.md
``inst_executed``, ``thread_inst_executed``: an instruction runs once per
warp execution of its block), branches count the executions of ``bra`` /
``brx`` and SASSI's divergent executions (``per_branch``), memory columns sum
the instructions' rows of ``memory_ranking`` (requests, transactions,
requested and wasted bytes). Several launches: line_rows of their summed
profile (html_model.merge_profiles; summing their rows would count an
instruction once per launch). Instructions without a line are the row with
``line`` None.
"""
from __future__ import annotations

from ptxc.ir.source_lines import SourceMap

COUNT_KEYS = ("instructions", "inst_executed", "thread_inst_executed", "branch",
              "divergent_branch", "mem_requests", "mem_transactions", "requested_bytes",
              "moved_bytes", "wasted_bytes")
ROW_KEYS = ("file", "line") + COUNT_KEYS + ("warp_execution_efficiency", "branch_efficiency",
                                            "memory_efficiency", "ptx_lines")


def locate(smap: SourceMap, module, function: str, index: int):
    """The location of instruction ``index`` (1-based, phis skipped) of ``function``."""
    fn = smap.by_name.get(function)
    if fn is None:
        return None
    locs = smap.instr(fn)
    return locs[index - 1] if 0 < index <= len(locs) else None


def _block_index(fn, smap: SourceMap) -> dict:
    """{block name: (1-based index of its first instruction, the block)}, kept in
    ``smap`` (a SourceMap describes the module as it is when made)."""
    key = ("blocks", id(fn))
    if key not in smap._cache:
        out, k = {}, 0
        for b in fn.blocks:
            out[b.name] = (k + 1, b)
            k += len(b.body)
        smap._cache[key] = out
    return smap._cache[key]


def annotate(dyn: dict, module, smap: SourceMap | None = None) -> SourceMap:
    """Add the source locations to the records of profile dict ``dyn``."""
    smap = smap or SourceMap(module)
    if not smap.has_lines:
        return smap
    for name in ("per_branch", "per_memory_instr"):       # copies: the Profile's own dicts stay
        if dyn.get(name):
            dyn[name] = {k: dict(v) for k, v in dyn[name].items()}
    if dyn.get("memory_ranking"):
        dyn["memory_ranking"] = [dict(r) for r in dyn["memory_ranking"]]
    for key, e in (dyn.get("per_branch") or {}).items():
        e["source"] = branch_location(smap, module, key)
    for e in (dyn.get("per_memory_instr") or {}).values():
        e["source"] = locate(smap, module, e["function"], e["index"])
    for r in dyn.get("memory_ranking") or []:
        loc = locate(smap, module, r["function"], r["index"])
        r["source_file"] = loc["file"] if loc else None
        r["source_line"] = loc["line"] if loc else None
    return smap


def with_source(dyn: dict, module, smap: SourceMap | None = None) -> dict:
    """``dyn`` annotated, with ``source_lines`` (line_rows) when the PTX has lines."""
    smap = annotate(dyn, module, smap)
    if smap.has_lines:
        dyn["source_lines"] = line_rows(dyn, module, smap)
    return dyn


def line_rows(dyn: dict, module, smap: SourceMap | None = None) -> list[dict]:
    """One row per source line (ROW_KEYS), in file and line order."""
    smap = smap or SourceMap(module)
    rows: dict = {}
    for e in (dyn.get("per_block") or {}).values():
        fn = smap.by_name.get(e["function"])
        blocks = _block_index(fn, smap) if fn is not None else {}
        if e["block"] not in blocks:
            continue
        first, blk = blocks[e["block"]]
        locs = smap.instr(fn)
        for k, ins in enumerate(blk.body):
            r = _row(rows, locs[first - 1 + k])
            r["instructions"] += 1
            r["inst_executed"] += e["warp_execs"]
            r["thread_inst_executed"] += e["thread_execs"]
            if ins.opcode in ("bra", "brx"):
                r["branch"] += e["warp_execs"]
            if ins.loc is not None:
                r["ptx_lines"].add(ins.loc.line)
    for key, b in (dyn.get("per_branch") or {}).items():
        _row(rows, branch_location(smap, module, key))["divergent_branch"] += b["divergent"]
    for m in dyn.get("memory_ranking") or []:
        r = _row(rows, locate(smap, module, m["function"], m["index"]))
        _add_memory(r, m, dyn)
    return finish(rows)


def branch_location(smap, module, key: str):
    """The location of the branch that ends block ``key`` ("function:block")."""
    fname, _, bname = key.rpartition(":")
    fn = smap.by_name.get(fname)
    first = _block_index(fn, smap).get(bname) if fn is not None else None
    return locate(smap, module, fname, first[0] + len(first[1].body) - 1) if first else None


def _add_memory(r: dict, m: dict, dyn: dict) -> None:
    r["mem_requests"] += m["requests"] or 0
    if m.get("transactions") is None:          # atomics: no sectors (passes/count/memory_ranking.py, row)
        return
    bank = (dyn.get("memory") or {}).get("shared_bank_bytes", 4)
    unit = 32 if m["space"] == "global" else 32 * bank
    r["mem_transactions"] += m["transactions"]
    r["requested_bytes"] += m["requested_bytes"] or 0
    r["moved_bytes"] += unit * m["transactions"]
    r["wasted_bytes"] += m["wasted_bytes"] or 0


def _row(rows: dict, loc) -> dict:
    key = (loc["file"], loc["line"]) if loc else ("", None)
    if key not in rows:
        rows[key] = {"file": key[0], "line": key[1], **dict.fromkeys(COUNT_KEYS, 0),
                     "ptx_lines": set()}
    return rows[key]


def finish(rows: dict) -> list[dict]:
    """Derived ratios (METRICS.md formulas, per line) and the sorted list."""
    out = []
    for key in sorted(rows, key=lambda k: (k[1] is None, k[0], k[1] or 0)):
        r = rows[key]
        r["ptx_lines"] = sorted(r["ptx_lines"])
        r["warp_execution_efficiency"] = (round(100 * r["thread_inst_executed"]
                                                / (32 * r["inst_executed"]), 6)
                                          if r["inst_executed"] else None)
        r["branch_efficiency"] = (round(100 * (r["branch"] - r["divergent_branch"]) / r["branch"], 6)
                                  if r["branch"] else None)
        r["memory_efficiency"] = (round(100 * r["requested_bytes"] / r["moved_bytes"], 6)
                                  if r["moved_bytes"] else None)
        out.append({k: r[k] for k in ROW_KEYS})
    return out
