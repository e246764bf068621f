"""mbarrier: the arrive-wait barriers of shared memory (PTX ISA 9.7.13.15;
``cuda::barrier<thread_scope_block>`` compiles to them).

An mbarrier is a 64-bit object; ptxc encodes its state as

    bits  0..31  pending arrivals in the current phase
    bits 32..62  expected arrivals per phase
    bit  63      the current phase's parity

``init`` sets pending = expected = count, phase 0. Every executing lane of
an ``arrive`` (in ascending lane order, one at a time) takes ``count``
(default 1) from pending and gets the state before its arrive as its token;
the arrive that makes pending 0 completes the phase: the parity flips and
pending starts again at expected. ``arrive_drop`` also lowers expected by
``count`` for the phases after this one. ``test_wait``/``try_wait`` with a
token are true when the token's phase has completed (the parity differs);
the ``.parity`` forms compare the current parity with the operand (true
when they differ: that phase completed). ``pending_count`` reads a token's
pending arrivals.

Waiting: when a ``test_wait``/``try_wait`` is false for any executing lane,
the warp yields (layout.ST_YIELD) after writing its result, so the other
warps of the CTA run before it tests again; the CTA loop (runtime_ir.py)
repeats rounds without releasing ``bar.sync`` while a warp yielded. Not
supported (refused with a message): ``expect_tx``/``complete_tx`` (the tensor
memory accelerator's transaction counts) and ``arrive.noComplete``.

Under racecheck, init, arrive and a wait true for some lane also call
check_hooks.race_mbar_hook (the ordering mbarriers give:
racecheck_mbar.py).
"""
from __future__ import annotations

from ptxc.errors import PtxcError

from ptxc.backends.llvm.instruments.check_hooks import race_mbar_hook
from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.ops.access import address
from ptxc.backends.llvm.ops.resolve import gather, resolve, scatter

ARRIVE = "ptxc_mbar_arrive"
PHASE_BIT = 63


def space(ins) -> str:
    return "shared" if any(m.split("::")[0] == "shared" for m in ins.mods) else "generic"


def state_ptrs(cg, ins, addr_op) -> str:
    addr, static = address(cg, addr_op, space(ins))
    return resolve(cg, space(ins), addr, static, 8, 8)


def op_mbarrier(cg, ins):
    mods = ins.mods
    if any(m in mods for m in ("expect_tx", "complete_tx", "noComplete")):
        raise PtxcError("mbarrier transaction counts (expect_tx/complete_tx) and "
                        "arrive.noComplete are not supported yet")
    if "init" in mods:
        return init(cg, ins)
    if "inval" in mods:
        return None
    if "arrive" in mods or "arrive_drop" in mods:
        return arrive(cg, ins, drop="arrive_drop" in mods)
    if "test_wait" in mods or "try_wait" in mods:
        return wait(cg, ins)
    if "pending_count" in mods:
        st = cg.read(ins.srcs[0], "b64")
        return cg.write(ins.results[0], cg.f.cast("trunc", "<32 x i64>", st, "<32 x i32>"), "u32")
    raise PtxcError(f"{ins.full_opcode} is not supported yet")


def init(cg, ins) -> None:
    f = cg.f
    ptrs = state_ptrs(cg, ins, ins.srcs[0])
    n = f.cast("zext", "<32 x i32>", cg.read(ins.srcs[1], "u32"), "<32 x i64>")
    high = f.val(f"shl <32 x i64> {n}, {splat('i64', 32)}")
    state = f.val(f"or <32 x i64> {n}, {high}")
    scatter(cg, "i64", state, ptrs, 8, cg.em)
    if "racecheck" in getattr(cg, "checks", ()):
        p_ptrs = f.alloca("<32 x ptr>", "mbp", 64)
        f.store("<32 x ptr>", ptrs, p_ptrs, 64)
        race_mbar_hook(cg, 2, cg.emi, p_ptrs, p_ptrs, None)


def arrive(cg, ins, drop: bool) -> None:
    f = cg.f
    addr_op = ins.srcs[0]
    ptrs = state_ptrs(cg, ins, addr_op)
    count = cg.read(ins.srcs[1], "u32") if len(ins.srcs) > 1 else splat("i32", 1)
    p_ptrs, p_count, p_out = (f.alloca(t, h, 64) for t, h in
                              (("<32 x ptr>", "mbp"), ("<32 x i32>", "mbc"), ("<32 x i64>", "mbt")))
    f.store("<32 x ptr>", ptrs, p_ptrs, 64)
    f.store("<32 x i32>", count, p_count, 64)
    cg.helpers.setdefault(ARRIVE, ARRIVE_IR)
    f.call("void", ARRIVE, [("ptr", p_ptrs), ("i32", cg.emi), ("ptr", p_count),
                            ("i1", "true" if drop else "false"), ("ptr", p_out)])
    race_mbar_hook(cg, 0, cg.emi, p_ptrs, p_out, p_count)
    dsts = cg.dst_list(ins)
    dst = dsts[0] if dsts else None
    if dst is not None:
        cg.write(dst, f.load("<32 x i64>", p_out, 64), "b64")


def wait(cg, ins) -> None:
    f = cg.f
    ptrs = state_ptrs(cg, ins, ins.srcs[0])
    cur = gather(cg, "i64", ptrs, 8, cg.em)
    cur_phase = f.val(f"lshr <32 x i64> {cur}, {splat('i64', PHASE_BIT)}")
    if "parity" in ins.mods:
        want = f.cast("zext", "<32 x i32>", cg.read(ins.srcs[1], "u32"), "<32 x i64>")
        want = f.val(f"and <32 x i64> {want}, {splat('i64', 1)}")
    else:
        want = f.val(f"lshr <32 x i64> {cg.read(ins.srcs[1], 'b64')}, {splat('i64', PHASE_BIT)}")
    done = f.val(f"icmp ne <32 x i64> {cur_phase}, {want}")
    cg.write(ins.results[0], done, "pred")
    if "racecheck" in getattr(cg, "checks", ()):
        _race_wait(cg, ptrs, want, done)
    notdone = f.val(f"xor <32 x i1> {done}, {splat('i1', 'true')}")
    pending = f.val(f"and <32 x i1> {notdone}, {cg.em}")
    cg.yield_if(f.cast("bitcast", "<32 x i1>", pending, "i32"))


def _race_wait(cg, ptrs: str, want: str, done: str) -> None:
    """racecheck: the executing lanes whose wait is true, the barriers and
    the parities they waited on (racecheck_mbar.py)."""
    f = cg.f
    p_ptrs, p_want = f.alloca("<32 x ptr>", "mbp", 64), f.alloca("<32 x i64>", "mbw", 64)
    f.store("<32 x ptr>", ptrs, p_ptrs, 64)
    f.store("<32 x i64>", want, p_want, 64)
    ok = f.val(f"and <32 x i1> {done}, {cg.em}")
    race_mbar_hook(cg, 1, f.cast("bitcast", "<32 x i1>", ok, "i32"), p_ptrs, p_want, None)


# Lane by lane (ascending), so that arrivals of one warp at one barrier count
# one after the other; the token is the state before the lane's arrive.
ARRIVE_IR = f"""define internal void @{ARRIVE}(ptr %ptrs, i32 %mask, ptr %counts, i1 %drop, ptr %out) {{
entry:
  br label %loop
loop:
  %l = phi i32 [ 0, %entry ], [ %l1, %next ]
  %bit = shl i32 1, %l
  %on0 = and i32 %mask, %bit
  %on = icmp ne i32 %on0, 0
  br i1 %on, label %do, label %next
do:
  %pp = getelementptr inbounds ptr, ptr %ptrs, i32 %l
  %p = load ptr, ptr %pp, align 8
  %cp = getelementptr inbounds i32, ptr %counts, i32 %l
  %c = load i32, ptr %cp, align 4
  %s = load i64, ptr %p, align 8
  %pend = trunc i64 %s to i32
  %hi = lshr i64 %s, 32
  %exp0 = and i64 %hi, 2147483647
  %phase = lshr i64 %s, {PHASE_BIT}
  %c64 = zext i32 %c to i64
  %dropc = select i1 %drop, i64 %c64, i64 0
  %exp = sub i64 %exp0, %dropc
  %pend1 = sub i32 %pend, %c
  %done = icmp sle i32 %pend1, 0
  %flip = zext i1 %done to i64
  %phase1 = xor i64 %phase, %flip
  %expw = trunc i64 %exp to i32
  %pend2 = select i1 %done, i32 %expw, i32 %pend1
  %ph = shl i64 %phase1, {PHASE_BIT}
  %ex = shl i64 %exp, 32
  %pz = zext i32 %pend2 to i64
  %ns0 = or i64 %ph, %ex
  %ns = or i64 %ns0, %pz
  store i64 %ns, ptr %p, align 8
  %op = getelementptr inbounds i64, ptr %out, i32 %l
  store i64 %s, ptr %op, align 8
  br label %next
next:
  %l1 = add i32 %l, 1
  %more = icmp ult i32 %l1, 32
  br i1 %more, label %loop, label %exit
exit:
  ret void
}}"""

OPS = {"mbarrier": op_mbarrier}
