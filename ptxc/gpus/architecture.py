"""GPU architecture parameters for performance models, each with its source.

One table per GPU (``h100 a100 v100 t4 rtx2060 gtx260 gtx1070 quadro-rtx4000``): the per-SM
resources the CUDA occupancy calculator uses, the issue and functional-unit
widths an execution-time model (Luo & Suda 2011, issue 15) needs, and the
memory system's sizes and speeds. Every entry is a :class:`Param` holding
the number and the place it comes from; ``docs/gpus.md`` prints the table.

Single source of truth: for the four GPUs that ``ptxc run --gpu`` can present
(:mod:`ptxc.gpus.devices`), the numbers an application also sees through
cudaGetDeviceProperties (SM count, clock, memory clock and bus width, L2
size, per-SM limits, shared memory) are read from that module, not repeated.

Sources (abbreviations used in the notes):
  CCT   CUDA C++ Programming Guide, "Compute Capabilities" / "Technical
        Specifications per Compute Capability" table.
  OCC   cuda_occupancy.h (CUDA 13.0 toolkit): the occupancy calculator's
        rules (cudaOccSMemAllocationGranularity, cudaOccRegAllocation*,
        cudaOccSubPartitionsPerMultiprocessor, cudaOccMaxBlocksPerMultiprocessor).
  XLS   CUDA_Occupancy_Calculator.xls (CUDA 2.x-4.x), "GPU Data" sheet: the
        rules for compute capability 1.x, which cuda_occupancy.h omits.
  H100WP NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022).
  A100WP NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020).
  V100WP NVIDIA Tesla V100 GPU Architecture whitepaper (2017).
  TUWP  NVIDIA Turing GPU Architecture whitepaper (2018), incl. appendix tables.
  GT200 NVIDIA GeForce GTX 200 GPUs Technical Brief (2008) and the CUDA 2.x/3.x
        Programming Guide (Appendix A, compute capability 1.3).
  BPG   CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory".
  THR   CUDA C++ Programming Guide, "Arithmetic Instructions": the table
        "Throughput of Native Arithmetic Instructions" (results per clock
        cycle per multiprocessor) for the compute capability named.
  GP104WP NVIDIA GeForce GTX 1080 whitepaper (2016): the Pascal GP104 chip and
        its SM (the GTX 1070 is a GP104 with 15 of its 20 SMs).
  TDT   Álvaro Saiz Fernández, "Metodología TopDown sobre GPUs NVIDIA" (thesis,
        Universidad de Cantabria, 2021): section 4.2 (IPC_MAX = the dispatch
        units of an SM) and Table 5.1 (the GTX 1070 and Quadro RTX 4000 it used).
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.errors import PtxcError
from ptxc.gpus import devices as _rt

KiB, MiB = 1 << 10, 1 << 20


@dataclass(frozen=True)
class Param:
    value: object
    source: str


@dataclass(frozen=True)
class GpuArch:
    key: str
    name: str
    params: dict

    def __getattr__(self, field: str):
        try:
            return self.__dict__["params"][field].value
        except KeyError:
            raise AttributeError(field) from None

    def source(self, field: str) -> str:
        return self.params[field].source

    @property
    def sm(self) -> int:
        return 10 * self.major + self.minor


def P(value, source: str) -> Param:
    return Param(value, source)


def _from_runtime(key: str, why: str) -> dict:
    """The fields the runtime shim already presents for ``key``."""
    m = _rt.MODELS[key]
    src = f"ptxc/gpus/devices.py MODELS['{key}'] ({why})"
    bandwidth = 2 * m.mem_clock_khz * 1000 * m.mem_bus_width // 8 / 1e9
    return {
        "major": P(m.major, "CCT"), "minor": P(m.minor, "CCT"),
        "sm_count": P(m.sm_count, src),
        "clock_mhz": P(m.clock_khz // 1000, src + "; boost clock, cudaDeviceProp.clockRate"),
        "mem_bandwidth_gbs": P(round(bandwidth, 1),
                               src + "; 2 (double data rate) x memoryClockRate x bus width / 8"),
        "l2_size": P(m.l2_size, src),
        "max_threads_per_sm": P(m.max_threads_per_sm, "CCT; " + src),
        "max_warps_per_sm": P(m.max_threads_per_sm // 32, "CCT; max threads per SM / 32"),
        "max_blocks_per_sm": P(m.max_blocks_per_sm, "CCT; OCC cudaOccMaxBlocksPerMultiprocessor"),
        "max_threads_per_block": P(m.max_threads_per_block, "CCT"),
        "regs_per_sm": P(m.regs_per_sm, "CCT (64K 32-bit registers); " + src),
        "regs_per_block": P(m.regs_per_block, "CCT (64K); " + src),
        "shared_per_sm": P(m.shared_per_sm, "CCT; " + src),
        "shared_per_block": P(m.shared_per_block, "CCT (48 KiB without opt-in)"),
        "shared_per_block_optin": P(m.shared_per_block_optin, "CCT; " + src),
        "reserved_shared_per_block": P(m.reserved_shared_per_block,
                                       "CCT (1 KiB reserved by the driver from cc 8.0 on); "
                                       "cudaDeviceProp.reservedSharedMemPerBlock; " + src),
    }


def _modern(cc_major: int) -> dict:
    """Allocation rules common to compute capability 7.x-9.x (OCC)."""
    return {
        "warp_size": P(32, "CCT"),
        "max_regs_per_thread": P(255, "CCT (255; OCC's check uses 256)"),
        "reg_alloc_unit": P(256, "OCC cudaOccRegAllocationGranularity: 256 registers"),
        "reg_alloc_granularity": P("warp", "OCC: 'GPUs of compute capability 2.x and higher "
                                           "allocate registers to warps'"),
        "sub_partitions": P(4, "OCC cudaOccSubPartitionsPerMultiprocessor (4 for cc 7-9); "
                               "the registers are split evenly between them"),
        "shared_alloc_unit": P(256 if cc_major == 7 else 128,
                               "OCC cudaOccSMemAllocationGranularity (256 B for cc 7.x, "
                               "128 B for cc 8.x/9.x)"),
        "l2_sector_bytes": P(32, "BPG: memory transactions are 32-byte sectors"),
        "l2_line_bytes": P(128, "BPG: 128-byte cache lines of four sectors"),
    }


_LAT_NOTE = ("approximate and uncertain: NVIDIA publishes no DRAM latency; "
             "microbenchmarks (Jia et al. 2018 'Dissecting the NVIDIA Volta GPU "
             "Architecture via Microbenchmarking', Jia et al. 2019 for Turing, "
             "Luo et al. 2024 'Benchmarking and Dissecting the Nvidia Hopper GPU "
             "Architecture', arXiv:2402.13499) report a few hundred to ~600 cycles "
             "for a global load that misses L2; the model's value only")


def _units(schedulers, fp32, fp64, int32, sfu, ldst, tensor, wp: str, cc: str) -> dict:
    note = f"{wp}, SM block diagram ({schedulers} processing blocks)"
    thr = f"{note}; THR cc {cc}: the same number of results per clock per SM"
    return {
        "schedulers_per_sm": P(schedulers, f"{wp}: one warp scheduler per processing block"),
        "dispatch_units_per_sm": P(schedulers, f"{wp}: one dispatch unit (32 threads/clk) "
                                               "per processing block"),
        "fp32_per_sm": P(fp32, thr), "fp64_per_sm": P(fp64, thr),
        "int32_per_sm": P(int32, thr), "sfu_per_sm": P(sfu, thr),
        "ldst_per_sm": P(ldst, note), "tensor_per_sm": P(tensor, note),
    }


_PG_MP = ("CUDA C++ Programming Guide, 'Maximize Instruction Throughput / Multiprocessor "
          "Level': back-to-back register dependency latency")
_NOT_MEASURED = ("not measured (Luo & Suda obtain it by micro-benchmark; `ptxc calibrate` "
                 "measures it on a GPU)")


def _timing(cc_major: int) -> dict:
    """Latencies and limits of the execution-time model (ptxc/predict, issue 15:
    Luo & Suda's micro-benchmarked c, d, n, m), by compute capability."""
    dep = {1: P(22, _PG_MP + ": 'about 22 clock cycles' for compute capability 1.x/2.x "
                "(NVIDIA's 2009 optimisation webinar: ~24)"),
           7: P(4, _PG_MP + ": 'typically 4 clock cycles' for compute capability 7.x"),
           8: P(4, _PG_MP + " gives 7.x only; assumed the same for 8.x (Jia et al. report "
                "4-cycle FFMA latency from Volta on); uncertain"),
           9: P(4, _PG_MP + " gives 7.x only; assumed the same for 9.x (Luo et al. 2024, "
                "arXiv:2402.13499: ~4-cycle FP32 on Hopper); uncertain")}[cc_major]
    shared = {1: P(38, "uncertain: Wong et al., ISPASS 2010 ('Demystifying GPU "
                   "Microarchitecture through Microbenchmarking'): ~38 cycles on GT200"),
              7: P(19, "uncertain: Jia et al. 2018/2019 (Volta/Turing): ~19-22 cycles"),
              8: P(23, "uncertain: Luo et al. 2024 (arXiv:2402.13499): ~23-30 cycles on A100"),
              9: P(23, "uncertain: Luo et al. 2024 (arXiv:2402.13499): ~23-30 cycles on "
                   "H100")}[cc_major]
    return {
        "dep_latency_cycles": dep,
        "shared_latency_cycles": shared,
        "max_inflight_requests": P(256, _NOT_MEASURED + "; 256 global requests in flight per "
                                        "SM, the order of the L1 miss-status registers "
                                        "GPGPU-Sim models"),
        "launch_overhead_cycles": P(3000, _NOT_MEASURED + "; ~2-3 us per launch at 1.2-2 GHz "
                                          "(CUDA Best Practices Guide: launches cost "
                                          "microseconds)"),
        "shared_cycles_per_transaction": P(1, "CUDA C++ Programming Guide, 'Shared Memory': "
                                              "32 banks x 4 bytes per clock: one 128-byte "
                                              "wavefront per cycle per SM"),
    }


def _gpu(key: str, name: str, *parts: dict) -> GpuArch:
    params: dict = {}
    for part in parts:
        params.update(part)
    return GpuArch(key, name, params)


H100 = _gpu("h100", "NVIDIA H100 SXM5 80GB", _from_runtime("h100", "H100 SXM5"), _modern(9),
            _units(4, 128, 64, 64, 16, 32, 4, "H100WP", "9.0"), _timing(9),
            {"mem_latency_cycles": P(480, _LAT_NOTE)})
A100 = _gpu("a100", "NVIDIA A100 SXM4 80GB", _from_runtime("a100", "A100 SXM4 80GB"), _modern(8),
            _units(4, 64, 32, 64, 16, 32, 4, "A100WP", "8.0"), _timing(8),
            {"mem_latency_cycles": P(470, _LAT_NOTE)})
V100 = _gpu("v100", "NVIDIA Tesla V100 SXM2 32GB", _from_runtime("v100", "V100 SXM2"), _modern(7),
            _units(4, 64, 32, 64, 16, 32, 8, "V100WP", "7.0"), _timing(7),
            {"mem_latency_cycles": P(440, _LAT_NOTE)})
T4 = _gpu("t4", "NVIDIA Tesla T4", _from_runtime("t4", "TU104, 40 SMs"), _modern(7),
          _units(4, 64, 2, 64, 16, 16, 8, "TUWP (FP64: 2 per SM)", "7.5"), _timing(7),
          {"mem_latency_cycles": P(500, _LAT_NOTE)})

_TU106 = "TUWP appendix, GeForce RTX 2060 (TU106, 30 SMs)"
RTX2060 = _gpu(
    "rtx2060", "NVIDIA GeForce RTX 2060", _modern(7),
    _units(4, 64, 2, 64, 16, 16, 8, "TUWP (same Turing SM as T4)", "7.5"), _timing(7),
    {"major": P(7, "CCT"), "minor": P(5, "CCT"),
     "sm_count": P(30, _TU106 + ": 1920 CUDA cores / 64 per SM"),
     "clock_mhz": P(1680, _TU106 + ": boost clock 1680 MHz"),
     "mem_bandwidth_gbs": P(336.0, _TU106 + ": 192-bit GDDR6 at 14 Gbps = 336 GB/s"),
     "l2_size": P(3 * MiB, _TU106 + ": 3072 KB L2"),
     "max_threads_per_sm": P(1024, "CCT (cc 7.5)"),
     "max_warps_per_sm": P(32, "CCT (cc 7.5)"),
     "max_blocks_per_sm": P(16, "CCT (cc 7.5); OCC (isTuring: 16)"),
     "max_threads_per_block": P(1024, "CCT"),
     "regs_per_sm": P(65536, "CCT"), "regs_per_block": P(65536, "CCT"),
     "shared_per_sm": P(64 * KiB, "CCT (cc 7.5: 64 KB)"),
     "shared_per_block": P(48 * KiB, "CCT"),
     "shared_per_block_optin": P(64 * KiB, "CCT (cc 7.5: 64 KB)"),
     "reserved_shared_per_block": P(0, "CCT (no reservation before cc 8.0)"),
     "mem_latency_cycles": P(500, _LAT_NOTE)})

_GT = "GT200 (GeForce GTX 260, 192-core version: 8 TPCs x 3 SMs)"
_CC13 = "CUDA 2.x/3.x Programming Guide, Appendix A (compute capability 1.3)"
# The GTX 260 is the GPU of Luo & Suda's paper; its Table 2 gives the same
# numbers (ptxc/gpus/luo_suda_params.py holds the model's own parameters).
_LS2 = "Luo & Suda 2011, Table 2"
GTX260 = _gpu(
    "gtx260", "NVIDIA GeForce GTX 260 (GT200)", _timing(1),
    {"major": P(1, _CC13), "minor": P(3, _CC13),
     "sm_count": P(24, _GT + ": 192 SPs / 8 per SM (the later 'Core 216' has 27); " + _LS2),
     "clock_mhz": P(1242, _GT + ": shader (SP) clock 1242 MHz; " + _LS2 + " (processor "
                          "clock; its graphics clock is 576 MHz)"),
     "mem_bandwidth_gbs": P(111.9, _GT + ": 448-bit GDDR3 at 999 MHz (1998 MT/s) = 111.9 GB/s; "
                                   + _LS2),
     "mem_latency_cycles": P(500, _CC13 + " ('400 to 600 clock cycles' of global memory "
                                  "latency); midpoint, approximate"),
     "l2_size": P(0, _GT + ": no L1/L2 cache for global memory (texture caches only)"),
     "l2_sector_bytes": P(32, _CC13 + ": smallest coalesced segment 32 B (cc 1.2+)"),
     "l2_line_bytes": P(128, _CC13 + ": largest coalesced segment 128 B"),
     "warp_size": P(32, _CC13),
     "max_threads_per_sm": P(1024, _CC13), "max_warps_per_sm": P(32, _CC13),
     "max_blocks_per_sm": P(8, _CC13), "max_threads_per_block": P(512, _CC13),
     "regs_per_sm": P(16384, _CC13), "regs_per_block": P(16384, _CC13),
     "max_regs_per_thread": P(124, "CUDA 3.x/4.x Programming Guide, technical specifications "
                                   "(124 for cc 1.x); uncertain"),
     "reg_alloc_unit": P(512, "XLS (cc 1.2/1.3: register allocation unit 512)"),
     "reg_alloc_granularity": P("block", "XLS (cc 1.x: registers allocated per block)"),
     "sub_partitions": P(2, "XLS (cc 1.x: warp allocation granularity 2)"),
     "shared_per_sm": P(16 * KiB, _CC13), "shared_per_block": P(16 * KiB, _CC13),
     "shared_per_block_optin": P(16 * KiB, _CC13 + " (no opt-in)"),
     "shared_alloc_unit": P(512, "XLS (cc 1.x: shared memory allocation unit 512 B)"),
     "reserved_shared_per_block": P(0, "XLS: none; uncertain: cc 1.x passes kernel parameters "
                                       "in shared memory, the calculator expects them in "
                                       "the user's figure"),
     "schedulers_per_sm": P(1, _GT + ": one instruction unit per SM, a warp "
                                    "instruction issues over 4 clocks on 8 SPs"),
     "dispatch_units_per_sm": P(1, _GT),
     "fp32_per_sm": P(8, _GT + ": 8 SPs per SM; THR cc 1.x: 8 results/clk/SM"),
     "fp64_per_sm": P(1, _GT + ": one double-precision unit per SM; THR cc 1.3: 1"),
     "int32_per_sm": P(8, _GT + ": integer add on the 8 SPs; THR cc 1.x: 8 (32-bit "
                          "integer multiply is slower)"),
     "sfu_per_sm": P(2, _GT + ": 2 SFUs per SM; THR cc 1.x: 2 (rsqrt, log2, sin, ...)"),
     "ldst_per_sm": P(None, _GT + ": no per-SM load/store units; memory goes through the TPC's "
                             "texture/memory pipeline (no published per-SM count)"),
     "tensor_per_sm": P(0, _GT + ": no tensor cores")})

# The two GPUs of the TopDown thesis's evaluation (TDT Table 5.1). Their
# clocks are Table 5.1's "frecuencia de reloj máxima" (boost), as the other
# models take cudaDeviceProp.clockRate.
_GTX1070 = ("NVIDIA GeForce GTX 1070 specifications (nvidia.com: 1920 CUDA cores, 8 GB "
            "GDDR5 at 8 Gbps, 256-bit) and TDT Table 5.1")
_CC61 = "CCT (compute capability 6.1)"
_PASCAL_LAT = ("uncertain: Jia et al. 2018, 'Dissecting the NVIDIA Volta GPU Architecture via "
               "Microbenchmarking' (arXiv:1804.06826), Pascal (P100)")
GTX1070 = _gpu(
    "gtx1070", "NVIDIA GeForce GTX 1070",
    {"major": P(6, _CC61 + "; TDT Table 5.1"), "minor": P(1, _CC61 + "; TDT Table 5.1"),
     "sm_count": P(15, _GTX1070 + ": 1920 CUDA cores / 128 per GP104 SM (GP104WP) = 15; "
                                  "Table 5.1: 15 SMs"),
     "clock_mhz": P(1683, _GTX1070 + ": boost clock 1683 MHz (Table 5.1; base 1506 MHz)"),
     "mem_bandwidth_gbs": P(256.0, _GTX1070 + ": 256-bit GDDR5 at 8 Gbps = 256 GB/s"),
     "l2_size": P(2 * MiB, "GP104WP: 2048 KB L2, 256 KB per 32-bit memory controller; the "
                           "GTX 1070 keeps all eight (256-bit bus)"),
     "max_threads_per_sm": P(2048, _CC61), "max_warps_per_sm": P(64, _CC61 + "; 2048 / 32"),
     "max_blocks_per_sm": P(32, _CC61 + "; OCC cudaOccMaxBlocksPerMultiprocessor (cc 6: 32)"),
     "max_threads_per_block": P(1024, _CC61 + "; TDT Table 5.1"),
     "regs_per_sm": P(65536, _CC61 + " (64K 32-bit registers)"),
     "regs_per_block": P(65536, _CC61 + " (64K)"),
     "shared_per_sm": P(96 * KiB, _CC61 + ": 96 KB per SM (GP104WP: a 96 KB shared memory "
                                  "unit per SM)"),
     "shared_per_block": P(48 * KiB, _CC61 + ": 48 KB"),
     "shared_per_block_optin": P(48 * KiB, _CC61 + ": 48 KB, no opt-in before cc 7.0 (OCC "
                                           "uses sharedMemPerBlock for cc 6)"),
     "reserved_shared_per_block": P(0, "CCT (no reservation before cc 8.0)"),
     "warp_size": P(32, _CC61),
     "max_regs_per_thread": P(255, _CC61 + "; OCC cudaOccRegAllocationGranularity table "
                                   "(cc 6: 255)"),
     "reg_alloc_unit": P(256, "OCC cudaOccRegAllocationGranularity: 256 registers (cc 6)"),
     "reg_alloc_granularity": P("warp", "OCC: 'GPUs of compute capability 2.x and higher "
                                        "allocate registers to warps'"),
     "sub_partitions": P(4, "OCC cudaOccSubPartitionsPerMultiprocessor (cc 6.1: 4; 6.0: 2)"),
     "shared_alloc_unit": P(256, "OCC cudaOccSMemAllocationGranularity (256 B for cc 6.x)"),
     "l2_sector_bytes": P(32, "BPG: memory transactions are 32-byte sectors"),
     "l2_line_bytes": P(128, "BPG: 128-byte cache lines of four sectors"),
     "schedulers_per_sm": P(4, "GP104WP, SM block diagram: four processing blocks, one warp "
                               "scheduler each"),
     "dispatch_units_per_sm": P(8, "GP104WP, SM block diagram: two dispatch units per warp "
                                   "scheduler, four schedulers"),
     "fp32_per_sm": P(128, "GP104WP: 128 CUDA cores per SM; THR cc 6.1: 128"),
     "fp64_per_sm": P(4, "THR cc 6.1: 4 results per clock per SM for 64-bit floating-point "
                         "add, multiply, multiply-add"),
     "int32_per_sm": P(128, "THR cc 6.1: 128 (32-bit integer add, subtract, compare)"),
     "sfu_per_sm": P(32, "THR cc 6.1: 32 (reciprocal, rsqrt, log2, exp2, sine, cosine); "
                         "GP104WP: 8 SFUs per processing block"),
     "ldst_per_sm": P(32, "GP104WP, SM block diagram: 8 LD/ST units per processing block"),
     "tensor_per_sm": P(0, "GP104WP: no tensor cores (TDT Table 5.1: 0)"),
     "dep_latency_cycles": P(6, _PASCAL_LAT + ": 6 cycles for dependent FP32 arithmetic "
                                "(the Programming Guide's 4 is for cc 7.x)"),
     "shared_latency_cycles": P(24, _PASCAL_LAT + ": ~24 cycles"),
     "max_inflight_requests": P(256, _NOT_MEASURED + "; 256 global requests in flight per "
                                     "SM, as for the other models (not published)"),
     "launch_overhead_cycles": P(3000, _NOT_MEASURED + "; as for the other models (not "
                                       "published)"),
     "shared_cycles_per_transaction": P(1, "CUDA C++ Programming Guide, 'Shared Memory' "
                                           "(cc 5.x and later): 32 banks x 4 bytes per clock"),
     "mem_latency_cycles": P(500, _LAT_NOTE)})

_RTX4000 = ("NVIDIA Quadro RTX 4000 datasheet (2018: TU104, 2304 CUDA cores, 288 Tensor "
            "Cores, 8 GB GDDR6, 256-bit, 416 GB/s) and TDT Table 5.1")
QUADRO_RTX4000 = _gpu(
    "quadro-rtx4000", "NVIDIA Quadro RTX 4000", _modern(7),
    _units(4, 64, 2, 64, 16, 16, 8, "TUWP (the Turing SM, as T4)", "7.5"), _timing(7),
    {"major": P(7, "CCT; TDT Table 5.1"), "minor": P(5, "CCT; TDT Table 5.1"),
     "sm_count": P(36, _RTX4000 + ": 2304 CUDA cores / 64 per Turing SM = 36; Table 5.1: 36"),
     "clock_mhz": P(1545, "TDT Table 5.1: boost clock 1545 MHz (base 1005 MHz); the "
                          "datasheet gives none"),
     "mem_bandwidth_gbs": P(416.0, _RTX4000 + ": 416 GB/s (256-bit GDDR6 at 13 Gbps)"),
     "l2_size": P(4 * MiB, "TUWP appendix, TU104 (GeForce RTX 2080): 4096 KB L2 over eight "
                           "32-bit memory controllers (512 KB each); the RTX 4000's 256-bit "
                           "bus uses all eight"),
     "max_threads_per_sm": P(1024, "CCT (cc 7.5)"),
     "max_warps_per_sm": P(32, "CCT (cc 7.5)"),
     "max_blocks_per_sm": P(16, "CCT (cc 7.5); OCC (isTuring: 16)"),
     "max_threads_per_block": P(1024, "CCT; TDT Table 5.1"),
     "regs_per_sm": P(65536, "CCT"), "regs_per_block": P(65536, "CCT"),
     "shared_per_sm": P(64 * KiB, "CCT (cc 7.5: 64 KB)"),
     "shared_per_block": P(48 * KiB, "CCT"),
     "shared_per_block_optin": P(64 * KiB, "CCT (cc 7.5: 64 KB)"),
     "reserved_shared_per_block": P(0, "CCT (no reservation before cc 8.0)"),
     "mem_latency_cycles": P(500, _LAT_NOTE)})

GPUS = {g.key: g for g in (H100, A100, V100, T4, RTX2060, GTX260, GTX1070, QUADRO_RTX4000)}
ALIASES = {"sm90": "h100", "sm80": "a100", "sm70": "v100", "sm75": "t4",
           "h100sxm": "h100", "a100sxm": "a100", "2060": "rtx2060", "gt200": "gtx260",
           "sm13": "gtx260", "1070": "gtx1070", "sm61": "gtx1070",
           "quadrortx4000": "quadro-rtx4000", "rtx4000": "quadro-rtx4000"}

# TopDown (ptxc/predict/topdown.py, docs/predict.md): IPC_MAX, the warp
# instructions one SM can dispatch per cycle. TDT section 4.2: the maximum IPC
# is reached when each cycle the SM sends "tantas instrucciones de warp como
# número de unidades de dispatch tenga el SM" (its example, the GP100 SM of
# its Figure 3.3: two partitions x two dispatch units = 4.0).
_ONE_DISPATCH = ("TDT section 4.2: IPC_MAX = the dispatch units of an SM; {}: four processing "
                 "blocks, each with one warp scheduler and one dispatch unit (32 threads/clk)")
_IPC_MAX = {
    "h100": P(4, _ONE_DISPATCH.format("H100WP, SM block diagram")),
    "a100": P(4, _ONE_DISPATCH.format("A100WP, SM block diagram")),
    "v100": P(4, _ONE_DISPATCH.format("V100WP ('one warp scheduler, one dispatch unit' per "
                                      "processing block)")),
    "t4": P(4, _ONE_DISPATCH.format("TUWP ('one warp scheduler, and one dispatch unit' per "
                                    "processing block)")),
    "rtx2060": P(4, _ONE_DISPATCH.format("TUWP (the Turing SM)")),
    "quadro-rtx4000": P(4, _ONE_DISPATCH.format("TUWP (the Turing SM)") + "; TDT Table 5.1 "
                        "lists 2 partitions per SM for this GPU, the whitepaper 4"),
    "gtx1070": P(8, "TDT section 4.2: IPC_MAX = the dispatch units of an SM; GP104WP, SM block "
                    "diagram: four processing blocks, each with one warp scheduler and two "
                    "dispatch units (TDT Table 5.1: 4 partitions)"),
    "gtx260": P(1, "TDT section 4.2: IPC_MAX = the dispatch units of an SM; GT200: one "
                   "instruction unit per SM issues one warp instruction at a time (which then "
                   "occupies the 8 SPs for 4 clocks: CUDA 2.x Programming Guide, 'Arithmetic "
                   "Instructions')"),
}
for _g in GPUS.values():
    _g.params["ipc_max"] = _IPC_MAX[_g.key]


def gpu(key: str | None) -> GpuArch:
    """The model for ``key`` (default h100); a PtxcError names the choices."""
    k = (key or "h100").lower().replace("-", "").replace("_", "")
    k = ALIASES.get(k, k)
    if k not in GPUS:
        raise PtxcError(f"unknown GPU model '{key}' (choose one of {', '.join(GPUS)})")
    return GPUS[k]


def markdown() -> str:
    """The parameter tables of docs/gpus.md (its '## Parameters' section)."""
    out = []
    for g in GPUS.values():
        out.append(f"### {g.key}: {g.name} (sm_{g.sm})\n\n"
                   "| parameter | value | source |\n|---|---|---|")
        out += [f"| {k} | {p.value} | {p.source.replace('|', '/')} |"
                for k, p in g.params.items()]
        out.append("")
    return "\n".join(out)
