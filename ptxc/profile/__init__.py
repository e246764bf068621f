"""Profiles: the count pass's launch, every kernel of a module, and many
modules (``ptxc opt --pass=count``, ``ptxc profile``; docs/profile.md).

    count_pass      the ``count`` pass: static counts and, with a launch, its counters
    module_profile  every kernel of a module: one launch per kernel, one row each
    module_render   text, CSV and JSON of a module profile
    split           ``ptxc profile FILE`` with the per-kernel work in forked processes
    fork            compiles and launches split over forked processes
    batch           many modules: ``ptxc profile DIR|FILES...``
    batch_render    text, CSV and JSON of a batch
    dask_cluster    a batch on a Dask cluster
    sqlite_report   the SQLite report of ``ptxc profile --report``
"""
