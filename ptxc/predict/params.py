"""The parameters of Luo & Suda's execution-time model, per GPU, with sources.

Luo Cheng and Reiji Suda, "An execution time prediction analytical model for
GPU with instruction-level and thread-level parallelism awareness" (IPSJ SIG
Technical Report, 2011; ../shared/papers/003_*.txt). A :class:`ModelParams`
maps each name to a number and to its source; the values live in the GPU
data, :mod:`ptxc.gpus.luo_suda_params` (docs/gpus.md prints them):

  a, b, c        eq. (3): CPD1 = (c - P) (N_act - b) + a (GTX 260: 3, 11, 0.5)
  d              eq. (5): n = d (P - c)^2 (GTX 260: 80)
  m              eq. (4): the most warps one SM holds (section 4.2: 32)
  t_mem          eq. (1): the latency of one memory access, GPU clocks (Table 1: 200)
  gpu_bwt        eq. (2): the device's bandwidth in bytes per GPU clock
  n_sm           eq. (2): the number of SMs
  clock_mhz      the clock the cycles count (Table 2: 1242 MHz, the processor clock)
  cost.<opcode>.<kind>   Table 1: the time cost of one PTX instruction, GPU
                 clocks; kind: int_const, int_reg, float_const, float_reg
  cost.ld_st     Table 1's ld/st row (= t_mem)

Table 1 lists eleven opcodes. Any other ``cost.<opcode>.<kind>`` resolves
to the Table 1 row :data:`FALLBACK_ROW` names for it (``add`` when it names
none): ``p.values["cost.mad.float_reg"]`` is ``cost.mul.float_reg``, and
its source says so. A ``ptxc calibrate`` file (:func:`load_params`) may set
any of these names, a measured cost of an opcode Table 1 lacks included.

Cost names without an operand kind (``cost.special``, ``cost.cvt``, ...,
the groups :mod:`.costs` gives instructions Table 1 has no row for) resolve
through :data:`KINDLESS`; ``cost.shared`` is the GPU's shared-memory latency.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from ptxc.errors import PtxcError
from ptxc.gpus.architecture import gpu
from ptxc.gpus.luo_suda_params import KINDS, ROWS, luo_suda

INTERFACE = ("a", "b", "c", "d", "m", "t_mem", "gpu_bwt", "n_sm", "clock_mhz", "cost.ld_st")
# The empirical constants of eqs. (3)-(5): a fit may make them zero or negative.
ANY_SIGN = frozenset({"a", "b", "c", "d"})
COST_NAME = re.compile(r"cost\.([a-z][a-z0-9_]*)\.(" + "|".join(KINDS) + r")$")

# ptxc's rule for an opcode Table 1 does not list: the row whose operation is
# closest (docs/predict.md, "Parameters"). Multiply-adds cost a multiply (the
# GT200 issues a float MAD at the MUL rate; on newer GPUs IMAD/FFMA run on the
# multiply datapath), a remainder a division, shifts and bit-field operations a
# bitwise AND (the same ALU), compares and selects a min (a compare), moves a
# NOT (a one-operand move through the ALU), the special functions a division
# (the one multi-cycle float operation of the table). Any other opcode: add.
FALLBACK_ROW = {
    "mad": "mul", "fma": "mul", "mad24": "mul", "mul24": "mul",
    "rem": "div", "abs": "neg", "cnot": "not",
    "shl": "and", "shr": "and", "shf": "and", "bfe": "and", "bfi": "and", "brev": "and",
    "popc": "and", "clz": "and", "bfind": "and", "prmt": "and", "lop3": "and", "bmsk": "and",
    "setp": "min", "set": "min", "selp": "min", "slct": "min",
    "mov": "not", "cvta": "not",
    "rcp": "div", "sqrt": "div", "rsqrt": "div", "sin": "div", "cos": "div", "lg2": "div",
    "ex2": "div", "tanh": "div",
    "shift": "and",                  # ptxc/predict/costs.py's group of shifts and bit fields
}

# The cost names without an operand kind that ptxc/predict/costs.py gives the
# instruction groups Table 1 has no row for, and the Table 1 cell each is
# costed as (ptxc's rule, as FALLBACK_ROW): the special functions a float
# division; a conversion and a tensor-core instruction one float ALU
# operation (add); moves, branches, barriers and .const/.param loads the
# cheapest operation of the table (not: a one-operand move through the ALU);
# warp collectives a bitwise AND (lanes exchange registers through the ALU's
# crossbar); anything else an integer add. ``cost.shared`` is the GPU's
# shared-memory latency (ptxc.gpus.architecture shared_latency_cycles).
KINDLESS = {"cost.special": "cost.div.float_reg", "cost.cvt": "cost.add.float_reg",
            "cost.tensor": "cost.add.float_reg", "cost.mov": "cost.not.int_reg",
            "cost.branch": "cost.not.int_reg", "cost.barrier": "cost.not.int_reg",
            "cost.const": "cost.not.int_reg", "cost.warp": "cost.and.int_reg",
            "cost.other": "cost.add.int_reg"}


def fallback_row(opcode: str) -> str:
    """The Table 1 row an opcode is costed as (itself when Table 1 lists it)."""
    return opcode if opcode in ROWS else FALLBACK_ROW.get(opcode, "add")


def _resolve(table: dict, key) -> str | None:
    """The Table 1 name that stands for the cost name ``key``, or None."""
    if key in KINDLESS:
        name = KINDLESS[key]
        return name if dict.__contains__(table, name) else _resolve(table, name)
    m = COST_NAME.match(key) if isinstance(key, str) else None
    if not m:
        return None
    name = f"cost.{fallback_row(m.group(1))}.{m.group(2)}"
    return name if name != key and dict.__contains__(table, name) else None


class ParamValues(dict):
    """name -> number; a ``cost.<opcode>.<kind>`` not in the table resolves
    through :data:`FALLBACK_ROW` (``[]`` and ``get`` alike)."""

    def __missing__(self, key):
        name = _resolve(self, key)
        if name is None:
            raise KeyError(key)
        return self[name]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


class ParamSources(dict):
    """name -> source text, with the same fallback as :class:`ParamValues`."""

    def __missing__(self, key):
        name = _resolve(self, key)
        if name is None:
            raise KeyError(key)
        if key in KINDLESS:
            return (f"not in Table 1: costed as {name} (ptxc's rule, "
                    f"ptxc/predict/params.py KINDLESS): {self[name]}")
        op = COST_NAME.match(key).group(1)
        return (f"'{op}' is not in Table 1: costed as its '{name.split('.')[1]}' row "
                f"(ptxc's rule, ptxc/predict/params.py FALLBACK_ROW): {self[name]}")

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


@dataclass(frozen=True)
class ModelParams:
    gpu: str
    values: dict        # name -> number
    sources: dict       # name -> where it comes from

    def __post_init__(self):
        object.__setattr__(self, "values", ParamValues(self.values))
        object.__setattr__(self, "sources", ParamSources(self.sources))

    def __getattr__(self, name: str):
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def cost(self, opcode: str, kind: str) -> float:
        """Table 1's time cost of ``opcode`` with operands of ``kind`` (GPU clocks)."""
        if kind not in KINDS:
            raise PtxcError(f"unknown operand kind '{kind}' (one of {', '.join(KINDS)})")
        return self.values[f"cost.{opcode}.{kind}"]


def default_params(gpu_key: str | None) -> ModelParams:
    """The model parameters of a GPU model (ptxc.gpus.luo_suda_params)."""
    g = gpu(gpu_key)
    try:
        table = luo_suda(g.key)
    except KeyError:
        raise PtxcError(f"no Luo & Suda parameters for GPU model '{g.key}'") from None
    vals = {k: p.value for k, p in table.items()}
    srcs = {k: p.source for k, p in table.items()}
    if "cost.shared" not in vals and getattr(g, "params", {}).get("shared_latency_cycles"):
        vals["cost.shared"] = g.shared_latency_cycles
        srcs["cost.shared"] = ("the shared-memory latency (ptxc.gpus.architecture "
                               f"shared_latency_cycles: {g.source('shared_latency_cycles')})")
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
    methods = data.get("methods") if isinstance(data.get("methods"), dict) else {}
    device = data.get("device", "unknown device")
    vals, srcs = dict(p.values), dict(p.sources)
    for k, v in measured.items():
        if k not in vals and not COST_NAME.match(k):
            raise PtxcError(f"{path}: error: unknown parameter '{k}' (known: "
                            f"{', '.join(sorted(n for n in vals if not n.startswith('cost.')))}"
                            ", cost.<opcode>.<kind>)")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) \
                or (k not in ANY_SIGN and v <= 0):
            raise PtxcError(f"{path}: error: parameter '{k}' must be a "
                            f"{'finite' if k in ANY_SIGN else 'positive'} number")
        vals[k] = v
        how = methods.get(k)
        srcs[k] = f"measured: {path} ({device})" + (f": {how}" if isinstance(how, str) else "")
    return ModelParams(p.gpu, vals, srcs)
