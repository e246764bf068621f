"""Compile time linear in kernel size (issue 27: 8,000 straight-line adds took
9 s to compile, 16,000 took 39 s). Checked on proxies that do not depend on
the machine (bench/compile_scaling.py measures the times):

* LLVM's instruction selection grows faster than the size of one block, so
  no generated block is longer than about BLOCK_LINES lines however long
  the straight run of PTX (lowering_guard.start_instr cuts it);
* the LLVM IR grows in proportion to the PTX;
* Python's cyclic GC, whose passes grew faster than the kernel, is off while
  the plan and the code are made (guards.gc_paused), and on again after.
"""
from __future__ import annotations

import gc
import re

import ptxc
from ptxc.backends.llvm import jit, lowering_guard
from ptxc.backends.llvm.codegen import KernelCodegen
from ptxc.backends.llvm.plan import Plan


def adds(n: int, op: str = "add.f16x2 %v1, %v1, %v2;") -> str:
    return "\n".join([".version 8.0", ".target sm_90", ".address_size 64",
                      ".visible .entry k(.param .u64 p)", "{", "\t.reg .b32 %v<3>;",
                      "\t.reg .b64 %rd<2>;", "\tld.param.u64 %rd1, [p];",
                      "\tld.global.u32 %v1, [%rd1];", "\tld.global.u32 %v2, [%rd1+4];"]
                     + ["\t" + op] * n + ["\tst.global.u32 [%rd1], %v1;", "\tret;", "}", ""])


def llvm_ir(n: int, op: str = "add.f16x2 %v1, %v1, %v2;") -> str:
    module = ptxc.parse(adds(n, op), "adds.ptx")
    g = KernelCodegen(Plan(module, module.function("k")), "full", name="run_warp")
    g.generate_function()
    return g.function_text()


def longest_block(ir: str) -> int:
    """Lines of the longest basic block of one LLVM function's text."""
    longest = run = 0
    for line in ir.split("\n"):
        if re.match(r"[\w.$]+:", line) or line == "}":
            longest, run = max(longest, run), 0
        else:
            run += 1
    return longest


def test_blocks_stay_short_however_long_the_straight_run():
    small, large = llvm_ir(500), llvm_ir(4000)
    bound = 2 * lowering_guard.BLOCK_LINES          # one instruction's code past the cut at most
    assert longest_block(small) <= bound
    assert longest_block(large) <= bound
    assert longest_block(large) <= longest_block(small) + 40


def test_ir_grows_in_proportion():
    """The IR of 1,000 more adds is as long at 1,000 as at 3,000 (a fixed
    part apart: the prologue, the dispatcher)."""
    for op in ("add.f16x2 %v1, %v1, %v2;", "add.s32 %v1, %v1, %v2;"):
        a, b, c = (llvm_ir(n, op).count("\n") for n in (1000, 2000, 4000))
        assert 1.95 < (c - b) / (b - a) < 2.05, (op, a, b, c)


def test_gc_paused_while_generating(monkeypatch):
    seen = []

    class Spy(Plan):
        def __init__(self, *args, **kw):
            seen.append(gc.isenabled())
            super().__init__(*args, **kw)
    monkeypatch.setattr("ptxc.backends.llvm.plan.Plan", Spy)
    monkeypatch.setenv("PTXC_CACHE", "0")            # jit imports Plan where it uses it
    module = ptxc.parse(adds(10), "adds.ptx")
    jit.compile_kernel(module, module.function("k"), "full", 0)
    assert seen == [False] and gc.isenabled()
