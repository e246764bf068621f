"""Instruments: what a tool adds to the generated kernel, one module per
instrument (with its native helpers in ``<name>_ir`` where it has some).

    memcheck, initcheck (+ initcheck_ops)  invalid and uninitialised accesses
    racecheck (+ racecheck_ir, racecheck_mbar), synccheck, check_hooks
                                           shared-memory hazards, barrier errors
    fault_check                            a hybrid run's checks of skipped accesses
    provenance_ir                          the allocation an address started from
    mem_count (+ memcount_ir)              the memory counters
    value_prof                             value profiles
    inject_ir (+ inject_ctl)               error injection
"""
