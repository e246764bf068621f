"""``ptxc predict``: predicted execution time of one launch on a GPU model
(Luo & Suda's model) and, with ``--topdown``, its TopDown breakdown.

    ptxc predict FILE.ptx --kernel K --grid G --block B [--arg ...]
                 [--gpu h100|a100|v100|t4|rtx2060|gtx260|gtx1070|quadro-rtx4000]
                 [--mode hybrid|full]
                 [--regs N] [--params FILE.json] [--reading NAME=VALUE]... [--topdown]
                 [--format text|json] [--report FILE.sqlite]

The launch runs on the CPU with the memory counters (hybrid by default: the
model's inputs are among the counters a hybrid run reproduces exactly).
Also the helpers behind ``--topdown`` on the other commands:
``opt_topdown`` (ptxc opt), ``run_topdown`` (ptxc run), ``profile_topdown``
(ptxc profile). Model and parameters: ptxc/predict/; docs/predict.md.
"""
from __future__ import annotations

import json

import click

from ptxc.cli.options import max_steps_option, regs_option, threads_option, topdown_option
from ptxc.errors import PtxcError

GPU_HELP = "GPU model: h100, a100, v100, t4, rtx2060, gtx260, gtx1070, quadro-rtx4000."


@click.command("predict")
@click.argument("file", metavar="FILE.ptx|-")
@click.option("--kernel", default=None, metavar="NAME", help="Kernel to launch.")
@click.option("--grid", default=None, metavar="X[,Y,Z]", help="Grid size in CTAs.")
@click.option("--block", default=None, metavar="X[,Y,Z]", help="CTA size in threads.")
@click.option("--shared", type=click.IntRange(min=0), default=0, metavar="BYTES",
              help="Dynamic shared memory per CTA in bytes.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              help="A kernel argument (repeatable), as for ptxc opt.")
@click.option("--mode", type=click.Choice(("hybrid", "full")), default="hybrid",
              show_default=True, help="Run only the branch slice, or every instruction.")
@max_steps_option()
@threads_option()
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help=GPU_HELP)
@regs_option()
@click.option("--params", "params_path", default=None, metavar="FILE.json",
              help="Model parameters measured by `ptxc calibrate`.")
@click.option("--reading", "readings", multiple=True, metavar="NAME=VALUE",
              help="Another reading of an ambiguous equation of the paper (repeatable), "
                   "e.g. eq2=printed, cpd=min (docs/predict.md).")
@topdown_option("Also print the TopDown (Saiz 2021, chapter 4).")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True)
@click.option("--report", "report_path", default=None, metavar="FILE.sqlite",
              help="Also write the tables predict, predict_periods, topdown here.")
def predict_command(file, kernel, grid, block, shared, args, mode, max_steps, threads,
                    gpu_key, regs, params_path, readings, topdown, fmt, report_path):
    """Predicted execution time of a launch on a GPU model (Luo & Suda) and
    its TopDown breakdown (docs/predict.md)."""
    from ptxc.cli.options import parse_dim, read_module
    from ptxc.cli.occupancy import _read
    from ptxc.gpus.architecture import gpu
    from ptxc.launcher.api import launch_from_options
    from ptxc.predict import analyse_launch
    from ptxc.predict.luo_suda import parse_readings
    g = gpu(gpu_key)
    readings = parse_readings(list(readings))
    module, ptx_text = _read(file, read_module)
    opts = {"kernel": kernel, "grid": grid and parse_dim(grid, "'--grid'"),
            "block": block and parse_dim(block, "'--block'"), "shared": shared,
            "args": list(args), "max_steps": max_steps, "threads": threads,
            "memory_counters": True}
    prof = launch_from_options(module, opts, mode).to_dict()
    result = analyse_launch(module, ptx_text, prof, g.key, regs, shared, params_path, readings)
    emit([result], fmt, topdown, report_path)


def emit(results, fmt, topdown, report_path) -> None:
    from ptxc.predict import render
    if fmt == "json":
        rows = [render.as_json(r) for r in results]
        if not topdown:
            for row in rows:
                row.pop("topdown")
        click.echo(json.dumps(rows if len(rows) > 1 else rows[0], indent=2, default=str))
    else:
        click.echo("".join(render.text(r, topdown) for r in results), nl=False)
    if report_path:
        try:
            render.write_sqlite(report_path, results)
        except Exception as e:  # sqlite3.Error, OSError
            raise PtxcError(f"cannot write '{report_path}': {e}") from None


def opt_topdown(module, launch, gpu_key, fmt, reports: str) -> str:
    """``ptxc opt --topdown``: the pass reports with the TopDown of the count
    pass's launch added (text: after them; JSON: a "topdown" member)."""
    from ptxc.predict import analyse_launch, render
    prof = module.attrs.get("launch_profile")
    if launch is None or not prof:
        raise PtxcError("--topdown needs the count pass with a launch (--pass=count "
                        "--kernel/--grid/--block --memory-counters)")
    r = analyse_launch(module, module.to_ptx(), prof, gpu_key, None,
                       launch.get("shared") or 0, None)
    if fmt == "json":
        doc = json.loads(reports) if reports.strip() else {}
        doc["topdown"] = render.as_json(r)["topdown"]
        return json.dumps(doc, indent=2, default=str)
    if fmt == "csv":
        raise PtxcError("--topdown prints text or JSON, not CSV")
    return reports.rstrip("\n") + "\n" + render.text(r)


def run_topdown(launches, gpu_key, fmt, summary: str, report_path) -> str:
    """``ptxc run --topdown``: the summary with predictions and TopDown per
    launch and kernel added (ptxc/predict/app_report.py)."""
    from ptxc.predict import app_report
    results = app_report.launch_results(launches, gpu_key)   # once per launch (app_report)
    missing = app_report.not_predicted(launches)
    if report_path:
        app_report.write_sqlite(report_path, results)
    if fmt == "json":
        return app_report.merge_json(summary, results, missing)
    return summary + app_report.text(results, missing)


def profile_topdown(mp, gpu_key, fmt, text: str, threads, max_steps) -> tuple:
    """``ptxc profile --topdown``: (text, results): each launched row run
    again with the memory counters and predicted; per-CTA rows predict a
    one-CTA launch (so labelled). A row that cannot be run with the memory
    counters (an address depends on an argument it was not given) is listed
    with the reason instead of a prediction."""
    from ptxc.launcher.api import launch
    from ptxc.predict import analyse_launch, render
    module = mp.module
    results, failed = [], []
    for row in mp.ran:
        try:
            prof = launch(module, row.kernel, row.grid, row.block, topdown_args(module, row),
                          mode=mp.mode, threads=threads, max_steps=max_steps,
                          memory_counters=True, check_faults=False)
        except PtxcError as e:
            failed.append({"kernel": row.kernel, "error": e.render().splitlines()[0]})
            continue
        results.append(analyse_launch(module, module.to_ptx(), prof.to_dict(), gpu_key, None,
                                      0, None))
    if fmt == "json":
        doc = json.loads(text)
        doc["predict"] = [render.as_json(r) for r in results] + failed
        return json.dumps(doc, indent=2, default=str) + "\n", results
    per_cta = {r.kernel for r in mp.ran if r.per_cta}
    out = [text.rstrip("\n"), "", "Predicted time and TopDown (modelled; docs/predict.md)"]
    for r in results:
        note = " (one CTA: the row's launch is unknown)" if r["kernel"] in per_cta else ""
        out.append(render.text(r).rstrip("\n") + note)
    out += [f"{f['kernel']}: not predicted: {f['error']}" for f in failed]
    return "\n".join(out) + "\n", results


def topdown_args(module, row) -> dict:
    """The row's arguments plus, for each pointer parameter it was not
    given, the zero-filled placeholder buffer of a full row
    (module_profile.placeholder): the memory counters need the addresses,
    hence the pointers, which a hybrid row's slice did not read. A missing
    parameter of another kind stays missing: launch() then names it when
    an address depends on it."""
    from ptxc.launcher.args import addr_bits, is_pointer_param
    from ptxc.launcher.config import find_kernel
    from ptxc.profile.module_profile import placeholder
    fn = find_kernel(module, row.kernel)
    args = dict(row.args)
    for i, p in enumerate(fn.params):
        if i not in args and is_pointer_param(p, addr_bits(fn)):
            args[i] = placeholder(fn, p)
    return args
