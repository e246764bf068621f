"""``ptxc run``: run an unmodified CUDA application on ptxc (docs/runtime.md).

    ptxc run [--mode hybrid|full] [--gpu MODEL] [--report FILE.sqlite]
             [--format text|csv|json] [-o FILE] [--ptx FILE] [--keep-ptx DIR]
             [--memory-counters [--bank-bytes 4|8]] [--max-steps N] [--threads N]
             [--on-error stop|cuda|continue] [--value-profile] [--clock model|host]
             -- ./app args...

The application's output is its own; ptxc's summary goes to stderr (or to
``-o FILE``). Exit status: the application's, or 1 when ptxc stopped it.
``--clock model`` (default): the summary's times and cudaEventElapsedTime
are modelled GPU time (runtime/gpu_time.py); ``host``: ptxc's host time.
"""
from __future__ import annotations

import sys

import click

from ptxc.cli.options import (bank_bytes_option, html_option, keep_ptx_option, max_steps_option,
                              memory_counters_option, ptx_option, threads_option, topdown_option,
                              value_profile_option)

MODE_CHOICES = ("hybrid", "full")
FORMAT_CHOICES = ("text", "csv", "json")


@click.command("run", context_settings={"allow_interspersed_args": False})
@click.option("--mode", type=click.Choice(MODE_CHOICES), default=None,
              help="hybrid (default): skip what reaches neither a branch nor host-visible memory; "
                   "full: execute every instruction (the default with --on-error=continue).")
@click.option("--gpu", default="h100", show_default=True, metavar="MODEL",
              help="GPU model the application sees: h100, a100, v100, t4.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="Write every launch to this SQLite file.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="text",
              show_default=True, help="Format of the per-kernel summary.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the summary to this file ('-' = stdout) instead of stderr.")
@ptx_option()
@keep_ptx_option("Write the PTX of each fat binary into DIR (run-time errors cite its lines).")
@memory_counters_option("Also count memory coalescing, bank conflicts and atomics per launch "
                   "(docs/metrics.md; slower; on under --clock model, which needs them).")
@bank_bytes_option("Shared-memory bank width of the memory counters (default 4).")
@max_steps_option("Step budget per warp and launch (block executions).")
@threads_option("Worker threads per launch (default: all cores).")
@click.option("--on-error", type=click.Choice(("stop", "cuda", "continue")), default=None,
              help="Device faults: 'cuda' returns every one (assert, trap, bad access) to the "
                   "application as its CUDA error; 'stop' ends the run at any; 'continue' "
                   "records bad accesses and goes on (memcheck, a full run; docs/check.md). "
                   "Default: assert and trap are CUDA errors, bad accesses stop the run.")
@click.option("--by", "by", type=click.Choice(("ptx", "source")), default="ptx", show_default=True,
              help="source: also report per CUDA source line (needs .loc: nvcc -lineinfo/-G).")
@html_option("Also write the self-contained HTML report (docs/report.md).")
@topdown_option("Also predict each launch's time on the --gpu model and its TopDown "
                   "(Saiz 2021, chapter 4), per launch and per kernel (implies --memory-counters; "
                   "docs/predict.md).")
@value_profile_option("Profile every register write: constant bits and scalar writes per kernel "
                   "(a full run; docs/value-profile.md).")
@click.option("--clock", type=click.Choice(("model", "host")), default="model",
              show_default=True,
              help="model: the summary's times (Time(%), Time, Avg, Min, Max) and "
                   "cudaEventElapsedTime are each launch's GPU time modelled on the --gpu model "
                   "(Luo & Suda, docs/predict.md; implies --memory-counters), with the host "
                   "time split into Compile and Run columns; host: ptxc's host time (JIT "
                   "compile + CPU run), not a GPU's.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- APP [ARGS]...")
def run_command(mode, gpu, report_path, fmt, output, ptx, keep_ptx, memory_counters, bank_bytes,
                max_steps, threads, on_error, value_profile, argv, topdown=False, by="ptx",
                html_path=None, clock="model"):
    """Run a CUDA application (built with `nvcc -cudart shared`) on the CPU
    and profile every kernel launch."""
    from ptxc.gpus import devices as gpus
    from ptxc.runtime import report
    from ptxc.runtime.app import run_app
    from ptxc.runtime.server import Options
    argv = list(argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise click.UsageError("give the application to run: ptxc run [OPTIONS] -- ./app ARGS...")
    memory_counters = memory_counters or topdown or clock == "model"   # the model's inputs
    if bank_bytes is not None and not memory_counters:
        raise click.UsageError("--bank-bytes only applies with --memory-counters")
    mode = run_mode(mode, on_error, value_profile)
    if topdown and fmt == "csv":
        raise click.UsageError("--topdown prints text or JSON, not CSV")
    if by == "source":          # refused before the run when the PTX has no .loc (docs/report.md)
        from ptxc.runtime.app import find_program
        from ptxc.runtime.lineinfo import refuse_without_lines
        refuse_without_lines(find_program(argv[0]), gpus.model(gpu).sm, ptx)
    options = Options(mode=mode, gpu=gpus.model(gpu), max_steps=max_steps, threads=threads,
                      ptx=ptx, keep_ptx=keep_ptx, memory_counters=memory_counters,
                      bank_bytes=int(bank_bytes or 4), on_error=on_error,
                      value_profile=value_profile, clock=clock)
    result = run_app(argv, options)
    launches = result.session.launches
    if report_path:
        report.write_sqlite(report_path, launches, result.meta)
    text = report.FORMATS[fmt](launches, result.meta)
    if topdown:
        from ptxc.cli.predict import run_topdown
        text = run_topdown(launches, gpu, fmt, text, report_path)
    if by == "source":                                  # docs/report.md
        text = source_view(text, launches, fmt)
    if html_path:
        from ptxc.cli.html_output import run_html
        run_html(html_path, launches, result.meta, gpu)
    write_report(text, output)
    sys.exit(result.status)


NO_SOURCE_VIEW = ("ptxc: warning: no per-source-line view: the PTX of the launched kernels has "
                  "no .loc line information (build with nvcc -lineinfo or -G)")


def source_view(text: str, launches, fmt: str) -> str:
    """The summary with ``--by source``: the table per CUDA source line added
    (text), given instead (CSV) or added as ``source_lines`` (JSON). When no
    launched kernel has line information (kernels the check before the run
    could not see, in a shared library) the summary is kept as it is and a
    warning says why the view is missing."""
    from ptxc.report.source_views import run_json, run_rows, run_view
    per = run_rows(launches)
    if launches and not per:
        sys.stderr.write(NO_SOURCE_VIEW + "\n")
        return run_json(text, launches, per) if fmt == "json" else text
    return (run_json(text, launches, per) if fmt == "json" else
            run_view(launches, "csv", per) if fmt == "csv" else
            text + run_view(launches, "text", per))


def write_report(text: str, output: str | None) -> None:
    """A ``ptxc run``/``ptxc check`` report: stderr by default (the
    application owns stdout), ``-o -`` stdout, else the file."""
    if output in (None, ""):
        sys.stderr.write(text)
    elif output == "-":
        sys.stdout.write(text)
    else:
        with open(output, "w") as f:
            f.write(text)


def run_mode(mode: str | None, on_error: str | None, value_profile: bool = False) -> str:
    """The execution mode: memcheck (--on-error=continue) and the value
    profile need a full run."""
    if value_profile:
        if mode == "hybrid":
            raise click.UsageError("--value-profile needs --mode full: a hybrid run computes "
                                   "only what branches and host-visible memory need")
        return "full"
    if on_error == "continue":
        if mode == "hybrid":
            raise click.UsageError("--on-error=continue needs --mode full: a hybrid run skips "
                                   "the accesses its slice does not keep")
        return "full"
    return mode or "hybrid"
