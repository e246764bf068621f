"""The parameters of the execution-time model (Luo & Suda 2011), per GPU, with sources.

Luo & Suda obtain their model's constants with micro-benchmarks on the GPU
(the symbols a, b, c, d, n, m of issue 15). The values and their sources
live in the GPU data file, :mod:`ptxc.gpus.architecture` (docs/gpus.md); this
module names them and derives the rest. Their paper's body was not
available to this project (only its abstract: IPSJ SIG Technical Report,
2011, ci.nii.ac.jp/naid/110008583375), so the role each letter plays here
is ptxc's reconstruction, stated in docs/predict.md:

  a  global-memory round-trip latency of one request, cycles
     (gpu_models ``mem_latency_cycles``: uncertain for every GPU)
  b  extra cycles per additional 32-byte transaction of one request at the
     SM (the SM's share of DRAM bandwidth: 32 B / (bandwidth / SMs / clock))
  c  shared-memory latency of one request, cycles (``shared_latency_cycles``)
  d  dependent-issue latency of an arithmetic instruction, cycles
     (``dep_latency_cycles``: CUDA C++ Programming Guide, "Multiprocessor Level")
  n  most global-memory requests in flight per SM (``max_inflight_requests``)
  m  fixed cost of one kernel launch, cycles (``launch_overhead_cycles``)

Instruction costs (cycles of one SM per warp instruction, per class) come
from the functional-unit counts of :mod:`ptxc.gpus.architecture`:
``max(1 / schedulers, 32 / units)``. ``ptxc calibrate`` measures the same
names on a real GPU and writes them to a JSON file that ``--params`` reads
(its values replace these, its sources say "measured").
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import PtxcError
from ptxc.gpus.architecture import Param, gpu

# The count pass's instruction classes (ptxc.ir.opcodes.count_class) that run on a
# functional unit, and the gpu_models field that counts those units per SM.
# fp16 is costed as fp32 (packed f16x2 doubles the rate on cc >= 5.3; not
# modelled); conversions run at the SFU rate (THR: 16 per clock per SM on
# cc 7.x-9.x). The other classes cost one issue slot (cost_issue), loads
# and stores one slot on the load/store units (cost_memory_issue) plus the
# memory sub-model.
UNIT_OF = {"fp32": "fp32_per_sm", "fp64": "fp64_per_sm", "fp16": "fp32_per_sm",
           "integer": "int32_per_sm", "special": "sfu_per_sm",
           "conversion": "sfu_per_sm", "tensor": "tensor_per_sm"}


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
    """The model parameters of a GPU model, from gpu_models."""
    g = gpu(gpu_key)
    vals, srcs = {}, {}

    def put(name, p: Param):
        vals[name], srcs[name] = p.value, p.source

    def field(name, key):
        put(name, Param(getattr(g, key), f"gpu_models {key}: {g.source(key)}"))
    bw_per_sm_cycle = g.mem_bandwidth_gbs * 1e9 / (g.sm_count * g.clock_mhz * 1e6)
    field("a", "mem_latency_cycles")
    put("b", Param(round(32 / bw_per_sm_cycle, 4),
                   "32 B / (mem_bandwidth_gbs / sm_count / clock): one SM's share of DRAM "
                   "bandwidth per 32-byte transaction (gpu_models)"))
    field("c", "shared_latency_cycles")
    field("d", "dep_latency_cycles")
    field("n", "max_inflight_requests")
    field("m", "launch_overhead_cycles")
    field("shared_cycles_per_transaction", "shared_cycles_per_transaction")
    for cls, unit in UNIT_OF.items():
        units = getattr(g, unit)
        cost = max(1 / g.schedulers_per_sm, 32 / units) if units else None
        put(f"cost_{cls}", Param(cost, f"max(1 / schedulers_per_sm, 32 / {unit}) "
                                 f"(gpu_models: {g.source(unit)})"))
    ldst = g.ldst_per_sm or 16
    put("cost_memory_issue", Param(max(1 / g.schedulers_per_sm, 32 / ldst),
                                   "max(1 / schedulers, 32 / ldst_per_sm) (gpu_models; "
                                   "GT200 has no per-SM count: 16 assumed)"
                                   if not g.ldst_per_sm else
                                   "max(1 / schedulers, 32 / ldst_per_sm) (gpu_models)"))
    put("cost_issue", Param(1 / g.schedulers_per_sm, "1 / schedulers_per_sm: one warp "
                            "instruction per scheduler per cycle (gpu_models)"))
    _interim_luo_suda(g, put)
    return ModelParams(g.key, vals, srcs)


# INTERIM (issue 28, part A; part C replaces this): the names the section-3
# model reads (docs/predict.md, "Parameters"), so that every entry point runs
# until each GPU model has its own values. Every GPU gets the paper's GTX 260
# numbers (Luo & Suda 2011, section 3.4 and Table 1) except what its data says.
_TABLE1 = {"add": (22, 65, 22, 65), "sub": (22, 65, 22, 65), "mul": (44, 136, 22, 65),
           "div": (728, 753, 748, 783), "neg": (22, 22, 17, 17), "min": (62, 62, 62, 62),
           "max": (62, 62, 62, 62), "and": (64, 64, 64, 64), "or": (62, 62, 62, 62),
           "xor": (62, 62, 62, 62), "not": (22, 22, 22, 22)}
_KINDS = ("int_const", "int_reg", "float_const", "float_reg")


def _interim_luo_suda(g, put) -> None:
    paper = "interim: Luo & Suda 2011 (GTX 260) "
    for k, v in zip("abcd", (3, 11, 0.5, 80)):
        put(k, Param(v, paper + "section 3.4"))
    put("m", Param(g.max_warps_per_sm, "max warps per SM (gpu_models)"))
    t_mem = 200 if g.key == "gtx260" else g.mem_latency_cycles
    put("t_mem", Param(t_mem, paper + "Table 1 ld/st" if g.key == "gtx260"
                       else "interim: gpu_models mem_latency_cycles"))
    put("cost.ld_st", Param(t_mem, "interim: = t_mem"))
    put("n_sm", Param(g.sm_count, "gpu_models sm_count"))
    put("clock_mhz", Param(g.clock_mhz, "gpu_models clock_mhz"))
    put("gpu_bwt", Param(g.mem_bandwidth_gbs * 1e3 / g.clock_mhz,
                         "gpu_models mem_bandwidth_gbs * 1e9 / (clock_mhz * 1e6)"))
    for row, vals in _TABLE1.items():
        for kind, v in zip(_KINDS, vals):
            put(f"cost.{row}.{kind}", Param(v, paper + "Table 1"))
    for kind, v in zip(_KINDS, _TABLE1["mul"]):
        put(f"cost.mad.{kind}", Param(v, paper + "Table 1 mul row"))
    for kind in _KINDS:
        put(f"cost.setp.{kind}", Param(62, paper + "Table 1 min row"))
    for kind in _KINDS[:2]:
        put(f"cost.shift.{kind}", Param(64, paper + "Table 1 and row"))
    for name, v in (("special", 65), ("cvt", 65), ("mov", 22), ("branch", 22),
                    ("barrier", 22), ("warp", 64), ("const", 22), ("tensor", 65),
                    ("other", 22), ("shared", g.shared_latency_cycles)):
        put(f"cost.{name}", Param(v, "interim placeholder"))


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
