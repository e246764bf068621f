"""Value profiles (SASSI section 6): constant bits and scalar writes per
register-writing instruction (``--value-profile``; docs/value-profile.md).

    value_profile  masks, the per-kernel summary and its text and CSV
    run_report     the value profile in ``ptxc run``'s report

The instrument is ``ptxc.backends.llvm.instruments.value_prof``.
"""
