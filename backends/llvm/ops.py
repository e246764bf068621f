"""The opcode -> lowering table of the code generator (one entry per base opcode).

Each handler is ``handler(codegen, instr)``; it reads operands with
``codegen.read`` and writes results with ``codegen.write`` (masked by the
executing lanes). An opcode missing here compiles to a run-time
"not supported yet" error at that instruction.
"""
from __future__ import annotations

from . import ops_float, ops_int, ops_mbarrier, ops_mem, ops_mma, ops_move, ops_tex, ops_warp

OPS = {}
for _table in (ops_int.OPS, ops_float.OPS, ops_move.OPS, ops_mem.OPS, ops_warp.OPS,
               ops_mbarrier.OPS, ops_mma.OPS, ops_tex.OPS):
    OPS.update(_table)
