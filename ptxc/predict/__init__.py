"""Where the time would go on a GPU: Luo & Suda's execution-time model and a
TopDown breakdown, from a launch's exact counters (issue 15; docs/predict.md).

    params     the model's parameters per GPU model, with their sources
    mix        instruction mix, ILP and MLP of a launch (exact counts)
    inputs     a Profile + module + GPU -> the model's Inputs
    luo_suda   the execution-time model
    topdown    TopDown as Saiz's thesis defines it (chapter 4)
    render     text, JSON rows and SQLite tables of the results

Exports :func:`analyse` (one launch -> a result dict) and
:func:`analyse_launch` (the same, with the kernel's registers from ptxas or
``--regs``). predict_pass is the ``predict`` pass.
"""
from __future__ import annotations


def analyse(module, prof: dict, gpu_key: str | None, regs, dynamic_shared: int = 0,
            params_path: str | None = None) -> dict:
    """Prediction and TopDown of one launch (``prof``: Profile.to_dict())."""
    from ptxc.gpus.architecture import gpu
    from .inputs import launch_inputs
    from .luo_suda import predict
    from .params import load_params
    from .topdown import computation_costs, replays, topdown
    g = gpu(gpu_key)
    p = load_params(g.key, params_path)
    inp, occ = launch_inputs(module, prof, g, regs, dynamic_shared)
    rep = replays(inp.mix, prof["memory"], g)
    pred = predict(inp, g, p, sum(rep.values()))
    costs = computation_costs(module, prof["per_block"], *_cost_model(pred, p))
    td = topdown(_time_view(pred), inp.inst_executed, inp.thread_inst_executed, rep, g,
                 inp.mix, costs)
    return {"kernel": inp.kernel, "gpu": g.key, "grid": list(prof["grid"]),
            "block": list(prof["block"]), "mode": prof.get("mode"), "inputs": inp,
            "occupancy": occ, "registers": regs, "params": p, "prediction": pred,
            "topdown": td}


def _time_view(pred):
    """The prediction as TopDown reads it (issue 28's interface: cycles, share,
    t_compute, t_current, t_previous, active_warps). A Prediction that has
    them passes as it is; the older one's memory time beyond the computation
    and issue times stands for the memory waits."""
    if hasattr(pred, "t_compute"):
        return pred
    from types import SimpleNamespace
    wait = max(0.0, pred.t_body - max(pred.t_comp, pred.t_issue))
    return SimpleNamespace(cycles=pred.cycles, share=pred.share,
                           active_warps=pred.active_warps, t_compute=pred.cycles - wait,
                           t_current=wait, t_previous=0.0)


def _cost_model(pred, p):
    """(cost of one instruction, is it a memory access?) as the time model
    sees them: issue 28's ``costs.instruction_cost`` and ``is_memory_access``
    where that module exists, else the older model's cost of the
    instruction's count class (``pred.costs``) and its load/store/atomic
    classes."""
    try:
        from .costs import instruction_cost, is_memory_access
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.costs":
            raise
        from .mix import instr_class
        return ((lambda ins: pred.costs[instr_class(ins)][1]),
                (lambda ins: instr_class(ins) in ("load", "store", "atomic")))
    return (lambda ins: instruction_cost(ins, p)), is_memory_access


def analyse_launch(module, ptx_text, prof, gpu_key, regs, shared, params_path):
    """``analyse`` of a launch, with ``regs`` registers per thread (None:
    ptxas's count for the kernel, or ptxc's estimate without ptxas)."""
    from ptxc.gpus.architecture import gpu
    from ptxc.gpus.kernel_resources import Registers, module_registers
    if regs is not None:
        r = Registers(regs, "--regs")
    else:
        r = module_registers(module, ptx_text, gpu(gpu_key).sm)[prof["kernel"]]
    return analyse(module, prof, gpu_key, r, shared, params_path)
