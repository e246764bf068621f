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

Ctrl-C (SIGINT) or SIGTERM stops a batch promptly (in this process or in
worker processes; not on Dask): the worker processes are terminated, and
``run_batch`` raises :class:`Interrupted` with the results so far, a
result marked ``interrupted`` (``interrupted_result``) for each module not
finished. Workers never act on a terminal's Ctrl-C themselves (they start
with SIGINT blocked), and they end when ptxc dies, even of SIGKILL
(ptxc/interrupts.py, die_with_parent), so none is left behind and the
multiprocessing resource tracker, which ends with the last of them,
removes their semaphores from /dev/shm.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ptxc.errors import PtxcError
from ptxc.interrupts import interrupt_flag, signal_name, sigint_blocked, sigterm_interrupts
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


def interrupted_result(path: str, signal: str, running: bool) -> dict:
    """A module not profiled because the batch was interrupted (``running``:
    its worker had it when the signal came). Like an error result (no
    rows), but not a failure: ``interrupted`` is set."""
    when = "while it ran" if running else "before it started"
    return {**error_result(path, f"not profiled: interrupted ({signal}) {when}"),
            "interrupted": "running" if running else "not started"}


class Interrupted(Exception):
    """Ctrl-C or SIGTERM stopped the batch: ``signal`` ('SIGINT' or
    'SIGTERM') and ``results``, every module's (interrupted_result for
    those not finished), in input order."""

    def __init__(self, signal: str, results: list):
        super().__init__(f"interrupted ({signal})")
        self.signal, self.results = signal, results


# ----------------------------------------------------------- executors
def run_batch(paths: list[str], options: dict, jobs: int = 1, dask: str | None = None,
              timings: bool = False, progress=None, worker=profile_file) -> list[dict]:
    """``worker(path, options, timings)`` for every path; the results in input
    order. Raises Interrupted on Ctrl-C or SIGTERM (not on Dask)."""
    progress = progress or (lambda: None)
    if dask:
        from ptxc.profile.dask_cluster import run_dask
        return run_dask(paths, options, dask, timings, progress, worker, error_result)
    if jobs <= 1 or len(paths) <= 1:
        return run_serial(paths, options, timings, progress, worker)
    return run_pool(paths, options, jobs, timings, progress, worker)


def run_serial(paths, options, timings: bool, progress, worker) -> list[dict]:
    """The modules one after the other in this process. Ctrl-C and SIGTERM
    stop the launch running (launch_wait) and raise Interrupted."""
    out: list = [None] * len(paths)
    i = 0
    with sigterm_interrupts():
        try:
            for i, p in enumerate(paths):
                out[i] = worker(p, options, timings)
                progress()
        except KeyboardInterrupt as e:
            name = signal_name(e)
            raise Interrupted(name, _finish(paths, out, name, {i})) from None
    return out


def _finish(paths, results: list, signal: str, running) -> list:
    """``results`` with an interrupted_result for each module not finished."""
    return [r if r is not None else interrupted_result(paths[i], signal, i in running)
            for i, r in enumerate(results)]


def run_pool(paths, options, jobs: int, timings: bool, progress, worker) -> list[dict]:
    """Run the modules in ``jobs`` spawned processes, at most ``jobs`` in flight
    so that the modules a broken pool takes down are known: those are re-run
    one at a time in a fresh process each. Ctrl-C and SIGTERM only set a
    flag (interrupt_flag) that the waits below poll: the workers are then
    terminated and Interrupted is raised (a second signal ends ptxc at once;
    its workers die with it)."""
    from collections import deque
    results: list = [None] * len(paths)
    todo = deque(range(len(paths)))
    running: set = set()
    with interrupt_flag() as flag:
        while todo and not flag.signal:
            suspects = _pool_round(paths, options, min(jobs, len(todo)), timings, progress,
                                   worker, todo, results, flag, running)
            for i in suspects:
                if flag.signal:
                    break
                running.add(i)
                got = _run_alone(paths[i], options, timings, worker, flag)
                if got is None:
                    break
                running.discard(i)
                results[i] = got
                progress()
    if flag.signal:
        raise Interrupted(flag.signal, _finish(paths, results, flag.signal, running))
    return results


POLL = 0.1              # seconds between looks at the interrupt flag while workers run


def _pool(jobs: int):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start, initargs=(os.getpid(),))


def _worker_start(parent: int) -> None:
    """A worker process starts: it ends when ptxc (``parent``) dies, even of
    SIGKILL (ptxc/interrupts.py), and draws no per-launch progress line
    (backends/llvm/launch_wait.py): several would overwrite each other on
    the terminal they share."""
    from ptxc.interrupts import die_with_parent
    die_with_parent(parent)
    os.environ["PTXC_PROGRESS"] = "0"


def _submit(pool, *args):
    """pool.submit, with SIGINT blocked while it may spawn a worker
    (interrupts.sigint_blocked: the worker starts with SIGINT blocked)."""
    with sigint_blocked():
        return pool.submit(*args)


def _stop_pool(pool) -> None:
    """Terminate the pool's workers (SIGTERM, then SIGKILL after a second)
    and shut it down."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(1.0)
        if p.is_alive():
            p.kill()
            p.join()
    pool.shutdown(wait=True, cancel_futures=True)


def _pool_round(paths, options, jobs, timings, progress, worker, todo, results, flag,
                running_set) -> list[int]:
    """Run ``todo`` until it is empty, the pool breaks or ``flag`` rises; the
    indices that were in flight when it broke (none after an interrupt:
    ``running_set`` holds those in flight then)."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool
    pool = _pool(jobs)
    running: dict = {}
    try:
        while todo or running:
            while todo and len(running) < jobs and not flag.signal:
                i = todo.popleft()
                running[_submit(pool, worker, paths[i], options, timings)] = i
            done, _ = wait(running, timeout=POLL, return_when=FIRST_COMPLETED)
            broken = []
            for f in done:
                i = running.pop(f)
                try:
                    results[i] = f.result()
                except BrokenProcessPool:
                    broken.append(i)
                    continue
                progress()
            if flag.signal:           # (a worker killed by the same signal broke the pool)
                running_set.update(broken + list(running.values()))
                return []
            if broken:
                return sorted(broken + list(running.values()))
        return []
    finally:
        if flag.signal:
            _stop_pool(pool)
        else:
            pool.shutdown(wait=True, cancel_futures=True)


def _run_alone(path, options, timings, worker, flag) -> dict | None:
    """One module in a fresh worker process (its crash blames it); None when
    ``flag`` rose meanwhile."""
    from concurrent.futures import wait
    from concurrent.futures.process import BrokenProcessPool
    pool = _pool(1)
    try:
        future = _submit(pool, worker, path, options, timings)
        while not wait([future], timeout=POLL).done:
            if flag.signal:
                return None
        try:
            return future.result()
        except BrokenProcessPool:
            return None if flag.signal else error_result(path, CRASH_MESSAGE)
    finally:
        if flag.signal:
            _stop_pool(pool)
        else:
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
