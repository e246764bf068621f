"""What a memory instruction accesses: its state space, element type and
vector width, its lane addresses, its atomic form (PTX ISA 5 state spaces,
9.7.9 ld/st/atom/red/cp.async).

The lowering of an access (memory.py, atomics.py, mma.py, mbarrier.py) and
the instruments that look at the same access (mem_count.py counts it,
fault_check.py checks it without performing it, check_hooks.py hands its
addresses to racecheck, inject_ir.py sizes a stored value) read the
instruction through these helpers, so they agree on what it accesses. The
module sits below both: it imports no lowering and no instrument (the
instruments importing memory.py, which calls them, was an import cycle).
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.ops.common import types_of
from ptxc.backends.llvm.plan import DYNAMIC, Slot
from ptxc.backends.llvm.values import bits_of, is_signed


SPACES = ("global", "shared", "local", "const", "param", "generic")


def K64(v) -> str:
    return splat("i64", v)


def space_of(ins) -> str:
    for m in ins.mods:
        base = m.split("::")[0]
        if base in SPACES:
            return base
    return "generic"


def vec_width(ins) -> int:
    for m in ins.mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    return 1


def mem_type(ins) -> str:
    ts = types_of(ins)
    return ts[-1] if ts else "b32"


def address(cg, addr_op, space: str):
    """(i64 lane addresses, static Placed or None) of an address operand."""
    if isinstance(addr_op, ir.Addr):
        base, off = addr_op.base, addr_op.offset
    else:
        base, off = addr_op, 0
    if isinstance(base, ir.Sym):
        p = cg.plan.resolve(cg.inst, cg.cur, base.name)
        return None, (p, off + base.offset)
    if base is None:
        return splat("i64", off), None
    bits = 64 if (base.type and bits_of_reg(base) == 64) else 32
    v = cg.read(base, "u64" if bits == 64 else "u32")
    if bits == 32:
        # A 32-bit address wraps at 2^32 (nvcc emits [%r+64] with %r = -60).
        if off:
            off32 = (off + (1 << 31)) % (1 << 32) - (1 << 31)
            v = cg.f.val(f"add <32 x i32> {v}, {splat('i32', off32)}")
        return cg.f.cast("zext", "<32 x i32>", v, "<32 x i64>"), None
    if off:
        v = cg.f.val(f"add <32 x i64> {v}, {K64(off)}")
    return v, None


def bits_of_reg(v) -> int:
    try:
        return bits_of(v.type)
    except KeyError:
        return 64


def static_address(cg, placed, off: int) -> int:
    """The space address of a placed symbol + offset."""
    base = cg.plan.dyn_shared_base if placed.offset == DYNAMIC else placed.offset
    return base + off


def static_vector(cg, placed, off: int) -> str:
    """The lane addresses (<32 x i64>) of a placed symbol + offset: a
    constant, or for a framed instance's .local variable its address in the
    current frame (ops/call_frames.py)."""
    if placed.frame is not None:
        return frame_address(cg, placed, off)
    return K64(static_address(cg, placed, off))


def fp_slot(cg, inst):
    """The frame pointer of a framed instance: where its .local variables
    start in the thread's local stack (an offset past the static locals)."""
    return lane_slot(cg, (inst.id, "fp"))


def lane_slot(cg, key):
    """A per-lane u32 slot of the executor (not a PTX register), zero when a warp starts."""
    plan = cg.plan
    s = plan.slots.get(key)
    if s is None:
        s = plan.slots[key] = Slot(len(plan.slots), "u32", 32)
        plan.slot_list.append(s)
        cg.zero_slots.append(s)
    return s


def frame_address(cg, placed, off: int) -> str:
    """The local-space addresses (<32 x i64>) of a framed instance's
    ``.local`` variable + ``off``: static locals, then the frame."""
    f = cg.f
    fp = cg.load_slot(fp_slot(cg, placed.frame))
    a = f.cast("zext", "<32 x i32>", fp, "<32 x i64>")
    return f.val(f"add <32 x i64> {a}, {splat('i64', cg.plan.local_size + placed.offset + off)}")


def spill_addr(cg, addr: str) -> str:
    """``addr`` (<32 x i64>) stored in the address temporary; returns it."""
    f = cg.f
    if not hasattr(cg, "resolve_tmp"):
        cg.resolve_tmp = (f.alloca("<32 x i64>", "raddr", 64), f.alloca("<32 x ptr>", "rptr", 64))
    f.store("<32 x i64>", addr, cg.resolve_tmp[0], 64)
    return cg.resolve_tmp[0]


RMW = {"add": "add", "and": "and", "or": "or", "xor": "xor", "exch": "xchg",
       "inc": "uinc_wrap", "dec": "udec_wrap"}


def atomic_form(ins):
    """(operation, type, LLVM atomicrmw name or 'cas') of an atom/red that
    ptxc runs, or None for a form that is 'not supported yet'."""
    t = mem_type(ins)
    op = next((m for m in ins.mods if m in ("add", "min", "max", "inc", "dec", "and", "or",
                                             "xor", "exch", "cas")), None)
    if op is None or t in ("f16", "bf16", "f16x2", "bf16x2", "b128") or vec_width(ins) > 1:
        return None
    rmw = rmw_name(op, t)
    return None if rmw is None else (op, t, rmw)


def rmw_name(op: str, t: str) -> str | None:
    flt = t in ("f32", "f64")
    if op == "add":
        return "fadd" if flt else "add"
    if op in ("min", "max"):
        if flt:
            return "f" + op
        return op if is_signed(t) else "u" + op
    if op == "cas":
        return "cas"
    if flt and op != "exch":
        return None
    return RMW.get(op)


def cp_src_size(cg, ins, n: int):
    """The bytes each lane copies from its source (<32 x i32>), or None when
    every lane copies all ``n`` (no operand, or an immediate >= cp-size). The
    fourth operand is src-size, or the ignore-src predicate (``p`` / ``!p``:
    true copies zeros only)."""
    if len(ins.srcs) <= 3:
        return None
    op = ins.srcs[3]
    if isinstance(op, ir.Imm):
        return None if int(op.value) >= n else splat("i32", int(op.value))
    negated = isinstance(op, ir.Not)
    if negated or getattr(op, "type", None) == "pred":
        ignore = cg.read(op.value if negated else op, "pred")
        zero, full = "zeroinitializer", splat("i32", n)
        a, b = (full, zero) if negated else (zero, full)
        return cg.f.val(f"select <32 x i1> {ignore}, <32 x i32> {a}, <32 x i32> {b}")
    return cg.read(op, "u32")
