"""The backward branch slice (Weiser 1981; docs/slice.md).

    slice_pass   the ``slice`` pass, mark_slice / select_slice / select_launch_slice
    engine       the closure over use-def, memory and control edges
    facts        slicing criteria and the per-module facts the closure looks up
    memory_deps  which writes a kept read may see
    alias_rules  the alias rules of the memory modes, and the launch-specialised one
    calls        names, call sites and the call graph
    cache        what the slice variants of one module share
    report       sizes, fraction and control inputs of each function
"""

_API = ("SlicePass", "mark_slice", "select_slice", "select_launch_slice")


def __getattr__(name: str):
    """``ptxc.passes.slice.mark_slice`` (docs/slice.md) and the other entry
    points of slice_pass, loaded on first use."""
    if name in _API:
        from ptxc.passes.slice import slice_pass
        return getattr(slice_pass, name)
    raise AttributeError(f"module 'ptxc.passes.slice' has no attribute '{name}'")
