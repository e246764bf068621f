"""The static half of a launch's Profile, made once per compiled kernel.

results.build_profile turns a launch's raw counters into METRICS.md
numbers. What it needs of the kernel's text does not change between
launches: the instructions per node, each instruction's node, guard counter
and FLOP weight (ptxc.ir.opcodes.flop_weight), each branch's counters and
key, each block's key, first index and line, the static instruction count,
and each measured memory instruction's entry (results_memory.instr_entry).
Computed per launch, this took 0.3 ms, longer than running the one
16-thread CTA of nw's first launches (tests/apps/nw: 255 launches).
:func:`tables` makes it on a kernel's first launch and keeps it on the
Compiled; the per-launch work is numpy over its arrays and a loop over
its branches and blocks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxc.backends.llvm.instruments.mem_count import ATOMIC_KINDS
from ptxc.backends.llvm.instruments.memcount_ir import ATOMIC_SLOTS, GLOBAL_SLOTS, SHARED_SLOTS
from ptxc.ir.opcodes import flop_weight
from ptxc.passes.memory.measured import access_kind, state_space

GROUPS = {"atomic": ATOMIC_SLOTS, "global": GLOBAL_SLOTS, "shared": SHARED_SLOTS}
FLOPS = ("flop_count_sp", "flop_count_dp", "flop_count_hp", "flop_count_sp_special")


@dataclass
class MemoryTables:
    """Per instruction of the text (an entry of Profile.per_memory_instr,
    summed over its inlined instances): key, static fields and the spaces
    ("global", "shared") it has counter blocks for, in first-seen order;
    per counter-block layout (results_memory.GROUPS) the entry index and
    counter base of every block."""
    entries: list                # (key, fields, parts)
    blocks: dict                 # group -> (entry indices, bases): int64 arrays


@dataclass
class ProfileTables:
    sizes: np.ndarray            # instructions per node
    instr_node: np.ndarray       # node id of each instruction id
    guarded: np.ndarray          # bool per instruction id: has a guard predicate
    guard_ctr: np.ndarray        # its pred-on counter index, -1: none (0 lanes on)
    flops: dict                  # flop counter name -> FLOPs per pred-on lane, per instruction id
    branches: list               # (node id, conditional, counter base or None, key, line)
    blocks: list                 # (node id, key, {function, block, line, first, instructions})
    static_inst: int
    slice_fraction: float | None
    memory: MemoryTables | None  # the measured memory instructions (None: no memory counters)


def tables(c) -> ProfileTables:
    """The ProfileTables of compiled kernel ``c`` (made on first use)."""
    if c.profile_tables is None:
        c.profile_tables = _make(c)
    return c.profile_tables


def _make(c) -> ProfileTables:
    plan = c.plan
    n = len(plan.instr_table)
    guarded = np.zeros(n, dtype=bool)
    guard_ctr = np.full(n, -1, dtype=np.int64)
    flops = {name: np.zeros(n, dtype=np.int64) for name in FLOPS}
    for iid, (_, ins) in enumerate(plan.instr_table):
        if ins.guard is not None:
            guarded[iid] = True
            guard_ctr[iid] = c.guard_ctr.get(iid, -1)
        name, w = flop_weight(ins.info, ins.mods) if ins.info is not None else (None, 0)
        if name:
            flops[name][iid] = w
    total, frac = _static_counts(plan)
    return ProfileTables(
        sizes=np.array([len(nd.instrs) for nd in plan.nodes], dtype=np.int64),
        instr_node=np.array([nd.id for nd in plan.instr_node], dtype=np.int64),
        guarded=guarded, guard_ctr=guard_ctr, flops={k: v for k, v in flops.items() if v.any()},
        branches=_branches(c), blocks=_blocks(plan), static_inst=total, slice_fraction=frac,
        memory=_memory(c))


def _branches(c) -> list:
    """Blocks ending in ``bra``/``brx``: their branch counters (module doc)."""
    plan, out = c.plan, []
    for node in plan.nodes:
        term = node.block.terminator if node.next is None else None
        if term is None or term.opcode not in ("bra", "brx"):
            continue
        conditional = not (term.guard is None and term.opcode == "bra")
        base = c.branch_ctr.get(plan.instr_id(node.inst, term)) if conditional else None
        out.append((node.id, conditional, base, f"{node.inst.fn.name}:{node.block.name}",
                    term.loc.line if term.loc else None))
    return out


def _blocks(plan) -> list:
    """(node id, "function:block", its static fields) of each first node of a block."""
    out, firsts = [], {}
    for node in plan.nodes:
        if node.seg != 0:
            continue
        fn = node.inst.fn
        if id(fn) not in firsts:
            firsts[id(fn)] = first_indices(fn)
        body = node.block.body
        out.append((node.id, f"{fn.name}:{node.block.name}",
                    {"function": fn.name, "block": node.block.name,
                     "line": body[0].loc.line if body and body[0].loc else None,
                     "first": firsts[id(fn)][id(node.block)], "instructions": len(body)}))
    return out


def first_indices(fn) -> dict:
    """Block -> 1-based index of its first instruction in the function's text."""
    out, k = {}, 0
    for b in fn.blocks:
        out[id(b)] = k + 1
        k += len(b.body)
    return out


def _static_counts(plan) -> tuple:
    """(static_inst, slice_fraction) of the kernel's own text (METRICS.md;
    called functions are not included)."""
    fn = plan.kernel
    total = kept = 0
    for ins in fn.ptx_instructions():
        total += 1
        kept += bool(ins.attrs.get("slice"))
    frac = (kept / total if total else 0.0) if fn.attrs.get("sliced") else None
    return total, frac


def _memory(c) -> MemoryTables | None:
    """The MemoryTables of ``c``'s measured memory instruction instances,
    taken in instruction-id order."""
    if not c.memory_counters:
        return None
    entries, where, indices, blocks = [], {}, {}, {}
    for iid, bases in sorted(c.mem_ctr.items()):
        inst, ins = c.plan.instr_table[iid]
        fields = entry_fields(indices, inst.fn, ins)
        key = f"{fields['function']}:{fields['index']}"
        if key not in where:
            where[key] = len(entries)
            entries.append((key, fields, []))
        k = where[key]
        for part, base in bases.items():
            if part not in entries[k][2]:
                entries[k][2].append(part)
            blocks.setdefault(group(fields["kind"], part), ([], []))
            blocks[group(fields["kind"], part)][0].append(k)
            blocks[group(fields["kind"], part)][1].append(base)
    return MemoryTables([(k, f, tuple(p)) for k, f, p in entries],
                        {g: (np.array(e, dtype=np.int64), np.array(b, dtype=np.int64))
                         for g, (e, b) in blocks.items()})


def group(kind: str, part: str) -> str:
    """The counter-block layout (memcount_ir.py) of an access of ``kind`` to ``part``."""
    return "atomic" if kind in ATOMIC_KINDS else "global" if part == "global" else "shared"


def entry_fields(indices: dict, fn, ins) -> dict:
    """The static fields of a memory instruction's entry in
    ``Profile.per_memory_instr`` (its 1-based index in ``fn``'s text;
    ``indices`` caches each function's numbering)."""
    if id(fn) not in indices:
        indices[id(fn)] = {id(i): k + 1 for k, i in enumerate(fn.ptx_instructions())}
    return {"function": fn.name, "index": indices[id(fn)][id(ins)],
            "line": ins.loc.line if ins.loc else None,
            "block": ins.block.name if ins.block is not None else None,
            "opcode": ins.full_opcode, "kind": access_kind(ins), "space": state_space(ins)}
