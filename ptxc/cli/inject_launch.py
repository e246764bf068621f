"""``ptxc inject FILE.ptx``: an error-injection campaign on one kernel launch
from the command line (docs/inject.md, "One kernel launch"): the launch is
given as for ``ptxc opt`` (``--kernel``, ``--grid``, ``--block``, ``--arg``,
``--shared``), the campaign is ``ptxc.inject.launch_campaign.campaign`` (inject.py), and the
output (stdout table, stderr timing, ``--report`` SQLite) is the application
campaign's (inject.py, ptxc/inject/db.py).

Outcomes: masked when every argument array is bit-identical to the fault-free
launch's, SDC when one differs, DUE when the launch stops (bad access, trap,
step budget ``--max-steps``).
"""
from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import click

APP_ONLY = {"outputs": "--output", "ignore": "--ignore", "timeout": "--timeout", "ptx": "--ptx",
            "gpu": "--gpu"}      # the options of an application campaign only


def refuse_app_options(ctx: click.Context) -> None:
    """A usage error for the options that only an application campaign has."""
    from click.core import ParameterSource
    given = [flag for name, flag in APP_ONLY.items()
             if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)]
    if given:
        raise click.UsageError(f"{', '.join(given)}: for an application (ptxc inject -- ./app), "
                               f"not for a kernel launch from a PTX file")


def launch_campaign(file, kernel, grid, block, shared, args, runs, seed, target, jobs, dask,
                    max_steps, report_path, replay) -> None:
    """Run the campaign and print it (cli_inject's command in launch mode)."""
    from ptxc.inject import launch_campaign as inject, db as inject_db, sites as inject_sites, stats as inject_stats
    from ptxc.cli.options import read_module
    from ptxc.launcher.config import default_block, find_kernel
    from ptxc.launcher.args import parse_arg_strings
    module = read_module(file)
    fn = find_kernel(module, kernel)
    grid = grid or (1, 1, 1)
    block = block or default_block(fn)
    values = parse_arg_strings(fn, args)
    sites = [inject_sites.parse_site(replay)] if replay is not None else None
    if sites:
        target = sites[0].target
    c = inject.campaign(module, fn.name, grid, block, values, runs=runs, seed=seed, target=target,
                        max_steps=max_steps, shared_bytes=shared or 0, sites=sites, jobs=jobs,
                        dask=dask)
    out = sys.stdout
    if replay is not None:
        o = c.outcomes[0]
        out.write(f"site {o['site']}: {o['outcome'].upper()}"
                  + (f" ({o['error']})" if o["error"] else "")
                  + (f"; flipped bit {o['bit']} of line {o['line']} ({o['opcode']})"
                     if o["flipped"] else "; the site was not reached: nothing flipped") + "\n")
    else:
        from ptxc.ir.names import short
        out.write(f"injection space ({target}): {c.space} dynamic instructions in 1 launch of "
                  f"{short(fn.name, 100)}; {len(c.outcomes)} runs, seed {seed}\n")
        out.write(inject_stats.table(c.summary()))
    timing(c, jobs, dask)
    if report_path:
        meta = {"application": f"{file} --kernel {fn.name} --grid {','.join(map(str, grid))} "
                               f"--block {','.join(map(str, block))}"
                               + "".join(f" --arg {a}" for a in args),
                "target": target, "seed": seed, "runs": runs, "kernel": fn.name,
                "space": c.space, "outputs": "argument arrays", "ignore": "",
                "time_limit_s": None, "replay": replay}
        inject_db.write(report_path, {"launches": SimpleNamespace(records=c.golden),
                                      "outcomes": c.outcomes}, meta)


def timing(c, jobs, dask) -> None:
    """Launches per second, the fault-free launch as the baseline (stderr)."""
    n = len(c.outcomes)
    how = "on Dask" if dask else f"with {jobs or os.cpu_count() or 1} jobs"
    per = c.injected_s / n if n else 0.0
    rate = n / max(c.injected_s, 1e-9)
    sys.stderr.write(f"ptxc: fault-free launch {c.golden_s:.2f} s (compiling included); "
                     f"{n} injected launches in {c.injected_s:.2f} s {how} ({rate:.2f} runs/s; "
                     f"{per / max(c.golden_s, 1e-9):.2f} x the fault-free launch each)\n")
