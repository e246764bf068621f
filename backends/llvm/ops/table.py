"""The opcode -> lowering table of the code generator (one entry per base opcode).

Each handler is ``handler(codegen, instr)``; it reads operands with
``codegen.read`` and writes results with ``codegen.write`` (masked by the
executing lanes). An opcode missing here compiles to a run-time
"not supported yet" error at that instruction. Each family module has an
``OPS`` of its own opcodes (no opcode is in two); this is their union.
"""
from __future__ import annotations

from ptxc.backends.llvm.ops import atomics as ops_atomics, bit_ops as ops_bit
from ptxc.backends.llvm.ops import convert as ops_convert, float_arith as ops_float
from ptxc.backends.llvm.ops import int_arith as ops_int, ldmatrix as ops_ldmatrix
from ptxc.backends.llvm.ops import mbarrier as ops_mbarrier, memory as ops_mem, mma as ops_mma
from ptxc.backends.llvm.ops import move as ops_move, texture as ops_tex, warp as ops_warp

OPS = {}
for _table in (ops_int.OPS, ops_bit.OPS, ops_float.OPS, ops_move.OPS, ops_convert.OPS,
               ops_mem.OPS, ops_atomics.OPS, ops_warp.OPS, ops_mbarrier.OPS, ops_mma.OPS,
               ops_ldmatrix.OPS, ops_tex.OPS):
    OPS.update(_table)
