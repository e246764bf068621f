"""The time cost of one PTX instruction (Luo & Suda 2011, Table 1) and which
instructions are memory access instructions (section 3.2).

Luo & Suda measure "the time cost of each PTX instruction" with pairs of
micro-benchmark kernels that differ by one instruction repeated 10,000
times (section 3.1) and print the costs of part of PTX in Table 1 (GTX 260,
GPU clocks), one row per operation and one column per operand kind:

    int_const  int_reg  float_const  float_reg
    add sub mul div neg min max and or xor not;   ld/st: 200

A computation task's cost c_i is the sum of its instructions' costs, a
memory access task's cost m_i the sum of its instructions' ``cost.ld_st``
(section 3.5); P (section 3.4) divides the computation instructions' cost
by all instructions' cost. The parameters are named in
``ptxc/predict/params.py`` (docs/predict.md, "Instruction costs"):

* ``cost.<row>.<kind>``: a Table 1 row. The row of an instruction is its
  opcode, or the row PTX spells as a separate opcode of the same operation:
  ``addc`` -> add, ``subc`` -> sub, ``mul24`` -> mul, ``rem`` -> div (the
  remainder comes out of the same division), ``abs`` and ``copysign`` ->
  neg (a sign operation on one operand). The kind: ``float_*`` when the
  instruction's type is a floating-point type (``.f16 .bf16 .f32 .f64``,
  packed forms included), ``int_*`` otherwise (integers, ``.b*``, ``.pred``);
  ``*_const`` when a source operand is an immediate or a symbol's address,
  ``*_reg`` when every source is a register.
* fallbacks, for opcodes Table 1 does not list (one parameter per group;
  every GPU model gives each a value): ``cost.mad.<kind>`` (mad, mad24,
  madc, fma, sad, dp2a, dp4a), ``cost.setp.<kind>`` (setp, set, selp, slct,
  testp, isspacep), ``cost.shift.int_const|int_reg`` (shifts and bit-field
  operations), ``cost.special`` (rcp sqrt rsqrt sin cos lg2 ex2 tanh),
  ``cost.cvt``, ``cost.mov`` (mov, cvta, mapa, getctarank), ``cost.branch``
  (bra brx call ret exit trap brkpt), ``cost.barrier`` (bar, barrier,
  membar, fence, griddepcontrol, mbarrier, nanosleep), ``cost.warp`` (shfl
  vote match redux activemask elect), ``cost.shared`` (shared-memory
  loads, stores, atomics, ldmatrix, stmatrix), ``cost.const`` (.const and
  .param loads), ``cost.tensor`` (mma, wmma, wgmma, tcgen05) and
  ``cost.other`` (everything else: prefetch, video instructions, ...).

**Memory access instructions** (section 3.2's memory access tasks): the
instructions that wait on off-chip device memory, the memory whose latency
(t_mem, hundreds of clocks: section 2.1) and bandwidth (GPU_bwt) eq. (1)-(2)
model: ``ld``, ``ldu``, ``st``, ``atom``, ``red`` in ``.global``,
``.local`` (local memory lives in device memory) or generic space (the
address may be global; ptxc cannot tell statically), ``cp``/``cp.async``
(they read global memory), texture and surface fetches (``tex``, ``tld4``,
``suld``, ``sust``, ``sured``: device memory through the texture path) and
``wmma.load``/``wmma.store`` outside shared memory. Shared memory is on
the SM (section 2.1: "like a user-managed cache"), .const and .param reads
are served by on-chip caches: they are computation instructions with the
fallback costs ``cost.shared`` and ``cost.const``.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError
from ptxc.ir.types import FLOAT_TYPES, TYPE_SIZES, instr_types

TABLE1_ROWS = ("add", "sub", "mul", "div", "neg", "min", "max", "and", "or", "xor", "not")
KINDS = ("int_const", "int_reg", "float_const", "float_reg")
LD_ST = "cost.ld_st"

# opcode -> its Table 1 row (module doc)
ROW = {r: r for r in TABLE1_ROWS}
ROW.update({"addc": "add", "subc": "sub", "mul24": "mul", "rem": "div", "abs": "neg",
            "copysign": "neg"})

# opcode -> fallback group; groups with a kind are "cost.<group>.<kind>"
KINDED = {"mad": ("mad", "mad24", "madc", "fma", "sad", "dp2a", "dp4a"),
          "setp": ("setp", "set", "selp", "slct", "testp", "isspacep"),
          "shift": ("shl", "shr", "shf", "bfe", "bfi", "bfind", "brev", "clz", "popc", "prmt",
                    "bmsk", "fns", "szext", "lop3", "cnot", "vshl", "vshr")}
SINGLE = {"special": ("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh"),
          "cvt": ("cvt", "cvt.pack"),
          "mov": ("mov", "cvta", "mapa", "getctarank"),
          "branch": ("bra", "brx", "call", "ret", "exit", "trap", "brkpt"),
          "barrier": ("bar", "barrier", "membar", "fence", "griddepcontrol", "mbarrier",
                      "nanosleep"),
          "warp": ("shfl", "vote", "match", "redux", "activemask", "elect"),
          "tensor": ("mma", "wmma", "wgmma", "tcgen05")}
GROUP = {op: g for g, ops in {**KINDED, **SINGLE}.items() for op in ops}

# every parameter name a GPU model must give (docs/predict.md)
TABLE1_PARAMS = tuple(f"cost.{r}.{k}" for r in TABLE1_ROWS for k in KINDS)
FALLBACK_PARAMS = (tuple(f"cost.{g}.{k}" for g in ("mad", "setp") for k in KINDS)
                   + ("cost.shift.int_const", "cost.shift.int_reg")
                   + tuple(f"cost.{g}" for g in ("special", "cvt", "mov", "branch", "barrier",
                                                 "warp", "shared", "const", "tensor", "other")))

MEMORY_OPS = ("ld", "ldu", "st", "atom", "red")
DEVICE_SPACES = ("global", "local", "generic")
TEXTURE_OPS = ("tex", "tld4", "suld", "sust", "sured")
SPACES = ("global", "shared", "local", "const", "param")


def space(ins) -> str:
    """The instruction's state space ('generic' when it names none)."""
    for m in ins.mods:
        base = m.split("::")[0]
        if base in SPACES:
            return base
    return "generic"


def is_memory_access(ins) -> bool:
    """Does ``ins`` belong to a memory access task (section 3.2; module doc)?"""
    op = ins.opcode
    if op in MEMORY_OPS:
        return space(ins) in DEVICE_SPACES
    if op in ("cp", "cp.async") or op in TEXTURE_OPS:
        return True
    if op == "wmma":
        return ("load" in ins.mods or "store" in ins.mods) and space(ins) != "shared"
    return False


def operand_kind(ins) -> str:
    """int_const / int_reg / float_const / float_reg (module doc)."""
    types = instr_types(ins.mods)
    num = "float" if types and types[0] in FLOAT_TYPES else "int"
    const = any(isinstance(op, (ir.Imm, ir.Sym)) for op in ins.srcs)
    return f"{num}_{'const' if const else 'reg'}"


def cost_name(ins) -> str:
    """The parameter that gives the time cost of computation instruction ``ins``."""
    op = ins.opcode
    if op in MEMORY_OPS:
        return "cost.shared" if space(ins) == "shared" else "cost.const"
    if op in ("ldmatrix", "stmatrix") or (op == "wmma" and space(ins) == "shared"
                                          and ("load" in ins.mods or "store" in ins.mods)):
        return "cost.shared"
    kind = operand_kind(ins)
    if op in ROW:
        return f"cost.{ROW[op]}.{kind}"
    group = GROUP.get(op)
    if group in KINDED:
        if group == "shift":
            kind = "int_" + kind.split("_")[1]
        return f"cost.{group}.{kind}"
    return f"cost.{group}" if group else "cost.other"


def param(p, name: str) -> float:
    """The value of parameter ``name`` of ``p`` (a ModelParams), or one PtxcError."""
    v = p.values.get(name)
    if v is None:
        raise PtxcError(f"GPU model '{p.gpu}' has no value for the model parameter '{name}' "
                        "(docs/predict.md, 'Instruction costs')")
    return v


def instruction_cost(ins, p) -> float:
    """The Table 1 time cost of one PTX instruction, GPU clocks (module doc):
    ``cost.ld_st`` for a memory access instruction."""
    return param(p, LD_ST if is_memory_access(ins) else cost_name(ins))


def access_bytes(ins) -> int:
    """D_mem of eq. (1): the bytes one thread reads or writes: element size
    x vector width (``.v2 .v4 .v8``); four elements for a texture fetch (it
    returns a vector of 4); ``cp.async``'s copy size operand."""
    if ins.opcode in ("cp", "cp.async"):
        sizes = [op.value for op in ins.srcs if isinstance(op, ir.Imm) and op.kind == "int"]
        return int(sizes[0]) if sizes else 16
    types = instr_types(ins.mods)
    size = TYPE_SIZES[types[0]] if types else 4
    width = 4 if ins.opcode in ("tex", "tld4") else 1
    for m in ins.mods:
        if m in ("v2", "v4", "v8"):
            width = int(m[1])
    return size * width
