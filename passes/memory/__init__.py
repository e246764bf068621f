"""What memory an instruction touches, and where its address came from.

    access           state space, address and size of every read and write
    regions          pointer provenance for the slice: which object an address may point into
    measured         which instructions the memory counters measure
    checked          which accesses a hybrid run bounds-checks without performing them
    provenance       the allocation an access's address started from
    provenance_flow  the bases of the provenance check, loaded pointers included
    lane_stride      how a value changes from lane to lane (the memory fast path's hint)
"""
