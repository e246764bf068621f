"""Raw counters of a run -> METRICS.md numbers (ptxc.launcher.profile.Profile).

The native code keeps only: per node (warp executions, thread executions),
per conditional branch (SASSI's five), per guarded instruction (pred-on
lanes), per CTA (instruction totals). Everything else is derived here from
the static node sizes, as METRICS.md prescribes:

* inst_executed = sum over nodes of warp_execs * instructions,
  thread_inst_executed likewise with thread_execs;
* thread_inst_executed_pred_on subtracts, per guarded instruction, the
  executing lanes whose guard was false;
* FLOPs: flop_weight per pred-on lane (guarded) or per executing lane;
* branch / cond_branch: warp executions of blocks ending in bra / brx;
* memory counters (when collected): results_memory.py.
"""
from __future__ import annotations

import numpy as np

from ptxc.launcher.profile import Profile
from ptxc.launcher.profile_tables import FLOPS, tables
from ptxc.launcher.results_memory import memory_profile


def build_profile(c, counts: np.ndarray, per_cta, kernel, mode, grid, block) -> Profile:
    plan, t = c.plan, tables(c)
    prof = Profile(kernel=kernel.name, mode=mode, grid=tuple(grid), block=tuple(block))
    we = counts[0:2 * len(plan.nodes):2]
    te = counts[1:2 * len(plan.nodes):2]
    prof.inst_executed = int((we * t.sizes).sum())
    prof.thread_inst_executed = int((te * t.sizes).sum())
    pred_and_flops(prof, t, counts, te)
    branches(prof, t, counts, we)
    prof.per_block = per_block(t, we, te)
    prof.per_cta = cta_stats(per_cta)
    prof.static_inst, prof.slice_fraction = t.static_inst, t.slice_fraction
    memory_profile(prof, c, counts)
    return prof


def pred_and_flops(prof, t, counts, te) -> None:
    """Pred-on thread instructions and FLOPs: a guarded instruction counts
    its pred-on lanes (none without a counter), any other its node's lanes."""
    lanes = te[t.instr_node]
    on = np.where(t.guard_ctr >= 0, counts[np.maximum(t.guard_ctr, 0)], 0)
    prof.thread_inst_executed_pred_on = prof.thread_inst_executed - \
        int((lanes - on)[t.guarded].sum())
    counted = np.where(t.guarded, on, lanes)
    for name in FLOPS:
        setattr(prof, name, int((t.flops[name] * counted).sum()) if name in t.flops else 0)


def branches(prof, t, counts, we) -> None:
    b = cb = div = 0
    per = {}
    for node_id, conditional, base, key, line in t.branches:
        n = int(we[node_id])
        b += n
        if not conditional:
            continue
        cb += n
        if base is None:
            continue
        vals = counts[base:base + 5].tolist()
        div += vals[4]
        e = per.setdefault(key, {"line": line, "warp_execs": 0, "active": 0, "taken": 0,
                                 "not_taken": 0, "divergent": 0})
        for name, v in zip(("warp_execs", "active", "taken", "not_taken", "divergent"), vals):
            e[name] += v
    prof.branch, prof.cond_branch, prof.divergent_branch = b, cb, div
    prof.per_branch = per


def per_block(t, we, te) -> dict:
    out = {}
    for node_id, key, fields in t.blocks:
        e = out.get(key)
        if e is None:
            e = out[key] = {**fields, "warp_execs": 0, "thread_execs": 0}
        e["warp_execs"] += int(we[node_id])
        e["thread_execs"] += int(te[node_id])
    return out


def cta_stats(per_cta) -> dict:
    if per_cta is None or per_cta.size == 0:
        return {}
    inst = per_cta[0::2]
    tinst = per_cta[1::2]
    out = {"ctas": int(inst.size)}
    for name, arr in (("inst_executed", inst), ("thread_inst_executed", tinst)):
        out[name] = {"min": int(arr.min()), "max": int(arr.max()),
                     "mean": round(float(arr.mean()), 3),
                     "argmin": int(arr.argmin()), "argmax": int(arr.argmax())}
    return out
