"""Calls through a function pointer: ``call (ret), %fptr, (args), proto;``.

The plan inlines an instance of every function the call may enter (the
address-taken functions whose signature matches the prototype,
ptxc/ir/call_targets.py; ``Node.indirect``). At the call each lane
compares its pointer with those functions' addresses: the lanes of one
callee get their arguments copied into that instance and form one path, and
the paths diverge as the targets of a ``brx.idx`` do, reconverging at the
call's continuation (the immediate post-dominator of the call: every callee
returns there; METRICS.md's IPDOM stack, simt.diverge). Lanes of a warp may
thus call different functions; each path runs with its own mask, and the
continuation runs with the lanes reunited. A lane whose pointer is no
function of the module, a function whose signature does not match the
prototype, or one that cannot be inlined (recursion through a pointer)
stops the launch with ERR_BAD_CALL at that thread (the launcher's message
says which: ptxc/launcher/faults.py).

After the call, the continuation copies each callee's return values into
the caller's, for the lanes whose pointer chose that callee: the pointer
register still holds its value there (the callee cannot write the caller's
registers).

Counting: the ``call`` is one instruction of its node, as a direct call;
the divergence of the call is not a branch (METRICS.md counts ``bra`` and
``brx``), so no branch counter moves (docs/executor.md, "Indirect calls").
"""
from __future__ import annotations

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.ops.call_params import copy_one
from ptxc.backends.llvm.plan import decode_call


def _lane_masks(cg, node, eff: str) -> tuple[list, str]:
    """([(callee, <32 x i1> mask, i32 mask)], matched <32 x i1>): the lanes
    of ``eff`` whose pointer is each callee's address."""
    f = cg.f
    _, target, _ = decode_call(node.call)
    ptr = cg.read(target, "u64")
    out, matched = [], "zeroinitializer"
    for addr, callee in node.indirect:
        hit = f.val(f"icmp eq <32 x i64> {ptr}, {splat('i64', addr)}")
        mv = f.val(f"and <32 x i1> {hit}, {eff}")
        matched = f.val(f"or <32 x i1> {matched}, {mv}")
        out.append((callee, mv, f.cast("bitcast", "<32 x i1>", mv, "i32")))
    return out, matched, ptr


def _copy(cg, node, callee, mv, mi, into_callee: bool) -> None:
    rets, _, args = decode_call(node.call)
    pairs = zip(args, callee.fn.params) if into_callee else zip(rets, callee.fn.rets)
    saved = cg.inst, cg.cur, cg.em, cg.emi
    cg.cur, cg.em, cg.emi = node.call, mv, mi
    for actual, formal in pairs:
        copy_one(cg, node.inst, callee, actual, formal, into_callee)
    cg.inst, cg.cur, cg.em, cg.emi = saved


def enter_indirect(cg, node) -> None:
    """The call: check every executing lane's pointer, copy the arguments,
    diverge into the callees (module doc)."""
    f = cg.f
    cg.cur = node.call
    eff = cg.guard_mask(node.call) if node.call.guard is not None else cg.mv
    lanes, matched, ptr = _lane_masks(cg, node, eff)
    ones = splat("i1", "true")
    missed = f.val(f"xor <32 x i1> {matched}, {ones}")
    bad = f.val(f"and <32 x i1> {eff}, {missed}")
    cg.fail_if(f.cast("bitcast", "<32 x i1>", bad, "i32"), Lo.ERR_BAD_CALL, ptr)
    paths = []
    for callee, mv, mi in lanes:
        _copy(cg, node, callee, mv, mi, into_callee=True)
        paths.append((cg.plan.node_of(callee, callee.fn.blocks[0]).id, mi))
    cg.inst = node.inst
    if not paths:                   # every executing lane failed above
        return cg.goto(node.next.id)
    cg.diverge(node.next.id, paths[::-1])       # the first callee runs first


def indirect_returns(cg, call_node) -> None:
    """At the continuation: each callee's return values, for its lanes."""
    lanes, _, _ = _lane_masks(cg, call_node, cg.mv)
    for callee, mv, mi in lanes:
        _copy(cg, call_node, callee, mv, mi, into_callee=False)
