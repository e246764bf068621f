"""The IR: modules, functions, basic blocks and instructions in SSA form, and
what every layer above needs to read, print and transform them.

    core          the IR classes: Module > Function > Block > Instr, declarations
    values        values (SSA definitions) and the other operands
    types         PTX scalar types: sizes, kinds, an instruction's type
    opcodes       the opcode table: operand roles, effects, FLOP classes
    isa_rules     the PTX ISA's rules per instruction: types, operand types and forms
    printer       the textual IR (docs/ir.md), deterministic for FileCheck
    decl_text     declarations as PTX text (shared by the printer and the PTX emitter)
    passmanager   what a pass and an analysis are, and the analysis cache
    source_lines  the CUDA file and line (and inlining chain) of every instruction
    names         the one naming rule for kernels and parameters (demangled, base, PTX names)
    demangle      an Itanium C++ ABI demangler for kernel and function names (no c++filt)
    numba_names   numba-cuda's kernel names as Python names (no ABI tags, numba's types)
    dwarf_names   the source names of kernel parameters, from the DWARF of -G builds
    address_size  a module's address width (.address_size, or guessed from its accesses)
    call_targets  what an indirect call may enter: address-taken functions, their
                  addresses, the call's .callprototype

``from ptxc import ir`` gives the IR classes (``ir.Module``, ``ir.Instr`` ...):
this package exports the names of ``core``.
"""
from ptxc.ir.core import (COMPOSITE, SINK, Addr, Argument, Block, Bracket, Function, Imm, Instr,
                          LabelRef, Module, Not, Pair, ParenList, RegDecl, RegOffset, Result,
                          Scope, Sink, SpecialReg, Sym, Undef, Value, Variable, Vec, collect_uses,
                          map_values, rebuild_uses, values_in)

__all__ = ["COMPOSITE", "SINK", "Addr", "Argument", "Block", "Bracket", "Function", "Imm", "Instr",
           "LabelRef", "Module", "Not", "Pair", "ParenList", "RegDecl", "RegOffset", "Result",
           "Scope", "Sink", "SpecialReg", "Sym", "Undef", "Value", "Variable", "Vec",
           "collect_uses", "map_values", "rebuild_uses", "values_in"]
