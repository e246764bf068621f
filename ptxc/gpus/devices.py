"""The GPU models `ptxc run --gpu` can present to an application.

The numbers are those of NVIDIA's published specifications and of the
CUDA programming guide's table of compute capabilities (per-SM limits);
an application sees them through cudaGetDeviceProperties,
cudaDeviceGetAttribute, cudaMemGetInfo and the occupancy calculator. They
change no counter: the executor's SIMT model is METRICS.md's whatever the
model. The compute capability also picks the PTX entry of the fat binary
(the highest architecture not above it).
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.errors import PtxcError


KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class GpuModel:
    key: str
    name: str
    major: int
    minor: int
    sm_count: int
    total_mem: int
    clock_khz: int
    mem_clock_khz: int
    mem_bus_width: int
    l2_size: int
    shared_per_sm: int
    shared_per_block_optin: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    persisting_l2_max: int
    shared_per_block: int = 48 * KiB
    regs_per_block: int = 65536
    regs_per_sm: int = 65536
    max_threads_per_block: int = 1024
    const_mem: int = 64 * KiB
    reserved_shared_per_block: int = 1 * KiB

    @property
    def sm(self) -> int:
        return 10 * self.major + self.minor


MODELS = {m.key: m for m in (
    GpuModel("h100", "NVIDIA H100 80GB HBM3 (ptxc)", 9, 0, sm_count=132, total_mem=80 * GiB,
             clock_khz=1980000, mem_clock_khz=2619000, mem_bus_width=5120, l2_size=50 * MiB,
             shared_per_sm=228 * KiB, shared_per_block_optin=227 * KiB, max_threads_per_sm=2048,
             max_blocks_per_sm=32, persisting_l2_max=31457280),
    GpuModel("a100", "NVIDIA A100-SXM4-80GB (ptxc)", 8, 0, sm_count=108, total_mem=80 * GiB,
             clock_khz=1410000, mem_clock_khz=1593000, mem_bus_width=5120, l2_size=40 * MiB,
             shared_per_sm=164 * KiB, shared_per_block_optin=163 * KiB, max_threads_per_sm=2048,
             max_blocks_per_sm=32, persisting_l2_max=31457280),
    GpuModel("v100", "Tesla V100-SXM2-32GB (ptxc)", 7, 0, sm_count=80, total_mem=32 * GiB,
             clock_khz=1530000, mem_clock_khz=877000, mem_bus_width=4096, l2_size=6 * MiB,
             shared_per_sm=96 * KiB, shared_per_block_optin=96 * KiB, max_threads_per_sm=2048,
             max_blocks_per_sm=32, persisting_l2_max=0, reserved_shared_per_block=0),
    GpuModel("t4", "Tesla T4 (ptxc)", 7, 5, sm_count=40, total_mem=15 * GiB,
             clock_khz=1590000, mem_clock_khz=5001000, mem_bus_width=256, l2_size=4 * MiB,
             shared_per_sm=64 * KiB, shared_per_block_optin=64 * KiB, max_threads_per_sm=1024,
             max_blocks_per_sm=16, persisting_l2_max=0, reserved_shared_per_block=0),
)}
DEFAULT = "h100"


def model(key: str | None) -> GpuModel:
    k = (key or DEFAULT).lower().replace("-", "").replace("_", "")
    for alias, target in (("h100sxm", "h100"), ("a100sxm", "a100"), ("sm90", "h100"),
                          ("sm80", "a100"), ("sm70", "v100"), ("sm75", "t4")):
        if k == alias:
            k = target
    if k not in MODELS:
        raise PtxcError(f"unknown GPU model '{key}' (choose one of {', '.join(MODELS)})")
    return MODELS[k]
