"""Profile many PTX modules: ``ptxc profile DIR|FILES...`` (docs/profile.md).

``module_files(paths)`` expands the inputs: a directory gives its ``*.ptx``
files, searched recursively, in sorted order; a file is taken as given, in
the order given. ``profile_file(path, options)`` is the worker: it parses one
module, runs ``module_profile.profile_module(module, **options)`` and returns
plain data (``module_result``): the JSON dict of
``module_render.to_dict``, the CSV rows and the text rows. It is a
top-level function taking and returning picklable values, so the same
function runs in this process (``--jobs 1``), in a ``ProcessPoolExecutor``
with the spawn start method (``--jobs N``), and on the workers of a Dask
distributed cluster (``--dask ADDRESS``; ``distributed.Client.map``). A
module that cannot be read or parsed, or whose worker fails, is a result
with an ``error``, never a lost batch; a worker process that dies (a crash
in native code) breaks the pool (``concurrent.futures.process.
BrokenProcessPool``), and then the modules that were in flight are re-run one
by one in a fresh process, so the one that crashes is the one blamed.

Results come back in input order whatever order the workers finish in, and,
unless ``timings`` is asked for, hold nothing that depends on time: the
batch output is the same bytes for every ``--jobs`` and for Dask.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ptxc.errors import PtxcError
from ptxc.report.status_line import StatusLine

# profile_module keywords that name kernels: in a batch each module gets the
# entries for the kernels it has (module_options).
KERNEL_KEYED = ("launches", "args")
KERNEL_LISTS = ("kernels",)


# ------------------------------------------------------------- inputs
def module_files(paths) -> list[str]:
    """The module files of the inputs, in order (a directory: sorted ``*.ptx``)."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(Path(p).rglob("*.ptx"), key=lambda f: f.relative_to(p).parts)
            found = [str(f) for f in found if f.is_file()]
            if not found:
                raise PtxcError(f"no *.ptx file under the directory '{p}'")
            out += found
        else:
            out.append(p)
    return out


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ------------------------------------------------------------- worker
def profile_file(path: str, options: dict, timings: bool = False) -> dict:
    """Profile one module file (the worker): its ``module_result``, or an
    error result when it cannot be read, parsed or profiled."""
    try:
        return _profile_file(path, options, timings)
    except PtxcError as e:
        return error_result(path, e.headline())
    except Exception as e:  # noqa: BLE001 - one module's bug must not lose the batch
        return error_result(path, f"internal error: {type(e).__name__}: {e}")


def _profile_file(path: str, options: dict, timings: bool) -> dict:
    from ptxc.profile.module_profile import ModuleProfile, profile_module
    from ptxc.frontend.parser import load_module
    t0 = time.perf_counter()
    module = load_module(path)
    parse_s = time.perf_counter() - t0
    opts = module_options(module, options)
    if opts is None:                # --kernel names none of this module's kernels
        mp = ModuleProfile(module, options.get("mode", "hybrid"))
    else:
        mp = profile_module(module, **opts)
    mp.timings = {"parse": parse_s, **mp.timings}
    result = module_result(mp, timings)
    result["warnings"] = [str(w) for w in getattr(module, "warnings", None) or []]
    return result


def module_options(module, options: dict) -> dict | None:
    """``options`` restricted to the kernels ``module`` has, by any name of
    ptxc/ir/names.py (None: ``kernels`` names none of them, so nothing is to
    be profiled)."""
    from ptxc.ir.names import matches
    names = [k.name for k in module.kernels]

    def has(key):
        return any(matches(n, key) for n in names)
    opts = dict(options)
    for key in KERNEL_KEYED:
        if opts.get(key):
            opts[key] = {k: v for k, v in opts[key].items() if has(k)}
    for key in KERNEL_LISTS:
        if opts.get(key):
            opts[key] = [k for k in opts[key] if has(k)]
            if not opts[key]:
                return None
    if isinstance(opts.get("launch_file"), str):      # one launch file for the whole batch
        from ptxc.launcher.launch_file import load_launches
        opts["launch_file"] = load_launches(opts["launch_file"], module, skip_unknown=True)
    return opts


def module_result(mp, timings: bool = False) -> dict:
    """Plain data of one profiled module: ``json`` (to_dict), ``csv`` (the
    module's CSV rows as dicts, its total last), ``text`` (the cells of its
    text rows, its total last) and the kernel names of the module. Without
    ``timings``, nothing in it depends on time."""
    import csv
    import io

    from ptxc.profile import module_render as mpr
    d = mpr.to_dict(mp)
    rows = list(csv.DictReader(io.StringIO(mpr.render_csv(mp))))
    text = [mpr.text_row(r) for r in mp.rows] + [mpr.total_row(mp)]
    if not timings:
        d.pop("timings", None)
        for k in d["kernels"]:
            k.pop("seconds", None)
        for r in rows:
            r.pop(TIME_CSV_COLUMN, None)
        cut = mpr.TEXT_HEADER.index(TIME_TEXT_COLUMN)
        text = [cells[:cut] + cells[cut + 1:] for cells in text]
    return {"file": mp.module.filename, "error": None, "json": d, "csv": rows, "text": text,
            "names": [k.name for k in mp.module.kernels], "warnings": []}


TIME_CSV_COLUMN = "duration_ms"
TIME_TEXT_COLUMN = "ms"


def error_result(path: str, message: str) -> dict:
    return {"file": path, "error": message.splitlines()[0] if message else "error",
            "json": None, "csv": [], "text": [], "names": [], "warnings": []}


# ----------------------------------------------------------- executors
def run_batch(paths: list[str], options: dict, jobs: int = 1, dask: str | None = None,
              timings: bool = False, progress=None, worker=profile_file) -> list[dict]:
    """``worker(path, options, timings)`` for every path; the results in input order."""
    progress = progress or (lambda: None)
    if dask:
        from ptxc.profile.dask_cluster import run_dask
        return run_dask(paths, options, dask, timings, progress, worker, error_result)
    if jobs <= 1 or len(paths) <= 1:
        out = []
        for p in paths:
            out.append(worker(p, options, timings))
            progress()
        return out
    return run_pool(paths, options, jobs, timings, progress, worker)


def run_pool(paths, options, jobs: int, timings: bool, progress, worker) -> list[dict]:
    """Run the modules in ``jobs`` spawned processes, at most ``jobs`` in flight
    so that the modules a broken pool takes down are known: those are re-run
    one at a time in a fresh process each."""
    from collections import deque
    results: list = [None] * len(paths)
    todo = deque(range(len(paths)))
    while todo:
        suspects = _pool_round(paths, options, min(jobs, len(todo)), timings, progress, worker,
                               todo, results)
        for i in suspects:
            results[i] = _run_alone(paths[i], options, timings, worker)
            progress()
    return results


def _pool(jobs: int):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_no_launch_progress)


def _no_launch_progress() -> None:
    """Worker processes draw no per-launch progress line (backends/llvm/launch_wait.py):
    several would overwrite each other on the terminal they share."""
    os.environ["PTXC_PROGRESS"] = "0"


def _pool_round(paths, options, jobs, timings, progress, worker, todo, results) -> list[int]:
    """Run ``todo`` until it is empty or the pool breaks; the indices that
    were in flight when it broke."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool
    pool = _pool(jobs)
    running: dict = {}
    try:
        while todo or running:
            while todo and len(running) < jobs:
                i = todo.popleft()
                running[pool.submit(worker, paths[i], options, timings)] = i
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            broken = []
            for f in done:
                i = running.pop(f)
                try:
                    results[i] = f.result()
                except BrokenProcessPool:
                    broken.append(i)
                    continue
                progress()
            if broken:
                return sorted(broken + list(running.values()))
        return []
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_alone(path, options, timings, worker) -> dict:
    from concurrent.futures.process import BrokenProcessPool
    pool = _pool(1)
    try:
        return pool.submit(worker, path, options, timings).result()
    except BrokenProcessPool:
        return error_result(path, CRASH_MESSAGE)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


CRASH_MESSAGE = ("the worker process died while profiling this module (a crash in ptxc; "
                 "please report it)")


# ------------------------------------------------------------ progress
class Progress(StatusLine):
    """``ptxc: 12/300 modules done`` on a terminal's stderr (at most ten
    times a second, and the last count always), erased at the end; nothing
    when stderr is not a tty."""

    def __init__(self, total: int, stream=None):
        super().__init__(stream or sys.stderr, enabled=total > 1)
        self.total, self.done = total, 0

    def __call__(self) -> None:
        self.done += 1
        self.show(f"ptxc: {self.done}/{self.total} modules done", now=self.done == self.total)
