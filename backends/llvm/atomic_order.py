"""Do a kernel's global atomics give the same memory in any CTA order?

CTAs of a launch run on several worker threads (runtime.py) unless they must
run in linear CTA order (jit.Compiled.in_order). Global atomics are executed
with LLVM ``atomicrmw``/``cmpxchg`` (ops/atomics.py), so they are atomic on
any number of threads; what may differ with the order is the result:

* the old value an ``atom`` returns (a ticket, a slot index) depends on the
  order, and so does everything computed from it;
* ``exch``/``cas`` leave the last writer's value, ``inc``/``dec`` wrap
  (``inc`` after ``add`` is not ``add`` after ``inc``), and floating-point
  ``add`` rounds differently in another order.

Integer ``add``, ``and``, ``or``, ``xor``, ``min`` and ``max`` are
commutative and associative: a set of them on one location leaves the same
value in every order. So a kernel whose global or generic atomics are all
such operations, each a ``red`` or an ``atom`` whose old value is read by no
instruction, leaves the same bytes whatever the CTA order (``commute``). The
counters do not depend on the order either when no branch or guard reads
memory those atomics write: the slice pass records that in
``SliceVariant.ordered`` (an ``atom`` is a read that sees global writes), and
launcher.compile.place_slice runs such kernels on one worker.
"""
from __future__ import annotations

COMMUTING = frozenset({"add", "and", "or", "xor", "min", "max", "umin", "umax"})


def commute(plan) -> bool:
    """True when every global/generic atom/red of ``plan``'s code (the kernel
    and the functions it calls) commutes with the others (module doc)."""
    from ptxc.backends.llvm.ops.access import atomic_form, space_of
    for _, ins in plan.instr_table:
        if ins.opcode not in ("atom", "red") or space_of(ins) not in ("global", "generic"):
            continue
        form = atomic_form(ins)
        if form is None or form[2] not in COMMUTING:
            return False
        if ins.opcode == "atom" and any(r.uses for r in ins.results):
            return False
    return True
