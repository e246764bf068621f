"""The bases of the provenance check: pointer provenance with loaded pointers.

passes/memory/regions.py's analysis (the one the slice's alias modes use) gives
every value the set of bases it may derive from, and calls a pointer loaded
from memory UNKNOWN. The provenance check (passes/memory/provenance.py) needs more:
the *value* an address started from, to find at run time the allocation it
must stay in. This subclass adds two kinds of base and changes nothing for
the slice:

    ('param', name, offset)   kernel parameter ``name`` read at byte
                              ``offset`` (0 for a scalar; a field of a
                              by-value struct): the value is in the launch's
                              parameter buffer, the same for every thread
    ('loaded', result)        a pointer-wide ``ld``/``ldu`` result of any
                              state space (``float **A`` in global memory, a
                              ``-G`` stack slot in local memory, a pointer
                              argument of a ``.func`` in its ``.param``
                              space, a pointer a call returns): the value is
                              that register's value, which the code
                              generator copies into a shadow slot when the
                              load executes (backends/llvm/instruments/provenance_ir.py)

A lane that reaches the access uses the value its last execution of the load
gave, which is the value the address derives from, unless the derivation
crossed a phi that can see an *older* execution of the load (a pointer
chased around a loop, ``p = p->next``). Proof sketch: through non-phi
instructions the load dominates every value of the chain, so a second
execution of the load between a chain value's definition and the access
would give a path from the entry to the access around that definition,
contradicting dominance; through a phi in block B, a re-execution of the
load L between B and the access needs paths L -> B and B -> L, a cycle
holding both. So a loaded base survives a phi only when the phi's block and
the load's block share no CFG cycle; otherwise it becomes UNKNOWN (the
access keeps the segment check alone, as before).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.passes.memory.regions import UNKNOWN, Regions, _width


class ProvenanceRegions(Regions):
    """Bases of every value of one function, loaded pointers included."""

    def __init__(self, fn, program, address_size: int = 64):
        self.scc = cycle_ids(fn)
        super().__init__(fn, program, address_size)

    def _transfer(self, ins: ir.Instr, k: int, res: ir.Result) -> frozenset:
        if ins.opcode in ("ld", "ldu") and _width(res) >= self.ptr_bytes:
            return self._root(ins, k, res)
        out = super()._transfer(ins, k, res)
        if ins.opcode == "phi":
            out = frozenset(UNKNOWN if b[0] == "loaded" and self._same_cycle(b[1], ins) else b
                            for b in out)
        return out

    def _root(self, ins: ir.Instr, k: int, res: ir.Result) -> frozenset:
        """The base of a pointer-wide load result."""
        addr = next((s for s in ins.srcs if isinstance(s, ir.Addr)), None)
        if self.fn.is_kernel and addr is not None and isinstance(addr.base, ir.Sym) \
                and "param" in ins.mods:
            var = self.program.resolve(ins, addr.base.name)
            if any(p is var for p in self.fn.params):
                prior = self.of(ins.prior[k]) if k < len(ins.prior) else frozenset()
                offset = addr.base.offset + addr.offset + k * _width(res)
                return prior | {("param", var.name, offset)}
        return frozenset((("loaded", res),))

    def _same_cycle(self, res: ir.Result, phi: ir.Instr) -> bool:
        a, b = res.instr.block, phi.block
        if a is None or b is None:
            return True
        return self.scc.get(a.index) is not None and self.scc.get(a.index) == self.scc.get(b.index)


def cycle_ids(fn) -> dict:
    """block index -> id of its strongly connected component, for blocks on
    a CFG cycle only (iterative Tarjan)."""
    index, low, on, stack, comp = {}, {}, set(), [], {}
    counter = 0
    for root in fn.blocks:
        if root.index in index:
            continue
        work = [(root, iter(root.succs))]
        index[root.index] = low[root.index] = counter
        counter += 1
        stack.append(root)
        on.add(root.index)
        while work:
            blk, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt.index not in index:
                    index[nxt.index] = low[nxt.index] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt.index)
                    work.append((nxt, iter(nxt.succs)))
                elif nxt.index in on:
                    low[blk.index] = min(low[blk.index], index[nxt.index])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent.index] = min(low[parent.index], low[blk.index])
            if low[blk.index] == index[blk.index]:
                members = []
                while True:
                    b = stack.pop()
                    on.discard(b.index)
                    members.append(b)
                    if b is blk:
                        break
                if len(members) > 1 or blk in blk.succs:
                    for b in members:
                        comp[b.index] = blk.index
    return comp
