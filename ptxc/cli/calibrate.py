"""``ptxc calibrate``: measure Luo & Suda's parameters on the local GPU the
paper's way and write them to a JSON file for ``ptxc predict --params``.

    ptxc calibrate [--gpu MODEL] [-o params.json] [--repeat N] [--samples S]

Needs CuPy and a CUDA device (the optional extra ``ptxc[gpu]``); without
them it exits with status 1 and one line saying what is missing. The
micro-benchmarks: ptxc/predict/calibrate.py; docs/predict.md.
"""
from __future__ import annotations

import click


@click.command("calibrate")
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help="The GPU model these measurements stand for (h100, a100, ...).")
@click.option("-o", "--output", default="ptxc-params.json", show_default=True,
              metavar="FILE.json", help="Where to write the parameters.")
@click.option("--repeat", default=10000, show_default=True, type=int, metavar="N",
              help="Loop count of the Table 1 kernels (the paper's 10000).")
@click.option("--samples", default=5, show_default=True, type=int, metavar="S",
              help="Runs of each kernel; the median counts.")
def calibrate_command(gpu_key, output, repeat, samples):
    """Measure Luo & Suda's parameters (Table 1 costs, t_mem, a, b, c, d,
    gpu_bwt) on this machine's GPU with the paper's micro-benchmarks
    (docs/predict.md)."""
    from ptxc.gpus.architecture import gpu
    from ptxc.predict.calibrate import calibrate, write
    g = gpu(gpu_key)
    data = calibrate(g.key, repeat=repeat, samples=samples)
    write(output, data)
    p = data["params"]
    click.echo(f"wrote {output}: {len(p)} parameters on {data['device']}; " +
               ", ".join(f"{k}={p[k]:.4g}" for k in ("a", "b", "c", "d", "t_mem", "gpu_bwt")
                         if k in p))
    for w in data["warnings"]:
        click.echo(f"warning: {w}")
