"""CTA equivalence: when a hybrid run may execute one CTA per class, and the
classes of a launch (docs/cta-equivalence.md).

    equivalence  the ``cta-equivalence`` pass: the conditions, or why not
    expr         integer expressions over %ctaid, %tid and launch constants
    classes      evaluating the conditions for every CTA of a launch
    exit_values  values after a loop and at a join
    countdown    loop exit tests != and == on an induction variable
    fault_loops  fault checks over loop iterations
"""
