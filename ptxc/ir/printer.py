"""The textual IR printer: deterministic output (same input, same bytes) for FileCheck.

Format (see docs/ir.md)::

    ; ptxc ir: module 'k.ptx' .version 9.0 .target sm_90 .address_size 64
    .global .align 4 .b8 table[16];

    .entry kern(.param .u64 kern_param_0) .reqntid 256, 1, 1
    {
    bb0:                                   // preds: none
        ld.param.u64 %rd1, [kern_param_0];
        @%p1 bra $L__BB0_2;                // succs: $L__BB0_2, bb1
    $L__BB0_2:                             // preds: bb0, bb3
        phi.b32 %r5.1, [%r5, bb0], [%r5.2, bb3];
        @%p2 add.s32 %r6.1, %r6, 1;        // old: %r6
    }

SSA names derive from register names (%f9, %f9.1, ...). A guarded definition
lists the old values it keeps where the guard is false. When the slice pass
has run, kept instructions start with '+' and the others with '-'.
"""
from __future__ import annotations

from ptxc.ir import core as ir
from ptxc.ir.decl_text import function_header, variable_decl


def operand_text(op, name_of, whole_vectors: bool = False) -> str:
    """One operand as PTX text; ``name_of(value)`` names registers.

    With whole_vectors, a vector register used whole is written by its name.
    """
    if isinstance(op, ir.Value):
        return name_of(op)
    if whole_vectors and isinstance(op, ir.Vec) and op.reg is not None:
        return op.reg
    if isinstance(op, ir.Imm):
        return op.text
    if isinstance(op, ir.Sym):
        return f"{op.name}+{op.offset}" if op.offset else op.name
    if isinstance(op, ir.Addr):
        return "[" + address_text(op, name_of, whole_vectors) + "]"
    if isinstance(op, ir.Vec):
        return "{" + ", ".join(operand_text(i, name_of, whole_vectors) for i in op.items) + "}"
    if isinstance(op, ir.Pair):
        return operand_text(op.first, name_of) + "|" + operand_text(op.second, name_of)
    if isinstance(op, ir.Not):
        return "!" + name_of(op.value)
    if isinstance(op, ir.RegOffset):
        return f"{name_of(op.value)}+{op.offset}"
    if isinstance(op, ir.Sink):
        return "_"
    if isinstance(op, ir.LabelRef):
        return op.name
    if isinstance(op, ir.ParenList):
        return "(" + ", ".join(operand_text(i, name_of, whole_vectors) for i in op.items) + ")"
    if isinstance(op, ir.Bracket):
        return ", ".join(operand_text(i, name_of, whole_vectors) for i in op.items)
    raise TypeError(f"unknown operand {op!r}")


def address_text(addr: ir.Addr, name_of, whole_vectors: bool = False) -> str:
    base = addr.base
    if base is None:
        return str(addr.offset)
    text = operand_text(base, name_of, whole_vectors)
    return f"{text}+{addr.offset}" if addr.offset else text


def instr_text(ins: ir.Instr, name_of, whole_vectors: bool = False) -> str:
    """``[@[!]p ]opcode.mods operands;`` with registers named by name_of."""
    guard = ""
    if ins.guard is not None:
        guard = "@" + ("!" if ins.guard_neg else "") + name_of(ins.guard) + " "
    ops = [operand_text(o, name_of, whole_vectors) for o in ins.dsts + ins.srcs]
    head = guard + ins.full_opcode
    return head + (" " + ", ".join(ops) if ops else "") + ";"


def ssa_name(v: ir.Value) -> str:
    return v.name


def phi_text(ins: ir.Instr) -> str:
    incoming = ", ".join(f"[{v.name}, {b.name}]" for v, b in zip(ins.srcs, ins.phi_blocks))
    return f"phi.{ins.results[0].type} {ins.results[0].name}, {incoming};"


def _comment(text: str, note: str, width: int = 44) -> str:
    return f"{text:<{width}} // {note}" if note else text


def print_instr(ins: ir.Instr, sliced: bool) -> str:
    text = phi_text(ins) if ins.is_phi else instr_text(ins, ssa_name)
    notes = []
    if ins.prior:
        notes.append("old: " + ", ".join(v.name for v in ins.prior))
    blk = ins.block
    if blk is not None and ins is blk.instrs[-1] and blk.succs and ins.info.terminator:
        notes.append("succs: " + ", ".join(s.name for s in blk.succs))
    mark = ("+ " if ins.attrs.get("slice") else "- ") if sliced else "  "
    return "  " + mark + _comment(text, "; ".join(notes))


def print_block(blk: ir.Block, sliced: bool) -> list[str]:
    preds = ", ".join(p.name for p in blk.preds) or "none"
    lines = [_comment(f"{blk.name}:", f"preds: {preds}", 46)]
    lines += [print_instr(i, sliced) for i in blk.instrs]
    last = blk.instrs[-1] if blk.instrs else None
    if last is None or not last.info.terminator:
        target = blk.fallthrough.name if blk.fallthrough else "return"
        lines.append(f"    // falls through to {target}")
    return lines


def variable_text(v: ir.Variable) -> str:
    return variable_decl(v)


def signature_text(fn: ir.Function) -> str:
    return function_header(fn)


def print_function(fn: ir.Function) -> str:
    lines = [signature_text(fn)]
    if fn.is_decl:
        return lines[0] + ";\n"
    lines.append("{")
    sliced = bool(fn.attrs.get("sliced"))
    for blk in fn.blocks:
        lines += print_block(blk, sliced)
    lines.append("}")
    return "\n".join(lines) + "\n"


def print_module(m: ir.Module) -> str:
    header = (f"; ptxc ir: module '{m.filename}' .version {m.version} "
              f".target {', '.join(m.target)}"
              + (f" .address_size {m.address_size}" if m.address_size else ""))
    out = [header]
    for item in m.items:
        if isinstance(item, ir.Variable):
            out.append(variable_text(item))
        elif isinstance(item, ir.Function):
            out.append("\n" + print_function(item).rstrip("\n"))
    return "\n".join(out) + "\n"
