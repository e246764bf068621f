"""TopDown Level 1 and 2 for NVIDIA GPUs, from exact counts and the time model.

Source: the TopDown hierarchy for NVIDIA GPUs of Saiz, Prieto, Setoain and
Tirado (issue 15: "Top-Down Performance Profiling on NVIDIA's GPUs"), whose
Level 1 splits the ideal issue slots of an SM (schedulers x cycles) into

  Retire      = IPC x warp efficiency                    (useful lanes)
  Divergence  = IPC x (1 - warp efficiency) + replays    (branch + replay)
  Frontend    stalls: no instruction to issue
  Backend     stalls: an instruction waits for memory or a unit (core)

all as fractions of IPC_max. Here, on the SM that sets the kernel's time
(luo_suda: share f of the work), in issue slots:

  slots       = max(schedulers x T, retire + divergence)   (modelled)
  retire      = f x inst_executed x warp_efficiency        (exact count)
  branch      = f x inst_executed x (1 - warp_efficiency)  (exact count)
  replay      = f x (global + shared + width replays)      (exact count)
  frontend    = 0 (Luo & Suda's model has no launch overhead)
  backend     = slots - retire - branch - replay            (modelled)
    core      = schedulers x t_compute - retire - divergence, at least 0
    memory    = the rest (the memory waits T_c and T_p of section 3.5)

(Interim, issue 28: part B rewrites this module after the thesis; the
terms above only keep it running on luo_suda's new Prediction.)

so the four Level-1 fractions sum to 1 and Divergence's two Level-2 parts
sum to Divergence. Replays (docs/metrics.md, "TopDown"):

  global  extra 128-byte lines per request: lines - requests (loads, stores)
  shared  bank conflicts: transactions - ideal transactions
  width   FP64 warp instructions x (issues on the FP64 unit - issues on the
          FP32 unit), issues = ceil(32 / (units per SM / schedulers))
"""
from __future__ import annotations

import math


def width_issues(units, schedulers: int) -> int:
    """Issue cycles of one warp instruction on a unit ``units`` wide per SM."""
    per_partition = units / schedulers
    return math.ceil(32 / per_partition)


def replays(mix: dict, memory: dict, g) -> dict:
    """{kind: replayed warp instructions} from exact counts (module doc)."""
    lines = (memory.get("gld_lines") or 0) + (memory.get("gst_lines") or 0)
    reqs = (memory.get("gld_requests") or 0) + (memory.get("gst_requests") or 0)
    shared = (memory.get("shared_ld_bank_conflict") or 0) + \
        (memory.get("shared_st_bank_conflict") or 0)
    extra = width_issues(g.fp64_per_sm, g.schedulers_per_sm) - \
        width_issues(g.fp32_per_sm, g.schedulers_per_sm)
    return {"global": lines - reqs, "shared": shared,
            "width": mix.get("fp64", 0) * max(0, extra)}


def topdown(pred, inst_executed: int, thread_inst_executed: int, rep: dict) -> dict:
    """Level 1 and 2 fractions and the slot counts behind them."""
    f, sched = pred.share, pred.schedulers
    eff = thread_inst_executed / (32 * inst_executed) if inst_executed else 0.0
    s = {"retire": f * inst_executed * eff,
         "branch": f * inst_executed * (1 - eff),
         "replay_global": f * rep["global"], "replay_shared": f * rep["shared"],
         "replay_width": f * rep["width"], "frontend": 0.0}
    s["replay"] = s["replay_global"] + s["replay_shared"] + s["replay_width"]
    s["divergence"] = s["branch"] + s["replay"]
    used = s["retire"] + s["divergence"]
    slots = max(sched * pred.cycles, used)
    s["backend_core"] = min(max(0.0, sched * pred.t_compute - used), slots - used)
    s["backend_memory"] = slots - used - s["backend_core"]
    s["backend"] = s["backend_core"] + s["backend_memory"]
    frac = {k: v / slots for k, v in s.items()} if slots else dict.fromkeys(s, 0.0)
    cycles = slots / sched
    ipc = f * inst_executed / cycles if cycles else 0.0
    return {"slots": slots, "slot_counts": s, "fractions": frac,
            "ipc": ipc, "ipc_max": sched,
            "issued_ipc": f * (inst_executed + sum(rep.values())) / cycles if cycles else 0.0,
            "warp_efficiency": eff,
            "replays": dict(rep), "level1": {k: frac[k] for k in LEVEL1},
            "level2": {k: frac[k] for k in LEVEL2}}


LEVEL1 = ("retire", "divergence", "frontend", "backend")
LEVEL2 = ("branch", "replay", "backend_core", "backend_memory")
