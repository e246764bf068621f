"""The data of the HTML report (docs/report.md): a JSON-ready dict built from
the command's own ``--format json`` document and, per kernel, its profile
dict (``Profile.to_dict()``, summed over launches for ``ptxc run``) and PTX
module. ptxc/report/html_report.py embeds it in the page; the page's script only
displays it.

``{"title", "command", "report": <the --format json document>,
"columns": [[key, heading], ...], "kernels": [kernel view]}``, a kernel view:
``name``, ``display`` (demangled), ``counters`` (the kernel table's numbers,
copied from ``report``), ``cfg`` (SVG per function), ``ptx`` (per PTX line:
text, warp/thread executions, branch and memory numbers, CUDA location),
``source`` (per CUDA file: every line with its per-source-line row, see
ptxc/report/source_profile.py), ``no_line`` (the row of the instructions
without a CUDA line, or None: the lines and it add up to the kernel),
``launch`` (ptxc/report/launch_stats.py: grid, block, registers, shared
memory, occupancy; or None), ``sectors_plot`` and ``divergence_plot`` (SVG,
ptxc/report/html_plots.py). Other records (value profiles, checker errors) can be
added as more keys of a kernel view.
"""
from __future__ import annotations

from ptxc.report.html_cfg import cfg_svg
from ptxc.report.html_plots import divergence_svg, sectors_svg
from ptxc.ir.source_lines import SourceMap, location_text
from ptxc.report.source_profile import branch_location, line_rows, locate
from ptxc.report.source_render import read_sources

COLUMNS = (("launches", "Launches"), ("time_share", "Time %"), ("time_s", "Time (s)"),
           ("inst_executed", "inst_executed"), ("thread_inst_executed", "thread_inst_executed"),
           ("warp_execution_efficiency", "warp_exec_eff %"), ("branch", "branch"),
           ("divergent_branch", "divergent_branch"), ("branch_efficiency", "branch_eff %"),
           ("flop_count_sp", "flop_sp"), ("flop_count_dp", "flop_dp"),
           ("gld_efficiency", "gld_eff %"), ("gst_efficiency", "gst_eff %"))
SUMMED = ("warp_execs", "thread_execs", "active", "taken", "not_taken", "divergent", "requests",
          "transactions", "lines", "requested_bytes", "bank_conflicts", "addresses")


# ---------------------------------------------------------- merging launches
def merge_profiles(dicts: list[dict]) -> dict:
    """Per-block, per-branch and per-memory-instruction records of several
    launches of one kernel, summed (ratios recomputed by their readers)."""
    if len(dicts) == 1:
        return dicts[0]
    out = {"memory": dicts[0].get("memory") or {}}
    for name in ("per_block", "per_branch", "per_memory_instr"):
        merged: dict = {}
        for d in dicts:
            for key, e in (d.get(name) or {}).items():
                merged[key] = _sum(merged.get(key), e)
        out[name] = merged
    for e in out["per_memory_instr"].values():          # stale per-launch ratios
        for space in ("global", "shared"):
            if isinstance(e.get(space), dict):
                e[space].pop("efficiency", None)
                e[space].pop("transactions_per_request", None)
    from ptxc.passes.count.memory_ranking import memory_rows
    out["memory_ranking"] = memory_rows(out["per_memory_instr"],
                                        out["memory"].get("shared_bank_bytes", 4))
    return out


def _sum(a, b):
    if a is None:
        return {k: (_sum(None, v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
                for k, v in b.items()}
    for k, v in b.items():
        if isinstance(v, dict):
            a[k] = _sum(a.get(k), v)
        elif isinstance(v, list) and k == "sectors_hist":
            a[k] = [x + y for x, y in zip(a.get(k) or [0] * len(v), v)]
        elif k in SUMMED and isinstance(v, int):
            a[k] = (a.get(k) or 0) + v
    return a


# ------------------------------------------------------------- a kernel
def kernel_view(module, name: str, profile: dict, counters: dict, display: str = "",
                dirs=(), launch: dict | None = None) -> dict:
    smap = SourceMap(module)
    fns = functions_of(module, name, profile)
    view = {"name": name, "display": display or name, "counters": counters,
            "cfg": [{"function": f.name, "svg": cfg_svg(f, profile)} for f in fns],
            "ptx": ptx_view(module, fns, profile, smap),
            "sectors_plot": sectors_svg(memory_plot_rows(profile, smap, module)),
            "divergence_plot": divergence_svg(branch_plot_rows(profile, smap, module)),
            "has_lines": smap.has_lines, "source": [], "no_line": None, "launch": launch}
    if smap.has_lines:
        rows = line_rows(profile, module, smap)
        view["source"] = source_view(rows, read_sources(sorted({r["file"] for r in rows}),
                                                        list(dirs)))
        view["no_line"] = next((r for r in rows if r["line"] is None), None)
    return view


def functions_of(module, name: str, profile: dict) -> list:
    """The kernel and the functions it ran (per_block keys), in module order."""
    ran = {k.rpartition(":")[0] for k in profile.get("per_block") or {}}
    return [f for f in module.functions if not f.is_decl and (f.name == name or f.name in ran)]


def ptx_view(module, fns, profile: dict, smap: SourceMap) -> list[dict]:
    """One entry per PTX line of the functions' text, with its numbers."""
    text = (module.source or "").splitlines()
    per_line: dict = {}
    blocks = profile.get("per_block") or {}
    mem = {(e["function"], e["index"]): e for e in (profile.get("per_memory_instr") or {}).values()}
    out = []
    for fn in fns:
        lines = [i.loc.line for b in fn.blocks for i in b.body if i.loc]
        if not lines:
            continue
        index = 0
        for b in fn.blocks:
            e = blocks.get(f"{fn.name}:{b.name}", {})
            br = (profile.get("per_branch") or {}).get(f"{fn.name}:{b.name}")
            for ins in b.body:
                index += 1
                if ins.loc is None:
                    continue
                loc = smap.instr(fn)[index - 1]
                d = {"warp_execs": e.get("warp_execs", 0), "thread_execs": e.get("thread_execs", 0),
                     "block": b.name, "source": location_text(loc) if loc else None}
                if br and ins is b.body[-1]:
                    d.update(divergent=br["divergent"], branch_execs=br["warp_execs"])
                m = mem.get((fn.name, index))
                if m is not None:
                    d["memory"] = _memory_summary(m, profile)
                per_line[ins.loc.line] = d
        first = min(lines)
        while first > 1 and not text[first - 2].lstrip().startswith((".visible", ".entry", ".func", ".weak")):
            first -= 1
        for n in range(max(first - 1, 1), min(max(lines) + 2, len(text)) + 1):
            out.append({"line": n, "text": text[n - 1] if n <= len(text) else "",
                        **per_line.get(n, {})})
    return out


def _memory_summary(m: dict, profile: dict) -> dict:
    bank = (profile.get("memory") or {}).get("shared_bank_bytes", 4)
    out = {"opcode": m["opcode"]}
    for space, unit in (("global", 32), ("shared", 32 * bank)):
        d = m.get(space)
        if d and d.get("requests") and "transactions" in d:
            moved = unit * d["transactions"]
            out.update(space=space, requests=d["requests"], transactions=d["transactions"],
                       efficiency=round(100 * d["requested_bytes"] / moved, 2) if moved else None)
    return out


def memory_plot_rows(profile: dict, smap, module) -> list[dict]:
    rows = []
    for e in (profile.get("per_memory_instr") or {}).values():
        g = e.get("global")
        if g and g.get("sectors_hist"):
            loc = locate(smap, module, e["function"], e["index"])
            where = f" ({location_text(loc).split(' (')[0].rsplit('/', 1)[-1]})" if loc else ""
            rows.append({"label": f"PTX {e['line']} {e['opcode']}{where}", "hist": g["sectors_hist"]})
    return rows


def branch_plot_rows(profile: dict, smap, module) -> list[dict]:
    rows = []
    for key, b in (profile.get("per_branch") or {}).items():
        loc = branch_location(smap, module, key)
        where = f" ({location_text(loc).split(' (')[0].rsplit('/', 1)[-1]})" if loc else ""
        rows.append({"label": f"PTX {b['line']}{where}", **{k: b[k] for k in
                     ("warp_execs", "divergent", "taken", "not_taken")}})
    return rows


def source_view(rows: list[dict], sources: dict) -> list[dict]:
    """Per CUDA file: its lines (text when readable) with their rows."""
    out = []
    by_file: dict = {}
    for r in rows:
        if r["line"] is not None:
            by_file.setdefault(r["file"], {})[r["line"]] = r
    for path, data in by_file.items():
        text = sources.get(path)
        numbers = range(1, len(text) + 1) if text else sorted(data)
        out.append({"file": path, "found": text is not None,
                    "lines": [{"line": n, "text": text[n - 1] if text else "",
                               "row": data.get(n)} for n in numbers]})
    return out
