"""Where the time would go on a GPU: Luo & Suda's execution-time model and a
TopDown breakdown, from a launch's exact counters (issue 15; docs/predict.md).

    params     the model's parameters per GPU model, with their sources
    costs      Table 1: the time cost of a PTX instruction; memory access instructions
    periods    tasks and calculate periods from exact counts (section 3.2)
    mix        the instruction mix of a launch (exact counts; TopDown)
    inputs     a Profile + module + GPU -> the model's Inputs
    luo_suda   the execution-time model (section 3: eq. 1-14)
    topdown    TopDown as Saiz's thesis defines it (chapter 4)
    render     text, JSON rows and SQLite tables of the results
    calibrate  ``ptxc calibrate``: the parameters measured on a GPU (microbench/:
               its generated PTX; cpd_fit: a, b, c, d of eqs. 3-5)

Exports :func:`analyse` (one launch -> a result dict) and
:func:`analyse_launch` (the same, with the kernel's registers from ptxas or
``--regs``). predict_pass is the ``predict`` pass.
"""
from __future__ import annotations


def analyse(module, prof: dict, gpu_key: str | None, regs, dynamic_shared: int = 0,
            params_path: str | None = None, readings=None, params=None, static=None) -> dict:
    """Prediction and TopDown of one launch (``prof``: Profile.to_dict());
    ``readings``: the readings of the printed equations (luo_suda.Readings,
    or ``["eq2=printed", ...]``); ``params``: a ModelParams instead of the
    GPU model's (with ``params_path``'s values); ``static``: the module's
    static_costs.ModuleCosts under those parameters, kept by a caller that
    predicts many launches (else computed here)."""
    from ptxc.gpus.architecture import gpu
    from .inputs import launch_inputs
    from .luo_suda import parse_readings, predict
    from .params import load_params
    from .static_costs import ModuleCosts
    from .topdown import computation_costs, replays, topdown
    g = gpu(gpu_key)
    p = params if params is not None else load_params(g.key, params_path)
    r = parse_readings(readings)
    if static is None:
        static = ModuleCosts(module, p)
    elif static.params is not p:
        raise ValueError("analyse: 'static' was computed under other model parameters")
    inp, occ = launch_inputs(module, prof, g, regs, dynamic_shared, p, r, static)
    rep = replays(inp.mix, prof["memory"], g)
    pred = predict(inp, g, p, r)
    costs = computation_costs(static, prof["per_block"])
    td = topdown(pred, inp.inst_executed, inp.thread_inst_executed, rep, g, inp.mix, costs)
    return {"kernel": inp.kernel, "gpu": g.key, "grid": list(prof["grid"]),
            "block": list(prof["block"]), "mode": prof.get("mode"), "inputs": inp,
            "occupancy": occ, "registers": regs, "params": p, "prediction": pred,
            "topdown": td}


def analyse_launch(module, ptx_text, prof, gpu_key, regs, shared, params_path, readings=None):
    """``analyse`` of a launch, with ``regs`` registers per thread (None:
    ptxas's count for the kernel, or ptxc's estimate without ptxas)."""
    from ptxc.gpus.architecture import gpu
    from ptxc.gpus.kernel_resources import Registers, module_registers
    if regs is not None:
        r = Registers(regs, "--regs")
    else:
        r = module_registers(module, ptx_text, gpu(gpu_key).sm)[prof["kernel"]]
    return analyse(module, prof, gpu_key, r, shared, params_path, readings)
