"""The CTA loop of the executor, as LLVM IR text (kernel-independent;
compiled once per process, jit.runtime).

``run_ctas(L, W, begin, end)`` runs CTAs ``begin..end-1`` (linear ids) on one
worker: for each CTA it clears shared and local memory, points the local
entry of the segment table (and of its write half, runtime.Launch) at
each warp's local memory before running it, sets up every warp
(thread ids, the lanes that exist, a reconvergence stack holding the entry
node), then runs rounds: each runnable warp runs until it finishes or reaches
a barrier; when a round ends with every unfinished warp at a barrier, the
barrier is released (``bar.red`` results published) and the next round
starts. A warp status is 0 runnable, 1 waiting at a barrier, 2 finished,
3 yielded (``ST_YIELD``: an mbarrier wait that failed, ops/mbarrier.py): a
round runs the warps of status 0 and 3; while any warp yielded, rounds
repeat without releasing the barrier. Returns 0, or 2 after an error
(W_ERR_CTA / W_ERR_WARP tell where).

The CTA loop lives in its own module and calls the kernel's ``run_warp``
through a pointer. The IR that every kernel module carries (``report``, the
counting helpers, ``ptxc_resolve``) is in prelude_ir.py.
"""
from __future__ import annotations

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import LANE_IDS


def runtime_text() -> str:
    """The CTA loop (compiled once per process)."""
    return RUN_CTAS.format(
        L=Lo, lanes=LANE_IDS, ws_clear=Lo.WS_STACK + Lo.STACK_ENTRY,
        seg_local=Lo.SEG_ENTRY_BYTES * Lo.SEG_LOCAL)


RUN_CTAS = """declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

define i32 @run_ctas(ptr %L, ptr %W, i64 %begin, i64 %end, ptr %run_warp) {{
entry:
  %pntx = getelementptr inbounds i8, ptr %L, i64 {L.L_NTID}
  %ntx = load i32, ptr %pntx, align 4
  %pnty = getelementptr inbounds i8, ptr %L, i64 4
  %nty = load i32, ptr %pnty, align 4
  %pnth = getelementptr inbounds i8, ptr %L, i64 {L.L_NTHREADS}
  %nthreads = load i32, ptr %pnth, align 4
  %pncx = getelementptr inbounds i8, ptr %L, i64 {L.L_NCTAID}
  %ncx = load i32, ptr %pncx, align 4
  %pncy = getelementptr inbounds i8, ptr %L, i64 20
  %ncy = load i32, ptr %pncy, align 4
  %pnw = getelementptr inbounds i8, ptr %L, i64 {L.L_NWARPS}
  %nwarps = load i32, ptr %pnw, align 4
  %psh = getelementptr inbounds i8, ptr %L, i64 {L.L_SHARED}
  %shsz = load i32, ptr %psh, align 4
  %ploc = getelementptr inbounds i8, ptr %L, i64 {L.L_LOCAL}
  %locsz = load i32, ptr %ploc, align 4
  %pw0 = getelementptr inbounds i8, ptr %W, i64 {L.W_WS}
  %wsb = load ptr, ptr %pw0, align 8
  %pw1 = getelementptr inbounds i8, ptr %W, i64 {L.W_LOCAL}
  %locb = load ptr, ptr %pw1, align 8
  %pw2 = getelementptr inbounds i8, ptr %W, i64 {L.W_SHARED}
  %shb = load ptr, ptr %pw2, align 8
  %pw3 = getelementptr inbounds i8, ptr %W, i64 {L.W_SEGS}
  %segs = load ptr, ptr %pw3, align 8
  %pw4 = getelementptr inbounds i8, ptr %W, i64 {L.W_COUNTERS}
  %cnt = load ptr, ptr %pw4, align 8
  %pw5 = getelementptr inbounds i8, ptr %W, i64 {L.W_CTA}
  %cta = load ptr, ptr %pw5, align 8
  %pw6 = getelementptr inbounds i8, ptr %W, i64 {L.W_WS_SIZE}
  %wssz = load i64, ptr %pw6, align 8
  %seglocal = getelementptr inbounds i8, ptr %segs, i64 {seg_local}
  %pnsegs = getelementptr inbounds i8, ptr %L, i64 {L.L_NSEGS}
  %nsegs = load i32, ptr %pnsegs, align 4
  %nsegs64 = zext i32 %nsegs to i64
  %wsegoff = mul i64 %nsegs64, {L.SEG_ENTRY_BYTES}
  %wseglocal = getelementptr inbounds i8, ptr %seglocal, i64 %wsegoff
  %lsz64 = zext i32 %locsz to i64
  %wlocal = mul i64 %lsz64, 32
  %sh64 = zext i32 %shsz to i64
  %nw64 = zext i32 %nwarps to i64
  %locbytes = mul i64 %nw64, %wlocal
  %ncx64 = zext i32 %ncx to i64
  %ncy64 = zext i32 %ncy to i64
  %ntxv0 = insertelement <32 x i32> poison, i32 %ntx, i32 0
  %ntxv = shufflevector <32 x i32> %ntxv0, <32 x i32> poison, <32 x i32> zeroinitializer
  %ntyv0 = insertelement <32 x i32> poison, i32 %nty, i32 0
  %ntyv = shufflevector <32 x i32> %ntyv0, <32 x i32> poison, <32 x i32> zeroinitializer
  %nthv0 = insertelement <32 x i32> poison, i32 %nthreads, i32 0
  %nthv = shufflevector <32 x i32> %nthv0, <32 x i32> poison, <32 x i32> zeroinitializer
  %pred0 = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_RED_POPC}
  %pred1 = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_RED_AND}
  %pred2 = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_RED_OR}
  %pres0 = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_RES_POPC}
  %pres1 = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_RES_AND}
  %pres2 = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_RES_OR}
  %pinst = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_INST}
  %ptinst = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_TINST}
  %ppercta = getelementptr inbounds i8, ptr %L, i64 {L.L_PER_CTA}
  %percta = load ptr, ptr %ppercta, align 8
  %haspc = icmp ne ptr %percta, null
  br label %cta.loop

cta.loop:
  %c = phi i64 [ %begin, %entry ], [ %cnext, %cta.inc ]
  %more = icmp ult i64 %c, %end
  br i1 %more, label %cta.body, label %finish

cta.body:
  %cx = urem i64 %c, %ncx64
  %q = udiv i64 %c, %ncx64
  %cy = urem i64 %q, %ncy64
  %cz = udiv i64 %q, %ncy64
  %cx32 = trunc i64 %cx to i32
  %cy32 = trunc i64 %cy to i32
  %cz32 = trunc i64 %cz to i32
  %c32 = trunc i64 %c to i32
  store i32 %cx32, ptr %cta, align 4
  %pcy = getelementptr inbounds i8, ptr %cta, i64 4
  store i32 %cy32, ptr %pcy, align 4
  %pcz = getelementptr inbounds i8, ptr %cta, i64 8
  store i32 %cz32, ptr %pcz, align 4
  %pcl = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_LINEAR}
  store i32 %c32, ptr %pcl, align 4
  %chi = lshr i64 %c, 32
  %chi32 = trunc i64 %chi to i32
  %pclh = getelementptr inbounds i8, ptr %cta, i64 {L.CTA_LINEAR_HI}
  store i32 %chi32, ptr %pclh, align 4
  store i32 0, ptr %pred0, align 4
  store i32 1, ptr %pred1, align 4
  store i32 0, ptr %pred2, align 4
  store i64 0, ptr %pinst, align 8
  store i64 0, ptr %ptinst, align 8
  call void @llvm.memset.p0.i64(ptr %shb, i8 0, i64 %sh64, i1 false)
  call void @llvm.memset.p0.i64(ptr %locb, i8 0, i64 %locbytes, i1 false)
  br label %winit

winit:
  %w = phi i32 [ 0, %cta.body ], [ %w1, %winit ]
  %w64 = zext i32 %w to i64
  %wsoff = mul i64 %w64, %wssz
  %wsp = getelementptr inbounds i8, ptr %wsb, i64 %wsoff
  call void @llvm.memset.p0.i64(ptr %wsp, i8 0, i64 {ws_clear}, i1 false)
  %wbase = mul i32 %w, 32
  %wbv0 = insertelement <32 x i32> poison, i32 %wbase, i32 0
  %wbv = shufflevector <32 x i32> %wbv0, <32 x i32> poison, <32 x i32> zeroinitializer
  %lin = add <32 x i32> %wbv, {lanes}
  %tx = urem <32 x i32> %lin, %ntxv
  %tq = udiv <32 x i32> %lin, %ntxv
  %ty = urem <32 x i32> %tq, %ntyv
  %tz = udiv <32 x i32> %tq, %ntyv
  %ptx = getelementptr inbounds i8, ptr %wsp, i64 {L.WS_TID}
  store <32 x i32> %tx, ptr %ptx, align 64
  %pty = getelementptr inbounds i8, ptr %wsp, i64 192
  store <32 x i32> %ty, ptr %pty, align 64
  %ptz = getelementptr inbounds i8, ptr %wsp, i64 320
  store <32 x i32> %tz, ptr %ptz, align 64
  %validv = icmp ult <32 x i32> %lin, %nthv
  %valid = bitcast <32 x i1> %validv to i32
  %pww = getelementptr inbounds i8, ptr %wsp, i64 {L.WS_WARP}
  store i32 %w, ptr %pww, align 4
  %pwv = getelementptr inbounds i8, ptr %wsp, i64 {L.WS_VALID}
  store i32 %valid, ptr %pwv, align 4
  %pwsp = getelementptr inbounds i8, ptr %wsp, i64 {L.WS_SP}
  store i32 1, ptr %pwsp, align 4
  %pst = getelementptr inbounds i8, ptr %wsp, i64 {L.WS_STACK}
  store i32 0, ptr %pst, align 4
  %pst1 = getelementptr inbounds i8, ptr %pst, i64 4
  store i32 {L.EXIT_PC}, ptr %pst1, align 4
  %pst2 = getelementptr inbounds i8, ptr %pst, i64 8
  store i32 %valid, ptr %pst2, align 4
  %w1 = add i32 %w, 1
  %wmore = icmp ult i32 %w1, %nwarps
  br i1 %wmore, label %winit, label %round.start

round.start:
  br label %wloop

wloop:
  %w2 = phi i32 [ 0, %round.start ], [ %w2n, %wnext ]
  %alldone = phi i1 [ true, %round.start ], [ %ad, %wnext ]
  %anyyield = phi i1 [ false, %round.start ], [ %ay, %wnext ]
  %w264 = zext i32 %w2 to i64
  %wsoff2 = mul i64 %w264, %wssz
  %wsp2 = getelementptr inbounds i8, ptr %wsb, i64 %wsoff2
  %pstat = getelementptr inbounds i8, ptr %wsp2, i64 {L.WS_STATUS}
  %stat = load i32, ptr %pstat, align 4
  %isdone = icmp eq i32 %stat, 2
  %iswait = icmp eq i32 %stat, 1
  %skip = or i1 %isdone, %iswait
  %adskip = and i1 %alldone, %isdone
  br i1 %skip, label %wnext, label %wrun

wrun:
  %loff = mul i64 %w264, %wlocal
  %lp = getelementptr inbounds i8, ptr %locb, i64 %loff
  store ptr %lp, ptr %seglocal, align 8
  store ptr %lp, ptr %wseglocal, align 8
  %r = call i32 %run_warp(ptr %wsp2, ptr %cta, ptr %L, ptr %segs, ptr %cnt)
  %iserr = icmp eq i32 %r, {L.ST_ERROR}
  br i1 %iserr, label %error, label %wran

wran:
  %fin = icmp eq i32 %r, {L.ST_DONE}
  %atbar = icmp eq i32 %r, {L.ST_BARRIER}
  %yielded = icmp eq i32 %r, {L.ST_YIELD}
  %waitstat = select i1 %atbar, i32 1, i32 3
  %newstat = select i1 %fin, i32 2, i32 %waitstat
  store i32 %newstat, ptr %pstat, align 4
  %ad2 = and i1 %alldone, %fin
  %ay2 = or i1 %anyyield, %yielded
  br label %wnext

wnext:
  %ad = phi i1 [ %adskip, %wloop ], [ %ad2, %wran ]
  %ay = phi i1 [ %anyyield, %wloop ], [ %ay2, %wran ]
  %w2n = add i32 %w2, 1
  %w2more = icmp ult i32 %w2n, %nwarps
  br i1 %w2more, label %wloop, label %round.end

round.end:
  br i1 %ad, label %cta.next, label %round.check

round.check:
  br i1 %ay, label %round.start, label %release

release:
  %a0 = load i32, ptr %pred0, align 4
  store i32 %a0, ptr %pres0, align 4
  %a1 = load i32, ptr %pred1, align 4
  store i32 %a1, ptr %pres1, align 4
  %a2 = load i32, ptr %pred2, align 4
  store i32 %a2, ptr %pres2, align 4
  store i32 0, ptr %pred0, align 4
  store i32 1, ptr %pred1, align 4
  store i32 0, ptr %pred2, align 4
  br label %rel.loop

rel.loop:
  %rw = phi i32 [ 0, %release ], [ %rw1, %rel.loop ]
  %rw64 = zext i32 %rw to i64
  %rwoff = mul i64 %rw64, %wssz
  %rwsp = getelementptr inbounds i8, ptr %wsb, i64 %rwoff
  %prst = getelementptr inbounds i8, ptr %rwsp, i64 {L.WS_STATUS}
  %rst = load i32, ptr %prst, align 4
  %rwait = icmp eq i32 %rst, 1
  %rnew = select i1 %rwait, i32 0, i32 %rst
  store i32 %rnew, ptr %prst, align 4
  %rw1 = add i32 %rw, 1
  %rmore = icmp ult i32 %rw1, %nwarps
  br i1 %rmore, label %rel.loop, label %round.start

cta.next:
  br i1 %haspc, label %cta.record, label %cta.inc

cta.record:
  %ci = load i64, ptr %pinst, align 8
  %cti = load i64, ptr %ptinst, align 8
  %c2 = mul i64 %c, 16
  %prec = getelementptr inbounds i8, ptr %percta, i64 %c2
  store i64 %ci, ptr %prec, align 8
  %prec1 = getelementptr inbounds i8, ptr %prec, i64 8
  store i64 %cti, ptr %prec1, align 8
  br label %cta.inc

cta.inc:
  %cnext = add i64 %c, 1
  br label %cta.loop

error:
  %pe0 = getelementptr inbounds i8, ptr %W, i64 {L.W_ERR_CTA}
  store i64 %c, ptr %pe0, align 8
  %pe1 = getelementptr inbounds i8, ptr %W, i64 {L.W_ERR_WARP}
  store i32 %w2, ptr %pe1, align 4
  ret i32 2

finish:
  ret i32 0
}}"""
