"""Theoretical occupancy: active blocks and warps per SM, as the CUDA
occupancy calculator computes them.

The rules are those of ``cudaOccMaxActiveBlocksPerMultiprocessor`` in the
CUDA toolkit's ``cuda_occupancy.h`` (the header form of
cudaOccupancyMaxActiveBlocksPerMultiprocessor), with the default device
state (no carveout preference, partitioned global caching off, one block
barrier): the blocks per SM are the minimum of four limits,

* warps:     max warps per SM // warps per block (0 if the block is too big);
* blocks:    the max resident blocks per SM;
* registers: registers per warp = roundup(regs x 32, 256); the register file
  is split between 4 sub-partitions, each holding
  (regs per SM / 4) // registers per warp warps; 0 blocks if the block's
  registers (warps rounded up to a multiple of 4, the hardware check)
  exceed the per-block limit;
* shared memory: roundup(static + dynamic + reserved-per-block, granularity)
  per block; 0 blocks if that exceeds the per-block limit (the opt-in limit
  when the kernel needs more than the default 48 KiB, plus the reserved
  amount from cc 8.0 on).

Compute capability 1.x (GTX 260) is not in cuda_occupancy.h; it follows the
CUDA Occupancy Calculator spreadsheet of CUDA 2.x-4.x: registers allocated per
block, roundup(roundup(warps, 2) x regs x 32, 512); shared memory in 512-byte
units. Parameters: :mod:`ptxc.gpus.architecture`; docs/gpus.md.
"""
from __future__ import annotations

from dataclasses import dataclass

LIMITS = ("warps", "blocks", "registers", "shared memory")
UNLIMITED = 1 << 30


def round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    gpu: str
    block_size: int
    regs: int
    shared_bytes: int            # static + dynamic, as the kernel asks
    blocks_per_sm: int
    warps_per_block: int
    limits: dict                 # limit name -> blocks per SM it allows
    regs_per_block: int          # registers allocated to one block
    shared_per_block: int        # shared memory allocated to one block
    max_warps_per_sm: int

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float:
        """Active warps per SM / max warps per SM (0..1)."""
        return self.warps_per_sm / self.max_warps_per_sm

    @property
    def limiters(self) -> list[str]:
        """Every limit that equals the result (the calculator reports all)."""
        return [k for k in LIMITS if self.limits[k] == self.blocks_per_sm]


def occupancy(g, regs: int, block_size: int, static_shared: int = 0,
              dynamic_shared: int = 0) -> Occupancy:
    """Blocks per SM for a kernel on GPU model ``g`` (an architecture.GpuArch)."""
    if block_size < 1 or regs < 0 or static_shared < 0 or dynamic_shared < 0:
        raise ValueError("block size must be >= 1 and resources >= 0")
    warps = -(-block_size // g.warp_size)
    limits = {
        "warps": _warps_limit(g, block_size, warps),
        "blocks": g.max_blocks_per_sm,
    }
    limits["registers"], reg_alloc = _regs_limit(g, regs, warps)
    limits["shared memory"], smem_alloc = _smem_limit(g, static_shared, dynamic_shared)
    return Occupancy(g.key, block_size, regs, static_shared + dynamic_shared,
                     min(limits.values()), warps, limits, reg_alloc, smem_alloc,
                     g.max_warps_per_sm)


def _warps_limit(g, block_size: int, warps: int) -> int:
    if block_size > g.max_threads_per_block:
        return 0
    return g.max_warps_per_sm // warps


def _regs_limit(g, regs: int, warps: int) -> tuple[int, int]:
    """(blocks allowed, registers allocated per block)."""
    if g.reg_alloc_granularity == "block":
        per_block = round_up(round_up(warps, g.sub_partitions) * regs * g.warp_size,
                             g.reg_alloc_unit)
        if regs > g.max_regs_per_thread or per_block > g.regs_per_block:
            return 0, per_block
        return (g.regs_per_sm // per_block if per_block else UNLIMITED), per_block
    per_warp = round_up(regs * g.warp_size, g.reg_alloc_unit)
    per_block = per_warp * warps
    assumed = per_warp * round_up(warps, g.sub_partitions)    # the hardware check
    if regs > g.max_regs_per_thread or g.regs_per_block < max(per_block, assumed):
        return 0, per_block
    if not per_warp:
        return UNLIMITED, 0
    warps_per_partition = (g.regs_per_sm // g.sub_partitions) // per_warp
    return warps_per_partition * g.sub_partitions // warps, per_block


def _smem_limit(g, static: int, dynamic: int) -> tuple[int, int]:
    """(blocks allowed, shared bytes allocated per block)."""
    alloc = round_up(static + dynamic + g.reserved_shared_per_block, g.shared_alloc_unit)
    limit = g.shared_per_block_optin if static + dynamic > g.shared_per_block \
        else g.shared_per_block
    if g.major >= 8:
        limit += g.reserved_shared_per_block
    if alloc > limit:
        return 0, alloc
    return (g.shared_per_sm // alloc if alloc else UNLIMITED), alloc
