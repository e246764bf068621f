"""Running the grids that kernels launch (dynamic parallelism, CDP2), in an
order the CUDA C++ Programming Guide allows ("CUDA Dynamic Parallelism",
https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/
dynamic-parallelism.html).

A launching grid records its launches (backends/llvm/ops/device_launch.py);
once it has finished, :func:`run_tree` runs them, each one a launch of its
own with its own Profile and step budget:

1. the launches into the block's NULL stream, into streams the grid
   created and into ``cudaStreamFireAndForget``, in issue order (CTAs in
   linear order, then the order of the calls within the CTA): the guide
   lets a child start any time after its launch, keeps launches into one
   stream in order, and orders nothing between streams, so one after the
   other is one of the orders a GPU may show;
2. after them, the ``cudaStreamTailLaunch`` launches, in issue order: a
   tail launch starts only when the launching grid and all the work it
   launched have completed.

Each child's own launches run right after it, before its next sibling (the
child is complete only when its children are: the guide's "a parent grid
is not considered complete until all of its child grids have completed").
In a hybrid run every grid of a module with device launches runs the
slice that keeps its host-visible writes (``criteria=effects``,
:func:`tree_slice`): a child's branches may read what its parent wrote.
What this order cannot show: a child that spins on memory its parent
writes after the launch sees the final value, and a parent that waits for
its child through memory never sees it finish (its step budget stops it).

Limits: a grid at depth 24 cannot launch (cudaErrorLaunchMaxDepthExceeded),
and the launches outstanding in the tree (recorded, not yet completed,
including the running grids' ancestors' waiting siblings) may not exceed
``cudaLimitDevRuntimePendingLaunchCount`` (cudaErrorLaunchPendingCountExceeded):
under this order every launch of a grid is outstanding until the grid ends,
the most a GPU could have buffered.
"""
from __future__ import annotations

from ptxc.errors import PtxcError
from ptxc.backends.llvm.ops.device_launch import LaunchContext


def launches_kernels(module) -> bool:
    """Does any function of ``module`` call the device runtime's launch?
    (Scanned once per module.)"""
    got = module.attrs.get("launches_kernels")
    if got is None:
        from ptxc.passes.slice.memory_deps import CDP_LAUNCH
        from ptxc.passes.slice.calls import decode_call
        got = module.attrs["launches_kernels"] = any(
            ins.opcode == "call" and decode_call(ins).callee_name in CDP_LAUNCH
            for fn in module.functions if not fn.is_decl for ins in fn.instructions())
    return got


def tree_slice(module, slice_options: dict | None) -> dict | None:
    """The slice options of a hybrid ``ptxc.launch`` of ``module``: a module
    whose kernels launch kernels keeps every host-visible write
    (``criteria=effects``, as ptxc run does), since a launched grid reads
    what its parent and its earlier siblings wrote; else ``slice_options``."""
    if not launches_kernels(module):
        return slice_options
    return {**(slice_options or {}), "criteria": "effects"}


def run_order(records: list) -> list:
    """The records in the order they run: every non-tail launch in issue
    order, then the tail launches in issue order."""
    return [r for r in records if not r.tail] + [r for r in records if r.tail]


def run_tree(prof, launch_child, ctx: LaunchContext | None = None) -> list:
    """Run the grids ``prof``'s launch recorded, and theirs, depth first;
    ``launch_child(record, ctx)`` runs one and returns its Profile. Returns
    the Profiles in run order (also set as ``prof.device_launches``), each
    with ``launched_by``, ``parent_index`` and ``depth``."""
    out: list = []
    try:
        _run(prof, -1, launch_child, ctx or LaunchContext(), out)
    except PtxcError as e:        # a grid's fault: the printf of the grids that ran before it
        if hasattr(e, "printf"):
            e.printf = list(prof.printf) + [line for c in out for line in c.printf] + list(e.printf)
        raise
    prof.device_launches = out
    return out


def _run(prof, index: int, launch_child, ctx: LaunchContext, out: list) -> None:
    order = run_order(prof.device_launch_records)
    for k, rec in enumerate(order):
        child_ctx = LaunchContext(depth=ctx.depth + 1, outstanding=ctx.outstanding + len(order) - k,
                                  pending_limit=ctx.pending_limit)
        try:
            child = launch_child(rec, child_ctx)
        except PtxcError as e:
            e.notes = "\n".join(filter(None, [e.notes, f"note: in the grid {describe(rec, prof.kernel)}"
                                                         f" (nesting depth {child_ctx.depth})"]))
            raise
        child.launched_by, child.parent_index, child.depth = rec, index, child_ctx.depth
        out.append(child)
        _run(child, len(out) - 1, launch_child, child_ctx, out)


def describe(rec, parent_kernel: str) -> str:
    """One line naming a recorded launch and who made it."""
    from ptxc.ir.names import short
    g = "x".join(map(str, rec.grid))
    b = "x".join(map(str, rec.block))
    return (f"{short(rec.kernel, 60)}<<<{g}, {b}, {rec.shared}, {rec.stream_name}>>> launched by "
            f"{short(parent_kernel, 60)} CTA {rec.ctaid} thread {rec.tid}")
