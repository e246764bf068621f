"""`ptxc profile FILE` with the whole per-kernel work in forked processes:
each process parses, builds, slices, infers, compiles and runs only its
share of the module's kernels (docs/profile.md, "Speed").

The parent finds the kernels with a fast scan (ptxc/frontend/entry_scan.py), shares
them by estimated cost (the `;` of each body: longest first, each to the
least loaded process), loads what every process needs (the parser, LLVM and
the CTA loop, the analyses' modules), and forks. Each process parses the
module text with the other processes' kernels blanked (the module-level
declarations stay, every line and column in place), runs
``module_profile.profile_module`` on its kernels, and adds to each row what
rendering needs from the IR (``KernelRow.counts``: the count pass's static
counts, ``KernelRow.profile_json``: the JSON profile with its source lines),
so the parent renders the rows without the kernels' IR. A child sends its
rows, SSA warnings and timings back through a pipe; the parent runs the
first share itself, then puts the rows in module order.

The rows are those of the one-process run: a kernel's parse, slice (a
kernel's slice is its own where no `.func` is shared, passes/slice/slice_pass.py),
launch inference, compile and run see only that kernel and the module-level
declarations. Where that is not certain, or the output needs the whole
module's IR, ``profile_split`` returns None and the caller takes the
one-process path (which also gives the canonical message of any error):
a `.func` with a body or an unusual module shape (entry_scan), an option
naming a kernel the scan did not find, fewer than MIN_SHARE kernels per
process, or any error in any share (a parse error, a bad launch file, a
child that dies or fails: its kernels are then profiled by the fallback,
so they still get rows). The caller uses it only without ``--html``,
``--by source``, ``--report``, ``--topdown`` and ``--value-profile``.
"""
from __future__ import annotations

import os
import re
import sys
import time

from ptxc.profile.fork import collect, fork_child, processes

MIN_SHARE = 8             # kernels per process at least
_IN = re.compile(r"\(in (\S+)\)$")


def profile_split(path: str, options: dict, jobs: int):
    """The ModuleProfile of the file at ``path`` (module doc), or None."""
    from ptxc.frontend.entry_scan import scan_entries
    t0 = time.perf_counter()
    text = _read(path)
    entries = scan_entries(text) if text is not None else None
    if not entries:
        return None
    options = dict(options)
    chosen = _chosen(entries, options)
    n = processes(len(chosen) if chosen else 0, jobs, MIN_SHARE)
    if n < 2:
        return None
    wanted = {e.name for e in chosen}
    shares = share_by_cost(entries, n, wanted)
    scan_s = time.perf_counter() - t0
    prepare()
    children = [_fork(text, path, entries, share, wanted, options) for share in shares[1:]]
    mine = _guarded(text, path, entries, shares[0], wanted, options)
    results = [mine] + [collect(pid, read) for pid, read in children]
    if any(r is None for r in results):
        return None
    return _merge(results, entries, [e.name for e in chosen], scan_s)


def share_by_cost(entries: list, n: int, wanted: set) -> list[list]:
    """``n`` shares of about equal cost (longest first to the least loaded),
    each in module order. A kernel not profiled (``--kernel``) costs little:
    it is parsed and sliced only (the count pass's module total needs it)."""
    loads = [[0, k, []] for k in range(n)]
    cost = {e.name: (e.cost + 1) * (1 if e.name in wanted else 0.2) for e in entries}
    for e in sorted(entries, key=lambda e: -cost[e.name]):
        least = min(loads, key=lambda x: (x[0], x[1]))
        least[0] += cost[e.name]
        least[2].append(e)
    order = {e.name: i for i, e in enumerate(entries)}
    return [sorted(s, key=lambda e: order[e.name]) for _, _, s in loads]


def _read(path: str) -> str | None:
    from ptxc.frontend.parser import decode
    from ptxc.errors import PtxcError
    try:
        with open(path, "rb") as fh:
            return decode(fh.read(), path)
    except (OSError, PtxcError):
        return None             # the one-process path says why


def _chosen(entries: list, options: dict) -> list | None:
    """The entries to profile, or None when an option names a kernel the scan
    did not find, or names one ambiguously (ptxc/ir/names.py), or the launch
    file names one by other than its PTX name (or names one twice).
    ``options``' kernel names become PTX names, in place."""
    from ptxc.errors import PtxcError
    from ptxc.ir.names import resolve
    names = [e.name for e in entries]
    try:
        for key in ("launches", "args"):
            given = options.get(key) or {}
            canonical: dict = {}
            for k, v in given.items():
                name = resolve(names, k)
                if key == "args":
                    canonical.setdefault(name, []).extend(v)
                else:
                    canonical[name] = v
            if given:
                options[key] = canonical
        if options.get("kernels"):
            options["kernels"] = [resolve(names, k) for k in options["kernels"]]
    except PtxcError:
        return None
    lf = options.get("launch_file")
    if lf is not None:
        if not isinstance(lf, str):
            return None
        from ptxc.launcher.launch_file import kernel_names
        try:
            filed = kernel_names(lf)
        except PtxcError:
            return None
        if len(set(filed)) != len(filed) or any(k not in names for k in filed):
            return None
    wanted = set(options.get("kernels") or names)
    return [e for e in entries if e.name in wanted]


def prepare() -> None:
    """What every process needs, loaded once before the fork."""
    from ptxc.profile import fork as profile_fork
    from ptxc.frontend.parser import _parser
    from ptxc.passes.count import static as count_static
    from ptxc.passes import domtree, launch_infer
    from ptxc.passes.slice import slice_pass as _slice  # noqa: F401
    from ptxc.frontend import builder, function_builder, ssa
    from ptxc.launcher import api, args, checks, compile, config, execute  # noqa: F401
    from ptxc.report import source_profile  # noqa: F401
    from ptxc.backends.llvm import launch_wait, pipeline
    from ptxc.backends.llvm.ops import table as ops
    from ptxc.backends.llvm.instruments import racecheck, synccheck  # noqa: F401
    from ptxc.gpus import devices as gpus  # noqa: F401 - launch_limits reads the models at launch
    _parser()
    profile_fork.prepare()


# ------------------------------------------------------------ one share
def run_share(text: str, path: str, entries: list, share: list, wanted: set, options: dict):
    """(rows, warnings, timings, static counts of each kernel, ModuleProfile)
    of the kernels in ``share`` (those in ``wanted`` are profiled)."""
    from ptxc.frontend.parser import parse_module
    from ptxc.frontend.entry_scan import blanked
    from ptxc.profile.module_profile import ModuleProfile, profile_module
    from ptxc.passes.count.static import function_counts
    from ptxc.ir.source_lines import SourceMap
    from ptxc.report.source_profile import with_source
    keep = {e.name for e in share}
    names = [e.name for e in share if e.name in wanted]
    t0 = time.perf_counter()
    module = parse_module(blanked(text, entries, keep), path)
    parse_s = time.perf_counter() - t0
    if names:
        mp = profile_module(module, **_restricted(options, module, keep), kernels=names, jobs=1)
    else:
        mp = ModuleProfile(module, options.get("mode") or "hybrid")
    smap = SourceMap(module)
    for row in mp.rows:
        row.counts = function_counts(module.function(row.kernel))
        if row.profile is not None:
            row.profile_json = with_source(row.profile.to_dict(), module, smap)
        row.args = {}                    # buffers: rendering does not read them
    counts = {r.kernel: r.counts for r in mp.rows}
    for fn in module.functions:
        if not fn.is_decl and fn.name not in counts:
            counts[fn.name] = function_counts(fn)
    return mp.rows, list(module.warnings), {"parse": parse_s, **mp.timings}, counts, mp


def _restricted(options: dict, module, keep: set) -> dict:
    opts = {k: v for k, v in options.items() if k != "kernels"}
    for key in ("launches", "args"):
        if opts.get(key):
            opts[key] = {k: v for k, v in opts[key].items() if k in keep}
    if isinstance(opts.get("launch_file"), str):
        from ptxc.launcher.launch_file import load_launches
        opts["launch_file"] = load_launches(opts["launch_file"], module, skip_unknown=True)
    return opts


def _guarded(text, path, entries, share, wanted, options):
    try:
        return run_share(text, path, entries, share, wanted, options)
    except Exception:  # noqa: BLE001 - any failure: the one-process path redoes it all
        return None


def _fork(text, path, entries, share, wanted, options):
    """A forked process for ``share``: (pid, read end) for collect()."""
    def work():
        got = _guarded(text, path, entries, share, wanted, options)
        return None if got is None else got[:4]
    return fork_child(work)


def _merge(results: list, entries: list, order: list[str], scan_s: float):
    """One ModuleProfile: the parent's share's module and timings (its parse
    with the scan), every share's rows in module order, the SSA warnings in
    kernel order (as one parse of the module gives them), the count pass's
    module total over every kernel."""
    rows_by_name, warnings, counts = {}, [], {}
    for got in results:
        for row in got[0]:
            rows_by_name[row.kernel] = row
        warnings += got[1]
        counts.update(got[3])
    mp = results[0][4]
    mp.rows = [rows_by_name[k] for k in order]
    rank = {e.name: i for i, e in enumerate(entries)}
    warnings.sort(key=lambda w: rank.get(_kernel_of(w), -1))
    mp.module.warnings[:] = warnings
    mp.counts_total = counts_total([counts[e.name] for e in entries])
    timings = dict(results[0][2])
    timings["parse"] += scan_s
    mp.timings = timings
    return mp


def counts_total(fcs: list) -> dict:
    """passes.count_static.module_counts' ``total`` from each function's counts."""
    from ptxc.passes.count.static import empty_counts, finish, merge
    total = empty_counts()
    for fc in fcs:
        merge(total, fc)
    out = finish(total, any("slice_inst" in fc for fc in fcs))
    out["kernels"] = sum(1 for fc in fcs if fc["kernel"])
    out["functions"] = len(fcs)
    return out


def _kernel_of(warning: str):
    m = _IN.search(warning)
    return m.group(1) if m else None
