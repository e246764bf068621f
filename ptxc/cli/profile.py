"""``ptxc profile``: every kernel of a module (or of many modules) launched
and profiled, one row each (docs/profile.md).
"""
from __future__ import annotations

import os
import re
import sys

import click

from ptxc.cli.options import (FORMAT_CHOICES, MODE_CHOICES, html_option, max_steps_option,
                              parse_dim, print_warnings, read_module, threads_option,
                              topdown_option, value_profile_option)

from ptxc.cli.process import kernel_jobs, pause_gc
from ptxc.errors import PtxcError


_DIMS = re.compile(r"[\dxX,\s]+")


def _launch_callback(ctx, param, values) -> dict:
    """['k:155:256', 'k2:4,2'] -> {'k': ((155,1,1), (256,1,1)), 'k2': ((4,2,1), None)};
    the kernel may be any name of ptxc/ir/names.py (``ns::k:4`` too)."""
    out = {}
    for v in values:
        parts = v.split(":")
        dims = 0
        while dims < 2 and len(parts) - dims > 1 and _DIMS.fullmatch(parts[-1 - dims]):
            dims += 1
        kernel = ":".join(parts[:len(parts) - dims]).strip()
        if dims == 0 or not kernel:
            raise click.BadParameter(f"expected KERNEL:GRID[:BLOCK], got '{v}'",
                                     param_hint="'--launch'")
        grid = parse_dim(parts[len(parts) - dims], "'--launch'")
        block = parse_dim(parts[-1], "'--launch'") if dims == 2 else None
        out[kernel] = (grid, block)
    return out


def _kernel_arg_callback(ctx, param, values) -> dict:
    """['k:n=5', 'k:a=zeros:f32:8'] -> {'k': ['n=5', 'a=zeros:f32:8']}; the
    kernel may be any name of ptxc/ir/names.py (``ns::k:n=5`` too)."""
    out: dict[str, list] = {}
    for v in values:
        left, eq, value = v.partition("=")
        kernel, colon, name = left.rpartition(":")
        if not colon or not kernel.strip() or not eq or not name.strip():
            raise click.BadParameter(f"expected KERNEL:NAME=VALUE, got '{v}'", param_hint="'--arg'")
        out.setdefault(kernel.strip(), []).append(f"{name}={value}")
    return out


@click.command("profile")
@click.argument("files", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option("--launch", "launches", multiple=True, metavar="KERNEL:GRID[:BLOCK]",
              callback=_launch_callback,
              help="Launch KERNEL with this grid (and block; default .reqntid) instead of "
                   "inferring it (repeatable), e.g. fusion_51:98:256.")
@click.option("--arg", "args", multiple=True, metavar="KERNEL:NAME=VALUE",
              callback=_kernel_arg_callback,
              help="An argument of one kernel (repeatable), value syntax as 'opt --arg'.")
@click.option("--launches", "launch_file", metavar="FILE", default=None,
              help="A launch file (JSON or CSV, docs/profile.md): grid, block and arguments "
                   "per kernel; --launch and --arg win over it.")
@click.option("--zero-fill", is_flag=True, default=False,
              help="Run kernels whose control flow reads memory that has no --arg on "
                   "zero-filled buffers (the row says so).")
@click.option("--kernel", "kernels", multiple=True, metavar="NAME",
              help="Profile only these kernels (repeatable; default: all).")
@click.option("--mode", type=click.Choice(MODE_CHOICES), default=None,
              help="hybrid (default): run only the branch slice; full: run every instruction "
                   "(the default with --value-profile).")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="text",
              show_default=True, help="Report format.")
@max_steps_option("Step budget per warp before a run is stopped as non-terminating.")
@threads_option("Host threads that run CTAs in parallel.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Modules profiled in parallel processes, or for one file the kernels "
                   "compiled and run in parallel processes (default: every core).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Profile the modules on this Dask distributed scheduler (tcp://host:8786).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE.sqlite", help="Also write the rows to this SQLite file.")
@click.option("--by", "by", type=click.Choice(["ptx", "source"]), default="ptx", show_default=True,
              help="source: also report per CUDA source line (one module; needs .loc).")
@html_option("Also write the self-contained HTML report (one module; docs/report.md).")
@click.option("--timings", is_flag=True,
              help="Add the times to the output of several modules (then not deterministic).")
@topdown_option("Also predict each launched kernel's time on the --gpu model and its TopDown "
                   "(one module; reruns each launch with memory counters; docs/predict.md).")
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help="GPU model of --topdown and of --html's launch statistics: h100, a100, "
                   "v100, t4, rtx2060, gtx260, gtx1070, quadro-rtx4000.")
@value_profile_option("Profile every register write of one module's kernels: constant bits and "
                   "scalar writes per kernel (a full run; docs/value-profile.md).")
def profile_command(files, launches, args, launch_file, zero_fill, kernels, mode, fmt, max_steps,
                    threads, jobs, dask_address, report_path, timings, topdown, gpu_key,
                    value_profile, by="ptx", html_path=None):
    """Run every kernel of FILE and print one row per kernel and the module total;
    several files or a directory (its *.ptx, recursively) give a row per kernel
    of every module, each module's total and the grand total.

    A kernel's launch is --launch, else its --launches entry, else its
    linear-index bound check (XLA-style kernels: .reqntid block, grid =
    ceil(bound / CTA stride)), else one CTA (grid 1, block .reqntid or
    .maxntid: a per-CTA row, counters of that CTA only). The report names
    each launch's source and lists the kernels that could not be launched,
    with the reason. Exit status 1 if a kernel failed at run time or a
    module could not be profiled (its row says why).

    \b
    Examples:
      ptxc profile module.ptx
      ptxc profile --format=csv module.ptx > rows.csv
      ptxc profile --launch fusion_51:98 --arg 'k:n=500' module.ptx
      ptxc profile --jobs 8 --format=csv --report dumps.sqlite xla_dumps/
      ptxc profile --launches launches.json --zero-fill module.ptx
    """
    import time
    mode = value_profile_mode(mode, files) if value_profile else mode or "hybrid"
    options = dict(launches=launches, args=args, kernels=list(kernels) or None, mode=mode,
                   threads=threads, max_steps=max_steps, launch_file=launch_file,
                   zero_fill=zero_fill)
    if value_profile:
        options["value_profile"] = True
    if topdown and (len(files) > 1 or os.path.isdir(files[0]) or fmt == "csv"):
        raise click.UsageError("--topdown profiles one module, in text or JSON")
    if len(files) > 1 or os.path.isdir(files[0]):
        if by == "source" or html_path:
            raise click.UsageError("--by source and --html take one module")
        if launch_file:                 # a malformed launch file is one error, not one per module
            from ptxc.launcher.launch_file import read_entries
            read_entries(launch_file)
        from ptxc.cli.profile_batch import profile_batch_command
        return profile_batch_command(files, options, fmt, jobs, dask_address, report_path,
                                     timings)
    from ptxc.profile.module_profile import FAILED, profile_module
    from ptxc.profile.module_render import render
    pause_gc()
    mp = None
    if not (topdown or value_profile or by == "source" or html_path or report_path):
        from ptxc.profile.split import profile_split        # every kernel's work in forked processes
        mp = profile_split(files[0], options, kernel_jobs(jobs))
        if mp is not None:
            print_warnings(mp.module)
    if mp is None:
        t0 = time.perf_counter()
        module = read_module(files[0])
        parse_s = time.perf_counter() - t0
        seen = print_warnings(module)
        try:
            mp = profile_module(module, **options, jobs=1 if topdown else kernel_jobs(jobs))
        finally:
            print_warnings(module, seen)
        mp.timings = {"parse": parse_s, **mp.timings}
    text, predictions = render(mp, fmt), None
    if topdown:
        from ptxc.cli.predict import profile_topdown
        text, predictions = profile_topdown(mp, gpu_key, fmt, text, threads, max_steps)
    if by == "source":                                 # docs/report.md
        from ptxc.report.source_views import profile_view
        view = profile_view(mp, fmt)
        text = view if fmt == "csv" else text + view
    sys.stdout.write(text)
    sys.stdout.flush()
    if html_path:
        from ptxc.cli.html_output import profile_html
        profile_html(html_path, mp, gpu_key)
    if report_path:
        from ptxc.cli.profile_batch import write_report
        write_report(report_path, [mp], mode, timings)
        if value_profile:
            from ptxc.valueprof.run_report import add_module_tables
            add_module_tables(report_path, mp)
        if predictions is not None:
            from ptxc.predict.render import write_sqlite
            write_sqlite(report_path, predictions)
    from ptxc.ir.names import short
    failed = [short(r.kernel) for r in mp.rows if r.status == FAILED]
    if failed:
        raise PtxcError(f"{len(failed)} kernel(s) failed: {', '.join(failed[:5])}"
                        + (" ..." if len(failed) > 5 else "") + " (see the report)")


def value_profile_mode(mode: str | None, files) -> str:
    """``ptxc profile --value-profile``: one module, a full run."""
    if len(files) > 1 or os.path.isdir(files[0]):
        raise click.UsageError("--value-profile profiles one module at a time")
    if mode == "hybrid":
        raise click.UsageError("--value-profile needs --mode full: a hybrid run computes only "
                               "the branch slice")
    return "full"
