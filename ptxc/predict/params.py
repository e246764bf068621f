"""The parameters of the execution-time model (Luo & Suda 2011), per GPU, with sources.

Luo & Suda obtain their model's constants with micro-benchmarks on the GPU
(the symbols a, b, c, d, n, m of issue 15). Their paper's body was not
available to this project (only its abstract: IPSJ SIG Technical Report,
2011, ci.nii.ac.jp/naid/110008583375), so the role each letter plays here
is ptxc's reconstruction, stated in docs/predict.md:

  a  global-memory round-trip latency of one request, cycles
     (gpu_models ``mem_latency_cycles``: uncertain for every GPU)
  b  extra cycles per additional 32-byte transaction of one request at the
     SM (the SM's share of DRAM bandwidth: 32 B / (bandwidth / SMs / clock))
  c  shared-memory latency of one request, cycles
  d  dependent-issue latency of an arithmetic instruction, cycles
     (CUDA C++ Programming Guide, "Multiprocessor Level")
  n  most global-memory requests in flight per SM
  m  fixed cost of one kernel launch, cycles

Instruction costs (cycles of one SM per warp instruction, per class) come
from the functional-unit counts of :mod:`ptxc.gpu_models`:
``max(1 / schedulers, 32 / units)``. ``ptxc calibrate`` measures the same
names on a real GPU and writes them to a JSON file that ``--params`` reads
(its values replace these, its sources say "measured").
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import PtxcError
from ..gpu_models import Param, gpu

# The count pass's instruction classes (ptxc.opcodes.count_class) that run on a
# functional unit, and the gpu_models field that counts those units per SM.
# fp16 is costed as fp32 (packed f16x2 doubles the rate on cc >= 5.3; not
# modelled); conversions run at the SFU rate (THR: 16 per clock per SM on
# cc 7.x-9.x). The other classes cost one issue slot (cost_issue), loads
# and stores one slot on the load/store units (cost_memory_issue) plus the
# memory sub-model.
UNIT_OF = {"fp32": "fp32_per_sm", "fp64": "fp64_per_sm", "fp16": "fp32_per_sm",
           "integer": "int32_per_sm", "special": "sfu_per_sm",
           "conversion": "sfu_per_sm", "tensor": "tensor_per_sm"}

_PG_MP = ("CUDA C++ Programming Guide, 'Maximize Instruction Throughput / "
          "Multiprocessor Level': back-to-back register dependency latency")
_LUO = ("not measured (Luo & Suda obtain it by micro-benchmark); "
        "ptxc's default, run `ptxc calibrate` on the GPU")

# d: dependent-issue latency (cycles) by compute capability major.
_DEP_LATENCY = {
    1: Param(22, _PG_MP + ": 'about 22 clock cycles' for compute capability 1.x/2.x; "
                 "NVIDIA's 2009 optimisation webinar says ~24"),
    7: Param(4, _PG_MP + ": 'typically 4 clock cycles' for compute capability 7.x"),
    8: Param(4, _PG_MP + " gives 7.x only; assumed the same for 8.x (Jia et al. report "
                 "4-cycle FFMA latency from Volta on); uncertain"),
    9: Param(4, _PG_MP + " gives 7.x only; assumed the same for 9.x (Luo et al. 2024, "
                 "arXiv:2402.13499, measure ~4-cycle FP32 on Hopper); uncertain"),
}
# c: shared-memory load latency (cycles).
_SHARED_LATENCY = {
    1: Param(38, "uncertain: microbenchmarks of GT200 (Wong et al., ISPASS 2010, "
                 "'Demystifying GPU Microarchitecture through Microbenchmarking') "
                 "report ~38 cycles"),
    7: Param(19, "uncertain: Jia et al. 2018/2019 (Volta/Turing) report ~19-22 cycles"),
    8: Param(23, "uncertain: Luo et al. 2024 (arXiv:2402.13499) report ~23-30 cycles "
                 "on A100"),
    9: Param(23, "uncertain: Luo et al. 2024 (arXiv:2402.13499) report ~23-30 cycles "
                 "on H100"),
}
# n: global requests in flight per SM (memory-level parallelism the SM allows).
_MAX_INFLIGHT = Param(256, _LUO + "; 256 outstanding requests per SM is the order of "
                           "the L1 miss-status holding registers GPGPU-Sim models")
# m: kernel launch overhead (cycles).
_LAUNCH = Param(3000, _LUO + "; ~2-3 us of launch overhead at ~1.2-2 GHz (CUDA "
                      "Best Practices Guide: kernel launch costs microseconds)")


@dataclass(frozen=True)
class ModelParams:
    gpu: str
    values: dict        # name -> number
    sources: dict       # name -> where it comes from

    def __getattr__(self, name: str):
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None


def default_params(gpu_key: str | None) -> ModelParams:
    """The model parameters of a GPU model, from gpu_models and the tables above."""
    g = gpu(gpu_key)
    major = g.major if g.major in _DEP_LATENCY else 7
    vals, srcs = {}, {}

    def put(name, p: Param):
        vals[name], srcs[name] = p.value, p.source
    bw_per_sm_cycle = g.mem_bandwidth_gbs * 1e9 / (g.sm_count * g.clock_mhz * 1e6)
    put("a", Param(g.mem_latency_cycles, "gpu_models mem_latency_cycles: "
                   + g.source("mem_latency_cycles")))
    put("b", Param(round(32 / bw_per_sm_cycle, 4),
                   "32 B / (mem_bandwidth_gbs / sm_count / clock): one SM's share of DRAM "
                   "bandwidth per 32-byte transaction (gpu_models)"))
    put("c", _SHARED_LATENCY[major])
    put("d", _DEP_LATENCY[major])
    put("n", _MAX_INFLIGHT)
    put("m", _LAUNCH)
    put("shared_cycles_per_transaction",
        Param(1, "CUDA C++ Programming Guide, 'Shared Memory': 32 banks x 4 bytes "
                 "served per clock: one 128-byte wavefront per cycle per SM"))
    for cls, field in UNIT_OF.items():
        units = getattr(g, field)
        cost = max(1 / g.schedulers_per_sm, 32 / units) if units else None
        put(f"cost_{cls}", Param(cost, f"max(1 / schedulers_per_sm, 32 / {field}) "
                                 f"(gpu_models: {g.source(field)})"))
    ldst = g.ldst_per_sm or 16
    put("cost_memory_issue", Param(max(1 / g.schedulers_per_sm, 32 / ldst),
                                   "max(1 / schedulers, 32 / ldst_per_sm) (gpu_models; "
                                   "GT200 has no per-SM count: 16 assumed)"
                                   if not g.ldst_per_sm else
                                   "max(1 / schedulers, 32 / ldst_per_sm) (gpu_models)"))
    put("cost_issue", Param(1 / g.schedulers_per_sm, "1 / schedulers_per_sm: one warp "
                            "instruction per scheduler per cycle (gpu_models)"))
    return ModelParams(g.key, vals, srcs)


def load_params(gpu_key: str | None, path: str | None) -> ModelParams:
    """Defaults for ``gpu_key``, overridden by a ``ptxc calibrate`` file."""
    p = default_params(gpu_key)
    if path is None:
        return p
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise PtxcError(f"cannot read parameter file '{path}': {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise PtxcError(f"{path}:{e.lineno}:{e.colno}: error: not JSON: {e.msg}") from None
    measured = data.get("params") if isinstance(data, dict) else None
    if not isinstance(measured, dict):
        raise PtxcError(f"{path}: error: expected an object with a 'params' object "
                        "(as `ptxc calibrate` writes)")
    vals, srcs = dict(p.values), dict(p.sources)
    for k, v in measured.items():
        if k == "cost_issue":
            raise PtxcError(f"{path}: error: 'cost_issue' is 1 / schedulers per SM, not a "
                            "measured parameter (TopDown's slots depend on it)")
        if k not in vals:
            raise PtxcError(f"{path}: error: unknown parameter '{k}' "
                            f"(known: {', '.join(sorted(vals))})")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            raise PtxcError(f"{path}: error: parameter '{k}' must be a positive number")
        vals[k] = v
        srcs[k] = f"measured: {path} ({data.get('device', 'unknown device')})"
    return ModelParams(p.gpu, vals, srcs)
