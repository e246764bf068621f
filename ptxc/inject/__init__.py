"""``ptxc inject``: single-bit error-injection campaigns (SASSI section 8,
NVBitFI), on one kernel launch from Python or on whole CUDA applications
(docs/inject.md).

    launch_campaign  campaigns on one launch: ``ptxc.inject.campaign(...)``
    launch_run       one launch of a campaign: the golden run, one injected run
    app_campaign     campaigns on an application run under ``ptxc run``
    worker           one injected run of an application, in its own process
    pool             the injected launches of a Python campaign, in processes or on Dask
    sites            the injection space of a fault-free run and the sites drawn from it
    stats            outcome classes (masked / SDC / DUE) and their statistics
    db               the SQLite report of a campaign

The launch side of injection (the session a launch consults, the control
block it arms) is ``ptxc.launcher.injection`` and the instrument
``ptxc.backends.llvm.instruments.inject_ir``.
"""
from ptxc.inject.launch_campaign import Campaign, campaign
from ptxc.inject.launch_run import golden_run, run_site

__all__ = ["Campaign", "campaign", "golden_run", "run_site"]
