"""The SSA verifier: a hand-built SSA function, then one broken invariant per test."""
import pytest

from ptxc.errors import PtxcError, SrcLoc
from ptxc.ir import Block, Function, Imm, Instr, LabelRef, Module, Result, Value, rebuild_uses
from ptxc.ir.opcodes import lookup
from ptxc.passes.pipeline import run_pipeline
from ptxc.passes.verifier import verify_function, verify_module


class Builder:
    """Blocks a, b, c, d of a diamond in SSA form (see ``diamond``)."""

    def __init__(self):
        self.fn = Function("k", True)
        self.line = 0

    def block(self, name: str) -> Block:
        b = Block(name, name)
        b.index, b.function = len(self.fn.blocks), self.fn
        self.fn.blocks.append(b)
        return b

    def ins(self, b, opcode, mods=(), srcs=(), rtype=None, guard=None, at=None) -> Instr:
        self.line += 1
        i = Instr(opcode, mods, [], list(srcs), guard, info=lookup(opcode),
                  loc=SrcLoc("v.ptx", self.line))
        if rtype:
            r = Result(rtype, f"%v{self.line}", f"%v{self.line}", i, 0)
            i.results, i.dsts = [r], [r]
        i.block = b
        b.instrs.insert(len(b.instrs) if at is None else at, i)
        return i


def edge(a, b):
    a.succs.append(b)
    b.preds.append(a)


def diamond():
    """a: r1 = mov 1; p = setp r1 < 5; @p bra c      (falls through to b)
       b: r2 = add r1, 1; bra d
       c: r3 = add r1, 2                            (falls through to d)
       d: r4 = phi [r2, b], [r3, c]; ret"""
    m = Builder()
    a, b, c, d = (m.block(x) for x in "abcd")
    one = Imm("1", 1, "int")
    r1 = m.ins(a, "mov", ("u32",), [one], "u32").results[0]
    p = m.ins(a, "setp", ("lt", "u32"), [r1, Imm("5", 5, "int")], "pred").results[0]
    m.ins(a, "bra", (), [LabelRef("c", c)], guard=p)
    r2 = m.ins(b, "add", ("u32",), [r1, one], "u32").results[0]
    m.ins(b, "bra", (), [LabelRef("d", d)])
    r3 = m.ins(c, "add", ("u32",), [r1, Imm("2", 2, "int")], "u32").results[0]
    phi = m.ins(d, "phi", (), [r2, r3], "u32")
    phi.phi_blocks = [b, c]
    m.ins(d, "ret")
    edge(a, c), edge(a, b), edge(b, d), edge(c, d)
    a.fallthrough, c.fallthrough = b, d
    mod = Module("v.ptx")
    mod.functions.append(m.fn)
    m.fn.module = mod
    rebuild_uses(m.fn)
    return m, m.fn, (a, b, c, d), (r1, p, r2, r3)


def fails(fn, *words):
    with pytest.raises(PtxcError) as e:
        verify_function(fn)
    for w in ("@k",) + words:
        assert w in str(e.value), str(e.value)
    return str(e.value)


def test_valid_function_and_pass():
    m, fn, _, _ = diamond()
    verify_function(fn)
    verify_module(fn.module)
    r = run_pipeline(fn.module, "verify")["verify"]
    assert r.text == "verify: ok (1 functions)\n"


def test_def_must_dominate_use():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    m.ins(c, "add", ("u32",), [r2, r2], "u32")
    rebuild_uses(fn)
    msg = fails(fn, "block c", "line 9", "not dominated", r2.name)
    assert msg.startswith("v.ptx:9:1: error: verifier:")


def test_use_before_def_in_same_block():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    m.ins(b, "add", ("u32",), [r2, r2], "u32", at=0)
    rebuild_uses(fn)
    fails(fn, "block b", "not dominated")


def test_phi_operand_must_dominate_its_incoming_block():
    m, fn, (a, b, c, d), regs = diamond()
    phi = d.instrs[0]
    phi.phi_blocks = [c, b]          # r2 now claims to come from c
    fails(fn, "block d", "phi operand", "from c")


def test_phi_incoming_blocks_equal_preds():
    m, fn, (a, b, c, d), regs = diamond()
    phi = d.instrs[0]
    phi.phi_blocks = [b, b]
    fails(fn, "block d", "incoming blocks [b b]", "predecessors [b c]")


def test_phis_at_top():
    m, fn, (a, b, c, d), regs = diamond()
    m.ins(d, "mov", ("u32",), [regs[0]], "u32", at=0)
    rebuild_uses(fn)
    fails(fn, "block d", "phi after a non-phi")


def test_terminator_is_last():
    m, fn, (a, b, c, d), regs = diamond()
    m.ins(b, "add", ("u32",), [regs[0], regs[0]], "u32")
    rebuild_uses(fn)
    fails(fn, "block b", "terminator bra is not the last")


def test_succs_preds_agree():
    m, fn, (a, b, c, d), regs = diamond()
    c.succs.remove(d)
    fails(fn, "block c", "succs/preds disagree", "c -> d")


def test_branch_target_is_successor():
    m, fn, (a, b, c, d), regs = diamond()
    a.succs.remove(c), c.preds.remove(a)
    fails(fn, "block a", "branch target c")


def test_use_lists():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    r1.uses.append(d.instrs[-1])
    fails(fn, r1.name, "use list")
    rebuild_uses(fn)
    r3.uses.clear()
    fails(fn, r3.name, "use list")


def test_guarded_instruction_needs_prior_values():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    g = m.ins(c, "add", ("u32",), [r1, r1], "u32", guard=p)
    rebuild_uses(fn)
    fails(fn, "block c", "1 results but 0 prior")
    g.prior = [r3]
    rebuild_uses(fn)
    verify_function(fn)


def test_guard_must_be_pred():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    a.instrs[-1].guard = r1
    rebuild_uses(fn)
    fails(fn, "block a", "guard", "not pred")


def test_phi_operand_types():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    r3.type = "f32"
    fails(fn, "block d", "of type f32")


def test_block_index():
    m, fn, (a, b, c, d), regs = diamond()
    c.index = 7
    fails(fn, "block c", "index 7")


def test_unreachable_blocks_skip_dominance():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    u = m.block("u")
    m.ins(u, "add", ("u32",), [r3, r2], "u32")
    m.ins(u, "ret")
    rebuild_uses(fn)
    verify_function(fn)


def test_undefined_value_from_outside_the_function():
    m, fn, (a, b, c, d), (r1, p, r2, r3) = diamond()
    _, other, _, (o1, _, _, _) = diamond()
    m.ins(b, "add", ("u32",), [o1, o1], "u32", at=0)
    rebuild_uses(fn)
    fails(fn, "block b", "defined outside the function")


def test_values_that_are_not_results_are_fine():
    m, fn, (a, b, c, d), regs = diamond()
    m.ins(b, "add", ("u32",), [Value("u32", "%tid.x", "%tid.x"), regs[0]], "u32", at=0)
    rebuild_uses(fn)
    verify_function(fn)
