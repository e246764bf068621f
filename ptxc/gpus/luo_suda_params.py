"""Luo & Suda's execution-time model: its parameters per GPU model, each with its source.

Source: Luo Cheng and Reiji Suda, "An execution time prediction analytical
model for GPU with instruction-level and thread-level parallelism
awareness", IPSJ SIG Technical Report 2011 (../shared/papers/003_*.txt).
The paper measured everything on one GPU, the GeForce GTX 260 (its Table 2):

  cost.<row>.<kind>  Table 1: the time cost of a PTX instruction, GPU clocks,
                     per operand kind (int_const, int_reg, float_const,
                     float_reg), measured as in section 3.1 (two kernels that
                     differ by one PTX instruction, repeated 10000 times; the
                     difference of their times)
  cost.ld_st, t_mem  Table 1's ld/st row, 200: the latency of a memory access
                     (eq. 1)
  a, b, c            eq. (3), section 3.4: 3, 11, 0.5 ("empirical parameters ...
                     we write a micro benchmark to obtain these parameters")
  d                  eq. (5), section 3.4: 80
  m                  eq. (4): the most warps one SM holds; section 4.2: 32
  gpu_bwt            eq. (2): the device's bandwidth, here in bytes per clock of
                     clock_mhz (Table 2: 111.9 GB/s at the 1242 MHz processor clock)
  n_sm, clock_mhz    eq. (2) and the unit of every cycle (Table 2)

For the other models the same names carry values from the literature, each
with its source: instruction latencies from the Accel-Sim framework's
configurations of real GPUs (Khairy et al., "Accel-Sim: An Extensible
Simulation Framework for Validated GPU Modeling", ISCA 2020; its configs
list a latency per operation class, tuned with its micro-benchmarks against
the hardware), memory latencies from ptxc's GPU data (docs/gpus.md, marked
uncertain there), the paper's a, b, c, d (measured only on the GTX 260:
``ptxc calibrate`` measures them on a real GPU), and the device facts (SMs,
clock, bandwidth, warps per SM) read from :mod:`ptxc.gpus.architecture`, the
one source of truth for them.

Table 1 lists eleven operations; a ``cost.<opcode>.<kind>`` that it does not
list is resolved by :mod:`ptxc.predict.params` (``FALLBACK_ROW``).
"""
from __future__ import annotations

from ptxc.gpus.architecture import GPUS, Param

ROWS = ("add", "sub", "mul", "div", "neg", "min", "max", "and", "or", "xor", "not")
KINDS = ("int_const", "int_reg", "float_const", "float_reg")
SCALARS = ("a", "b", "c", "d", "m", "t_mem", "gpu_bwt", "n_sm", "clock_mhz", "cost.ld_st")
MODELS = ("h100", "a100", "v100", "t4", "rtx2060", "gtx260", "gtx1070", "quadro-rtx4000")

PAPER = "Luo & Suda 2011"
T1 = (f"{PAPER}, Table 1 (GTX 260, GPU clocks; section 3.1: two kernels differing by one "
      "PTX instruction, repeated 10000 times, the difference of their times)")

# Table 1, row -> (int_const, int_reg, float_const, float_reg).
GTX260_TABLE1 = {
    "add": (22, 65, 22, 65), "sub": (22, 65, 22, 65), "mul": (44, 136, 22, 65),
    "div": (728, 753, 748, 783), "neg": (22, 22, 17, 17), "min": (62, 62, 62, 62),
    "max": (62, 62, 62, 62), "and": (64, 64, 64, 64), "or": (62, 62, 62, 62),
    "xor": (62, 62, 62, 62), "not": (22, 22, 22, 22)}
GTX260_LD_ST = 200

# Table 2: the GTX 260 as the paper describes it. sm_count, clock_mhz and
# mem_bandwidth_gbs of ptxc.gpus.architecture's GTX260 are these numbers
# (tests/test_calibrate.py checks them, and that 192 SPs x 1242 MHz x 3 flops
# (MAD + MUL per clock) = 715 Gflop/s).
GTX260_TABLE2 = {"sms": 24, "sps": 192, "graphics_clock_mhz": 576,
                 "processor_clock_mhz": 1242, "memory_mb": 896,
                 "bandwidth_gbs": 111.9, "peak_gflops": 715}

# Accel-Sim's per-class latencies (cycles): integer and FP32 <ADD, MAX, MUL,
# MAD, DIV> of the config named (the lines -ptx_opcode_latency_int and
# -ptx_opcode_latency_fp of configs/tested-cfgs/<name>/gpgpusim.config in the
# accel-sim-framework and gpgpu-sim_distribution repositories).
_ACCEL = "Accel-Sim config"
ACCEL_SIM = {
    "v100": ("SM7_QV100 (Quadro GV100, Volta)",
             (4, 13, 4, 5, 145), (4, 13, 4, 5, 39)),
    "turing": ("SM75_RTX2060 (RTX 2060, Turing; the T4 and Quadro RTX 4000 have the same SM)",
               (4, 4, 4, 4, 21), (4, 4, 4, 4, 39)),
    "a100": ("NVIDIA_A100_80GB_PCIe (A100, Ampere)",
             (4, 4, 4, 4, 21), (4, 4, 4, 4, 39)),
    "h100": ("SM90_H100 (H100, Hopper)", (4, 4, 4, 4, 21), (4, 4, 4, 4, 39)),
    "pascal": ("SM6_TITANX (TITAN X, Pascal GP102; the GTX 1070's GP104 has the same SM)",
               (4, 13, 4, 5, 145), (4, 13, 4, 4, 39)),
}
ACCEL_OF = {"h100": "h100", "a100": "a100", "v100": "v100", "t4": "turing",
            "rtx2060": "turing", "quadro-rtx4000": "turing", "gtx1070": "pascal"}
# Table 1 row -> the class of the integer and of the FP32 latency list
# (ADD 0, MAX 1, MUL 2, DIV 4). Bitwise operations run on the integer ALU
# (LOP3) whatever the registers' type; a negation is an add with a negated
# operand (IADD3 / FADD).
_CLASS = {"add": (0, 0), "sub": (0, 0), "mul": (2, 2), "div": (4, 4), "neg": (0, 0),
          "min": (1, 1), "max": (1, 1), "and": (0, None), "or": (0, None), "xor": (0, None),
          "not": (0, None)}
_CLASS_NAME = ("ADD", "MAX", "MUL", "MAD", "DIV")

_NOT_MEASURED = (" (section 3.4); the paper's GTX 260 value, not measured for this GPU: "
                 "`ptxc calibrate` measures it")

def norm(key: str) -> str:
    """A model name as :func:`ptxc.gpus.architecture.gpu` compares them."""
    return key.lower().replace("-", "").replace("_", "")


def _model(key: str) -> str:
    for k in MODELS:
        if norm(k) == norm(key):
            return k
    raise KeyError(key)


def _device(key: str) -> dict:
    """n_sm, clock_mhz, mem_bandwidth_gbs, max_warps_per_sm as Params."""
    for g in GPUS.values():
        if norm(g.key) == norm(key):
            src = f"ptxc/gpus/architecture.py {g.key}"
            return {"n_sm": Param(g.sm_count, f"{src} sm_count: {g.source('sm_count')}"),
                    "clock_mhz": Param(g.clock_mhz, f"{src} clock_mhz: {g.source('clock_mhz')}"),
                    "mem_bandwidth_gbs": Param(g.mem_bandwidth_gbs,
                                               f"{src} mem_bandwidth_gbs: "
                                               f"{g.source('mem_bandwidth_gbs')}"),
                    "max_warps_per_sm": Param(g.max_warps_per_sm,
                                              f"{src} max_warps_per_sm: "
                                              f"{g.source('max_warps_per_sm')}")}
    raise KeyError(key)


def _arch_field(key: str, name: str):
    """Field ``name`` of the architecture model ``key`` as a Param, or None."""
    for g in GPUS.values():
        if norm(g.key) == norm(key) and name in g.params:
            return Param(g.params[name].value,
                         f"ptxc/gpus/architecture.py {g.key} {name}: {g.params[name].source}")
    return None


def table1(key: str) -> dict:
    """``cost.<row>.<kind>`` -> Param for every row and kind of Table 1."""
    key = _model(key)
    out = {}
    if key == "gtx260":
        for row in ROWS:
            for kind, v in zip(KINDS, GTX260_TABLE1[row]):
                out[f"cost.{row}.{kind}"] = Param(v, T1)
        return out
    cfg, lat_int, lat_fp = ACCEL_SIM[ACCEL_OF[key]]
    for row in ROWS:
        ci, cf = _CLASS[row]
        for kind in KINDS:
            floating = kind.startswith("float")
            cls, lat = (cf, lat_fp) if floating and cf is not None else (ci, lat_int)
            what = "FP32" if floating and cf is not None else "integer"
            note = "; bitwise: the integer ALU" if floating and cf is None else ""
            out[f"cost.{row}.{kind}"] = Param(
                lat[cls], f"{_ACCEL} {cfg}: {what} {_CLASS_NAME[cls]} latency{note}; "
                "const = reg (see docs/predict.md, 'Parameters')")
    return out


def luo_suda(key: str) -> dict:
    """Every parameter of the model for GPU ``key`` (one of MODELS, any
    spelling ``gpu()`` accepts): name -> Param, in the order of the docs."""
    key = _model(key)
    dev = _device(key)
    clock, bw = dev["clock_mhz"], dev["mem_bandwidth_gbs"]
    out = {}
    if key == "gtx260":
        out["a"] = Param(3, f"{PAPER}, section 3.4 (eq. 3): 'In the GTX 260, a is set to 3'")
        out["b"] = Param(11, f"{PAPER}, section 3.4 (eq. 3): 'b is set to 11'")
        out["c"] = Param(0.5, f"{PAPER}, section 3.4 (eq. 3): 'c is set to 0.5'")
        out["d"] = Param(80, f"{PAPER}, section 3.4 (eq. 5): 'd is set to 80 in GTX260'")
        out["m"] = Param(32, f"{PAPER}, section 4.2: 32, 'the maximum number of warps that one "
                             "SM can have'; " + dev["max_warps_per_sm"].source)
        out["t_mem"] = Param(GTX260_LD_ST, f"{PAPER}, Table 1, ld/st row (eq. 1: the latency of "
                                           "memory access)")
    else:
        for name, v in (("a", 3), ("b", 11), ("c", 0.5)):
            out[name] = Param(v, f"{PAPER}, eq. (3){_NOT_MEASURED}")
        out["d"] = Param(80, f"{PAPER}, eq. (5){_NOT_MEASURED}")
        out["m"] = Param(dev["max_warps_per_sm"].value, "the most warps one SM holds (eq. 4): "
                         + dev["max_warps_per_sm"].source)
        out["t_mem"] = _arch_field(key, "mem_latency_cycles")
    out["gpu_bwt"] = Param(round(bw.value * 1e9 / (clock.value * 1e6), 4),
                           f"eq. (2) GPU_bwt in bytes per clock: {bw.value} GB/s x 1e9 / "
                           f"({clock.value} MHz x 1e6); bandwidth: {bw.source}")
    out["n_sm"] = dev["n_sm"]
    out["clock_mhz"] = clock
    out["cost.ld_st"] = Param(out["t_mem"].value, "= t_mem: " + out["t_mem"].source)
    out.update(table1(key))
    return out


def markdown() -> str:
    """The tables of docs/gpus.md's section "Luo & Suda's parameters"."""
    out = []
    for key in MODELS:
        p = luo_suda(key)
        out.append(f"### {key}\n\n| parameter | value | source |\n|---|---|---|")
        out += [f"| {k} | {p[k].value} | {p[k].source.replace('|', '/')} |" for k in SCALARS]
        out.append("\n| Table 1 row | " + " | ".join(KINDS) + " | source |\n"
                   "|---|---|---|---|---|---|")
        notes: list = []
        for row in ROWS:
            cells = [p[f"cost.{row}.{k}"] for k in KINDS]
            refs = []
            for c in cells:
                if c.source not in notes:
                    notes.append(c.source)
                refs.append(f"[{notes.index(c.source) + 1}]")
            out.append(f"| {row} | " + " | ".join(str(c.value) for c in cells) + " | "
                       + " ".join(dict.fromkeys(refs)) + " |")
        out.append("")
        out += [f"[{i}] {s}" + ("  " if i < len(notes) else "") for i, s in enumerate(notes, 1)]
        out.append("")
    return "\n".join(out)
