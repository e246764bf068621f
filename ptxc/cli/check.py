"""``ptxc check``: compute-sanitizer's tools for an unmodified CUDA
application, without a GPU (docs/check.md).

    ptxc check [--tool memcheck|initcheck|racecheck|synccheck|all]
               [--on-error abort|continue|stop] [--stop-on-error] [--leak-check full|no]
               [--print-limit N] [--kernel-name FILTER]... [--kernel-name-exclude FILTER]...
               [--error-exitcode N] [--format text|json] [-o FILE] [--gpu MODEL]
               [--ptx FILE] [--keep-ptx DIR] [--max-steps N] [--threads N]
               -- ./app args...

memcheck: an out-of-bounds or misaligned access is recorded and skipped (a
bad load reads 0, a bad store is dropped); at the end of its launch the
launch fails as on a GPU under compute-sanitizer (``--on-error=abort``, the
default: the application gets cudaErrorLaunchFailure from its next
synchronising call on, runtime/faults.memcheck_abort), or the application
goes on as if nothing happened (``--on-error=continue``, as ``ptxc run
--mode full --on-error=continue``), or the first one stops it
(``--on-error=stop``, ``--stop-on-error``). ``--leak-check full`` reports
the device allocations never freed, with where they were made.
initcheck: reads of cudaMalloc bytes nothing wrote are recorded
(runtime/checks.py). racecheck: shared-memory hazards; synccheck: divergent
barriers and bad warp masks (ptxc/launcher/checks.py, ptxc/check/hazards.py). Every tool also reports failed cudaFree / cudaMemcpy /
cudaMemset calls and device asserts and traps. At the end the errors are
printed in compute-sanitizer's shape (ptxc/check/app_report.py), one block per
distinct error (at most ``--print-limit`` of them), then ``=========
ERROR SUMMARY: N errors``. ``--kernel-name`` / ``--kernel-name-exclude``
choose the kernels checked (ptxc/check/filters.py). Exit status:
``--error-exitcode`` (default 1) when errors were found and the
application succeeded (or ptxc stopped it), else the application's; 130
when interrupted.
"""
from __future__ import annotations

import json
import sys

import click

from ptxc.cli.options import keep_ptx_option, max_steps_option, ptx_option, threads_option

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck", "all")
ON_ERROR = ("abort", "continue", "stop")
PRINT_LIMIT = 100             # compute-sanitizer's default


@click.command("check", context_settings={"allow_interspersed_args": False})
@click.option("--tool", type=click.Choice(TOOLS), default="memcheck", show_default=True,
              help="The check; 'all' runs every supported tool in one run.")
@click.option("--on-error", type=click.Choice(ON_ERROR), default=None,
              help="A launch with an invalid access (memcheck): 'abort' (default) fails it as "
                   "on a GPU under compute-sanitizer, the application getting "
                   "cudaErrorLaunchFailure from its next synchronising call on; 'continue' "
                   "skips every bad access and goes on; 'stop' stops the application at the "
                   "first.")
@click.option("--stop-on-error", is_flag=True,
              help="Stop the application at the first invalid access, device assert or "
                   "trap, as `ptxc run` does (--on-error=stop).")
@click.option("--leak-check", type=click.Choice(("full", "no")), default="no", show_default=True,
              help="full: report the device allocations (cudaMalloc, cudaMallocManaged ...) "
                   "never freed when the application ends, with where they were made.")
@click.option("--print-limit", type=click.IntRange(min=0), default=PRINT_LIMIT,
              show_default=True, metavar="N",
              help="Print at most N error reports (0: all); ERROR SUMMARY counts every error.")
@click.option("--kernel-name", "--kernel-regex", "kernel_name", multiple=True, metavar="FILTER",
              help="Check only the launches of kernels matching FILTER: kne=NAME (the whole "
                   "mangled name, or the demangled one), kns=SUBSTRING (of the mangled name), "
                   "regex=REGEX; pairs joined by ',' must all match. Repeatable: any filter.")
@click.option("--kernel-name-exclude", "--kernel-regex-exclude", "kernel_exclude", multiple=True,
              metavar="FILTER", help="Do not check the launches of kernels matching FILTER "
                                     "(as --kernel-name). Repeatable.")
@click.option("--error-exitcode", type=click.IntRange(min=0, max=255), default=1,
              show_default=True, metavar="N",
              help="Exit status when errors were found and the application succeeded "
                   "(compute-sanitizer's default is 0).")
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
def check_command(tool, on_error, stop_on_error, leak_check, print_limit, kernel_name,
                  kernel_exclude, error_exitcode, fmt, output, gpu, ptx, keep_ptx, max_steps,
                  threads, argv):
    """Run a CUDA application (built with `nvcc -cudart shared`) and report
    its errors as compute-sanitizer's tools do."""
    from ptxc.check import app_report as check_report
    from ptxc.check.filters import KernelFilter
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
    on_error = error_action(on_error, stop_on_error, tools)
    try:
        kernel_filter = KernelFilter(kernel_name, kernel_exclude)
    except ValueError as e:
        raise click.UsageError(f"--kernel-name: {e}")
    options = Options(mode="full", gpu=gpus.model(gpu), max_steps=max_steps, threads=threads,
                      ptx=ptx, keep_ptx=keep_ptx, on_error=on_error, checks=tuple(tools),
                      kernel_filter=kernel_filter or None)
    result = run_app(argv, options)
    session = result.session
    leaks = None
    if leak_check == "full" and not (result.interrupted or session.stopped or session.unsupported):
        from ptxc.check.leaks import find
        leaks = find(session, result.program)
    if fmt == "json":
        text = json.dumps({**check_report.as_json(session, tools, leaks), "meta": result.meta},
                          indent=2, default=list) + "\n"
    else:
        text = check_report.text(session, tools, result.meta, print_limit, leaks)
    write_report(text, output)
    sys.exit(exit_status(result, check_report.total(session, leaks), error_exitcode))


def error_action(on_error: str | None, stop_on_error: bool, tools) -> str | None:
    """The run's ``Options.on_error``: what a launch with an invalid access
    does (memcheck); without memcheck only 'stop' means anything (asserts
    and traps stop the application instead of being CUDA errors)."""
    if stop_on_error:
        if on_error not in (None, "stop"):
            raise click.UsageError(f"--stop-on-error contradicts --on-error={on_error}")
        on_error = "stop"
    if "memcheck" not in tools:
        if on_error in ("abort", "continue"):
            raise click.UsageError(f"--on-error={on_error} is memcheck's: add --tool memcheck "
                                   f"or --tool all")
        return on_error
    return on_error or "abort"


def exit_status(result, errors: int, error_exitcode: int) -> int:
    """compute-sanitizer's rule: ``--error-exitcode`` when errors were found
    and the application succeeded (here also when ptxc stopped it at an
    error), else the application's status; 130 when interrupted."""
    if result.interrupted:
        return result.status
    if errors and (result.app_status == 0 or result.session.stopped):
        return error_exitcode
    return result.status
