"""The SSA verifier: checks the invariants every pass relies on.

Structure: block indices and owners, succs/preds agree (as multisets of
edges), phis only at the top of a block, a terminator only as the last
instruction, phi incoming blocks equal the block's predecessors (as
multisets). SSA: every definition dominates its uses (Cytron et al., TOPLAS
1991); a phi operand's definition must dominate the end of its incoming
block; uses in blocks the entry does not reach are not checked. Use lists
equal, as multisets, the instructions that read each value. Types, where
simple: a guard or ``!p`` operand is a ``pred``, a guarded instruction has one
prior value per result with the result's type, phi operands have the phi's type.
ISA: every instruction's types, operand forms and operand types are ones the
PTX ISA allows (ptxc.ir.isa_rules; the parser checks them too, this catches
what a pass made).

Each violation raises :class:`PtxcError` naming the function, the block and
the PTX line.
"""
from __future__ import annotations

from collections import Counter

from ptxc.errors import PtxcError
from ptxc.ir import Not, Result, values_in
from ptxc.ir.isa_rules import CHECKED, check as isa_check


def _fail(fn, block, ins, message: str):
    where = f"@{fn.name}, block {block.name if block is not None else '?'}"
    if ins is not None and ins.loc is not None:
        where += f", line {ins.loc.line}"
    raise PtxcError(f"verifier: {where}: {message}", ins.loc if ins is not None else None)


def _check_blocks(fn) -> None:
    for i, b in enumerate(fn.blocks):
        if b.index != i:
            _fail(fn, b, None, f"block index {b.index}, expected {i}")
        if b.function is not None and b.function is not fn:
            _fail(fn, b, None, "block belongs to another function")
        for ins in b.instrs:
            if ins.block is not b:
                _fail(fn, b, ins, f"instruction {ins.full_opcode} does not point back to its block")


def _check_edges(fn) -> None:
    n = len(fn.blocks)
    out, inc = Counter(), Counter()
    for b in fn.blocks:
        for s in list(b.succs) + list(b.preds):
            if not (0 <= s.index < n and fn.blocks[s.index] is s):
                _fail(fn, b, None, f"edge to block {s.name} outside the function")
        out.update((b.index, s.index) for s in b.succs)
        inc.update((p.index, b.index) for p in b.preds)
    diff = (out - inc) or (inc - out)
    if diff:
        a, s = next(iter(diff))
        blk = fn.blocks[a]
        _fail(fn, blk, None, f"succs/preds disagree on edge {blk.name} -> {fn.blocks[s].name}")


def _check_layout(fn, b) -> None:
    seen_body = False
    for k, ins in enumerate(b.instrs):
        if ins.is_phi and seen_body:
            _fail(fn, b, ins, "phi after a non-phi instruction")
        seen_body = seen_body or not ins.is_phi
        if ins.info is not None and ins.info.terminator and k != len(b.instrs) - 1:
            _fail(fn, b, ins, f"terminator {ins.full_opcode} is not the last instruction")
    term = b.terminator
    if term is not None and term.opcode == "bra":
        for op in term.srcs:
            target = getattr(op, "block", None)
            if target is not None and not any(s is target for s in b.succs):
                _fail(fn, b, term, f"branch target {target.name} is not a successor")


def _check_phi(fn, b, ins) -> None:
    if len(ins.phi_blocks) != len(ins.srcs):
        _fail(fn, b, ins, f"phi has {len(ins.srcs)} operands but {len(ins.phi_blocks)} blocks")
    if Counter(map(id, ins.phi_blocks)) != Counter(map(id, b.preds)):
        got = " ".join(p.name for p in ins.phi_blocks)
        want = " ".join(p.name for p in b.preds)
        _fail(fn, b, ins, f"phi incoming blocks [{got}] differ from predecessors [{want}]")
    for r in ins.results:
        for src in ins.srcs:
            for v in values_in(src):
                if v.type != r.type:
                    _fail(fn, b, ins, f"phi {r.name} of type {r.type} has operand "
                                      f"{v.name} of type {v.type}")


def _check_types(fn, b, ins) -> None:
    for k, r in enumerate(ins.results):
        if not isinstance(r, Result) or r.instr is not ins or r.index != k:
            _fail(fn, b, ins, f"result {k} ({getattr(r, 'name', r)}) does not point back here")
    if ins.guard is not None:
        if ins.guard.type != "pred":
            _fail(fn, b, ins, f"guard {ins.guard.name} has type {ins.guard.type}, not pred")
        if len(ins.prior) != len(ins.results):
            _fail(fn, b, ins, f"guarded instruction has {len(ins.results)} results "
                              f"but {len(ins.prior)} prior values")
        for r, old in zip(ins.results, ins.prior):
            if old.type != r.type:
                _fail(fn, b, ins, f"prior value {old.name} of type {old.type} for "
                                  f"result {r.name} of type {r.type}")
    elif ins.prior:
        _fail(fn, b, ins, "unguarded instruction has prior values")
    for op in ins.srcs:
        if isinstance(op, Not) and op.value.type != "pred":
            _fail(fn, b, ins, f"negated operand {op.value.name} is not a pred")
    if ins.opcode == "setp":
        for r in ins.results:
            if r.type != "pred":
                _fail(fn, b, ins, f"setp result {r.name} has type {r.type}, not pred")


class _Dominance:
    """Checks that definitions dominate uses (needs sane blocks and edges)."""

    def __init__(self, fn):
        from ptxc.passes.cfg import CFGInfo
        from ptxc.passes.domtree import dominator_tree
        self.fn = fn
        cfg = CFGInfo(fn)
        self.tree = dominator_tree(len(cfg.blocks), 0, cfg.succ_idx, cfg.pred_idx)
        self.pos = {id(ins): k for b in fn.blocks for k, ins in enumerate(b.instrs)}

    def _def_block(self, b, ins, v):
        d = v.instr.block
        if d is None or id(v.instr) not in self.pos:
            _fail(self.fn, b, ins, f"{v.name} is defined outside the function")
        return d

    def check_use(self, b, ins, v) -> None:
        if not isinstance(v, Result) or not self.tree.reachable(b.index):
            return
        d = self._def_block(b, ins, v)
        ok = (self.pos[id(v.instr)] < self.pos[id(ins)] if d is b
              else self.tree.dominates(d.index, b.index))
        if not ok:
            line = v.instr.loc.line if v.instr.loc else "?"
            _fail(self.fn, b, ins, f"use of {v.name} is not dominated by its definition "
                                   f"(block {d.name}, line {line})")

    def check_phi(self, b, ins) -> None:
        for src, pb in zip(ins.srcs, ins.phi_blocks):
            if not self.tree.reachable(pb.index):
                continue
            for v in values_in(src):
                if isinstance(v, Result):
                    d = self._def_block(b, ins, v)
                    if not self.tree.dominates(d.index, pb.index):
                        _fail(self.fn, b, ins, f"phi operand {v.name} from {pb.name} is not "
                                               f"dominated by its definition (block {d.name})")

    def run(self, values: dict, readers: dict) -> None:
        for b in self.fn.blocks:
            for ins in b.phis:
                self.check_phi(b, ins)
        for key, v in values.items():
            if isinstance(v, Result):
                for ins in readers[key]:
                    if not ins.is_phi:
                        self.check_use(ins.block, ins, v)


def _readers(fn) -> tuple[dict, dict]:
    """Every value the function defines or reads (by id), and its readers,
    one entry per read, in instruction order."""
    values: dict[int, object] = {}
    readers: dict[int, list] = {}
    for ins in fn.instructions():
        for r in ins.results:
            if id(r) not in values:
                values[id(r)] = r
                readers[id(r)] = []
        for v in ins.operand_values():
            lst = readers.get(id(v))
            if lst is None:
                values[id(v)] = v
                readers[id(v)] = lst = []
            lst.append(ins)
    return values, readers


def _check_uses(fn, values: dict, readers: dict) -> None:
    here = {id(ins) for ins in fn.instructions()}
    for key, v in values.items():
        uses = v.uses if isinstance(v, Result) else [u for u in v.uses if id(u) in here]
        want = readers[key]
        if uses == want or sorted(map(id, uses)) == sorted(map(id, want)):
            continue
        ins = (want or uses or [None])[0]
        _fail(fn, ins.block if ins is not None else None, ins,
              f"use list of {v.name} has {len(uses)} entries, {len(want)} reads in the function")


def verify_function(fn) -> None:
    """Raise PtxcError at the first broken invariant of ``fn``."""
    if fn.is_decl or not fn.blocks:
        return
    _check_blocks(fn)
    _check_edges(fn)
    for b in fn.blocks:
        _check_layout(fn, b)
        for ins in b.instrs:
            if ins.is_phi:
                _check_phi(fn, b, ins)
            _check_types(fn, b, ins)
    values, readers = _readers(fn)
    _Dominance(fn).run(values, readers)
    _check_uses(fn, values, readers)
    _check_isa(fn)


def _check_isa(fn) -> None:
    """The PTX ISA's rules for each instruction (after the IR's own invariants)."""
    skip = fn.attrs.get("vector_range_regs", ())
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.opcode in CHECKED:
                found = isa_check(ins, skip)
                if found is not None:
                    _fail(fn, b, ins, found[0])


def verify_module(module) -> None:
    """Verify every function with a body."""
    for fn in module.functions:
        verify_function(fn)
