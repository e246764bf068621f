"""Analyses and transforms over the IR (installed as ``ptxc.passes``).

The analyses at the top (one file each): cfg, domtree, postdomtree,
reconvergence, controldep, loops, launch_infer, verify (with verifier),
print_ir, cfg_profile. Families in folders: slice/ (the backward branch
slice), memory/ (what memory an instruction touches and where its address
came from), cta/ (CTA equivalence), count/ (static counts and the count
report's tables). registry names every pass; pipeline runs them.
"""
