"""Whether a hybrid launch runs one CTA per equivalence class, and the classes.

The launcher calls :func:`cta_classes` for hybrid runs whose outputs are not
needed (``launch()`` in hybrid mode, ``launch_segments()`` unless the slice
computes the program's effects). It returns the classes
(passes/cta/classes.py) or None and a note saying why every CTA runs:

* the static condition (passes/cta/equivalence.py) fails for the kernel's
  slice, or this launch's values break a range check;
* the compiled kernel counts something that depends on memory addresses
  (``Compiled.memory_counters`` or ``address_counters`` set: the
  memory-coalescing and bank-conflict counters): the condition covers only
  what decides control flow, so it is off for them;
* the slice keeps the program's writes (criteria ``effects``);
* the kernel may call ``vprintf`` or ``__assertfail`` (every CTA's output
  and thread ids are host-visible) or ``malloc``/``free`` (every CTA changes
  the device heap);
* the grid has one CTA, or more than half of the CTAs would run anyway.

A grid of more than runtime.MAX_PER_CTA CTAs keeps no class per CTA (no
per-CTA numbers); one whose condition has no atom (nothing depends on
%ctaid: one class) is classified at once whatever its size, so that a
hybrid run of a 65535 x 65535 grid runs one CTA.

The classes of the last launches are remembered per module, keyed by the
kernel, its condition (one per slice variant), grid, block and parameter bytes.
"""
from __future__ import annotations

NO_CLASSES_CRITERIA = ("effects",)
# Compiled attributes that mean "some counter depends on memory addresses"
# (the memory-coalescing / bank-conflict counters): the condition does not
# cover those values, so CTA equivalence is off for such kernels
ADDRESS_COUNTER_FLAGS = ("memory_counters", "address_counters")
CACHE_SIZE = 16            # launches whose classes are remembered (a kernel relaunched
CACHE_CTAS = 1 << 20       # with the same grid, block and parameters reuses them), up to
                           # this many CTAs (the class of every CTA is kept)


def cta_classes(c, fn, grid, block, params: bytes, seg_sizes: dict | None = None):
    """(CtaClasses or None, note) for a hybrid launch of compiled kernel ``c``;
    ``seg_sizes`` ({segment: bytes} of the .global variables and buffers)
    lets the fault checks of the slice (faults=checked) be classified."""
    try:
        from ptxc.passes.cta.classes import classify
        from ptxc.passes.cta.segments import SegmentSizes
        from ptxc.passes.cta.values import Unclassifiable
        from ptxc.passes.cta.equivalence import cached_condition
    except ImportError:
        return None, "off: no CTA-equivalence analysis"
    from ptxc.backends.llvm.runtime import MAX_PER_CTA
    from ptxc.launcher.alias import param_offsets
    module = fn.module
    nctas = grid[0] * grid[1] * grid[2]
    if c.mode != "hybrid":
        return None, "off: full run"
    if any(getattr(c, flag, False) for flag in ADDRESS_COUNTER_FLAGS):
        return None, "off: the memory counters depend on addresses"
    if (module.attrs.get("slice") or {}).get("criteria") in NO_CLASSES_CRITERIA:
        return None, "off: the slice computes the program's effects"
    builtins = sorted({why.split()[1] for why in c.plan.no_callee.values()
                       if why.startswith("builtin ")})
    if builtins:
        return None, (f"off: the kernel calls {', '.join(builtins)} (every CTA's output, "
                      "or the heap every CTA changes)")
    if nctas < 2:
        return None, f"off: {nctas} CTAs"
    condition = cached_condition(module, fn)
    if not condition.ok:
        return None, f"off: {condition.reason}"
    cache = module.attrs.setdefault("cta_classes", {})
    sizes = SegmentSizes(seg_sizes, c.plan.shift) if seg_sizes is not None else None
    key = (fn.name, id(condition), tuple(grid), tuple(block), bytes(params),
           sizes.key() if sizes is not None and condition.checks else None)
    if key not in cache:
        try:
            classes = classify(condition, fn, grid, block, params, param_offsets(fn), sizes,
                               keep=nctas <= MAX_PER_CTA)
            found = (classes, f"{len(classes)} classes")
            if len(classes) > nctas // 2:
                found = (None, f"off: {len(classes)} classes for {nctas} CTAs")
        except Unclassifiable as e:
            found = (None, f"off: {e}")
        if nctas > CACHE_CTAS:
            return found
        if len(cache) >= CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = found
    return cache[key]
