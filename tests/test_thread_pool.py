"""backends/llvm/stacks.py: executor threads are pooled per stack size and
reused by later launches; a job that raises ends its thread; a forked child
starts with an empty pool (its parent's threads do not exist there)."""
from __future__ import annotations

import multiprocessing
import threading
import time

import numpy as np
import pytest

from ptxc.backends.llvm import stacks


def idents(n: int, frame=0) -> set:
    seen, lock = set(), threading.Lock()

    def target(k):
        with lock:
            seen.add(threading.current_thread())   # the object: idents are recycled
    for job in stacks.start_threads(target, n, frame, "test"):
        job.join()
    return seen


def test_threads_are_reused_per_stack_size():
    first = idents(2)
    assert len(first) == 2
    for _ in range(5):                          # parked before their jobs are done: LIFO
        assert idents(2) == first
    assert all(idents(1) <= first for _ in range(5))
    big = idents(1, frame=16 << 20)             # another stack size: another thread
    assert not big & first
    assert idents(1, frame=16 << 20) == big


def test_threads_of_huge_stacks_are_not_kept():
    frame = stacks.KEEP_STACK                   # its stack is frame + 4 MiB, over KEEP_STACK
    assert stacks.stack_bytes(frame) > stacks.KEEP_STACK
    first = idents(1, frame=frame)
    assert not idents(1, frame=frame) & first


def test_job_results_and_order():
    out = np.zeros(8, np.int64)

    def target(k):
        out[k] = k * k
    jobs = stacks.start_threads(target, 8, 0, "test")
    for job in jobs:
        job.join()
        assert not job.is_alive()
    assert out.tolist() == [k * k for k in range(8)]


def test_a_job_that_raises_ends_its_thread(monkeypatch):
    caught = []
    monkeypatch.setattr(threading, "excepthook", lambda args: caught.append(args.exc_value))
    before = idents(1)

    def boom(k):
        raise RuntimeError("job failed")
    (job,) = stacks.start_threads(boom, 1, 0, "test")
    job.join(30)
    assert not job.is_alive()
    deadline = time.monotonic() + 30            # the thread reports after marking the job done
    while not caught and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [str(e) for e in caught] == ["job failed"]
    assert idents(1)                            # a later launch still gets a thread


def _child(q):
    q.put(len(idents(2)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_makes_its_own_threads():
    idents(2)                                   # the parent's pool holds idle threads
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    p.join(60)
    if p.is_alive():
        p.kill()
        pytest.fail("the child waited on its parent's pooled threads")
    assert p.exitcode == 0 and q.get(timeout=5) == 2
