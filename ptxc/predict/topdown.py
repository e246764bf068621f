"""TopDown for NVIDIA GPUs as Saiz's thesis defines it, on ptxc's exact counts
and the execution-time model.

Source: Álvaro Saiz Fernández, "Metodología TopDown sobre GPUs NVIDIA",
bachelor's thesis, Universidad de Cantabria, 2021 (../shared/papers/004_*,
chapter 4; the SM of chapter 3). Every IPC is warp instructions per cycle of
one SM; here the SM that sets the launch's time (the busiest one, with share
``f`` of the launch's work), over the cycles ``T`` of the time model.

Level 1, eq. (4.1): IPC_MAX = IPC_STALL + IPC_DIVERGENCE + IPC_RETIRE, and
IPC_STALL = Frontend + Backend:

  IPC_MAX     the dispatch units of the SM (section 4.2; GpuArch.ipc_max)
  IPC         f x inst_executed / T                       (Tables 4.1, 4.2)
  eff         thread_inst_executed / (32 x inst_executed) (Tables 4.1, 4.2)
  IPC_issued  f x (inst_executed + replays) / T           (Tables 4.3, 4.4)
  Retire      = IPC x eff                                         (4.2)
  Branch      = IPC x (1 - eff)                                   (4.3)
  Replay      = IPC_issued - IPC                                  (4.4)
  Divergence  = Branch + Replay                                   (4.5)
  IPC_STALL   = IPC_MAX - (Divergence + Retire)                   (4.7)
  Frontend    = STALL_Frontend / 100 x IPC_STALL,  STALL_Frontend = Fetch + Decode   (4.8, 4.6)
  Fetch       = STALL_Fetch / 100 x IPC_STALL                     (4.9)
  Decode      = STALL_Decode / 100 x IPC_STALL                    (4.10)
  Backend     = STALL_Backend / 100 x IPC_STALL, STALL_Backend = Memory + Core  (4.12, 4.11)
  Memory      = STALL_MemoryBound / 100 x IPC_STALL               (4.13)
  Core        = STALL_CoreBound / 100 x IPC_STALL                 (4.14)

The thesis reads each STALL_x, a percentage of all stalls, from hardware
stall-reason metrics (Tables 4.5-4.12). ptxc has no hardware; it splits the
SM's unused dispatch slots, IPC_MAX x T - issued, from the time model (the
Prediction of issue 28's interface: t_compute, t_current, t_previous,
cycles) and exact counts:

  memory_bound       IPC_MAX x (t_current + t_previous): Luo & Suda's memory
                     waits (eq. 8, 10, 12, 13), in which the SM issues nothing
  computation stall  IPC_MAX x t_compute - issued: the computation time the
                     dispatch units do not fill, split by the share of the
                     computation time each instruction family takes (its exact
                     warp executions x the time model's cost per instruction):
    sync             barrier-class instructions (bar, barrier, membar, fence, mbarrier)
    branch_resolving control-class instructions (bra, brx, call, ret, exit)
    core_bound       the rest
  instruction_fetch  0: ptxc models no instruction cache
  decode             0: ptxc models no register banks or dispatch conflicts

so the percentages sum to 100 and Frontend + Backend = IPC_STALL exactly.
When the model's computation time is shorter than the dispatch units need
(issued / IPC_MAX), T is raised to t_current + t_previous + issued / IPC_MAX
(``issue_limited``): an SM cannot issue above IPC_MAX, and (4.7) would turn
negative.

Replays (section 4.3 lists the causes; ptxc counts each exactly, launch-wide):

  global  accesses of more than one cache line: 128-byte lines - requests
          (global loads and stores)
  shared  shared-memory bank conflicts: transactions - ideal transactions
  width   functional units narrower than the warp: per FP64 or SFU ("special")
          warp instruction, issues on its unit - issues on the FP32 unit,
          issues = ceil(32 / (units per SM / schedulers per SM))
  (register-file bank conflicts, the fourth cause, are not modelled: ptxc
  allocates no registers)

Each figure is labelled ``exact`` (its numerator is an exact count: warp
efficiency, Retire, Branch, Replay, Divergence, IPC_MAX from the GPU data)
or ``modelled`` (cycles, IPCs, the stall split); every IPC and fraction
divides by the modelled cycles.
"""
from __future__ import annotations

import math
import numbers

from ..errors import PtxcError

# (name, level, parent, kind, equation) in print order.
NODES = (
    ("retire", 1, None, "exact", "4.2"),
    ("divergence", 1, None, "exact", "4.5"),
    ("branch", 2, "divergence", "exact", "4.3"),
    ("replay", 2, "divergence", "exact", "4.4"),
    ("frontend", 1, None, "modelled", "4.8"),
    ("fetch", 2, "frontend", "modelled", "4.9"),
    ("sync", 3, "fetch", "modelled", "4.9"),
    ("branch_resolving", 3, "fetch", "modelled", "4.9"),
    ("instruction_fetch", 3, "fetch", "modelled", "4.9"),
    ("decode", 2, "frontend", "modelled", "4.10"),
    ("backend", 1, None, "modelled", "4.12"),
    ("memory_bound", 2, "backend", "modelled", "4.13"),
    ("core_bound", 2, "backend", "modelled", "4.14"),
)
LEVEL1 = tuple(n for n, lvl, *_ in NODES if lvl == 1)
LEVEL2 = tuple(n for n, lvl, *_ in NODES if lvl == 2)
LEVEL3 = tuple(n for n, lvl, *_ in NODES if lvl == 3)
STALL_NODES = ("frontend", "fetch", "sync", "branch_resolving", "instruction_fetch", "decode",
               "backend", "memory_bound", "core_bound")

# The thesis's hardware metric of each figure: (cc < 7.2: nvprof, cc >= 7.2:
# Nsight Compute), Tables 4.1-4.12. The thesis prints some ncu names with one
# underscore after the unit (sm_, smsp_); they are written here as ncu spells them.
_SMSP = "smsp__warp_issue_stalled_{}_per_warp_active.pct"
METRICS = {
    "ipc": ("ipc", "sm__inst_executed.avg.per_cycle_active"),
    "warp_efficiency": ("warp_execution_efficiency",
                        "sm__thread_inst_executed_per_inst_executed.ratio / 32"),
    "ipc_issued": ("issued_ipc", "sm__inst_issued.avg.per_cycle_active"),
    "retire": ("ipc x warp_execution_efficiency",
               "sm__inst_executed.avg.per_cycle_active x "
               "sm__thread_inst_executed_per_inst_executed.ratio / 32"),
    "divergence": ("branch + replay", "branch + replay"),
    "branch": ("ipc x (1 - warp_execution_efficiency)",
               "sm__inst_executed.avg.per_cycle_active x "
               "(1 - sm__thread_inst_executed_per_inst_executed.ratio / 32)"),
    "replay": ("issued_ipc - ipc",
               "sm__inst_issued.avg.per_cycle_active - sm__inst_executed.avg.per_cycle_active"),
    "frontend": ("stall_inst_fetch + stall_sync + stall_other",
                 " + ".join(_SMSP.format(r) for r in (
                     "no_instruction", "barrier", "membar", "sleeping", "branch_resolving",
                     "misc", "dispatch_stall"))),
    "fetch": ("stall_inst_fetch + stall_sync",
              " + ".join(_SMSP.format(r) for r in (
                  "no_instruction", "barrier", "membar", "sleeping", "branch_resolving"))),
    "sync": ("stall_sync", _SMSP.format("barrier") + " + " + _SMSP.format("membar")),
    "branch_resolving": ("stall_inst_fetch (part; nvprof has no branch stall reason)",
                         _SMSP.format("branch_resolving")),
    "instruction_fetch": ("stall_inst_fetch",
                          _SMSP.format("no_instruction") + " + " + _SMSP.format("sleeping")),
    "decode": ("stall_other", _SMSP.format("misc") + " + " + _SMSP.format("dispatch_stall")),
    "backend": ("stall_memory_dependency + stall_constant_memory_dependency + "
                "stall_memory_throttle + stall_pipe_busy + stall_exec_dependency",
                " + ".join(_SMSP.format(r) for r in (
                    "long_scoreboard", "imc_miss", "drain", "lg_throttle", "tex_throttle",
                    "math_pipe_throttle"))),
    "memory_bound": ("stall_memory_dependency + stall_constant_memory_dependency + "
                     "stall_memory_throttle",
                     " + ".join(_SMSP.format(r) for r in (
                         "long_scoreboard", "imc_miss", "drain", "lg_throttle",
                         "tex_throttle"))),
    "core_bound": ("stall_pipe_busy + stall_exec_dependency", _SMSP.format("math_pipe_throttle")),
}

# Width replays: the count pass's classes that run on a unit narrower than the
# FP32 pipe in some GPU (the DP units and SFUs of the thesis's Figure 3.3).
WIDTH_UNITS = {"fp64": "fp64_per_sm", "special": "sfu_per_sm"}
SYNC_CLASSES = ("barrier",)
BRANCH_CLASSES = ("control",)
MEMORY_CLASSES = ("load", "store", "atomic")


def metric_set(g) -> int:
    """0 for compute capability < 7.2 (the thesis's nvprof tables), 1 for >= 7.2
    (its Nsight Compute tables)."""
    return 1 if (g.major, g.minor) >= (7, 2) else 0


def width_issues(units, schedulers: int) -> int:
    """Dispatches of one warp instruction on a unit ``units`` wide per SM
    (section 4.3: a unit narrower than the warp takes the warp more than once)."""
    if not units:
        raise PtxcError(f"a functional unit of width {units!r} per SM has no issue rate")
    return math.ceil(32 / (units / schedulers))


def replays(mix: dict, memory: dict, g) -> dict:
    """{cause: replayed warp instructions} of a launch from exact counts (module doc):
    ``mix`` the warp executions per class, ``memory`` the memory counters."""
    lines = (memory.get("gld_lines") or 0) + (memory.get("gst_lines") or 0)
    reqs = (memory.get("gld_requests") or 0) + (memory.get("gst_requests") or 0)
    shared = (memory.get("shared_ld_bank_conflict") or 0) + \
        (memory.get("shared_st_bank_conflict") or 0)
    base = width_issues(g.fp32_per_sm, g.schedulers_per_sm)
    width = 0
    for cls, unit in WIDTH_UNITS.items():
        if mix.get(cls):
            extra = width_issues(getattr(g, unit), g.schedulers_per_sm) - base
            width += mix[cls] * max(0, extra)
    return {"global": lines - reqs, "shared": shared, "width": width}


def computation_costs(static, per_block: dict) -> dict:
    """{class: sum over executed instructions of warp executions x cost},
    computation instructions only: the time the model gives each
    instruction family, which splits the computation stalls. ``static``: a
    static_costs.ModuleCosts (Table 1's costs and memory tasks, or others)."""
    out: dict = {}
    for rows, execs in static.executed(per_block):
        for ins in rows:
            if not ins.memory:
                out[ins.cls] = out.get(ins.cls, 0.0) + execs * ins.cost
    return out


def topdown(pred, inst_executed: int, thread_inst_executed: int, rep: dict, g,
            mix: dict | None = None, costs: dict | None = None) -> dict:
    """TopDown of one launch (module doc).

    ``pred``: the time model's prediction; reads ``cycles``, ``share``,
    ``t_compute``, ``t_current``, ``t_previous`` (cycles of the busiest SM)
    and ``active_warps`` if present. ``inst_executed``, ``thread_inst_executed``:
    the launch's exact counts. ``rep``: :func:`replays`. ``g``: the GpuArch.
    ``mix``: {class: warp executions} (the barrier and branch executions).
    ``costs``: {class: computation time}, :func:`computation_costs` with the
    time model's instruction costs; without it each computation instruction
    of ``mix`` weighs one.
    """
    mix = dict(mix or {})
    _check(pred, inst_executed, thread_inst_executed, rep)
    imax = float(g.ipc_max)
    f = pred.share
    eff = thread_inst_executed / (32 * inst_executed)
    n_replays = sum(rep.values())
    executed = f * inst_executed
    issued = f * (inst_executed + n_replays)
    wait = pred.t_current + pred.t_previous
    t = max(pred.cycles, wait + issued / imax)
    ipc = executed / t
    ipc_issued = issued / t
    ipcs = {"retire": ipc * eff,                                            # (4.2)
            "branch": ipc * (1 - eff),                                      # (4.3)
            "replay": ipc_issued - ipc}                                     # (4.4)
    ipcs["divergence"] = ipcs["branch"] + ipcs["replay"]                    # (4.5)
    ipc_stall = imax - (ipcs["divergence"] + ipcs["retire"])                # (4.7)
    stall = stall_percentages(imax, t, wait, issued, _shares(costs, mix))
    for name in STALL_NODES:                                                # (4.8)-(4.14)
        ipcs[name] = stall[name] / 100 * ipc_stall
    nodes = {name: {"level": lvl, "parent": parent, "kind": kind, "equation": eq,
                    "ipc": ipcs[name], "fraction": ipcs[name] / imax, "slots": ipcs[name] * t,
                    "stall_percent": stall.get(name),
                    "metric": METRICS[name][metric_set(g)]}
             for name, lvl, parent, kind, eq in NODES}
    return {
        "source": "Saiz 2021, 'Metodología TopDown sobre GPUs NVIDIA', chapter 4",
        "gpu": g.key, "compute_capability": f"{g.major}.{g.minor}",
        "metric_set": ("cc < 7.2 (nvprof)", "cc >= 7.2 (Nsight Compute)")[metric_set(g)],
        "ipc_max": g.ipc_max, "ipc_max_source": g.source("ipc_max"),
        "cycles": t, "model_cycles": pred.cycles, "issue_limited": t > pred.cycles,
        "share": f, "active_warps": getattr(pred, "active_warps", None),
        "inst_executed": inst_executed, "thread_inst_executed": thread_inst_executed,
        "inst_issued": inst_executed + n_replays, "replays": dict(rep),
        "barriers": sum(mix.get(c, 0) for c in SYNC_CLASSES),
        "branches": sum(mix.get(c, 0) for c in BRANCH_CLASSES),
        "warp_efficiency": eff, "ipc": ipc, "ipc_issued": ipc_issued, "ipc_stall": ipc_stall,
        "figures": _figures(g, eff, ipc, ipc_issued, ipc_stall, t),
        "nodes": nodes,
        "slots": imax * t,
        "slot_counts": {n: d["slots"] for n, d in nodes.items()},
        "fractions": {n: d["fraction"] for n, d in nodes.items()},
        "level1": {n: nodes[n]["fraction"] for n in LEVEL1},
        "level2": {n: nodes[n]["fraction"] for n in LEVEL2},
        "level3": {n: nodes[n]["fraction"] for n in LEVEL3},
    }


def stall_percentages(imax: float, t: float, wait: float, issued: float, shares: dict) -> dict:
    """{stall node: STALL_x, percent of all stalls} (module doc; eq. 4.6, 4.11)."""
    compute = max(0.0, imax * (t - wait) - issued)
    slots = {"sync": compute * shares["sync"],
             "branch_resolving": compute * shares["branch_resolving"],
             "instruction_fetch": 0.0, "decode": 0.0,
             "memory_bound": imax * wait}
    slots["core_bound"] = compute - slots["sync"] - slots["branch_resolving"]
    slots["fetch"] = slots["sync"] + slots["branch_resolving"] + slots["instruction_fetch"]
    slots["frontend"] = slots["fetch"] + slots["decode"]                    # (4.6)
    slots["backend"] = slots["memory_bound"] + slots["core_bound"]          # (4.11)
    total = slots["frontend"] + slots["backend"]
    return {k: (100 * v / total if total > 0 else 0.0) for k, v in slots.items()}


def _shares(costs: dict | None, mix: dict) -> dict:
    """The computation time's shares of the barrier and the branch families."""
    weights = costs if costs else {c: n for c, n in mix.items() if c not in MEMORY_CLASSES}
    total = sum(weights.values())
    if total <= 0:
        return {"sync": 0.0, "branch_resolving": 0.0}
    return {"sync": sum(weights.get(c, 0) for c in SYNC_CLASSES) / total,
            "branch_resolving": sum(weights.get(c, 0) for c in BRANCH_CLASSES) / total}


def _figures(g, eff, ipc, ipc_issued, ipc_stall, t) -> dict:
    """The scalar figures with their kind and the thesis metric they stand for."""
    m = metric_set(g)
    return {
        "ipc_max": {"value": g.ipc_max, "kind": "exact", "where": "section 4.2",
                    "metric": "dispatch units per SM (GPU data)"},
        "ipc": {"value": ipc, "kind": "modelled", "where": "Tables 4.1, 4.2",
                "metric": METRICS["ipc"][m]},
        "ipc_issued": {"value": ipc_issued, "kind": "modelled", "where": "Tables 4.3, 4.4",
                       "metric": METRICS["ipc_issued"][m]},
        "warp_efficiency": {"value": eff, "kind": "exact", "where": "Tables 4.1, 4.2",
                            "metric": METRICS["warp_efficiency"][m]},
        "ipc_stall": {"value": ipc_stall, "kind": "modelled", "where": "eq. 4.7",
                      "metric": "IPC_MAX - (IPC_DIVERGENCE + IPC_RETIRE)"},
        "cycles": {"value": t, "kind": "modelled", "where": "the time model",
                   "metric": "elapsed_cycles_sm / sm__cycles_elapsed"},
    }


def _check(pred, inst: int, thread: int, rep: dict) -> None:
    """One-line errors for inputs TopDown cannot divide."""
    if isinstance(inst, bool) or not isinstance(inst, numbers.Integral) or inst < 1:
        raise PtxcError(f"TopDown needs at least one executed warp instruction (got {inst!r})")
    if not 0 <= thread <= 32 * inst:
        raise PtxcError(f"thread_inst_executed {thread} is not within 0..32 x inst_executed "
                        f"({32 * inst})")
    if any(v < 0 for v in rep.values()):
        raise PtxcError(f"negative replay count in {dict(rep)}")
    if not 0 < pred.share <= 1:
        raise PtxcError(f"the busiest SM's share must be in (0, 1] (got {pred.share})")
    for name in ("cycles", "t_compute", "t_current", "t_previous"):
        v = getattr(pred, name, None)
        if not isinstance(v, (int, float)) or v < 0 or math.isnan(v):
            raise PtxcError(f"the prediction's {name} must be a number >= 0 (got {v!r})")
