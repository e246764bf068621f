"""Requests for CUDA graph memory nodes (native/graph_mem.c).

CUDA fixes the address of a graph allocation when its allocation node is
made (cudaGraphAddMemAllocNode, or cudaMallocAsync in a stream capture) and
keeps it across instantiations and launches; the memory exists from the
run of the allocation node to the free (a free node, cudaFreeAsync or
cudaFree: CUDA Programming Guide, "Graph Memory Nodes"). ptxc gives such an
allocation one segment number for its whole life (DeviceMemory.reserve):

* OP_MEM_RESERVE ``u64 size, u32 bad`` -> ``u32 segment``: a reserved
  number (``bad``: one the shim could not reserve; it is retired);
* OP_MALLOC_AT ``u64 size, u32 kind, u32 segment`` [+ the allocation site
  under ``ptxc check``] -> one mapping: memory at that number, made at each
  run of the allocation node. OP_FREE frees it as any other allocation, so
  a kernel that uses it after the free is told "freed allocation #N".
"""
from __future__ import annotations

import struct

from . import checks
from . import protocol as P


def reserve(session, payload: bytes) -> None:
    size, bad = struct.unpack_from("<QI", payload)
    if size == 0 or size > (1 << 32):
        session.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
        return
    try:
        seg = session.devmem.reserve(bad)
    except MemoryError:
        session.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
        return
    session.channel.reply(0, struct.pack("<II", seg, 0))


def malloc_at(session, payload: bytes) -> None:
    size, kind, seg = struct.unpack_from("<QII", payload)
    devmem = session.devmem
    if kind != P.KIND_DEVICE or devmem.bytes_live + size > session.options.gpu.total_mem:
        session.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
        return
    try:
        a = devmem.allocate(size, kind, f"graph allocation {size} bytes", seg=seg)
    except MemoryError:
        session.channel.reply(P.CUDA_ERROR_MEMORY_ALLOCATION)
        return
    checks.on_malloc(session, a, payload[16:])
    session._mapping_reply([a])


def handlers(session) -> dict:
    return {P.OP_MEM_RESERVE: lambda p: reserve(session, p),
            P.OP_MALLOC_AT: lambda p: malloc_at(session, p)}
