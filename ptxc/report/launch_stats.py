"""A kernel's launch statistics for the reports (docs/report.md): grid and
block, registers per thread, shared memory and theoretical occupancy on a
GPU model, as nvprof's and Nsight Compute's launch statistics list them.

Registers come from ``ptxas -v`` for the GPU model's architecture when
ptxas is installed, else the kernel's ``.maxnreg`` or ptxc's estimate (the
``source`` says which: ptxc.gpus.kernel_resources); static shared memory is
the executor's layout of the kernel's ``.shared`` variables; occupancy is
the CUDA occupancy calculator's (ptxc.gpus.occupancy). A kernel whose block
does not fit on the model's SM has occupancy 0 and the limits say why.
"""
from __future__ import annotations

from ptxc.errors import PtxcError


def launch_stats(module, kernel: str, grid, block, dynamic_shared: int, gpu_key: str | None,
                 registers: dict | None = None) -> dict:
    """The statistics of a launch of ``kernel`` (``registers``: a
    {kernel: Registers} already computed for ``module``, to share one ptxas
    run between the kernels of a report)."""
    from ptxc.gpus.architecture import gpu
    from ptxc.gpus.kernel_resources import module_registers, static_shared
    from ptxc.gpus.occupancy import occupancy
    g = gpu(gpu_key)
    fn = next(k for k in module.kernels if k.name == kernel)
    regs = (registers or module_registers(module, module.source or "", g.sm))[kernel]
    threads = _count(block)
    out = {"gpu": g.key, "grid": list(grid), "block": list(block), "threads": _count(grid) * threads,
           "registers": regs.count, "registers_source": regs.source,
           "dynamic_shared": dynamic_shared}
    try:
        out["static_shared"] = static_shared(module, fn)
        occ = occupancy(g, regs.count, threads, out["static_shared"], dynamic_shared)
    except (PtxcError, ValueError) as err:
        out.update(static_shared=None, occupancy=None, why=str(err).splitlines()[0])
        return out
    out.update(blocks_per_sm=occ.blocks_per_sm, warps_per_sm=occ.warps_per_sm,
               max_warps_per_sm=occ.max_warps_per_sm,
               occupancy=round(100.0 * occ.occupancy, 2), limiters=occ.limiters)
    return out


def registers_of(module, gpu_key: str | None) -> dict:
    """{kernel: Registers} of every kernel of ``module`` for the GPU model."""
    from ptxc.gpus.architecture import gpu
    from ptxc.gpus.kernel_resources import module_registers
    return module_registers(module, module.source or "", gpu(gpu_key).sm)


def _count(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n
