"""The backward branch slice (Weiser 1981; PDG of Ottenstein & Ottenstein 1984;
interprocedural edges after Horwitz, Reps & Binkley 1990).

``ptxc opt --pass=slice file.ptx`` marks, in every function, the instructions
that decide which instructions execute and with which guard values:

criteria (``criteria=counters``, the default)
    every terminator (the guard of ``bra``, the index of ``brx.idx``, guards
    of ``ret``/``exit``/``trap``), every ``call`` (it decides which code runs),
    every CTA barrier (it orders shared memory; its operands decide who
    waits), the guard of every warp collective, and the guard of *every*
    guarded instruction: ``thread_inst_executed_pred_on`` and the FLOP
    counters count only lanes whose guard is true, so the hybrid run must
    know every guard to count like the full run. ``criteria=branches`` drops
    the last group (HyPA's criterion; then pred-on and FLOP counts are not
    exact in a hybrid run).
addresses (``addresses=true``; off by default)
    also the address operands (and guards) of every memory instruction the
    memory counters measure (ptxc.passes.memory.measured), so that a hybrid run computes
    each lane's address of a load or store it does not execute (docs/slice.md).
faults (``faults=checked``, the default)
    also the address operands (and guards) of every access the executor
    bounds-checks (ptxc.passes.memory.checked), so that a hybrid run checks the
    accesses it does not perform and stops where the full run stops;
    ``faults=unchecked`` gives that up for speed.
closure
    see slice_engine (use-def through phis, guards, old values of guarded
    definitions, memory, parameters across calls).

Marks: ``instr.attrs['slice']`` is True for kept instructions (phis included)
and False for the others; ``fn.attrs['sliced'] = True`` and
``fn.attrs['slice_report']`` holds the report of docs/slice.md.
``mark_slice(module, **options)`` does all of this; ``select_slice(module,
**options)`` does it once per set of options and afterwards only puts the
remembered marks back (the JIT executor calls it before a hybrid run, and a
run may need other options than the last one). With ``slice{emit=sliced}`` the pass also deletes every
non-kept, non-terminator instruction, so ``--emit=ptx`` prints the sliced
kernel.
"""
from __future__ import annotations

import gc
from dataclasses import dataclass

from ptxc import ir
from ptxc.ir.passmanager import ALL, NONE, Pass, PassResult

from ptxc.passes.slice.cache import report_key, slice_cache
from ptxc.passes.slice.facts import CRITERIA, FAULTS
from ptxc.passes.slice.alias_rules import AliasRules, check_alias
from ptxc.passes.slice.memory_deps import MODES
from ptxc.passes.slice.report import control_inputs, render_csv, render_text

EMITS = ("marked", "sliced")
DEFAULT_MEMORY = "launch"


def check_options(memory: str = DEFAULT_MEMORY, criteria: str = "counters", alias=None,
                  addresses: bool = False, faults: str = "unchecked") -> dict:
    if memory not in MODES:
        raise ValueError(f"option 'memory' must be one of {', '.join(MODES)}; got '{memory}'")
    if criteria not in CRITERIA:
        raise ValueError(f"option 'criteria' must be one of {', '.join(CRITERIA)}; "
                         f"got '{criteria}'")
    if not isinstance(addresses, bool):
        raise ValueError(f"option 'addresses' must be true or false; got '{addresses}'")
    if faults not in FAULTS:
        raise ValueError(f"option 'faults' must be one of {', '.join(FAULTS)}; got '{faults}'")
    options = {"memory": memory, "criteria": criteria}
    alias = check_alias(memory, alias)
    if alias is not None:
        options["alias"] = alias
    if addresses:                       # only when set: the default variant keeps its key
        options["addresses"] = True
    if faults == "checked":             # likewise: the branch slice keeps its key
        options["faults"] = faults
    return options


def mark_slice(module, memory: str = DEFAULT_MEMORY, criteria: str = "counters",
               alias=None, addresses: bool = False, faults: str | None = None) -> dict:
    """Slice every function of ``module``, set the marks, return the reports.

    This is also the module's *requested* slice (``module.attrs
    ['slice_request']``): a later hybrid launch uses these options, and with
    ``memory=launch`` specialises the slice to the launch's arguments.
    Without ``faults`` the marks are the branch slice alone (the report of
    ``ptxc opt --pass=slice``) and a later hybrid launch checks faults (its
    variant keeps the addresses of the checks: ``faults=checked``)."""
    options = check_options(memory, criteria, alias, addresses, faults or "unchecked")
    module.attrs["slice_request"] = {"memory": memory, "criteria": criteria,
                                     "addresses": addresses, "faults": faults}
    return _compute(module, options)


def _compute(module, options: dict) -> dict:
    """Compute and apply one slice variant. The cyclic garbage collector is
    paused meanwhile: the slice creates no cycles, and full collections over
    a large module's IR cost a third of the time otherwise."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _mark(module, options)
    finally:
        if enabled:
            gc.enable()


def select_slice(module, **options) -> dict:
    """The marks of ``mark_slice(module, **options)``, computed once per set of
    options and module: a later call with the same options puts the
    remembered marks back instead of slicing again. Returns the reports.
    Unlike mark_slice it does not change the module's requested slice."""
    options = check_options(**options)
    key = variant_key(options)
    variants = module.attrs.setdefault("slice_variants", {})
    if module.attrs.get("slice_variant") == key:
        return variants[key].reports
    if key not in variants:
        return _compute(module, options)
    variants[key].apply(module)
    return variants[key].reports


def select_launch_slice(module, kernel: str, classes: tuple, criteria: str = "counters",
                        others: dict | None = None, addresses: bool = False,
                        faults: str = "unchecked") -> dict:
    """The ``memory=launch`` slice for a launch of ``kernel`` whose pointer
    parameters have ``classes`` (((param, class), ...): passes.slice_launch),
    with the address slice when ``addresses`` (memory counters) and the
    bounds-check slice unless ``faults`` is 'unchecked'.

    A remembered variant in which ``kernel`` has exactly these classes is
    reused whatever it assumed for the other kernels (their marks do not
    matter to this launch). A new variant also specialises every other kernel
    to ``others[name]`` (the launcher's guess: one allocation per pointer
    parameter), so that compiling the module's kernels together, and their
    later launches with those arguments, reuse it."""
    entry = (kernel, tuple(classes))
    key = module.attrs.get("slice_launch_index", {}).get((entry, criteria, addresses, faults))
    variants = module.attrs.get("slice_variants", {})
    if key in variants:
        if module.attrs.get("slice_variant") != key:
            variants[key].apply(module)
        return variants[key].reports
    base = variants.get(module.attrs.get("slice_variant"))
    if base is not None and base.options["memory"] == "launch" and \
            base.options["criteria"] == criteria and "alias" in base.options and \
            base.options.get("addresses", False) == addresses and \
            base.options.get("faults", "unchecked") == faults:
        derived = _derive(module, base, entry)
        if derived is not None:
            return derived
    alias = dict(others or {})
    alias[kernel] = tuple(classes)
    return select_slice(module, memory="launch", criteria=criteria, alias=tuple(alias.items()),
                        addresses=addresses, faults=faults)


def _derive(module, base, entry) -> dict | None:
    """The launch variant ``base`` with one kernel's classes replaced, when
    that kernel's universe shares no function with another one: only that
    universe is sliced again (slice_cache), the rest is the base's."""
    cache = slice_cache(module)
    kernel = module.function(entry[0])
    funcs = next((u for root, u in cache.universes if root is kernel), None)
    if funcs is None or id(kernel) not in cache.alone:
        return None
    alias = dict(base.options["alias"])
    alias[entry[0]] = entry[1]
    addresses = base.options.get("addresses", False)
    faults = base.options.get("faults", "unchecked")
    options = check_options("launch", base.options["criteria"], tuple(alias.items()), addresses,
                            faults)
    slicer = cache.slicer(kernel, funcs, AliasRules("launch", options["alias"]),
                          options["criteria"], addresses, faults)
    mine = {id(i) for f in funcs for i in f.instructions()}
    kept = (base.kept - mine) | slicer.kept
    reports = dict(base.reports)
    fp = cache.fingerprint(funcs, kept, slicer)
    known = cache.reports.get(report_key(kernel, options, fp))
    for f in funcs:
        reports.pop(f.name, None)
    if known is not None:
        reports[kernel.name] = known
    ordered = {**base.ordered, kernel.name: slicer.reads_kernel_writes}
    variant = SliceVariant(base.functions, kept, reports, options, ordered)
    variant.apply_marks()
    reports[kernel.name] = cache.report(kernel, cache.kernel_inputs(kernel, slicer), options, fp)
    for f in funcs:
        if f is not kernel:
            own = [i for i in f.instructions() if id(i) in kept]
            inputs = control_inputs(own, cache.program, cache.facts.regions, owner=f)
            reports[f.name] = cache.report(f, inputs, options, frozenset(id(i) for i in own))
    variant.reports = {f.name: reports[f.name] for f in base.functions}
    variant.apply_reports(module)
    module.attrs["slice_variants"][variant_key(options)] = variant
    _index_launch_variant(module, variant)
    return variant.reports


def variant_key(options: dict) -> tuple:
    return tuple(sorted(options.items()))


class SliceVariant:
    """The marks of one mark_slice run: kept instruction ids and reports."""

    def __init__(self, functions, kept: set, reports: dict, options: dict,
                 ordered: dict | None = None):
        self.functions = list(functions)
        self.kept = kept
        self.reports = reports
        self.options = dict(options)
        # kernel name -> a kept read may see what another CTA wrote to global
        # memory, so the kernel's CTAs must run in linear order (METRICS.md)
        self.ordered = dict(ordered or {})

    def apply(self, module) -> None:
        self.apply_marks()
        self.apply_reports(module)

    def apply_marks(self) -> None:
        """Mark the functions whose marks differ from the ones in place (the
        same report object means the same marks: passes/slice/cache.py)."""
        for fn in self.functions:
            current = fn.attrs.get("slice_report")
            if current is None or current is not self.reports.get(fn.name):
                for ins in fn.instructions():
                    ins.attrs["slice"] = id(ins) in self.kept

    def apply_reports(self, module) -> None:
        for fn in self.functions:
            fn.attrs["sliced"] = True
            fn.attrs["slice_report"] = self.reports[fn.name]
        module.attrs["slice"] = dict(self.options)
        module.attrs["slice_variant"] = variant_key(self.options)


def _mark(module, options: dict) -> dict:
    cache = slice_cache(module)
    rules = AliasRules(options["memory"], options.get("alias"))
    addresses = options.get("addresses", False)
    faults = options.get("faults", "unchecked")
    slicers = [(root, funcs, cache.slicer(root, funcs, rules, options["criteria"], addresses,
                                          faults))
               for root, funcs in cache.universes]
    kept = _union_fixpoint([s for _, _, s in slicers], bool(cache.shared_functions))
    pending = []                     # (fn, inputs, fingerprint) of reports not made yet
    reports: dict[str, dict] = {}
    for root, funcs, slicer in slicers:
        if root.is_kernel:
            pending.append((root, cache.kernel_inputs(root, slicer),
                            cache.fingerprint(funcs, kept, slicer)))
    covered = {id(item[0]) for item in pending}
    for fn in cache.program.functions:
        if id(fn) not in covered:
            mine = [i for i in fn.instructions() if id(i) in kept]
            pending.append((fn, control_inputs(mine, cache.program, cache.facts.regions, owner=fn),
                            frozenset(id(i) for i in mine)))
    ordered = {root.name: s.reads_kernel_writes for root, _, s in slicers if root.is_kernel}
    variant = SliceVariant(cache.program.functions, kept, reports, options, ordered)
    for fn, inputs, fp in pending:     # known reports first: they say which marks to keep
        known = cache.reports.get(report_key(fn, options, fp))
        if known is not None:
            reports[fn.name] = known
    variant.apply_marks()
    made = {fn.name: cache.report(fn, inputs, options, fp) for fn, inputs, fp in pending}
    reports.clear()
    reports.update((fn.name, made[fn.name]) for fn in cache.program.functions)
    variant.apply_reports(module)
    module.attrs.setdefault("slice_variants", {})[variant_key(options)] = variant
    _index_launch_variant(module, variant)
    return variant.reports


def _union_fixpoint(slicers, shared: bool) -> set[int]:
    """The union of the universes' slices, closed in every universe.

    Only functions shared by several universes can add work (and only
    universes that share functions are sliced afresh for each variant:
    slice_cache)."""
    kept: set[int] = set()
    for s in slicers:
        kept |= s.kept
    while shared and len(slicers) > 1:
        grew = False
        for s in slicers:
            if not getattr(s, "alone", False) and s.absorb(kept):
                kept |= s.kept
                grew = True
        if not grew:
            break
    return kept


def _index_launch_variant(module, variant) -> None:
    """Remember, per (kernel, classes, criteria, addresses, faults), a launch variant
    that has them."""
    o = variant.options
    if o["memory"] != "launch" or "alias" not in o:
        return
    index = module.attrs.setdefault("slice_launch_index", {})
    for entry in o["alias"]:
        index.setdefault((entry, o["criteria"], o.get("addresses", False),
                          o.get("faults", "unchecked")), variant_key(o))


def remove_unkept(module) -> int:
    """Delete non-kept, non-terminator instructions (``emit=sliced``). The
    module changes, so remembered slice variants are dropped."""
    for key in ("slice_variants", "slice_variant", "slice_launch_index", "slice_cache",
                "cta_program", "provenance_regions"):
        module.attrs.pop(key, None)
    removed = 0
    for fn in module.functions:
        if fn.is_decl:
            continue
        for block in fn.blocks:
            keep = [i for i in block.instrs if i.attrs.get("slice")
                    or (i.info is not None and i.info.terminator)]
            removed += len(block.instrs) - len(keep)
            block.instrs = keep
        ir.rebuild_uses(fn)
    return removed


@dataclass(frozen=True)
class SlicePass(Pass):
    name = "slice"
    summary = ("mark the backward slice of branches and guards "
               "(memory=launch|conservative|refined|noalias, criteria=counters|branches|effects, "
               "addresses=true|false, faults=checked|unchecked)")
    memory: str = DEFAULT_MEMORY
    criteria: str = "counters"
    addresses: bool = False
    faults: str = ""            # not given: report the branch slice, launches check faults
    emit: str = "marked"
    values = {"memory": MODES, "criteria": CRITERIA, "faults": FAULTS, "emit": EMITS}

    def __post_init__(self):
        check_options(self.memory, self.criteria, addresses=self.addresses,
                      faults=self.faults or "checked")
        if self.emit not in EMITS:
            raise ValueError(f"option 'emit' must be one of {', '.join(EMITS)}; got '{self.emit}'")

    def run(self, module, am) -> PassResult:
        reports = mark_slice(module, memory=self.memory, criteria=self.criteria,
                             addresses=self.addresses, faults=self.faults or None)
        if self.memory == "launch" and isinstance(am.options.get("launch"), dict):
            reports = self._specialise(module, am.options["launch"])
        preserved = ALL
        if self.emit == "sliced":
            remove_unkept(module)
            preserved = NONE
        fmt = am.options.get("format", "text")
        alias = module.attrs.get("slice", {}).get("alias")
        text = render_csv(reports) if fmt == "csv" else render_text(reports, alias)
        return PassResult(self.name, text, reports, preserved)

    def _specialise(self, module, launch: dict) -> dict:
        """The pipeline configures a launch (``--kernel --arg ...``): report
        the slice specialised to its arguments (what the launch will run)."""
        from ptxc.launcher.alias import launch_slice_for_options
        addresses = self.addresses or bool(launch.get("memory_counters"))
        return launch_slice_for_options(module, launch, self.criteria, addresses,
                                        self.faults or "unchecked")
