"""Build the model's Inputs for one launch: a Profile with memory counters,
the module it ran, and a GPU model (occupancy from ptxc.gpus.occupancy).

A launch without memory counters is refused (the memory sub-model and the
replays need transactions per request and bank conflicts): `ptxc predict`
always collects them; `ptxc opt --topdown` needs `--memory-counters`.
"""
from __future__ import annotations

from ..errors import PtxcError
from ptxc.gpus.occupancy import occupancy
from .luo_suda import Inputs
from .mix import instruction_mix, parallelism


def launch_inputs(module, prof: dict, g, regs, dynamic_shared: int = 0) -> tuple:
    """(Inputs, Occupancy) of a launch; ``prof`` is ``Profile.to_dict()``;
    ``regs`` a kernel_resources.Registers."""
    if not prof.get("memory_counters"):
        raise PtxcError(f"kernel '{prof['kernel']}': the model needs the memory counters "
                        "(run the launch with --memory-counters)")
    fn = next((k for k in module.kernels if k.name == prof["kernel"]), None)
    if fn is None:
        raise PtxcError(f"no kernel '{prof['kernel']}' in the module")
    from ptxc.gpus.kernel_resources import static_shared
    threads = _product(prof["block"])
    occ = occupancy(g, regs.count, threads, static_shared(module, fn), dynamic_shared)
    if occ.blocks_per_sm == 0:
        raise PtxcError(f"kernel '{fn.name}': a block of {threads} threads does not fit on "
                        f"an SM of {g.key} ({', '.join(occ.limiters)})")
    mem = prof["memory"]
    mix = instruction_mix(module, prof["per_block"])
    ilp, mlp = parallelism(module, prof["per_block"])
    inp = Inputs(
        kernel=fn.name, blocks=_product(prof["grid"]),
        warps_per_block=occ.warps_per_block, occupancy_blocks=occ.blocks_per_sm, mix=mix,
        inst_executed=prof["inst_executed"], thread_inst_executed=prof["thread_inst_executed"],
        global_requests=_sum(mem, "gld_requests", "gst_requests", "global_atomic_requests",
                             "global_reduction_requests"),
        global_transactions=_sum(mem, "gld_transactions", "gst_transactions",
                                 "global_atomic_addresses"),
        global_lines=_sum(mem, "gld_lines", "gst_lines"),
        shared_requests=_sum(mem, "shared_load_requests", "shared_store_requests",
                             "shared_atomic_requests"),
        shared_transactions=_sum(mem, "shared_load_transactions", "shared_store_transactions",
                                 "shared_atomic_addresses"),
        shared_bank_conflicts=_sum(mem, "shared_ld_bank_conflict", "shared_st_bank_conflict"),
        ilp=ilp, mlp=mlp)
    return inp, occ


def _product(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _sum(mem: dict, *keys) -> int:
    return sum(mem.get(k) or 0 for k in keys)
