"""``ptxc check``: compute-sanitizer's memcheck, initcheck, racecheck and
synccheck reports, per launch and over an application run (docs/check.md).

    memcheck    invalid accesses, in compute-sanitizer's shape
    initcheck   reads of global memory that nothing wrote
    hazards     racecheck's shared-memory hazards and synccheck's barrier errors
    app_report  every tool's report over a whole ``ptxc check`` run
    filters     --kernel-name / --kernel-name-exclude: which kernels are checked
    leaks       --leak-check full: device allocations never freed, with their call sites

The instruments are ``ptxc.backends.llvm.instruments``; a launch switches
them on with ``ptxc.launch(..., check=...)``.
"""
