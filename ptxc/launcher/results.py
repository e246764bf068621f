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

from ptxc.ir.opcodes import flop_weight
from ptxc.launcher.profile import Profile

from ptxc.launcher.results_memory import memory_profile


def build_profile(c, counts: np.ndarray, per_cta, kernel, mode, grid, block) -> Profile:
    plan = c.plan
    prof = Profile(kernel=kernel.name, mode=mode, grid=tuple(grid), block=tuple(block))
    we = counts[0:2 * len(plan.nodes):2]
    te = counts[1:2 * len(plan.nodes):2]
    totals(prof, plan, we, te)
    pred_and_flops(prof, c, counts, te)
    branches(prof, c, counts, we)
    prof.per_block = per_block(plan, we, te)
    prof.per_cta = cta_stats(per_cta)
    prof.static_inst, prof.slice_fraction = static_counts(plan)
    memory_profile(prof, c, counts)
    return prof


def totals(prof, plan, we, te) -> None:
    sizes = np.array([len(n.instrs) for n in plan.nodes], dtype=np.int64)
    prof.inst_executed = int((we * sizes).sum())
    prof.thread_inst_executed = int((te * sizes).sum())


def pred_and_flops(prof, c, counts, te) -> None:
    plan = c.plan
    off = 0
    flops = {"flop_count_sp": 0, "flop_count_dp": 0, "flop_count_hp": 0, "flop_count_sp_special": 0}
    for iid, (inst, ins) in enumerate(plan.instr_table):
        node = plan.instr_node[iid]
        lanes = int(te[node.id])
        if ins.guard is not None:
            on = int(counts[c.guard_ctr[iid]]) if iid in c.guard_ctr else 0
            off += lanes - on
            lanes = on
        name, w = flop_weight(ins.info, ins.mods) if ins.info is not None else (None, 0)
        if name:
            flops[name] += w * lanes
    prof.thread_inst_executed_pred_on = prof.thread_inst_executed - off
    for k, v in flops.items():
        setattr(prof, k, v)


def branches(prof, c, counts, we) -> None:
    plan = c.plan
    b = cb = div = 0
    per = {}
    for node in plan.nodes:
        if node.next is not None:
            continue
        term = node.block.terminator
        if term is None or term.opcode not in ("bra", "brx"):
            continue
        n = int(we[node.id])
        b += n
        if term.guard is None and term.opcode == "bra":
            continue
        cb += n
        iid = plan.instr_id(node.inst, term)
        base = c.branch_ctr.get(iid)
        if base is None:
            continue
        vals = [int(x) for x in counts[base:base + 5]]
        div += vals[4]
        key = f"{node.inst.fn.name}:{node.block.name}"
        e = per.setdefault(key, {"line": term.loc.line if term.loc else None, "warp_execs": 0,
                                 "active": 0, "taken": 0, "not_taken": 0, "divergent": 0})
        for name, v in zip(("warp_execs", "active", "taken", "not_taken", "divergent"), vals):
            e[name] += v
    prof.branch, prof.cond_branch, prof.divergent_branch = b, cb, div
    prof.per_branch = per


def first_indices(fn) -> dict:
    """Block -> 1-based index of its first instruction in the function's text."""
    out, k = {}, 0
    for b in fn.blocks:
        out[id(b)] = k + 1
        k += len(b.body)
    return out


def per_block(plan, we, te) -> dict:
    out, firsts = {}, {}
    for node in plan.nodes:
        if node.seg != 0:
            continue
        fn = node.inst.fn
        if id(fn) not in firsts:
            firsts[id(fn)] = first_indices(fn)
        key = f"{fn.name}:{node.block.name}"
        body = node.block.body
        e = out.setdefault(key, {"function": fn.name, "block": node.block.name,
                                 "line": body[0].loc.line if body and body[0].loc else None,
                                 "first": firsts[id(fn)][id(node.block)],
                                 "instructions": len(body), "warp_execs": 0, "thread_execs": 0})
        e["warp_execs"] += int(we[node.id])
        e["thread_execs"] += int(te[node.id])
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


def static_counts(plan):
    """(static_inst, slice_fraction) of the kernel's own text (METRICS.md;
    called functions are not included)."""
    fn = plan.kernel
    total = kept = 0
    for ins in fn.instructions():
        if not ins.is_phi:
            total += 1
            kept += bool(ins.attrs.get("slice"))
    frac = (kept / total if total else 0.0) if fn.attrs.get("sliced") else None
    return total, frac
