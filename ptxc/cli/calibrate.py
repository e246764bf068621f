"""``ptxc calibrate``: measure the execution-time model's parameters on the
local GPU and write them to a JSON file for ``ptxc predict --params``.

    ptxc calibrate [--gpu MODEL] [-o params.json]

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
def calibrate_command(gpu_key, output):
    """Measure the model parameters (a, b, c, d, m, class costs) on this
    machine's GPU with micro-benchmarks (docs/predict.md)."""
    from ptxc.gpus.architecture import gpu
    from ptxc.predict.calibrate import calibrate, write
    g = gpu(gpu_key)
    data = calibrate(g.key)
    write(output, data)
    click.echo(f"wrote {output}: " + ", ".join(f"{k}={v:.4g}" for k, v in data["params"].items()))
