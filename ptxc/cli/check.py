"""``ptxc check``: compute-sanitizer's tools for an unmodified CUDA
application, without a GPU (docs/check.md).

    ptxc check [--tool memcheck|initcheck|racecheck|synccheck|all] [--stop-on-error]
               [--format text|json] [-o FILE] [--gpu MODEL]
               [--ptx FILE] [--keep-ptx DIR] [--max-steps N] [--threads N]
               -- ./app args...

memcheck: the application runs as under ``ptxc run --mode full
--on-error=continue``: an out-of-bounds or misaligned access is recorded
and skipped (a bad load reads 0, a bad store is dropped) and the
application goes on (``--stop-on-error``: the first one stops it).
initcheck: reads of cudaMalloc bytes nothing wrote are recorded
(runtime/checks.py). racecheck: shared-memory hazards; synccheck: divergent
barriers and bad warp masks (ptxc/launcher/checks.py, ptxc/check/hazards.py). Every tool also reports failed cudaFree / cudaMemcpy /
cudaMemset calls and device asserts and traps. At the end the errors are
printed in compute-sanitizer's shape (ptxc/check/app_report.py), one block per
distinct error, then ``========= ERROR SUMMARY: N errors``. Exit status: 1
when errors were found, else the application's (or 1 when ptxc stopped it).
"""
from __future__ import annotations

import json
import sys

import click

from ptxc.cli.options import keep_ptx_option, max_steps_option, ptx_option, threads_option

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck", "all")


@click.command("check", context_settings={"allow_interspersed_args": False})
@click.option("--tool", type=click.Choice(TOOLS), default="memcheck", show_default=True,
              help="The check; 'all' runs every supported tool in one run.")
@click.option("--stop-on-error", is_flag=True,
              help="Stop the application at the first invalid access, device assert or "
                   "trap, as `ptxc run` does, instead of recording it and going on.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True, help="Format of the error report.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the report to this file ('-' = stdout) instead of stderr.")
@click.option("--gpu", default="h100", show_default=True, metavar="MODEL",
              help="GPU model the application sees: h100, a100, v100, t4.")
@ptx_option()
@keep_ptx_option("Write the PTX of each fat binary into DIR (the report cites its lines).")
@max_steps_option("Step budget per warp and launch (block executions).")
@threads_option("Worker threads per launch (default: all cores).")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- APP [ARGS]...")
def check_command(tool, stop_on_error, fmt, output, gpu, ptx, keep_ptx, max_steps, threads, argv):
    """Run a CUDA application (built with `nvcc -cudart shared`) and report
    its errors as compute-sanitizer's tools do."""
    from ptxc.check import app_report as check_report
    from ptxc.launcher.checks import CHECKS
    from ptxc.gpus import devices as gpus
    from ptxc.cli.run import write_report
    from ptxc.runtime.app import run_app
    from ptxc.runtime.server import Options
    tools = CHECKS if tool == "all" else (tool,)
    if tool not in CHECKS + ("all",):
        raise click.UsageError(f"--tool {tool} is not supported yet (use {', '.join(CHECKS)} or all)")
    argv = list(argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise click.UsageError("give the application to check: ptxc check [OPTIONS] -- ./app ARGS...")
    on_error = "stop" if stop_on_error else "continue" if "memcheck" in tools else None
    options = Options(mode="full", gpu=gpus.model(gpu), max_steps=max_steps, threads=threads,
                      ptx=ptx, keep_ptx=keep_ptx, on_error=on_error, checks=tuple(tools))
    result = run_app(argv, options)
    session = result.session
    if fmt == "json":
        text = json.dumps({**check_report.as_json(session, tools), "meta": result.meta},
                          indent=2, default=list) + "\n"
    else:
        text = check_report.text(session, tools, result.meta)
    write_report(text, output)
    if result.interrupted:
        sys.exit(result.status)
    sys.exit(1 if check_report.total(session) else result.status)

