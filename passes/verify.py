"""The ``verify`` pass: run the SSA verifier (passes/verifier.py) on the module.

It raises PtxcError at the first broken invariant; otherwise it reports
``verify: ok (N functions)`` and preserves every analysis.
"""
from __future__ import annotations

from dataclasses import dataclass

from ptxc.ir.passmanager import Pass, PassResult
from ptxc.passes.verifier import verify_module

from .cfg import defined_functions


@dataclass(frozen=True)
class Verify(Pass):
    name = "verify"
    summary = "check SSA and CFG invariants (dominance, phis, use lists, edges)"

    def run(self, module, am) -> PassResult:
        verify_module(module)
        n = len(defined_functions(module))
        return PassResult(self.name, f"verify: ok ({n} functions)\n",
                          {"ok": True, "functions": n})
