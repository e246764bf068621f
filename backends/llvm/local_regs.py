"""Registers whose values never leave the node that defines them ("local"
registers): the code generator writes them without the masked merge and,
when LLVM optimises the kernel, keeps them out of the warp state.

Every register lives in a slot of the warp state and every write is masked,
``slot = select(mask, new, old)`` (values.py), because lanes that do not
execute keep the old value and may read it later (after reconvergence) or
across a barrier, where ``run_warp`` returns and resumes. A temporary such
as ``and.b32 %r15, %r19, 1`` in a loop body is read only by later
instructions of the same node, in the same lanes: its inactive lanes are
never read, so the merge (a load and a blend) and the store to the warp
state are wasted work, and the store keeps LLVM from holding the value in
a register. In the ALU reference (bench/kernels/collatz.cu) 7 of the loop's
9 register writes are of this kind (docs/performance.md, "Registers: the
masked merge and the warp state").

A register (one slot: a declaration in one inlined instance, plan.py) is
local when every SSA value of it (ptxc.frontend.ssa) is

- defined by an unguarded or guarded instruction of a per-lane family
  (arithmetic, compare, bits, sfu, move, convert, load, store, atomic,
  branch): not a phi, call, warp collective, tensor-core, texture or
  barrier instruction, whose lowering may read other lanes' values or
  address the slot in the warp state directly (mma_outline.py);
- read only by such instructions, later in the same node (same block, no
  ``call`` in between: plan.py cuts nodes at calls) and with no barrier
  family instruction in between (``bar``/``mbarrier`` may return from
  ``run_warp`` and resume: simt.py), never by a phi, never as the old value
  of a guarded write over an undefined register (those slots are zeroed
  when the warp starts, frame.py);
- not the carry flag or a ``.reg`` parameter or return value of a .func
  (read and written by the caller through ``var_slot``).

Inactive lanes of any slot already hold arbitrary values (slots are reused
by the next CTA and only maybe-undefined slots are zeroed), so no per-lane
instruction depends on them; the cross-lane ones (shfl, match, mma ...) are
excluded above all the same, so an inactive source lane reads what it read
before.
"""
from __future__ import annotations

import os

from ptxc import ir
from ptxc.ir import opcodes

PER_LANE = frozenset({opcodes.ARITH, opcodes.COMPARE, opcodes.BITS, opcodes.SFU, opcodes.MOVE,
                      opcodes.CONVERT, opcodes.LOAD, opcodes.STORE, opcodes.ATOMIC,
                      opcodes.CONTROL})
NOT_PER_LANE = frozenset({"call"})     # control family, but copies registers into a callee


def enabled() -> bool:
    """On unless PTXC_LOCAL_REGS=0 (for measurements: bench/README.md)."""
    return os.environ.get("PTXC_LOCAL_REGS") != "0"


def per_lane(ins: ir.Instr) -> bool:
    info = ins.info
    return (not ins.is_phi and info is not None and info.family in PER_LANE
            and not info.warp and ins.opcode not in NOT_PER_LANE)


def local_keys(inst, plan) -> set:
    """The slot keys (``plan._slot_key``) of ``inst``'s function that are
    local registers."""
    slot_key, fn = plan._slot_key, inst.fn
    formals = any(p.space == "reg" for p in list(fn.params) + list(fn.rets))
    seen, bad = set(), set()
    for blk in inst.fn.blocks:
        where: dict[int, tuple[int, int]] = {}    # id(Result) -> (call segment, barrier epoch)
        seg = epoch = 0
        for ins in blk.instrs:
            ok = per_lane(ins)
            for v in ins.operand_values():
                if not isinstance(v, ir.Value) or isinstance(v, ir.SpecialReg):
                    continue
                if not ok or where.get(id(v)) != (seg, epoch):
                    bad.add(slot_key(inst, v))
            undefined_prior = any(isinstance(v, ir.Undef) for v in ins.prior)
            for r in ins.results:
                k = slot_key(inst, r)
                seen.add(k)
                if (not ok or undefined_prior or r.reg == "%cc"
                        or formals and plan.formal_var(fn, r.reg) is not None):
                    bad.add(k)
                where[id(r)] = (seg, epoch)
            if ins.opcode == "call":
                seg += 1
            elif ins.info is not None and ins.info.family == opcodes.BARRIER:
                epoch += 1
    seen.discard(None)
    return seen - bad


def local_register_names(plan, inst=None) -> set[str]:
    """The PTX names of the local registers of ``inst`` (default: the kernel)."""
    inst = inst or plan.root
    keys = local_keys(inst, plan)
    return {r.reg for blk in inst.fn.blocks for ins in blk.instrs for r in ins.results
            if plan._slot_key(inst, r) in keys}
