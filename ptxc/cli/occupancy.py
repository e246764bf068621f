"""``ptxc occupancy``: theoretical occupancy of each kernel of a PTX file.

    ptxc occupancy FILE.ptx [--kernel K] [--block N] [--shared B] [--regs R]
                   [--gpu h100|a100|v100|t4|rtx2060|gtx260|gtx1070|quadro-rtx4000]

Per kernel: registers per thread and where they come from (ptxas or an
estimate), static + dynamic shared memory, the blocks per SM each resource
allows, the limiting factor(s), active blocks and warps per SM and the
occupancy. Rules: ptxc/gpus/occupancy.py; parameters: ptxc/gpus/architecture.py;
docs/gpus.md.
"""
from __future__ import annotations

import click

from ptxc.cli.options import regs_option
from ptxc.errors import PtxcError

DEFAULT_BLOCK = 256


@click.command("occupancy")
@click.argument("file", metavar="FILE.ptx|-")
@click.option("--kernel", "kernels", multiple=True, metavar="NAME",
              help="Only this kernel (repeatable); default: every kernel.")
@click.option("--block", type=click.IntRange(min=1), default=None, metavar="N",
              help="Threads per block (default: the kernel's .reqntid, else 256).")
@click.option("--shared", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="BYTES", help="Dynamic shared memory per block.")
@regs_option()
@click.option("--gpu", "gpu_key", default="h100", show_default=True, metavar="MODEL",
              help="GPU model: h100, a100, v100, t4, rtx2060, gtx260, gtx1070, quadro-rtx4000.")
def occupancy_command(file, kernels, block, shared, regs, gpu_key):
    """Theoretical occupancy (active blocks and warps per SM) of each kernel,
    by the CUDA occupancy calculator's rules (docs/gpus.md)."""
    from ptxc.cli.options import read_module
    from ptxc.gpus.architecture import gpu
    from ptxc.gpus.kernel_resources import Registers, module_registers, static_shared
    from ptxc.gpus.occupancy import occupancy
    from ptxc.ir.names import short

    g = gpu(gpu_key)
    module, text = _read(file, read_module)
    chosen = _select(module, kernels, file)
    if regs is not None:
        reg_of = {fn.name: Registers(regs, "--regs") for fn in chosen}
    else:
        reg_of = module_registers(module, text, g.sm)
    out = []
    for fn in chosen:
        threads, how = _block_size(fn, block)
        if threads > g.max_threads_per_block:
            raise PtxcError(f"block size {threads} exceeds the {g.max_threads_per_block} "
                            f"threads per block of {g.key}")
        smem = static_shared(module, fn)
        r = reg_of[fn.name]
        occ = occupancy(g, r.count, threads, smem, shared)
        out.append(render(short(fn.name, 100), g, occ, r, smem, shared, how))
    click.echo("\n".join(out), nl=False)


def _read(file, read_module):
    """(module, PTX text for ptxas); FILE '-' reads stdin."""
    if file == "-":
        import sys

        from ptxc.frontend.parser import parse_module
        from ptxc.cli.options import decode_source
        text = decode_source(sys.stdin.buffer.read(), "<stdin>")
        return parse_module(text, "<stdin>"), text
    module = read_module(file)          # the one-line errors for a bad file
    with open(file, "rb") as fh:
        return module, fh.read().decode("utf-8", "replace")


def _select(module, names, file):
    kernels = module.kernels
    if not kernels:
        raise PtxcError(f"{file}: no kernel (.entry) in the module")
    if not names:
        return kernels
    from ptxc.launcher.config import find_kernel      # the rule of ptxc/ir/names.py
    return list({id(k): k for k in (find_kernel(module, n) for n in names)}.values())


def _block_size(fn, block):
    if block is not None:
        return block, "--block"
    if fn.reqntid:
        n = 1
        for d in fn.reqntid:
            n *= d
        return n, ".reqntid"
    return DEFAULT_BLOCK, "default; give --block"


def render(name, g, occ, r, smem, dyn, how) -> str:
    limits = ", ".join(f"{k} {'-' if v >= 1 << 30 else v}" for k, v in occ.limits.items())
    fits = "" if occ.blocks_per_sm else "  (the block does not fit on an SM)"
    return (
        f"kernel {name} on {g.key} ({g.name}, sm_{g.sm}), block {occ.block_size} ({how})\n"
        f"  registers      {occ.regs} per thread ({r.source}); "
        f"{occ.regs_per_block} allocated per block\n"
        f"  shared memory  {smem} B static + {dyn} B dynamic; {occ.shared_per_block} B "
        f"allocated per block (incl. {g.reserved_shared_per_block} B reserved)\n"
        f"  blocks/SM by   {limits}\n"
        f"  limited by     {', '.join(occ.limiters)}{fits}\n"
        f"  active per SM  {occ.blocks_per_sm} blocks, {occ.warps_per_sm} warps "
        f"(of {g.max_warps_per_sm})\n"
        f"  occupancy      {100 * occ.occupancy:.1f} %\n")
