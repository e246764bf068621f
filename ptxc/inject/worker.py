"""One run of an application injection campaign, in a process of its own
(``python -m ptxc.inject.worker SPEC_JSON -- APP ARGS...``; app_campaign.py
starts it).

The spec: ``{"result": dir, "kernel": name or null, "site": site text or
null, "gpu": model, "max_steps": n or null, "ptx": path or null}``. The
application runs under ``ptxc run``'s machinery (runtime/app.py) in full
mode, with the injection session active (ptxc/launch/injection.py); its stdout and
stderr are this process's. The worker writes ``result.json`` (exit status,
why ptxc stopped, device faults, the flip, the launches considered) and,
without a site (the golden run), ``counts.npz`` (every launch's per-thread
eligible counts: the injection space).
"""
from __future__ import annotations

import json
import os
import sys


def run(spec: dict, argv: list) -> dict:
    import numpy as np

    from ptxc.launcher import injection as inject_session
    from ptxc.inject import sites as inject_sites
    from ptxc.gpus import devices as gpus
    from ptxc.runtime.app import run_app
    from ptxc.runtime.server import Options
    site = inject_sites.parse_site(spec["site"]) if spec.get("site") else None
    options = Options(mode="full", gpu=gpus.model(spec.get("gpu") or "h100"),
                      max_steps=spec.get("max_steps"), threads=1, ptx=spec.get("ptx"))
    with inject_session.session(spec.get("kernel"), site) as s:
        result = run_app(argv, options)
    launches = [{"index": r.index, "kernel": r.kernel, "module": r.module, "grid": r.grid, "block": r.block,
                 "hit": r.hit, **r.where} for r in s.launches]
    out = {"status": result.status, "app_status": result.app_status,
           "stopped": result.session.stopped,
           "faults": [f.summary() for f in result.session.faults], "launches": launches,
           "launched": list(s.launched)}
    if site is None:
        np.savez(os.path.join(spec["result"], "counts.npz"),
                 **{f"{r.index}_{t}": a for r in s.launches for t, a in r.counts.items()})
    return out


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: python -m ptxc.inject.worker SPEC_JSON -- APP [ARGS]...\n")
        sys.exit(2)
    spec = json.loads(args[0])
    from ptxc.errors import PtxcError
    try:
        out = run(spec, args[2:])
    except PtxcError as e:
        out = {"status": 1, "app_status": None, "stopped": e.message, "faults": [], "launches": []}
        sys.stderr.write(f"ptxc: error: {e.message}\n")
    except Exception as e:          # noqa: BLE001 - a ptxc bug: never counted as a DUE
        import traceback
        traceback.print_exc()
        out = {"internal": f"{type(e).__name__}: {e}"}
    with open(os.path.join(spec["result"], "result.json"), "w") as f:
        json.dump(out, f)
    sys.exit(0)


if __name__ == "__main__":
    main()
