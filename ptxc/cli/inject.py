"""``ptxc inject``: an error-injection campaign on an unmodified CUDA
application (docs/inject.md; SASSI section 8, NVBitFI).

    ptxc inject [--runs N] [--seed S] [--kernel K] [--target register|memory|predicate]
                [--jobs N] [--dask ADDR] [--output FILE]... [--ignore REGEX]... [--timeout S]
                [--report x.sqlite] [--replay SITE] [--gpu MODEL] [--ptx FILE]
                [--max-steps N] -- ./app args...
    ptxc inject [--runs N] [--seed S] [--target T] [--jobs N] [--dask ADDR] [--report F]
                [--replay SITE] [--max-steps N] --kernel K [--grid G] [--block B]
                [--arg NAME=VALUE]... [--shared BYTES] FILE.ptx

The second form (one kernel launch from a PTX file, given as for ``ptxc
opt``) is chosen when the only argument is a ``.ptx`` file or any of
``--grid``, ``--block``, ``--arg``, ``--shared`` is given
(inject_launch.py).

Prints the injection space, then the outcome table (masked / SDC / DUE with
95% Wilson intervals, per kernel and overall) on stdout; timings on stderr.
With ``--replay SITE`` it runs the golden run and that one site, and prints
the outcome and the injected run's output.
"""
from __future__ import annotations

import re
import sys

import click

from ptxc.backends.llvm.instruments.inject_ctl import TARGETS
from ptxc.cli.options import arg_callback, dim_callback, max_steps_option, ptx_option


@click.command("inject", context_settings={"allow_interspersed_args": False})
@click.option("--runs", type=click.IntRange(min=1), default=100, show_default=True,
              help="Injected runs (sites drawn uniformly, with replacement).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the site draw (numpy PCG64).")
@click.option("--kernel", default=None, metavar="K",
              help="Inject only into launches of kernel K (FILE.ptx: the kernel to launch).")
@click.option("--target", type=click.Choice(TARGETS), default="register", show_default=True,
              help="What a fault flips: a destination register bit, a stored bit, a predicate.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Runs at a time (default: all cores).")
@click.option("--dask", "dask_address", default=None, metavar="ADDR",
              help="Run the injected runs on this Dask scheduler (tcp://host:8786).")
@click.option("--output", "outputs", multiple=True, metavar="FILE",
              help="An output file of the application (compared with the golden run's); repeatable.")
@click.option("--ignore", "ignore", multiple=True, metavar="REGEX",
              help="Leave stdout lines matching REGEX out of the comparison (timings); repeatable.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None, metavar="S",
              help="Seconds per injected run before it counts as a hang (default: 10 x the "
                   "fault-free run, at least 10).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="Write the campaign to this SQLite file.")
@click.option("--replay", default=None, metavar="SITE",
              help="Run only this site (TARGET/LAUNCH/CTA/THREAD/INSTANCE/RAND, as the report "
                   "names it) and show its output.")
@click.option("--gpu", default="h100", show_default=True, metavar="MODEL",
              help="GPU model the application sees: h100, a100, v100, t4.")
@ptx_option()
@max_steps_option("Step budget per warp and launch: a run that exceeds it is a DUE (hang).")
@click.option("--grid", default=None, metavar="X[,Y,Z]",
              callback=dim_callback,
              help="Kernel launch from FILE.ptx: grid size in CTAs (default 1).")
@click.option("--block", default=None, metavar="X[,Y,Z]",
              callback=dim_callback,
              help="Kernel launch from FILE.ptx: CTA size (default .reqntid).")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              callback=arg_callback,
              help="Kernel launch from FILE.ptx: an argument (repeatable), as 'ptxc opt --arg'.")
@click.option("--shared", type=click.IntRange(min=0), default=None, metavar="BYTES",
              help="Kernel launch from FILE.ptx: dynamic shared memory per CTA.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, required=True,
                metavar="-- APP [ARGS]... | FILE.ptx")
@click.pass_context
def inject_command(ctx, runs, seed, kernel, target, jobs, dask_address, outputs, ignore, timeout,
                   report_path,
                   replay, gpu, ptx, max_steps, grid, block, args, shared, argv):
    """Inject single-bit faults into a CUDA application's kernels (built with
    `nvcc -cudart shared`), or into one kernel launch of FILE.ptx, and
    classify the outcomes: masked, SDC, DUE."""
    from ptxc.inject import app_campaign as inject_app, db as inject_db, sites as inject_sites, stats as inject_stats
    argv = list(argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if grid or block or args or shared is not None or \
            (len(argv) == 1 and argv[0].endswith(".ptx")):
        from ptxc.cli.inject_launch import launch_campaign, refuse_app_options
        if len(argv) != 1:
            raise click.UsageError("a kernel launch (--grid, --block, --arg, --shared) takes one "
                                   "FILE.ptx: ptxc inject --kernel K --grid G --block B FILE.ptx")
        refuse_app_options(ctx)
        return launch_campaign(argv[0], kernel, grid, block, shared, args, runs, seed, target,
                               jobs, dask_address, max_steps, report_path, replay)
    if not argv:
        raise click.UsageError("give the application: ptxc inject [OPTIONS] -- ./app ARGS...")
    if any(o.startswith("/") or o.startswith("..") for o in outputs):
        raise click.UsageError("--output names a file under the current directory (a relative path)")
    for pattern in ignore:
        try:
            re.compile(pattern)
        except re.error as e:
            raise click.UsageError(f"--ignore '{pattern}': {e}")
    options = {"gpu": gpu, "ptx": ptx, "max_steps": max_steps}
    sites = None
    if replay is not None:
        sites = [inject_sites.parse_site(replay)]
        target = sites[0].target
    result = inject_app.campaign(argv, runs, seed, kernel, target, jobs, dask_address, outputs,
                                 timeout, options, sites=sites, keep_runs=replay is not None,
                                 ignore=ignore)
    golden_s = result["golden"]["wall_s"]
    out = sys.stdout
    if replay is not None:
        o, run = result["outcomes"][0], result["runs"][0]
        out.write(f"site {o['site']}: {o['outcome'].upper()}"
                  + (f" ({o['error']})" if o["error"] else "")
                  + (f"; flipped bit {o['bit']} of line {o['line']} ({o['opcode']})"
                     if o["flipped"] else "; the site was not reached: nothing flipped") + "\n")
        out.write("--- the injected run's stdout ---\n")
        out.write(run["stdout"].decode(errors="replace"))
        sys.stderr.write(run["stderr"])
    else:
        n_launches = len(result["launches"].records)
        out.write(f"injection space ({target}): {result['space']} dynamic instructions in "
                  f"{n_launches} launch{'es' if n_launches != 1 else ''}"
                  f"{' of ' + kernel if kernel else ''}; {len(result['outcomes'])} runs, "
                  f"seed {seed}\n")
        out.write(inject_stats.table(inject_stats.summarise(result["outcomes"])))
    timing(result, jobs)
    if report_path:
        meta = {"application": " ".join(argv), "target": target, "seed": seed, "runs": runs,
                "kernel": kernel, "space": result["space"], "outputs": " ".join(outputs),
                "ignore": " ".join(ignore), "time_limit_s": result["time_limit"],
                "replay": replay}
        inject_db.write(report_path, result, meta)


def timing(result: dict, jobs) -> None:
    """Runs per second and the mean injected run's wall time over the
    fault-free run's (stderr: timings vary, the report does not)."""
    import os
    golden_s = result["golden"]["wall_s"]
    walls = [o["wall_s"] for o in result["outcomes"]]
    injected_s = max(result["injected_s"], 1e-9)
    mean = sum(walls) / len(walls) if walls else 0.0
    sys.stderr.write(f"ptxc: fault-free run {golden_s:.2f} s; {len(walls)} injected runs in "
                     f"{injected_s:.2f} s with {jobs or os.cpu_count() or 1} jobs "
                     f"({len(walls) / injected_s:.2f} runs/s; an injected run takes "
                     f"{mean / max(golden_s, 1e-9):.2f} x the fault-free run)\n")
