"""Analyses and transforms over the IR (installed as ``ptxc.passes``).

A pass is written against ptxc.ir.passmanager (Pass, Analysis,
AnalysisManager); the pipeline machinery sits above every pass.

    cfg            the control-flow graph: exits, reverse post order, DOT
    cfg_profile    colours of the CFG DOT after a launch (divergence, memory efficiency)
    domtree        dominator trees (Cooper-Harvey-Kennedy) and the domtree pass
    postdomtree    post-dominator trees with a virtual exit
    reconvergence  the reconvergence point (IPDOM) of each conditional branch
    controldep     control dependence from the post-dominator tree
    loops          natural loops and irreducible cycles
    launch_infer   the launch of an XLA-style kernel from its bound check
    verifier       the SSA verifier: the invariants every pass relies on
    verify         the verify pass (runs the verifier)
    print_ir       the print-ir pass (the textual IR)
    registry       the one flat table of passes: name -> 'module:Class'
    pipeline       parse a pipeline text, make its passes, run them

Families in folders: slice/ (the backward branch slice), memory/ (what memory
an instruction touches and where its address came from), cta/ (CTA
equivalence), count/ (static counts and the count report's tables).
"""
