"""memcheck's bounds of device-heap blocks: in the memcheck variant a
global or generic access whose address lies in the device heap's segment
must also lie inside one malloc block's requested bytes, as an access to a
cudaMalloc allocation must lie inside it (docs/check.md). The heap is one
segment (ops/device_heap.py); its block map, kept by the allocator, gives
per 16-byte granule 1 + the first granule of its block (0: free) and per
block the offset its requested bytes end at. ``ptxc_heap_bounds`` (native,
below) returns the lanes that fail: a lane whose first and last byte are in
different blocks (or in free memory), or whose last byte is past its
block's requested size. The launch state gives the heap's segment and map
(layout.L_HEAP_*: 0 when there is no heap); an access outside the heap
costs one vector compare.
"""
from __future__ import annotations

from ptxc.backends.llvm import layout as Lo

NAME = "ptxc_heap_bounds"

HEAP_BOUNDS = f"""define internal i32 @{NAME}(ptr %L, ptr %addrs, i32 %mask, i64 %n, i64 %shift) noinline {{
entry:
  %pseg = getelementptr inbounds i8, ptr %L, i64 {Lo.L_HEAP_SEG}
  %hseg = load i32, ptr %pseg, align 4
  %none = icmp eq i32 %hseg, 0
  br i1 %none, label %ok, label %look
look:
  %addr = load <32 x i64>, ptr %addrs, align 8
  %mv = bitcast i32 %mask to <32 x i1>
  %shv0 = insertelement <32 x i64> poison, i64 %shift, i32 0
  %shv = shufflevector <32 x i64> %shv0, <32 x i64> poison, <32 x i32> zeroinitializer
  %segv = lshr <32 x i64> %addr, %shv
  %hs64 = zext i32 %hseg to i64
  %hs0 = insertelement <32 x i64> poison, i64 %hs64, i32 0
  %hsv = shufflevector <32 x i64> %hs0, <32 x i64> poison, <32 x i32> zeroinitializer
  %inh0 = icmp eq <32 x i64> %segv, %hsv
  %inh = and <32 x i1> %inh0, %mv
  %inhi = bitcast <32 x i1> %inh to i32
  %any = icmp ne i32 %inhi, 0
  br i1 %any, label %check, label %ok
check:
  %one = shl i64 1, %shift
  %lowm = sub i64 %one, 1
  %lm0 = insertelement <32 x i64> poison, i64 %lowm, i32 0
  %lmv = shufflevector <32 x i64> %lm0, <32 x i64> poison, <32 x i32> zeroinitializer
  %off = and <32 x i64> %addr, %lmv
  %n0 = insertelement <32 x i64> poison, i64 %n, i32 0
  %nv = shufflevector <32 x i64> %n0, <32 x i64> poison, <32 x i32> zeroinitializer
  %endb = add <32 x i64> %off, %nv
  %pgran = getelementptr inbounds i8, ptr %L, i64 {Lo.L_HEAP_GRAN}
  %gran = load i32, ptr %pgran, align 4
  %gran64 = zext i32 %gran to i64
  %gr0 = insertelement <32 x i64> poison, i64 %gran64, i32 0
  %grv = shufflevector <32 x i64> %gr0, <32 x i64> poison, <32 x i32> zeroinitializer
  %g0 = lshr <32 x i64> %off, splat (i64 4)
  %last = sub <32 x i64> %endb, splat (i64 1)
  %g1 = lshr <32 x i64> %last, splat (i64 4)
  %inr = icmp ult <32 x i64> %g1, %grv
  %live = and <32 x i1> %inh, %inr
  %powner = getelementptr inbounds i8, ptr %L, i64 {Lo.L_HEAP_OWNER}
  %owner = load ptr, ptr %powner, align 8
  %ob0 = insertelement <32 x ptr> poison, ptr %owner, i32 0
  %obv = shufflevector <32 x ptr> %ob0, <32 x ptr> poison, <32 x i32> zeroinitializer
  %p0 = getelementptr i32, <32 x ptr> %obv, <32 x i64> %g0
  %p1 = getelementptr i32, <32 x ptr> %obv, <32 x i64> %g1
  %o0 = call <32 x i32> @llvm.masked.gather.v32i32.v32p0(<32 x ptr> %p0, i32 4, <32 x i1> %live, <32 x i32> zeroinitializer)
  %o1 = call <32 x i32> @llvm.masked.gather.v32i32.v32p0(<32 x ptr> %p1, i32 4, <32 x i1> %live, <32 x i32> zeroinitializer)
  %used = icmp ne <32 x i32> %o0, zeroinitializer
  %same = icmp eq <32 x i32> %o0, %o1
  %inblk = and <32 x i1> %used, %same
  %both = and <32 x i1> %inblk, %live
  %start = sub <32 x i32> %o0, splat (i32 1)
  %start64 = zext <32 x i32> %start to <32 x i64>
  %pend = getelementptr inbounds i8, ptr %L, i64 {Lo.L_HEAP_END}
  %ends = load ptr, ptr %pend, align 8
  %eb0 = insertelement <32 x ptr> poison, ptr %ends, i32 0
  %ebv = shufflevector <32 x ptr> %eb0, <32 x ptr> poison, <32 x i32> zeroinitializer
  %pe = getelementptr i64, <32 x ptr> %ebv, <32 x i64> %start64
  %blkend = call <32 x i64> @llvm.masked.gather.v32i64.v32p0(<32 x ptr> %pe, i32 8, <32 x i1> %both, <32 x i64> zeroinitializer)
  %fits = icmp ule <32 x i64> %endb, %blkend
  %good = and <32 x i1> %both, %fits
  %bad0 = xor <32 x i1> %good, splat (i1 true)
  %bad = and <32 x i1> %bad0, %live
  %badi = bitcast <32 x i1> %bad to i32
  ret i32 %badi
ok:
  ret i32 0
}}"""
DECL = "declare <32 x i32> @llvm.masked.gather.v32i32.v32p0(<32 x ptr>, i32, <32 x i1>, <32 x i32>)"


def heap_bounds(cg, r: str, a_tmp: str, nbytes: int) -> str:
    """``r`` (ptxc_resolve's failed lanes) with the lanes that leave their
    heap block added as out of bounds (the memcheck variant only)."""
    f = cg.f
    cg.helpers.setdefault(NAME, HEAP_BOUNDS)
    cg.decls.add(DECL)
    bad = f.call("i32", NAME, [("ptr", "%L"), ("ptr", a_tmp), ("i32", cg.emi), ("i64", str(nbytes)),
                               ("i64", str(cg.plan.shift))])
    return f.val(f"or i64 {r}, {f.cast('zext', 'i32', bad, 'i64')}")
