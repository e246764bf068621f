"""The LLVM IR text every kernel module carries besides its ``run_warp``
(codegen.module_text_of; jit's object-cache keys hash it too).

``report`` (REPORT) records an error in a warp state. PRELUDE holds the
small helpers of every ``run_warp`` (``ptxc_enter``, ``ptxc_add``,
``ptxc_popc_add``, ``ptxc_branch``, ``ptxc_diverge``) and PRELUDE_DECLS the
declarations they need; RESOLVE is the generic (segment-table) address
resolution ``ptxc_resolve`` of ops/resolve.py (a helper-library entry in
level-0 code: helper_lib.py) and MEM_ERROR ``ptxc_mem_error``, which
reports a failed access. The CTA loop, compiled once per process, is in
runtime_ir.py.
"""
from __future__ import annotations

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import LANE_IDS


REPORT = f"""define internal void @report(ptr %ws, i32 %code, i32 %id, i32 %lane, i64 %addr) noinline cold {{
entry:
  %p0 = getelementptr inbounds i8, ptr %ws, i64 {Lo.WS_ERR_CODE}
  store i32 %code, ptr %p0, align 4
  %p1 = getelementptr inbounds i8, ptr %ws, i64 {Lo.WS_ERR_ID}
  store i32 %id, ptr %p1, align 4
  %p2 = getelementptr inbounds i8, ptr %ws, i64 {Lo.WS_ERR_LANE}
  store i32 %lane, ptr %p2, align 4
  %p3 = getelementptr inbounds i8, ptr %ws, i64 {Lo.WS_ERR_ADDR}
  store i64 %addr, ptr %p3, align 8
  ret void
}}"""

# Small helpers called by every kernel's run_warp: they keep the generated IR
# short (compile time) and are inlined by LLVM when a launch is optimised.
# Their calls of each other are marked alwaysinline, which level 0 honours
# too (jit._promote): at level 0 every call spills the caller's live vector
# registers, and ptxc_branch made seven nested calls per branch.
PRELUDE = f"""define internal i1 @ptxc_enter(ptr %cnt, ptr %cta, ptr %steps, i64 %node, i64 %n, i32 %m, i64 %max) inlinehint {{
entry:
  %p0 = getelementptr inbounds i64, ptr %cnt, i64 %node
  %c0 = load i64, ptr %p0, align 8
  %c0n = add i64 %c0, 1
  store i64 %c0n, ptr %p0, align 8
  %pc32 = call i32 @llvm.ctpop.i32(i32 %m)
  %pc = zext i32 %pc32 to i64
  %p1 = getelementptr inbounds i64, ptr %p0, i64 1
  %c1 = load i64, ptr %p1, align 8
  %c1n = add i64 %c1, %pc
  store i64 %c1n, ptr %p1, align 8
  %pi = getelementptr inbounds i8, ptr %cta, i64 {Lo.CTA_INST}
  %i0 = load i64, ptr %pi, align 8
  %i1 = add i64 %i0, %n
  store i64 %i1, ptr %pi, align 8
  %pt = getelementptr inbounds i8, ptr %cta, i64 {Lo.CTA_TINST}
  %t0 = load i64, ptr %pt, align 8
  %tn = mul i64 %pc, %n
  %t1 = add i64 %t0, %tn
  store i64 %t1, ptr %pt, align 8
  %s0 = load i64, ptr %steps, align 8
  %s1 = add i64 %s0, 1
  store i64 %s1, ptr %steps, align 8
  %over = icmp ugt i64 %s1, %max
  ret i1 %over
}}

define internal void @ptxc_add(ptr %cnt, i64 %idx, i64 %v) inlinehint {{
entry:
  %p = getelementptr inbounds i64, ptr %cnt, i64 %idx
  %c = load i64, ptr %p, align 8
  %cn = add i64 %c, %v
  store i64 %cn, ptr %p, align 8
  ret void
}}

define internal void @ptxc_popc_add(ptr %cnt, i64 %idx, i32 %m) inlinehint {{
entry:
  %pc32 = call i32 @llvm.ctpop.i32(i32 %m)
  %pc = zext i32 %pc32 to i64
  call void @ptxc_add(ptr %cnt, i64 %idx, i64 %pc) alwaysinline
  ret void
}}

define internal void @ptxc_branch(ptr %cnt, i64 %base, i32 %m, i32 %taken) inlinehint {{
entry:
  call void @ptxc_add(ptr %cnt, i64 %base, i64 1) alwaysinline
  %b1 = add i64 %base, 1
  call void @ptxc_popc_add(ptr %cnt, i64 %b1, i32 %m) alwaysinline
  %b2 = add i64 %base, 2
  call void @ptxc_popc_add(ptr %cnt, i64 %b2, i32 %taken) alwaysinline
  %nt0 = xor i32 %taken, -1
  %nt = and i32 %m, %nt0
  %b3 = add i64 %base, 3
  call void @ptxc_popc_add(ptr %cnt, i64 %b3, i32 %nt) alwaysinline
  ret void
}}

; Divergence at a two-way branch (GPGPU-Sim's IPDOM stack): the top entry
; becomes the reconvergence entry (or is dropped when it already reconverges
; at %r), then the not-taken and taken paths are pushed (taken on top). A path
; whose target is the reconvergence point is not pushed. Returns the new
; depth, or -1 on overflow.
define internal i32 @ptxc_diverge(ptr %ws, i32 %sp, i32 %currpc, i32 %r, i32 %pcf, i32 %mf, i32 %pct, i32 %mt, i32 %depth) inlinehint {{
entry:
  %stack = getelementptr inbounds i8, ptr %ws, i64 {Lo.WS_STACK}
  %top = sub i32 %sp, 1
  %same = icmp eq i32 %currpc, %r
  br i1 %same, label %drop, label %keep
keep:
  %tp = getelementptr inbounds [4 x i32], ptr %stack, i32 %top
  store i32 %r, ptr %tp, align 4
  br label %push
drop:
  br label %push
push:
  %sp0 = phi i32 [ %sp, %keep ], [ %top, %drop ]
  %room = add i32 %sp0, 2
  %full = icmp ugt i32 %room, %depth
  br i1 %full, label %overflow, label %pf
pf:
  %pushf = icmp ne i32 %pcf, %r
  br i1 %pushf, label %dof, label %pt
dof:
  %ef = getelementptr inbounds [4 x i32], ptr %stack, i32 %sp0
  store i32 %pcf, ptr %ef, align 4
  %ef1 = getelementptr inbounds i32, ptr %ef, i32 1
  store i32 %r, ptr %ef1, align 4
  %ef2 = getelementptr inbounds i32, ptr %ef, i32 2
  store i32 %mf, ptr %ef2, align 4
  %sp1 = add i32 %sp0, 1
  br label %pt
pt:
  %spa = phi i32 [ %sp0, %pf ], [ %sp1, %dof ]
  %pusht = icmp ne i32 %pct, %r
  br i1 %pusht, label %dot, label %out
dot:
  %et = getelementptr inbounds [4 x i32], ptr %stack, i32 %spa
  store i32 %pct, ptr %et, align 4
  %et1 = getelementptr inbounds i32, ptr %et, i32 1
  store i32 %r, ptr %et1, align 4
  %et2 = getelementptr inbounds i32, ptr %et, i32 2
  store i32 %mt, ptr %et2, align 4
  %sp2 = add i32 %spa, 1
  br label %out
out:
  %spo = phi i32 [ %spa, %pt ], [ %sp2, %dot ]
  ret i32 %spo
overflow:
  ret i32 -1
}}"""
PRELUDE_DECLS = ("declare i32 @llvm.ctpop.i32(i32)", "declare i32 @llvm.cttz.i32(i32, i1)",
                 "declare <32 x ptr> @llvm.masked.gather.v32p0.v32p0(<32 x ptr>, i32, <32 x i1>, <32 x ptr>)",
                 "declare <32 x i64> @llvm.masked.gather.v32i64.v32p0(<32 x ptr>, i32, <32 x i1>, <32 x i64>)")

# Generic (segment-table) address resolution, out of line: 32 addresses at
# %addrs -> host pointers at %out. Returns the out-of-bounds lanes in the low
# 32 bits and the misaligned lanes in the high 32 bits (executing lanes only).
RESOLVE = f"""define internal i64 @ptxc_resolve(ptr %segs, i32 %nsegs, ptr %addrs, i32 %mask, i64 %n, ptr %out, i64 %shift) inlinehint {{
entry:
  %addr = load <32 x i64>, ptr %addrs, align 8
  %mv = bitcast i32 %mask to <32 x i1>
  %shv0 = insertelement <32 x i64> poison, i64 %shift, i32 0
  %shv = shufflevector <32 x i64> %shv0, <32 x i64> poison, <32 x i32> zeroinitializer
  %sh = lshr <32 x i64> %addr, %shv
  %seg = trunc <32 x i64> %sh to <32 x i32>
  %one = shl i64 1, %shift
  %lowm = sub i64 %one, 1
  %lm0 = insertelement <32 x i64> poison, i64 %lowm, i32 0
  %lmv = shufflevector <32 x i64> %lm0, <32 x i64> poison, <32 x i32> zeroinitializer
  %off = and <32 x i64> %addr, %lmv
  %ns0 = insertelement <32 x i32> poison, i32 %nsegs, i32 0
  %ns = shufflevector <32 x i32> %ns0, <32 x i32> poison, <32 x i32> zeroinitializer
  %inr = icmp ult <32 x i32> %seg, %ns
  %segc = select <32 x i1> %inr, <32 x i32> %seg, <32 x i32> zeroinitializer
  %eoff = mul <32 x i32> %segc, splat (i32 {Lo.SEG_ENTRY_BYTES})
  %sg0 = insertelement <32 x ptr> poison, ptr %segs, i32 0
  %sg = shufflevector <32 x ptr> %sg0, <32 x ptr> poison, <32 x i32> zeroinitializer
  %ent = getelementptr i8, <32 x ptr> %sg, <32 x i32> %eoff
  %base = call <32 x ptr> @llvm.masked.gather.v32p0.v32p0(<32 x ptr> %ent, i32 8, <32 x i1> %mv, <32 x ptr> zeroinitializer)
  %ents = getelementptr i8, <32 x ptr> %ent, <32 x i64> splat (i64 8)
  %size = call <32 x i64> @llvm.masked.gather.v32i64.v32p0(<32 x ptr> %ents, i32 8, <32 x i1> %mv, <32 x i64> zeroinitializer)
  %entl = getelementptr i8, <32 x ptr> %ent, <32 x i64> splat (i64 16)
  %stride = call <32 x i64> @llvm.masked.gather.v32i64.v32p0(<32 x ptr> %entl, i32 8, <32 x i1> %mv, <32 x i64> zeroinitializer)
  %n0 = insertelement <32 x i64> poison, i64 %n, i32 0
  %nv = shufflevector <32 x i64> %n0, <32 x i64> poison, <32 x i32> zeroinitializer
  %end = add <32 x i64> %off, %nv
  %ok = icmp ule <32 x i64> %end, %size
  %bad0 = xor <32 x i1> %ok, splat (i1 true)
  %bad = and <32 x i1> %bad0, %mv
  %badi = bitcast <32 x i1> %bad to i32
  %am = sub <32 x i64> %nv, splat (i64 1)
  %low = and <32 x i64> %addr, %am
  %mis0 = icmp ne <32 x i64> %low, zeroinitializer
  %mis = and <32 x i1> %mis0, %mv
  %misi = bitcast <32 x i1> %mis to i32
  %lane = zext <32 x i32> {LANE_IDS} to <32 x i64>
  %lo = mul <32 x i64> %lane, %stride
  %hoff = add <32 x i64> %off, %lo
  %host = getelementptr i8, <32 x ptr> %base, <32 x i64> %hoff
  store <32 x ptr> %host, ptr %out, align 8
  %r0 = zext i32 %badi to i64
  %r1 = zext i32 %misi to i64
  %r2 = shl i64 %r1, 32
  %r = or i64 %r0, %r2
  ret i64 %r
}}"""

MEM_ERROR = f"""; A failed memory access: report the first out-of-bounds lane, else the
; first misaligned one.
define internal void @ptxc_mem_error(ptr %ws, i64 %r, i32 %id, ptr %addrs) cold noinline {{
entry:
  %oob = trunc i64 %r to i32
  %hi = lshr i64 %r, 32
  %mis = trunc i64 %hi to i32
  %isoob = icmp ne i32 %oob, 0
  %m = select i1 %isoob, i32 %oob, i32 %mis
  %code = select i1 %isoob, i32 {Lo.ERR_OOB}, i32 {Lo.ERR_MISALIGNED}
  %lane = call i32 @llvm.cttz.i32(i32 %m, i1 true)
  %pa = getelementptr inbounds i64, ptr %addrs, i32 %lane
  %a = load i64, ptr %pa, align 8
  call void @report(ptr %ws, i32 %code, i32 %id, i32 %lane, i64 %a)
  ret void
}}"""
