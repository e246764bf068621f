"""A numpy reference of the memory counters, written from the definitions in
docs/metrics.md ("Memory access counters"), independently of the executor.

A *request* is one warp-level execution of a memory instruction with at
least one executing lane; it is given as the byte addresses of its executing
lanes (in lane order for shared memory, where the phase of a lane depends
on its lane number: pass ``lanes`` too) and the bytes each lane accesses.
Tests build the requests of a launch from each kernel's index formula
(tests/test_memory_counters.py) and sum these functions over them.
"""
from __future__ import annotations

import numpy as np

SECTOR, LINE, BANKS = 32, 128, 32


def global_request(addrs, nbytes: int) -> dict:
    """Sectors, lines and requested bytes of one global request."""
    a = np.asarray(addrs, dtype=np.int64)
    first, last = a, a + nbytes - 1
    sectors = np.unique(np.concatenate([np.arange(f // SECTOR, l // SECTOR + 1)
                                        for f, l in zip(first, last)]))
    lines = np.unique(np.concatenate([np.arange(f // LINE, l // LINE + 1)
                                      for f, l in zip(first, last)]))
    return {"requests": 1, "transactions": len(sectors), "lines": len(lines),
            "requested_bytes": nbytes * len(a)}


def shared_request(lanes, offsets, nbytes: int, bank_bytes: int = 4) -> dict:
    """Transactions and ideal transactions (phases with a lane) of one
    shared request: lanes are served in phases of 32 * bank_bytes bytes
    (32 // phases consecutive lanes each); a phase costs the largest number
    of distinct bank words that fall into one bank."""
    phases = max(1, nbytes // bank_bytes)
    per_phase = 32 // phases
    tx = ideal = 0
    for p in range(phases):
        words = set()
        for lane, off in zip(lanes, offsets):
            if lane // per_phase == p:
                first, last = off // bank_bytes, (off + nbytes - 1) // bank_bytes
                words.update(range(first, last + 1))
        if not words:
            continue
        per_bank = np.bincount([w % BANKS for w in words], minlength=BANKS)
        tx += int(per_bank.max())
        ideal += 1
    return {"requests": 1, "transactions": tx, "ideal_transactions": ideal,
            "requested_bytes": nbytes * len(lanes)}


def atomic_request(addrs) -> dict:
    return {"requests": 1, "addresses": len(set(int(a) for a in addrs))}


def add(total: dict, part: dict) -> dict:
    for k, v in part.items():
        total[k] = total.get(k, 0) + v
    return total


def warp_lanes(block: tuple) -> list[np.ndarray]:
    """Linear thread ids of each warp of a CTA of shape ``block`` (x, y, z)."""
    n = block[0] * block[1] * block[2]
    return [np.arange(w, min(w + 32, n)) for w in range(0, n, 32)]


def hist_of(requests: list[dict]) -> list[int]:
    """Sectors-per-request histogram (bin k-1: requests with k sectors)."""
    h = [0] * 32
    for r in requests:
        h[r["transactions"] - 1] += 1
    return h
