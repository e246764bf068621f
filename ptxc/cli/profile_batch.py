"""``ptxc profile DIR|FILES...``: the batch side of the profile command
(ptxc/cli/profile.py parses the options; docs/profile.md, "Many modules").

Expands the inputs, runs the modules (``profile_batch.run_batch``: in this
process, in ``--jobs`` processes or on a Dask cluster), prints the parser
warnings of every module in input order, the report in the chosen format,
writes the SQLite report, and ends with exit status 1 (a last line on
stderr says why) when a module or a kernel failed, or when an option names
a kernel that no module has. Ctrl-C or SIGTERM stops the batch: the modules
that finished are reported, the others marked as not profiled, and ptxc
exits with status 130 (ptxc/profile/batch.py).
"""
from __future__ import annotations

import sys

import click

from ptxc.errors import PtxcError


EXIT_INTERRUPTED = 130     # Ctrl-C or SIGTERM, as `ptxc run` (docs/profile.md)


def profile_batch_command(files, options: dict, fmt: str, jobs, dask, report_path,
                          timings: bool) -> None:
    from ptxc.profile.batch import Interrupted, Progress, default_jobs, module_files, run_batch
    from ptxc.profile.batch_render import interrupt_text, render
    paths = module_files(files)
    jobs = jobs or default_jobs()
    options = {**options, "threads": options.get("threads") or worker_threads(jobs, dask, paths)}
    progress = Progress(len(paths))
    interrupted = None
    try:
        results = run_batch(paths, options, jobs, dask, timings, progress)
    except Interrupted as e:      # the modules that finished are reported
        interrupted, results = e.signal, e.results
    finally:
        progress.clear()
    for r in results:
        for w in r["warnings"]:
            click.echo(w, err=True)
    sys.stdout.write(render(results, fmt, options["mode"], timings, interrupted))
    sys.stdout.flush()
    if report_path:
        write_results(report_path, results, options["mode"], timings, interrupted)
    if interrupted:
        click.echo(f"ptxc: {interrupt_text(results, interrupted)}; the profiled ones are "
                   f"reported", err=True)
        sys.exit(EXIT_INTERRUPTED)
    check(results, options)


def worker_threads(jobs: int, dask, paths) -> int | None:
    """CTA threads per module: the cores shared by the processes that run at
    once (None in this process: the launcher's default, every core; 1 on Dask,
    whose workers share their machines as the cluster decides)."""
    from ptxc.profile.batch import default_jobs
    if dask:
        return 1
    running = min(jobs, len(paths))
    return None if running <= 1 else max(1, default_jobs() // running)


def write_results(path: str, results, mode: str, timings: bool,
                  interrupted: str | None = None) -> None:
    import sqlite3

    from ptxc.profile.batch_render import grand_total
    from ptxc.profile.sqlite_report import report_meta, write_sqlite
    try:
        write_sqlite(path, results, report_meta(results, mode, grand_total(results), interrupted),
                     timings)
    except OSError as e:
        raise PtxcError(f"cannot write the report '{path}': {e.strerror or e}") from None
    except sqlite3.Error as e:
        raise PtxcError(f"cannot write the report '{path}': {e}") from None


def write_report(path: str, mps: list, mode: str, timings: bool) -> None:
    """The SQLite report of profiled modules (``ptxc profile FILE --report``)."""
    from ptxc.profile.batch import module_result
    write_results(path, [module_result(mp, timings) for mp in mps], mode, timings)


def check(results, options: dict) -> None:
    """Exit status 1 when a module or a kernel failed, or an option named a
    kernel that no module has (checked when every module could be read)."""
    failed_modules = [r["file"] for r in results if r["error"] is not None]
    failed_kernels = [f"{r['file']}:{k['kernel']}" for r in results if r["error"] is None
                      for k in r["json"]["kernels"] if k["status"] == "error"]
    problems = []
    if failed_modules:
        problems.append(f"{len(failed_modules)} module(s) failed: {_some(failed_modules)}")
    if failed_kernels:
        problems.append(f"{len(failed_kernels)} kernel(s) failed: {_some(failed_kernels)}")
    unknown = [] if failed_modules else unknown_kernels(results, options)
    if unknown:
        problems.append(f"no module has a kernel named {_some([repr(u) for u in unknown])}")
    if problems:
        raise PtxcError("; ".join(problems) + " (see the report)")


def unknown_kernels(results, options: dict) -> list[str]:
    from ptxc.profile.batch import KERNEL_KEYED, KERNEL_LISTS
    named = [k for key in KERNEL_KEYED + KERNEL_LISTS for k in (options.get(key) or ())]
    if options.get("launch_file"):
        from ptxc.launcher.launch_file import kernel_names
        named += kernel_names(options["launch_file"])
    from ptxc.ir.names import matches
    have = {n for r in results for n in r["names"]}
    return list(dict.fromkeys(k for k in named if not any(matches(n, k) for n in have)))


def _some(items: list[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (" ..." if len(items) > n else "")
