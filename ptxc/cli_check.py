"""``ptxc check``: compute-sanitizer's memcheck, racecheck and synccheck for
an unmodified CUDA application, without a GPU (docs/check.md).

    ptxc check [--tool memcheck|racecheck|synccheck|all] [--format text|json] [-o FILE] [--gpu MODEL]
               [--ptx FILE] [--keep-ptx DIR] [--max-steps N] [--threads N]
               -- ./app args...

The application runs as under ``ptxc run --mode full --on-error=continue``:
an out-of-bounds or misaligned access is recorded and skipped (a bad load
reads 0, a bad store is dropped) and the application goes on. At its end
the errors are printed in compute-sanitizer's shape, one block per distinct
error, then ``========= ERROR SUMMARY: N errors``. Exit status: 1 when errors
were found, else the application's (or 1 when ptxc stopped it).
``--tool racecheck`` / ``synccheck`` run every launch with that check
(hazard_report.py); ``--tool all`` runs them and memcheck together and
prints one report per tool.
"""
from __future__ import annotations

import json
import sys

import click

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck", "all")


@click.command("check", context_settings={"ignore_unknown_options": True,
                                          "allow_interspersed_args": False})
@click.option("--tool", type=click.Choice(TOOLS), default="memcheck", show_default=True,
              help="The check (initcheck is not supported yet); all: memcheck, racecheck "
                   "and synccheck in one run.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True, help="Format of the error report.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the report to this file ('-' = stdout) instead of stderr.")
@click.option("--gpu", default="h100", show_default=True, metavar="MODEL",
              help="GPU model the application sees: h100, a100, v100, t4.")
@click.option("--ptx", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Use this PTX module instead of the PTX in the application's fat binary.")
@click.option("--keep-ptx", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write the PTX of each fat binary into DIR (the report cites its lines).")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Step budget per warp and launch (block executions).")
@click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker threads per launch (default: all cores).")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- APP [ARGS]...")
def check_command(tool, fmt, output, gpu, ptx, keep_ptx, max_steps, threads, argv):
    """Run a CUDA application (built with `nvcc -cudart shared`) and report
    its invalid memory accesses as compute-sanitizer's memcheck does."""
    from .check_tools import tools_of
    from .runtime import gpus
    from .runtime.app import run_app
    from .runtime.server import Options
    if tool == "initcheck":
        raise click.UsageError("--tool initcheck is not supported yet")
    tools = tools_of(tool)
    argv = list(argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise click.UsageError("give the application to check: ptxc check [OPTIONS] -- ./app ARGS...")
    options = Options(mode="full", gpu=gpus.model(gpu), max_steps=max_steps, threads=threads,
                      ptx=ptx, keep_ptx=keep_ptx,
                      on_error="continue" if "memcheck" in tools else None, check=",".join(tools))
    result = run_app(argv, options)
    launches = result.session.launches
    reports = {t: tool_report(t, launches, fmt) for t in tools}
    errors = sum(n for _, n in reports.values())
    if fmt == "json":
        doc = reports[tools[0]][0] if len(tools) == 1 else \
            {"tools": {t: r for t, (r, _) in reports.items()}, "error_count": errors}
        text = json.dumps({**doc, "meta": result.meta}, indent=2, default=list) + "\n"
    else:
        text = "".join(r for r, _ in reports.values())
    write(text, output)
    sys.exit(1 if errors else result.status)


def tool_report(tool: str, launches, fmt: str):
    """(report text or JSON dict, errors) of one tool over every launch."""
    from . import hazard_report, memcheck_report
    if tool == "memcheck":
        n = memcheck_report.total_errors(launches)
        return (memcheck_report.launches_json(launches) if fmt == "json"
                else memcheck_report.launches_text(launches)), n
    n = hazard_report.launches_errors(launches, tool)
    return (hazard_report.launches_json(launches, tool) if fmt == "json"
            else hazard_report.launches_text(launches, tool)), n


def write(text: str, output: str | None) -> None:
    if output in (None, ""):
        sys.stderr.write(text)
    elif output == "-":
        sys.stdout.write(text)
    else:
        with open(output, "w") as f:
            f.write(text)
