"""The one flat table of passes: name -> 'module:Class', imported lazily.

Add a pass by writing passes/<name>.py and one line here.
"""
from __future__ import annotations

import importlib

PASSES: dict[str, str] = {
    "print-ir": "ptxc.passes.print_ir:PrintIR",
    "verify": "ptxc.passes.verify:Verify",
    "cfg": "ptxc.passes.cfg:CFGPass",
    "domtree": "ptxc.passes.domtree:DomTreePass",
    "postdomtree": "ptxc.passes.postdomtree:PostDomTreePass",
    "reconvergence": "ptxc.passes.reconvergence:ReconvergencePass",
    "control-dep": "ptxc.passes.controldep:ControlDepPass",
    "loops": "ptxc.passes.loops:LoopsPass",
    "slice": "ptxc.passes.slice.slice_pass:SlicePass",
    "count": "ptxc.profile.count_pass:CountPass",
    "infer-launch": "ptxc.passes.launch_infer:InferLaunchPass",
    "cta-equivalence": "ptxc.passes.cta.equivalence:CtaEquivalencePass",
    "predict": "ptxc.predict.predict_pass:PredictPass",
}


def pass_names() -> list[str]:
    return sorted(PASSES)


def get_pass_class(name: str):
    target = PASSES.get(name)
    if target is None:
        return None
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)
