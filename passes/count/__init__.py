"""Static instruction counts and the tables of the count report
(docs/count.md). The ``count`` pass itself, which also runs the configured
launch, is ``ptxc.profile.count_pass``.

    static          counts per basic block, function and module
    render          the count report as text and CSV
    memory_table    the memory part of a count report with memory counters
    memory_ranking  a launch's memory instructions, worst first
"""
