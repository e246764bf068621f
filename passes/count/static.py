"""Static instruction counts per basic block, function and module.

Counted from the instruction text, one per PTX instruction (phis are not
instructions): the total (``static_inst``, METRICS.md), the counting class of
ptxc.ir.opcodes (``count_class``: integer, fp32, fp64, fp16, tensor, load,
store, atomic, control, barrier, special, conversion, move, other), memory
operations by state space (``load.global``, ``store.shared``, ``atomic.
generic``, texture/surface accesses under ``.texture``), static FLOPs with the
METRICS.md weights (``flop_weight``: add/sub/mul 1, fma/mad 2, packed f16x2 x2,
f32 special functions in ``flop_count_sp_special``), ``branch`` (bra, brx)
and ``cond_branch`` (guarded bra, or brx.idx), and, when the slice pass ran,
the instructions in the slice (``slice_inst``).
"""
from __future__ import annotations

from ptxc.ir.opcodes import CLASSES, count_class, flop_weight

from ptxc.passes.memory.access import spaces_in

FLOP_KEYS = ("flop_count_sp", "flop_count_dp", "flop_count_hp", "flop_count_sp_special")
FP_CLASSES = ("fp32", "fp64", "fp16")
_MEMORY_CLASSES = ("load", "store", "atomic")
_TEXTURE_OPS = ("tex", "tld4", "suld", "sust", "sured")


def empty_counts() -> dict:
    return {
        "static_inst": 0,
        "slice_inst": 0,
        "classes": {c: 0 for c in CLASSES},
        "memory": {},
        "flops": {k: 0 for k in FLOP_KEYS},
        "branch": 0,
        "cond_branch": 0,
    }


def memory_key(ins, cls: str) -> str | None:
    """'load.global' style key for memory instructions, else None."""
    if cls not in _MEMORY_CLASSES:
        return None
    if ins.opcode in _TEXTURE_OPS:
        return f"{cls}.texture"
    spaces = spaces_in(ins.mods)
    return f"{cls}.{spaces[0] if spaces else 'generic'}"


def add_instr(counts: dict, ins) -> None:
    """Count one (non-phi) instruction into ``counts``."""
    counts["static_inst"] += 1
    if ins.attrs.get("slice"):
        counts["slice_inst"] += 1
    info = ins.info
    if info is None:
        counts["classes"]["other"] += 1
        return
    cls = count_class(info, ins.mods)
    counts["classes"][cls] += 1
    key = memory_key(ins, cls)
    if key is not None:
        counts["memory"][key] = counts["memory"].get(key, 0) + 1
    name, weight = flop_weight(info, ins.mods)
    if name is not None:
        counts["flops"][name] += weight
    if info.branch:
        counts["branch"] += 1
        if ins.guard is not None or ins.opcode == "brx":
            counts["cond_branch"] += 1


def merge(into: dict, part: dict) -> None:
    """Add the counts ``part`` into ``into``."""
    for k in ("static_inst", "slice_inst", "branch", "cond_branch"):
        into[k] += part.get(k, 0)
    for group in ("classes", "flops", "memory"):
        for k, v in part[group].items():
            into[group][k] = into[group].get(k, 0) + v


def finish(counts: dict, sliced: bool) -> dict:
    """Sort memory keys, add derived totals, drop slice numbers if unsliced."""
    counts["memory"] = dict(sorted(counts["memory"].items()))
    counts["fp_inst"] = sum(counts["classes"][c] for c in FP_CLASSES)
    counts["flops_total"] = sum(counts["flops"].values())
    if sliced:
        n = counts["static_inst"]
        counts["slice_fraction"] = round(counts["slice_inst"] / n, 6) if n else 0.0
    else:
        counts.pop("slice_inst")
    return counts


def block_counts(block, sliced: bool) -> dict:
    counts = empty_counts()
    for ins in block.instrs:
        if not ins.is_phi:
            add_instr(counts, ins)
    return finish(counts, sliced)


def function_counts(fn) -> dict:
    """Counts of one function: totals plus a list of per-block counts."""
    sliced = bool(fn.attrs.get("sliced"))
    total = empty_counts()
    blocks = []
    for b in fn.blocks:
        bc = block_counts(b, sliced)
        merge(total, bc)
        blocks.append({"block": b.name, **bc})
    out = {"kernel": fn.is_kernel, **finish(total, sliced), "blocks": blocks}
    return out


def module_counts(module) -> dict:
    """Per-function counts and the module totals (all defined functions)."""
    functions = {}
    total = empty_counts()
    sliced = False
    for fn in module.functions:
        if fn.is_decl:
            continue
        fc = function_counts(fn)
        functions[fn.name] = fc
        sliced = sliced or "slice_inst" in fc
        merge(total, fc)
    totals = finish(total, sliced)
    totals["kernels"] = sum(1 for f in functions.values() if f["kernel"])
    totals["functions"] = len(functions)
    return {"functions": functions, "total": totals}
