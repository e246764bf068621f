"""Luo & Suda's analytical execution-time model, on ptxc's exact counts.

Source: Changhai Luo and Reiji Suda, "An execution time prediction
analytical model for GPU with instruction-level and thread-level
parallelism awareness", IPSJ SIG Technical Report 2011-HPC-130 (the
"simple and accurate analytical model" of issue 15; 90 % accuracy on a GTX
260). Only the abstract was available (ci.nii.ac.jp/naid/110008583375): a
*memory sub-model* costs memory instructions from the number of active
threads and the memory bandwidth, a *computation sub-model* costs
computation instructions from the active threads and the arithmetic
intensity, and every instruction's cost accounts for instruction-level and
thread-level parallelism; inputs are PTX-level counts (memory transactions,
data sizes). The equations below are ptxc's reconstruction in that shape
(docs/predict.md lists which parts are verified and which are not):

  f     = ceil(B / S) / B                share of the work on the busiest SM
  N     = min(occupancy blocks, ceil(B / S)) x warps per block   active warps
  CPD1  = N,  CPD2 = ILP,  CPD = CPD1 x CPD2        computation parallelism
  T_i   = max(cost_class, d / CPD)                  one computation instr.
  k     = global transactions / global requests
  L     = a + b (k - 1)                             latency of one request
  MPD1  = N x MLP,  MPD2 = L / (b k),  MPD = min(MPD1, MPD2, n)
  T_i   = L / MPD                                   one global request
  T_i   = max(k_sh x shared_cycles, c / CPD)        one shared request
  T_comp = f sum(count x T_i) over computation,  T_mem = f sum over memory
  T_body = max(T_comp, T_mem) + min(T_comp, T_mem) / N      (overlap)
  T_body = max(T_body, f x issued x cost_issue)             (issue bound)
  T     = m + T_body  cycles;  seconds = T / clock

Parameters a, b, c, d, n, m and the class costs: :mod:`.params`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .params import UNIT_OF

ISSUE_ONLY = ("move", "control", "barrier", "other")
MEMORY_ISSUE = ("load", "store", "atomic")


@dataclass
class Inputs:
    """What the model needs of one launch (built by :mod:`.inputs`)."""
    kernel: str
    blocks: int                 # CTAs in the grid
    warps_per_block: int
    occupancy_blocks: int       # blocks per SM the occupancy calculator allows
    mix: dict                   # class -> warp-level instructions
    inst_executed: int
    thread_inst_executed: int
    global_requests: int        # loads + stores + atomics (requests)
    global_transactions: int    # 32-byte sectors (atomics: distinct addresses)
    global_lines: int           # 128-byte lines of loads and stores
    shared_requests: int
    shared_transactions: int
    shared_bank_conflicts: int
    ilp: float = 1.0
    mlp: float = 1.0
    notes: list = field(default_factory=list)


@dataclass
class Prediction:
    kernel: str
    gpu: str
    sm_count: int
    clock_mhz: float
    schedulers: int
    share: float                # f
    active_warps: int           # N
    cpd1: float
    cpd2: float
    mpd1: float
    mpd2: float
    mpd: float
    request_latency: float      # L
    costs: dict                 # class -> (count on the SM, T_i, cycles)
    t_comp: float
    t_mem: float
    t_issue: float
    t_body: float
    launch_cycles: float
    cycles: float

    @property
    def seconds(self) -> float:
        return self.cycles / (self.clock_mhz * 1e6)

    @property
    def bound(self) -> str:
        if self.t_body == self.t_issue and self.t_issue > max(self.t_comp, self.t_mem):
            return "issue"
        return "memory" if self.t_mem > self.t_comp else "computation"


def active_warps(inp: Inputs, sm_count: int) -> tuple[float, int]:
    """(f, N): the busiest SM's share of the work and its active warps."""
    per_sm = -(-inp.blocks // sm_count)
    resident = min(inp.occupancy_blocks, per_sm)
    return per_sm / inp.blocks, max(1, resident * inp.warps_per_block)


def computation_cost(cls: str, p, cpd: float) -> float:
    """T_i of one warp instruction of class ``cls`` (cycles of one SM)."""
    if cls in MEMORY_ISSUE:
        return p.cost_memory_issue
    unit = p.values.get(f"cost_{cls}") if cls in UNIT_OF else None
    if unit is None:
        return max(p.cost_issue, p.d / cpd)
    return max(unit, p.d / cpd)


def global_request(inp: Inputs, p, n_warps: int) -> tuple[float, float, float, float]:
    """(L, MPD1, MPD2, MPD) of the launch's global requests."""
    if not inp.global_requests:
        return 0.0, 0.0, 0.0, 1.0
    k = inp.global_transactions / inp.global_requests
    latency = p.a + p.b * (k - 1)
    mpd1 = n_warps * inp.mlp
    mpd2 = latency / (p.b * k)
    return latency, mpd1, mpd2, max(1.0, min(mpd1, mpd2, p.n))


def shared_request_cost(inp: Inputs, p, cpd: float) -> float:
    k = inp.shared_transactions / inp.shared_requests
    return max(k * p.shared_cycles_per_transaction, p.c / cpd)


def predict(inp: Inputs, g, p, replays: float = 0.0) -> Prediction:
    """The model for one launch on GPU ``g`` with parameters ``p``;
    ``replays``: issued minus executed warp instructions (topdown.replays)."""
    f, n_warps = active_warps(inp, g.sm_count)
    cpd1, cpd2 = float(n_warps), inp.ilp
    cpd = cpd1 * cpd2
    costs = {}
    for cls, count in sorted(inp.mix.items()):
        t_i = computation_cost(cls, p, cpd)
        costs[cls] = (f * count, t_i, f * count * t_i)
    latency, mpd1, mpd2, mpd = global_request(inp, p, n_warps)
    if inp.global_requests:
        t_i = latency / mpd
        costs["global memory"] = (f * inp.global_requests, t_i, f * inp.global_requests * t_i)
    if inp.shared_requests:
        t_i = shared_request_cost(inp, p, cpd)
        costs["shared memory"] = (f * inp.shared_requests, t_i, f * inp.shared_requests * t_i)
    t_mem = sum(c[2] for k, c in costs.items() if k.endswith(" memory"))
    t_comp = sum(c[2] for k, c in costs.items() if not k.endswith(" memory"))
    t_issue = f * (inp.inst_executed + replays) * p.cost_issue
    t_body = max(max(t_comp, t_mem) + min(t_comp, t_mem) / n_warps, t_issue)
    return Prediction(inp.kernel, g.key, g.sm_count, g.clock_mhz, g.schedulers_per_sm, f,
                      n_warps, cpd1, cpd2, mpd1, mpd2, mpd, latency, costs, t_comp, t_mem,
                      t_issue, t_body, p.m, p.m + t_body)
