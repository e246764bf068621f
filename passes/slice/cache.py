"""What the slice variants of one module share (passes/slice/slice_pass.py).

Hybrid launches with ``memory=launch`` select the slice of their alias
pattern, so a module whose kernels are launched with different patterns has
many variants. Computing each from scratch would slice the whole module per
launch. This cache keeps, per module:

* the call structure (Program), the universes and the functions several
  universes share, and the option-independent facts (seeds, reads, regions;
  indexed writes per function and the alias rules that matter to it);
* the slice of every universe that shares no function with another one,
  keyed by its root, the rules that matter to the root (mode and the root's
  parameter classes) and the criteria: such a slice does not depend on the
  rest of the module. Universes with shared functions are sliced again
  (their union is closed in every universe: passes/slice/slice_pass.py);
* reports interned by content (function, memory, criteria, the kept
  instructions of the function or, for a kernel, of its universe), so a
  kernel whose marks are the same in two variants keeps one report object;
  the JIT cache is keyed by that object, so its compiled code is reused, and
  switching variants re-marks only functions whose report changed.

``remove_unkept`` (emit=sliced) changes the module and drops the cache.
"""
from __future__ import annotations

from ptxc.passes.slice.calls import Program
from ptxc.passes.slice.engine import Slicer
from ptxc.passes.slice.facts import Facts
from ptxc.passes.slice.report import control_inputs, function_report


class SliceCache:
    def __init__(self, module):
        self.program = Program(module)
        self.facts = Facts(self.program, module.address_size or 64)
        self.universes = self.program.universes()
        seen, shared = set(), set()
        for _, funcs in self.universes:
            ids = {id(f) for f in funcs}
            shared |= seen & ids
            seen |= ids
        self.shared_functions = shared
        self.alone = {id(root) for root, funcs in self.universes
                      if not any(id(f) in shared for f in funcs)}
        self.slicers: dict = {}
        self.reports: dict = {}

    def slicer(self, root, funcs, rules, criteria: str, addresses: bool = False,
               faults: str = "unchecked") -> Slicer:
        """The slice of one universe (from the cache when it shares nothing)."""
        alone = id(root) in self.alone
        key = (root.name, rules.key(root), criteria, addresses, faults)
        if alone and key in self.slicers:
            return self.slicers[key]
        s = Slicer(self.program, funcs, criteria, self.facts, rules, addresses, faults).run()
        if alone:
            s.alone = True
            self.slicers[key] = s
        return s

    def kernel_inputs(self, root, slicer) -> dict:
        got = getattr(slicer, "inputs", None)
        if got is None or not getattr(slicer, "alone", False):
            got = control_inputs(slicer.kept_instrs, self.program, self.facts.regions, root)
            if getattr(slicer, "alone", False):
                slicer.inputs = got
        return got

    def fingerprint(self, funcs, kept: set, slicer=None) -> frozenset:
        """The kept instructions of ``funcs`` (a universe or one function)."""
        if slicer is not None and getattr(slicer, "alone", False):
            got = getattr(slicer, "fingerprint", None)
            if got is None:
                got = slicer.fingerprint = frozenset(slicer.kept)
            return got
        return frozenset(id(i) for f in funcs for i in f.instructions() if id(i) in kept)

    def report(self, fn, inputs, options: dict, fingerprint: frozenset) -> dict:
        key = report_key(fn, options, fingerprint)
        got = self.reports.get(key)
        if got is None:
            got = self.reports[key] = function_report(fn, inputs, options)
        return got


def report_key(fn, options: dict, fingerprint: frozenset) -> tuple:
    """Reports are interned by function, the options they print and the marks."""
    return (fn.name, options["memory"], options["criteria"], options.get("addresses", False),
            options.get("faults", "unchecked"), fingerprint)


def slice_cache(module) -> SliceCache:
    cache = module.attrs.get("slice_cache")
    if cache is None:
        cache = module.attrs["slice_cache"] = SliceCache(module)
    return cache
