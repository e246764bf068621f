"""Code generation and LLVM overlapped: kernels compiled in chunks, the
object code of one chunk made in a second thread while the main thread
generates the next chunk's LLVM IR.

jit.compile_many compiles a batch of kernels (all those of an XLA module
that ``ptxc profile`` runs). Generating LLVM IR text is Python (it holds the
GIL); parsing, optimising and emitting it is LLVM, called through ctypes,
which releases the GIL while it runs (llvmlite serialises LLVM calls with a
lock of its own: LLVM work never runs in two threads at once). With more
than PIPELINE_MIN kernels the batch is cut into chunks of at least
PIPELINE_MIN kernels (at most PIPELINE_CHUNKS chunks; each LLVM module costs
a few ms of fixed overhead, jit.py): on a machine with two cores the LLVM
work of a chunk runs beside the code generation of the next. The objects
and the functions in them are the same as with one LLVM module per level
(code of a function does not depend on the other functions of its module:
each run_warp_KEY is self-contained, its helpers are internal copies).
Identical kernels (same key) are still compiled once.
"""
from __future__ import annotations

import threading

PIPELINE_MIN = 12            # kernels per chunk at least
PIPELINE_CHUNKS = 4          # chunks at most


def chunks(todo: list) -> list:
    """``todo`` cut into consecutive chunks (one chunk when it is small)."""
    if len(todo) < 2 * PIPELINE_MIN:
        return [todo]
    n = min(PIPELINE_CHUNKS, len(todo) // PIPELINE_MIN)
    size = -(-len(todo) // n)
    return [todo[i:i + size] for i in range(0, len(todo), size)]


class _Worker(threading.Thread):
    """Runs ``objects(unique, names)`` for each chunk handed to it, in order."""

    def __init__(self, objects):
        super().__init__(name="ptxc-llvm", daemon=True)
        self.objects, self.jobs, self.results, self.error = objects, [], [], None
        self.ready = threading.Condition()
        self.closed = False

    def put(self, unique: dict, names: str) -> None:
        with self.ready:
            self.jobs.append((unique, names))
            self.ready.notify()

    def close(self) -> None:
        with self.ready:
            self.closed = True
            self.ready.notify()

    def run(self) -> None:
        while True:
            with self.ready:
                while not self.jobs and not self.closed:
                    self.ready.wait()
                if not self.jobs:
                    return
                unique, names = self.jobs.pop(0)
            if self.error is None:
                try:
                    self.results.append(self.objects(unique, names))
                except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
                    self.error = e


def compile_pipelined(todo: list, generate, objects, engine) -> tuple:
    """(made, engine, functions compiled, seconds spent generating):
    ``generate(kernels)`` -> [(kernel, generator, text)] (main thread),
    ``objects({name: (generator, text)}, names)`` -> ([object], compiled)
    (second thread when there are several chunks), ``engine(objects)`` -> the
    execution engine holding them all."""
    import time
    parts = chunks(todo)
    made, seen, gen_s = [], set(), 0.0
    if len(parts) == 1:
        t = time.perf_counter()
        made = generate(todo)
        gen_s = time.perf_counter() - t
        if not made:
            return made, None, 0, gen_s
        objs, compiled = objects({g.name: (g, text) for _, g, text in made}, _names(made))
        return made, engine(objs), compiled, gen_s
    worker = _Worker(objects)
    worker.start()
    try:
        for part in parts:
            t = time.perf_counter()
            got = generate(part)
            gen_s += time.perf_counter() - t
            made += got
            unique = {g.name: (g, text) for _, g, text in got if g.name not in seen}
            seen.update(unique)
            if unique:
                worker.put(unique, _names(got))
    finally:
        worker.close()
        worker.join()
    if worker.error is not None:
        raise worker.error
    if not made:
        return made, None, 0, gen_s
    objs = [o for os_, _ in worker.results for o in os_]
    return made, engine(objs), sum(c for _, c in worker.results), gen_s


def _names(made: list) -> str:
    return ", ".join(k.name for k, _, _ in made)
