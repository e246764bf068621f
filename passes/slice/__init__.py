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
