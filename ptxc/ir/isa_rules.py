"""What the PTX ISA lets an instruction be written with: its types, the
types of its register operands and the forms of its operands.

The parser checks every instruction it builds (ptxc.frontend.function_builder,
the error at the operand) and the verifier checks them again
(ptxc.passes.verifier, for IR that passes made), so that an instruction ptxas
rejects is refused before anything runs it, with a one-line located error.
Three rules, each from the PTX ISA (release 9.0):

* **Instruction types** (chapter 9.7, the ``.type = { ... }`` line of each
  instruction's page): ``TYPES`` gives, per opcode, the types of each of its
  forms; a form may be selected by a modifier (``mul.wide``: .s16, .u16,
  .s32, .u32; ``mul.lo``/``.hi``: the integers; plain ``mul``: the floats).
  The sets are the ISA's, checked one by one against ptxas 13.0
  (tests/test_isa_rules.py, where ptxas is installed).
* **Operand types** (section 9.4, "Type Information for Instructions and
  Operands", table "Type Checking Rules"): a register read or written as
  instruction type .bN may have any N-bit type, .sN/.uN take .bN, .sN, .uN,
  .fN takes .bN, .fN; a predicate goes only where a predicate is expected.
  Each form names its operands' roles: ``T`` the instruction type, ``S`` its
  second type (set, slct), ``W`` twice its width (``mul.wide`` and
  ``mad.wide`` results), ``U`` a 32-bit integer (shift amounts, bit
  positions), ``P`` a predicate, ``-`` not checked. ld, st and cvt are not
  checked: their operands may be wider than the type (section 9.4.1); nor
  are special registers (PTX 1.x kernels read 16-bit ``%tid``).
* **Operand forms** (chapter 9.7, each page's syntax): the arithmetic,
  logic, comparison, conversion and move instructions read registers and
  immediates, and ``mov``/``cvta`` also variable names: never a memory
  operand ``[a]``, a vector (but ``mov``'s pack and unpack), a call list or
  a label; the sink ``_`` only in ``setp``'s predicate pair.

Opcodes without a row are not checked (their code generator refuses what it
cannot run, at the instruction: backends/llvm/codegen.py).
"""
from __future__ import annotations

from ptxc.ir import values as V
from ptxc.ir.printer import operand_text
from ptxc.ir.types import TYPE_SIZES

# ------------------------------------------------------------- type sets
INT = ("s16", "u16", "s32", "u32", "s64", "u64")
INT32_64 = ("s32", "u32", "s64", "u64")
SHORT = ("s16", "u16", "s32", "u32")                     # mul.wide / mad.wide
BITS = ("b16", "b32", "b64")
FLOAT = ("f16", "bf16", "f32", "f64", "f16x2", "bf16x2")
PACKED16 = ("s16x2", "u16x2")
F32X2 = ("f32x2",)                                       # sm_100: add/sub/mul/fma .f32x2
SIGNED = ("s16", "s32", "s64")
MOVE = ("pred", "b16", "s16", "u16", "b32", "s32", "u32", "f32", "b64", "s64", "u64", "f64", "b128")
MEMORY = ("b8", "s8", "u8", "b16", "s16", "u16", "b32", "s32", "u32", "f32", "b64", "s64", "u64",
          "f64", "b128")
COMPARE = BITS + INT + FLOAT
# type words beyond ptxc.ir.types.TYPE_SIZES that some instructions take
EXTRA_TYPES = {"f32x2": 8, "s16x2": 4, "u16x2": 4, "e2m1x2": 1, "e2m3x2": 2, "e3m2x2": 2,
               "ue8m0x2": 2, "e4m3x4": 4, "e5m2x4": 4, "e2m1x4": 2}
SIZES = {**TYPE_SIZES, **EXTRA_TYPES}


class Form:
    """One form of an instruction: the modifier that selects it (None: the
    form without any of its opcode's selecting modifiers), the types each of
    its type modifiers may be, and its operands' roles (destinations first;
    operands past the end take the last role)."""
    __slots__ = ("when", "types", "roles")

    def __init__(self, when, types, roles: str):
        self.when = (when,) if isinstance(when, str) else when
        self.types = tuple(frozenset(t) for t in types)
        self.roles = roles


def _f(when, types, roles: str) -> Form:
    return Form(when, (types,), roles)


TYPES: dict[str, tuple] = {
    # Integer and floating-point arithmetic (PTX ISA 9.7.1-9.7.4)
    "add": (_f("cc", INT32_64, "TTT"), _f(None, INT + FLOAT + PACKED16 + F32X2, "TTT")),
    "sub": (_f("cc", INT32_64, "TTT"), _f(None, INT + FLOAT + F32X2, "TTT")),
    "addc": (_f(None, INT, "TTT"),),
    "subc": (_f(None, INT, "TTT"),),
    "mul": (_f("wide", SHORT, "WTT"), _f(("lo", "hi"), INT, "TTT"), _f(None, FLOAT + F32X2, "TTT")),
    "mad": (_f("wide", SHORT, "WTTW"), _f(("lo", "hi"), INT, "TTTT"), _f(None, ("f32", "f64"), "TTTT")),
    "madc": (_f(None, INT, "TTTT"),),
    "mul24": (_f(None, ("s32", "u32"), "TTT"),),
    "mad24": (_f(None, ("s32", "u32"), "TTTT"),),
    "sad": (_f(None, INT, "TTTT"),),
    "div": (_f(None, INT + ("f32", "f64"), "TTT"),),
    "rem": (_f(None, INT, "TTT"),),
    "abs": (_f(None, SIGNED + FLOAT, "TT"),),
    "neg": (_f(None, SIGNED + FLOAT, "TT"),),
    "min": (_f(None, INT + FLOAT + PACKED16, "TTT"),),
    "max": (_f(None, INT + FLOAT + PACKED16, "TTT"),),
    "popc": (_f(None, ("b32", "b64"), "UT"),),
    "clz": (_f(None, ("b32", "b64"), "UT"),),
    "bfind": (_f(None, INT32_64, "UT"),),
    "brev": (_f(None, ("b32", "b64"), "TT"),),
    "bfe": (_f(None, INT32_64, "TTUU"),),
    "bfi": (_f(None, ("b32", "b64"), "TTTUU"),),
    "fns": (_f(None, ("b32",), "TTUU"),),
    "bmsk": (_f(None, ("b32",), "TUU"),),
    "szext": (_f(None, ("s32", "u32"), "TTU"),),
    "dp4a": (Form(None, (("s32", "u32"), ("s32", "u32")), "UUUU"),),
    "dp2a": (Form(None, (("s32", "u32"), ("s32", "u32")), "UUUU"),),
    "copysign": (_f(None, ("f32", "f64"), "TTT"),),
    "testp": (_f(None, ("f32", "f64"), "PT"),),
    "fma": (_f(None, FLOAT + F32X2, "TTTT"),),
    "rcp": (_f(None, ("f32", "f64"), "TT"),),
    "sqrt": (_f(None, ("f32", "f64"), "TT"),),
    "rsqrt": (_f(None, ("f32", "f64"), "TT"),),
    "sin": (_f(None, ("f32",), "TT"),),
    "cos": (_f(None, ("f32",), "TT"),),
    "lg2": (_f(None, ("f32",), "TT"),),
    "ex2": (_f(None, ("f16", "bf16", "f32", "f16x2", "bf16x2"), "TT"),),
    "tanh": (_f(None, ("f16", "bf16", "f32", "f16x2", "bf16x2"), "TT"),),
    # Comparison and selection (9.7.6, 9.7.7)
    "setp": (_f(None, COMPARE, "PTTP"),),
    "set": (Form(None, (("u32", "s32", "f32") + FLOAT, COMPARE), "TSSP"),),
    "selp": (_f(None, BITS + INT + ("f32", "f64"), "TTTP"),),
    "slct": (Form(None, (BITS + INT + ("f32", "f64"), ("s32", "f32")), "TTTS"),),
    # Logic and shift (9.7.8)
    "and": (_f(None, ("pred",) + BITS, "TTT"),),
    "or": (_f(None, ("pred",) + BITS, "TTT"),),
    "xor": (_f(None, ("pred",) + BITS, "TTT"),),
    "not": (_f(None, ("pred",) + BITS, "TT"),),
    "cnot": (_f(None, BITS, "TT"),),
    "lop3": (_f(None, ("b32",), "TTTT-P"),),
    "shf": (_f(None, ("b32",), "TTTU"),),
    "shl": (_f(None, BITS, "TTU"),),
    "shr": (_f(None, BITS + INT, "TTU"),),
    # Data movement and conversion (9.7.9)
    "prmt": (_f(None, ("b32",), "TTTT"),),
    "mov": (_f(None, MOVE, "TT"),),
    "cvta": (_f(None, ("u32", "u64"), "TT"),),
    "ld": (_f(None, MEMORY, "-"),),
    "ldu": (_f(None, MEMORY, "-"),),
    "st": (_f(None, MEMORY, "-"),),
}
# cvt: any numeric type on either side (its operands follow the relaxed rules
# of section 9.4.1); never .pred or an untyped .bN (cvt.pack: its own types)
CVT_NOT = frozenset(("pred", "b8", "b16", "b32", "b64", "b128"))
# instructions whose operands may be variable names (PTX ISA: mov, cvta)
TAKES_SYMBOL = frozenset(("mov", "cvta"))
# instructions with a predicate pair destination p|q
TAKES_PAIR = frozenset(("setp", "lop3"))
# instructions whose memory operands are not checked here (ld, st: the address)
MEMORY_OPS = frozenset(("ld", "ldu", "st"))


def isa_types(mods: tuple) -> list:
    """The type modifiers of an instruction (EXTRA_TYPES included), in written order."""
    return [m for m in mods if m in SIZES]


def _form(opcode: str, mods: tuple):
    forms = TYPES.get(opcode)
    if forms is None:
        return None, None
    for form in forms:
        if form.when is None or any(w in mods for w in form.when):
            return forms, form
    return forms, None


ORDER = ("pred", "b8", "b16", "b32", "b64", "b128", "s8", "u8", "s16", "u16", "s32", "u32",
         "s64", "u64", "f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "f32x2", "s16x2", "u16x2")


def _dotted(types) -> str:
    """The types of a set, in the order of ORDER (then any others)."""
    order = [t for t in ORDER if t in types] + sorted(t for t in types if t not in ORDER)
    return ", ".join("." + t for t in order)


def _form_name(opcode: str, forms, form) -> str:
    if form.when is not None:
        return opcode + "." + "/.".join(form.when)
    others = [w for f in forms if f.when for w in f.when]
    if not others:
        return opcode
    return f"{opcode} without ." + ", .".join(others[:-1]) + (" or ." if len(others) > 1 else "") + others[-1]


def check_types(opcode: str, mods: tuple) -> str | None:
    """None, or why the type modifiers of ``opcode.mods`` are not the ISA's."""
    full = ".".join((opcode,) + mods)
    if opcode == "cvt":
        if "pack" in mods:
            return None
        bad = [t for t in isa_types(mods) if t in CVT_NOT]
        if bad:
            return (f"'{full}': cvt converts between numeric types, not .{bad[0]} "
                    f"(PTX ISA: cvt)")
        return None
    forms, form = _form(opcode, mods)
    if forms is None or form is None:
        return None
    types = isa_types(mods)
    name = _form_name(opcode, forms, form)
    if not types:
        return f"'{full}': {name} needs a type ({_dotted(form.types[0])}) (PTX ISA: {opcode})"
    if len(types) != len(form.types):
        want = "one type" if len(form.types) == 1 else f"{len(form.types)} types"
        return f"'{full}': {name} takes {want}, got {len(types)} (PTX ISA: {opcode})"
    for t, allowed in zip(types, form.types):
        if t not in allowed:
            return f"'{full}': {name} takes {_dotted(allowed)}, not .{t} (PTX ISA: {opcode})"
    return None


# ---------------------------------------------------------- operand types
def compatible(want: str, have: str) -> bool:
    """May a register of type ``have`` be an operand of type ``want``? PTX ISA
    9.4, "Type Checking Rules": a .bN register goes anywhere an N-bit operand
    goes and an N-bit operand of type .bN takes any N-bit register; .sN and
    .uN take each other; .fN takes only .fN. The packed types (.f16x2,
    .bf16x2, .s16x2, .u16x2, .f32x2) and .bf16 live in .bN registers; a
    register declared .f16x2 also counts as a 32-bit integer (as ptxas 13.0
    has it)."""
    if want == "pred" or have == "pred":
        return want == have
    if SIZES.get(want) != SIZES.get(have):
        return False
    if want in _PACKED:
        return have[0] == "b" or (have == "f16x2" and want in ("f16x2", "s16x2", "u16x2"))
    if have == "f16x2":
        have = "u32"
    if want[0] == "b" or have[0] == "b":
        return True
    if want[0] in "su":
        return have[0] in "su"
    return have == want


_PACKED = frozenset(("f16x2", "bf16x2", "s16x2", "u16x2", "f32x2", "bf16"))


def _role_type(role: str, types: list) -> str | None:
    if role == "T":
        return types[0]
    if role == "S":
        return types[1] if len(types) > 1 else None
    if role == "W":
        t = types[0]
        return t[0] + str(int(t[1:]) * 2)
    if role == "U":
        return "u32"
    if role == "P":
        return "pred"
    return None


def _accepts(want: str) -> str:
    size = SIZES[want] * 8
    if want == "pred":
        return "a .pred register"
    if want in _PACKED:
        return f"a .b{size} register"
    if want[0] == "b":
        return f"a {size}-bit register"
    if want[0] in "su":
        return f"a .b{size}, .s{size} or .u{size} register"
    return f"a .b{size} or .{want} register"


def check_operand_types(opcode: str, mods: tuple, operands: list,
                        skip: frozenset | set = frozenset()) -> tuple | None:
    """None, or (message, operand index) for the first register operand of a
    type the instruction does not take (registers named in ``skip`` are not
    checked)."""
    forms, form = _form(opcode, mods)
    if form is None or form.roles == "-":
        return None
    types = isa_types(mods)
    if len(types) != len(form.types):
        return None
    full = ".".join((opcode,) + mods)
    roles = form.roles
    for k, op in enumerate(operands):
        role = roles[k] if k < len(roles) else roles[-1]
        want = _role_type(role, types)
        if want is None:
            continue
        for v in _registers(op):
            if not compatible(want, v.type) and (v.reg or v.name) not in skip:
                return (f"'{full}': operand {k + 1} ({v.reg or v.name}) is .{v.type}; it must be "
                        f"{_accepts(want)} (PTX ISA 9.4, Type Checking Rules)", k)
    return None


def _registers(op):
    if isinstance(op, V.SpecialReg):
        return ()
    if isinstance(op, V.Value):
        return (op,)
    if isinstance(op, V.Not):
        return (op.value,)
    if isinstance(op, V.Pair):
        return tuple(x for x in (op.first, op.second) if isinstance(x, V.Value))
    return ()


# ---------------------------------------------------------- operand forms
def check_operand_forms(opcode: str, mods: tuple, ndst: int, operands: list) -> tuple | None:
    """None, or (message, operand index) for the first operand whose form the
    instruction does not take."""
    if opcode not in TYPES or opcode in MEMORY_OPS:
        return None
    full = ".".join((opcode,) + mods)
    for k, op in enumerate(operands):
        cls = op.__class__
        what = None
        if cls is V.Addr or cls is V.Bracket:
            what = "cannot be a memory address"
        elif cls is V.Vec and opcode != "mov":
            what = "cannot be a vector"
        elif cls is V.ParenList:
            what = "cannot be a parenthesised list"
        elif cls is V.LabelRef:
            what = "cannot be a label"
        elif cls is V.Pair and (opcode not in TAKES_PAIR or k >= ndst):
            what = "cannot be a predicate pair"
        elif cls is V.Sym and opcode not in TAKES_SYMBOL:
            what = "must be a register or a constant, not a variable name"
        elif cls is V.Sink and k < ndst:
            what = "cannot be the sink '_'"
        if what is not None:
            return f"'{full}': operand {k + 1} ({_text(op)}) {what} (PTX ISA: {opcode})", k
    return None


def _text(op) -> str:
    text = operand_text(op, lambda v: v.reg or v.name)
    return text if len(text) <= 40 else text[:40] + "..."


CHECKED = frozenset(TYPES) | {"cvt"}      # the opcodes these rules know


def check_instr(opcode: str, mods: tuple, ndst: int, operands: list,
                skip: frozenset | set = frozenset()) -> tuple | None:
    """None, or (message, operand index or None) for the first rule the
    instruction breaks: its types, its operands' forms, their types
    (``operands``: destinations first; ``skip``: register names whose type
    is not checked)."""
    if opcode not in CHECKED:
        return None
    message = check_types(opcode, mods)
    if message is not None:
        return message, None
    return (check_operand_forms(opcode, mods, ndst, operands)
            or check_operand_types(opcode, mods, operands, skip))


def check(ins, skip: frozenset | set = frozenset()) -> tuple | None:
    """check_instr for an ir.Instr."""
    return check_instr(ins.opcode, ins.mods, len(ins.dsts), list(ins.dsts) + list(ins.srcs), skip)
