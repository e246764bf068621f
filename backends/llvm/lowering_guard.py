"""Where each instruction's code starts, and the guard around its lowering
(a mixin of codegen.KernelCodegen).

* ``start_instr`` cuts the LLVM block (an unconditional branch to a new
  block that only it reaches) before an instruction once the block holds
  more than BLOCK_LINES lines. LLVM's instruction selection (SelectionDAG,
  which all of ptxc's vector code goes through, even at O0) takes time that
  grows faster than the size of a block: LLVM took 11.8 s for 8,000
  ``add.f16x2`` in one block and 31.5 s for 16,000; in blocks of at most
  BLOCK_LINES lines 6.6 s and 13.1 s (bench/compile_scaling.py). The new
  block is dominated by the old one, so no cached value is dropped.
* ``lower`` runs a lowering (ops/). A form ptxc cannot run becomes a
  run-time "not supported yet" error at that instruction, raised only if it
  executes: whatever the lowering raised, a PtxcError naming what is missing
  or any exception of a form it does not handle (a KeyError of a type it has
  no table entry for ...), the code it emitted is dropped and the message
  names the instruction as written (``add.s32 %r2, %r1, 7 (this form of
  add)``), never Python's text.
* ``instr_of_line`` maps a line of the generated LLVM IR back to the PTX
  instruction whose code holds it (guards.invalid_ir_error: LLVM refusing
  the IR is reported at that instruction).
"""
from __future__ import annotations

from bisect import bisect_right

from ptxc.errors import PtxcError
from ptxc.ir.printer import operand_text

BLOCK_LINES = 400          # LLVM IR lines after which a straight run is cut into a new block


class LoweringGuard:
    """Needs ``f`` (irtext.Fn), ``vcache``, the masks ``mv``, ``m``, ``em``,
    ``emi``, ``unsupported`` and the lists ``instr_at`` and ``instr_of``."""

    def start_instr(self, ins) -> None:
        """Before the code of ``ins``: cut a long block; remember where it starts."""
        f = self.f
        if len(f.lines) - f.label_at > BLOCK_LINES:
            split = f.fresh_label("split")
            f.br(split)
            f.label(split, dominated=True)
        self.instr_at.append(len(f.lines))
        self.instr_of.append(ins)

    def lower(self, ins, fn, *args) -> None:
        """Run a lowering; a form ptxc cannot run becomes a run-time
        'not supported yet' error at this instruction (only if executed).
        Whatever the lowering raised (a PtxcError naming what is missing, or
        any exception of a form it does not handle), the code it emitted is
        dropped and the message names the instruction as written, never
        Python's text."""
        f = self.f
        mark = (len(f.lines), f.cur_label, f.label_at, self.mv, self.m, self.em, self.emi)
        try:
            fn(self, *args)
        except PtxcError as e:
            self._rewind(mark)
            self.unsupported(ins, f"{ins.full_opcode} ({e.message})")
        except Exception:     # noqa: BLE001 - a form the lowering does not handle
            self._rewind(mark)
            self.unsupported(ins, f"{self.shown(ins)} (this form of {ins.opcode})")

    @staticmethod
    def shown(ins) -> str:
        """``opcode.mods operands`` as written (registers by name), at most 80 characters."""
        ops = ", ".join(operand_text(o, lambda v: v.reg or v.name) for o in ins.dsts + ins.srcs)
        text = f"{ins.full_opcode} {ops}".strip()
        return text if len(text) <= 80 else text[:77] + "..."

    def _rewind(self, mark) -> None:
        """Drop what a failed lowering emitted; values cached since are forgotten."""
        f = self.f
        n, f.cur_label, f.label_at, self.mv, self.m, self.em, self.emi = mark
        del f.lines[n:]
        self.vcache.clear()

    def instr_of_line(self, line: str):
        """The PTX instruction whose code holds the LLVM IR line ``line``
        (stripped), or None: how an LLVM error is placed in the PTX."""
        lines = self.f.lines
        i = next((k for k, text in enumerate(lines) if text.strip() == line), None)
        if i is None:
            return None
        if getattr(self, "_text", None) is not None and i > self.dispatch_at:
            i -= 1                          # the switch inserted by _assemble
        k = bisect_right(self.instr_at, i) - 1
        return self.instr_of[k] if k >= 0 else None
