"""CTA equivalence: when a hybrid run may execute one CTA per class, and the
classes of a launch (docs/cta-equivalence.md).

    equivalence  the ``cta-equivalence`` pass: the conditions, or why not
    classes      the classes of a launch: classify, signatures of atoms and fault checks
    fault_loops  fault checks over loop iterations (AffineBuilder, their signatures)
    evaluator    node values for a chunk of CTAs and every thread of the block
    loop_bounds  loop exit tests <, <=, >, >= and comparisons inside a loop
    countdown    loop exit tests != and ==; the branches every lane entering a loop passed
    segments     a launch's segment table and the executor's address check
    values       Exact and Sep values, their range checks, LoopBound, Unclassifiable
    expr         integer expressions over %ctaid, %tid and launch constants (ExprBuilder)
    exit_values  formulas of values after a loop and at a join
    nodes        the formula nodes, the integer types and comparisons they accept

Each module imports only modules listed below it (no import cycle).
"""
