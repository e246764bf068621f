"""print-ir: the SSA IR of the module as text (see docs/ir.md for the format).

An analysis-free report pass: it changes nothing and preserves everything.
``print-ir{function=NAME}`` prints only one function.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ptxc.errors import PtxcError
from ptxc.ir.passmanager import ALL, Pass, PassResult


@dataclass(frozen=True)
class PrintIR(Pass):
    name: ClassVar[str] = "print-ir"
    summary: ClassVar[str] = "print the SSA IR of every function"

    function: str = ""      # print only this function (default: the whole module)
    values: ClassVar[dict] = {"function": "a function's name, any form --kernel takes"}

    def run(self, module, am) -> PassResult:
        if not self.function:
            text = module.print_ir()
        else:
            fn = module.function(self.function) or _by_rule(module, self.function)
            if fn is None:
                names = ", ".join(f.name for f in module.functions) or "none"
                raise PtxcError(f"print-ir: no function '{self.function}' in "
                                f"{module.filename}; its functions: {names}")
            from ptxc.ir.printer import print_function
            text = print_function(fn)
        return PassResult(self.name, text=text, data=text, preserved=ALL)


def _by_rule(module, key: str):
    """The function ``key`` names by the rule of ptxc/ir/names.py (``vadd``,
    a demangled signature), None when it names none; ambiguous: an error."""
    from ptxc.ir.names import find_function, matches
    if not any(matches(f.name, key) for f in module.functions if not f.is_decl):
        return None
    return find_function(module, key)
