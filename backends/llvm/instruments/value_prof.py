"""Value profiling: the compiled variant that records, per register-writing
instruction and destination register, which bits were constant and whether
each warp-level write was scalar (case study III of Stephenson et al.,
"Flexible Software Profiling of GPU Architectures", ISCA 2015; SASSI's
instlibs/src/valueprof.cu). docs/value-profile.md defines every figure.

A value-profiled launch runs a compile of its own
(``jit.compile_kernel(..., value_profile=True)``, like memcheck): after the
lowering of every kept instruction with results (``reg_writes.written``),
each destination register's new 32 lanes go to a native helper together
with the instruction's executing mask (active and guard-true lanes). The
helper keeps, in the worker's counter array, one block per (instruction
instance, destination):

    [ones_0, zeros_0, ..., ones_{W-1}, zeros_{W-1}, writes, scalar_writes, lanes]

``ones_k`` / ``zeros_k``: OR over every executing lane of word k (64 bits)
of the value / of its complement within the register's width: a bit never
seen 1 is constant 0, a bit never seen 0 is constant 1 (SASSI keeps the
AND of values and of complements, initialised to all ones; the OR of the
complements is the complement of that AND, and starts at 0 like every
counter). ``writes``: warp-level executions with at least one executing
lane; ``scalar_writes``: those whose executing lanes all wrote the same
value (no bit seen both 1 and 0 within the write); ``lanes``: thread-level
executions. W = 1 up to 64 bits, 2 for .b128. Predicates are 1-bit
registers; floating-point registers are seen as their bits.

The default code is unchanged: only this variant calls the helpers. The
ones/zeros words are OR-reduced over the workers (``or_indices``), the
rest summed, so the result is the same for any number of worker threads.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm.irtext import splat, vt
from ptxc.backends.llvm.reg_writes import written

DECLS = ("declare i64 @llvm.vector.reduce.or.v32i64(<32 x i64>)",)
TAIL = 3                                  # writes, scalar_writes, lanes


def words(bits: int) -> int:
    """64-bit words of the ones/zeros masks of a ``bits``-bit register."""
    return (bits + 63) // 64


def block_size(bits: int) -> int:
    return 2 * words(bits) + TAIL


def _word_part(k: int) -> list[str]:
    """IR lines: %o{k} / %z{k} = OR over the lanes of %m of word k / its
    complement (``%wm{k}``: the word's width mask)."""
    return [f"  %s{k} = select <32 x i1> %mv, <32 x i64> %v{k}, <32 x i64> zeroinitializer",
            f"  %o{k} = call i64 @llvm.vector.reduce.or.v32i64(<32 x i64> %s{k})",
            f"  %wmv{k}.0 = insertelement <32 x i64> poison, i64 %wm{k}, i32 0",
            f"  %wmv{k} = shufflevector <32 x i64> %wmv{k}.0, <32 x i64> poison, "
            f"<32 x i32> zeroinitializer",
            f"  %n{k} = xor <32 x i64> %v{k}, %wmv{k}",
            f"  %sn{k} = select <32 x i1> %mv, <32 x i64> %n{k}, <32 x i64> zeroinitializer",
            f"  %z{k} = call i64 @llvm.vector.reduce.or.v32i64(<32 x i64> %sn{k})",
            f"  %both{k} = and i64 %o{k}, %z{k}",
            *_or_into(f"o{k}", 2 * k, f"%o{k}"), *_or_into(f"z{k}", 2 * k + 1, f"%z{k}")]


def _or_into(name: str, offset: int, value: str) -> list[str]:
    return _update(name, offset, "or", value)


def _add_into(name: str, offset: int, value: str) -> list[str]:
    return _update(name, offset, "add", value)


def _update(name: str, offset: int, op: str, value: str) -> list[str]:
    """IR lines: counter ``base + offset`` of ``%cnt`` = counter ``op`` ``value``."""
    return [f"  %{name}.i = add i64 %base, {offset}",
            f"  %{name}.p = getelementptr inbounds i64, ptr %cnt, i64 %{name}.i",
            f"  %{name}.c = load i64, ptr %{name}.p, align 8",
            f"  %{name}.n = {op} i64 %{name}.c, {value}",
            f"  store i64 %{name}.n, ptr %{name}.p, align 8"]


def helper(w: int) -> tuple[str, str]:
    """(name, IR text) of the helper for registers of ``w`` 64-bit words:
    ``void ptxc_vp{w}(ptr cnt, i64 base, <32 x i64> v0.., i64 wm0.., i32 m)``."""
    name = f"ptxc_vp{w}"
    params = ", ".join([f"<32 x i64> %v{k}" for k in range(w)] + [f"i64 %wm{k}" for k in range(w)])
    lines = [f"define internal void @{name}(ptr %cnt, i64 %base, {params}, i32 %m) {{",
             "entry:", "  %none = icmp eq i32 %m, 0", "  br i1 %none, label %out, label %go",
             "go:", "  %mv = bitcast i32 %m to <32 x i1>"]
    both = "0"
    for k in range(w):
        lines += _word_part(k)
        lines.append(f"  %any{k} = or i64 {both}, %both{k}")
        both = f"%any{k}"
    lines += [f"  %uniform = icmp eq i64 {both}, 0",
              "  %sc = zext i1 %uniform to i64",
              "  %pc32 = call i32 @llvm.ctpop.i32(i32 %m)",
              "  %pc = zext i32 %pc32 to i64",
              *_add_into("w", 2 * w, "1"), *_add_into("s", 2 * w + 1, "%sc"),
              *_add_into("l", 2 * w + 2, "%pc"),
              "  br label %out", "out:", "  ret void", "}"]
    return name, "\n".join(lines)


MAY_YIELD = ("mbarrier",)                 # lowerings that may save the warp and resume (simt.yield_if)


class MaskVar:
    """A hidden per-warp slot (plan.var_slot) holding an instruction's
    executing lanes across a yield: the warp state outlives run_warp's
    return, SSA values do not."""
    type = "pred"


class WriteProfile:
    """Around the lowering of one instruction: remember its executing lanes,
    then profile its destination registers (``after``). An instruction whose
    lowering may yield (an mbarrier wait: it writes its result, then may
    return to the CTA loop and resume after the instruction) keeps the lanes
    in a hidden slot; any other lowering that would yield is refused."""

    def __init__(self, cg, ins):
        self.cg, self.ins = cg, ins
        self.em, self.emi = cg.em, cg.emi
        self.resumes = len(cg.resume_labels)
        self.slot = None
        if written(ins) and ins.opcode in MAY_YIELD:
            var = MaskVar()
            cg.__dict__.setdefault("value_mask_vars", []).append(var)     # keeps id(var) unique
            self.slot = cg.plan.var_slot(cg.inst, var)
            cg.f.store("<32 x i1>", cg.em, cg.slot_ptr(self.slot), 8)

    def after(self) -> None:
        cg, ins = self.cg, self.ins
        if not written(ins):
            return
        em, emi = self.em, self.emi
        if len(cg.resume_labels) != self.resumes:
            if self.slot is None:
                cg.unsupported(ins, f"{ins.full_opcode} under value profiling (it may yield)")
                return
            em = cg.f.load("<32 x i1>", cg.slot_ptr(self.slot), 8)
            emi = cg.f.cast("bitcast", "<32 x i1>", em, "i32")
        profile_writes(cg, ins, em, emi)


def profile_writes(cg, ins, em: str, emi: str) -> None:
    """After the lowering of ``ins``: pass each destination register's lanes
    and the executing mask ``emi`` (i32) to the helper."""
    for k, value in written(ins):
        slot = cg.plan.slot(cg.inst, value)
        if slot is None:
            continue
        base = counter_block(cg, ins, k, value, slot.bits)
        record(cg, base, cg.load_slot(slot), slot.bits, emi)


def profile_barrier(cg, ins) -> None:
    """After a ``bar.red`` (a CTA barrier with a result): its result is
    written after the barrier released, to the active lanes (simt.barrier),
    so those are the executing lanes. A guarded ``bar.red`` is refused (its
    write ignores the guard)."""
    if not written(ins) or not cg.keep(ins):
        return
    if ins.guard is not None:
        cg.unsupported(ins, f"{ins.full_opcode} with a guard under value profiling")
        return
    profile_writes(cg, ins, cg.em, cg.emi)


def counter_block(cg, ins, k: int, value: ir.Value, bits: int) -> int:
    """The first counter of the block of destination ``k`` of ``ins`` in
    this instance (``cg.value_ctr[instr id]``: [(k, register, bits, base)])."""
    entries = cg.value_ctr.setdefault(cg.iid(ins), [])
    for kk, _, _, base in entries:
        if kk == k:
            return base
    base = cg.new_counters(block_size(bits))
    entries.append((k, value.reg or value.name, bits, base))
    cg.value_or.extend(range(base, base + 2 * words(bits)))
    return base


def record(cg, base: int, v: str, bits: int, emi: str) -> None:
    """Call the helper on the <32 x i{bits}> vector ``v``."""
    f = cg.f
    w = words(bits)
    name, text = helper(w)
    cg.helpers.setdefault(name, text)
    cg.decls.update(DECLS)
    cg.decls.add("declare i32 @llvm.ctpop.i32(i32)")
    parts, masks = [], []
    if w == 1:
        x = v if bits == 64 else f.cast("zext", vt(f"i{bits}"), v, vt("i64"))
        parts.append(x)
        masks.append(str((1 << bits) - 1 if bits < 64 else -1))        # i64 literal of the width mask
    else:
        for j in range(w):
            shifted = v if j == 0 else f.val(f"lshr {vt(f'i{bits}')} {v}, {splat(f'i{bits}', 64 * j)}")
            parts.append(f.cast("trunc", vt(f"i{bits}"), shifted, vt("i64")))
            masks.append("-1")
    args = [("ptr", "%cnt"), ("i64", str(base))] + [(vt("i64"), p) for p in parts] + \
        [("i64", m) for m in masks] + [("i32", emi)]
    f.call("void", name, args)
