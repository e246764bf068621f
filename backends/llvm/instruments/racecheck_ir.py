"""The native part of racecheck (racecheck.py has the model): the shadow
memory of the CTA a worker runs, updated and checked by LLVM IR added to
the kernel module of the racecheck variant, so that a shared access costs
no Python call unless it meets a hazard.

Functions (internal to the kernel module; check_hooks.py emits the calls):

* ``ptxc_race(L, cta, ws, i32 id, ptr addrs, i32 lanes, i32 kind, i32
  nbytes, i64 lowmask)``: one warp-level shared access: the ``lanes`` (i32
  mask) access ``nbytes`` each at ``addrs[lane] & lowmask`` (the offset in
  the shared window; ``lowmask`` strips a generic address's segment).
  Pass 1 checks every (lane, byte) against the state before the access
  (the lanes of one instruction never see each other's records); each
  hazard is one row in the worker's row buffer, and if there is any row
  ``ptxc_race_report(L, cta, ws, i32 id, i32 kind, i32 nbytes, ptr state)``
  (Python, racecheck.RaceChecker.access) records them. Pass 2 stamps the
  access: a write sets the byte's write record and clears its readers; a
  read keeps the last two readers by different threads (r1 the latest;
  lanes of one read that share a byte leave the first in r2 and the last
  in r1, as the vectorised model of racecheck.py does).
* ``ptxc_race_state(cta)``: the worker's state, cleared first when it
  described another CTA (null without racecheck); check_hooks.race_mbar_hook
  calls it before ``ptxc_race_mbar`` (Python, racecheck_mbar.py) so that the
  mbarrier clocks are set for the CTA the state describes.
* ``ptxc_race_sync(cta, ws, i32 event)``: a CTA barrier (event 0) adds 1
  to the warp's ``ep`` and ``wep``; a ``bar.warp.sync`` (event 1) to its
  ``wep``.

The state (one per worker, racecheck.RaceShadow; the CTA state's
layout.CTA_RACE field points to it, 0: no racecheck) holds the CTA it
describes; an access or barrier of another CTA first clears it (the bytes
touched so far, the barrier counts and the mbarrier clocks), so every CTA
starts clean.

Layouts (little-endian, offsets in bytes):

* state ``H_*``: i64 linear CTA (-1: none), i64 warp accesses of this CTA
  (``seq``), i64 shared bytes covered, i64 bytes touched (``hi``), ptr byte
  records, ptr i32 ``ep[nwarps]``, ptr i32 ``wep[nwarps]``, i64 nwarps, ptr
  rows, i64 rows written, i64 row capacity, ptr i32 ``clk[nwarps]``, ptr i32
  ``know[nwarps][nwarps]`` (racecheck_mbar.py sets both at mbarrier events;
  a record of warp ``a`` is ordered before warp ``w`` now when its ``clk``
  is lower than ``know[w][a]``, in addition to the ``ep``/``wep`` rules),
  and, set by the generated code before a ``st.shared`` calls ``ptxc_race``
  (check_hooks.race_hook), ptr the values it stores (element i of every
  lane at ``i * 32 * size + lane * size``; null: unknown), ptr its lane
  addresses, i64 their offset mask, i64 ``size`` (bytes per element): racecheck.RaceChecker.access compares
  a write-after-write's bytes with the shared memory's to find the writes
  of the same value (compute-sanitizer's INFO level).
* one record ``REC_*`` (32 bytes): i32 thread + 1 (0: none), i32
  instruction, i32 ``ep``, i32 ``wep``, i64 ``seq``, i32 ``clk`` (the
  warp's mbarrier clock), 4 spare; per shared byte (``BYTE`` = 104): the
  last write, reader r1, reader r2, i32 atomic flag of the write.
* a hazard row (``ROW`` = 24): i32 record (0 write, 1 r1, 2 r2), i32 lane
  of the later access, i32 earlier instruction, i32 earlier thread, i32
  shared byte, i32 1 when both threads are in one warp.
"""
from __future__ import annotations

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_LOAD

H_LINEAR, H_SEQ, H_SIZE, H_HI, H_BYTES, H_EP, H_WEP, H_NWARPS, H_ROWS, H_NROWS, H_CAP, \
    H_CLK, H_KNOW, H_DATA, H_ADDRS, H_LOWMASK, H_ESIZE = range(0, 136, 8)
H_BYTES_TOTAL = 136
REC_TID, REC_IID, REC_EP, REC_WEP, REC_SEQ, REC_CLK, REC = 0, 4, 8, 12, 16, 24, 32
B_W, B_R1, B_R2, B_ATOM, BYTE = 0, 32, 64, 96, 104
ROW = 24
MAX_NBYTES = 64             # bytes per lane of one access (ld.shared.v4.b64 has 32)
ROW_CAP = 3 * 32 * MAX_NBYTES

DECLS = ("declare i32 @llvm.cttz.i32(i32, i1)",
         "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
         "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
         "declare void @ptxc_race_report(ptr, ptr, ptr, i32, i32, i32, ptr)")


def _field(name: str, base: str, off: int, t: str) -> str:
    """%name = the ``t`` at ``base + off``; %name.p its address."""
    return (f"  %{name}.p = getelementptr inbounds i8, ptr {base}, i64 {off}\n"
            f"  %{name} = load {t}, ptr %{name}.p, align {4 if t == 'i32' else 8}")


STATE = f"""define internal ptr @ptxc_race_state(ptr %cta) inlinehint {{
entry:
{_field("h", "%cta", Lo.CTA_RACE, "ptr")}
  %none = icmp eq ptr %h, null
  br i1 %none, label %out, label %have
have:
{_field("lin32", "%cta", Lo.CTA_LINEAR, "i32")}
  %lin = sext i32 %lin32 to i64
  %cur = load i64, ptr %h, align 8
  %same = icmp eq i64 %cur, %lin
  br i1 %same, label %out, label %reset
reset:
  store i64 %lin, ptr %h, align 8
{_field("seq", "%h", H_SEQ, "i64")}
  store i64 0, ptr %seq.p, align 8
{_field("hi", "%h", H_HI, "i64")}
{_field("bytes", "%h", H_BYTES, "ptr")}
  %n = mul i64 %hi, {BYTE}
  call void @llvm.memset.p0.i64(ptr %bytes, i8 0, i64 %n, i1 false)
  store i64 0, ptr %hi.p, align 8
{_field("nw", "%h", H_NWARPS, "i64")}
  %nw4 = mul i64 %nw, 4
{_field("ep", "%h", H_EP, "ptr")}
{_field("wep", "%h", H_WEP, "ptr")}
  call void @llvm.memset.p0.i64(ptr %ep, i8 0, i64 %nw4, i1 false)
  call void @llvm.memset.p0.i64(ptr %wep, i8 0, i64 %nw4, i1 false)
{_field("clk", "%h", H_CLK, "ptr")}
{_field("know", "%h", H_KNOW, "ptr")}
  call void @llvm.memset.p0.i64(ptr %clk, i8 0, i64 %nw4, i1 false)
  %nn4 = mul i64 %nw4, %nw
  call void @llvm.memset.p0.i64(ptr %know, i8 0, i64 %nn4, i1 false)
  br label %out
out:
  %r = phi ptr [ null, %entry ], [ %h, %have ], [ %h, %reset ]
  ret ptr %r
}}"""

# The start of a function that works on the calling warp's racecheck state:
# %h (the per-worker shadow; none: nothing to do, branch to %out) and %w
# (the warp's index, i64).
_WARP_STATE = f"""  %h = call ptr @ptxc_race_state(ptr %cta)
  %none = icmp eq ptr %h, null
  br i1 %none, label %out, label %go
go:
{_field("warp", "%ws", Lo.WS_WARP, "i32")}
  %w = zext i32 %warp to i64
"""

SYNC = f"""define internal void @ptxc_race_sync(ptr %cta, ptr %ws, i32 %event) noinline {{
entry:
{_WARP_STATE}{_field("epb", "%h", H_EP, "ptr")}
{_field("wepb", "%h", H_WEP, "ptr")}
  %pe = getelementptr inbounds i32, ptr %epb, i64 %w
  %pw = getelementptr inbounds i32, ptr %wepb, i64 %w
  %isbar = icmp eq i32 %event, 0
  br i1 %isbar, label %bar, label %wsync
bar:
  %e = load i32, ptr %pe, align 4
  %e1 = add i32 %e, 1
  store i32 %e1, ptr %pe, align 4
  br label %wsync
wsync:
  %v = load i32, ptr %pw, align 4
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %pw, align 4
  br label %out
out:
  ret void
}}"""

# 0: no hazard with record %r; 1: a hazard between warps; 2: inside one warp
CHECK = f"""define internal i32 @ptxc_race_check(ptr %r, i32 %me1, i32 %warp, i64 %seq, i32 %ep, i32 %wep, ptr %kn) alwaysinline {{
entry:
  %t1 = load i32, ptr %r, align 8
{_field("rclk", "%r", REC_CLK, "i32")}
{_field("s", "%r", REC_SEQ, "i64")}
{_field("rep", "%r", REC_EP, "i32")}
{_field("rwep", "%r", REC_WEP, "i32")}
  %valid = icmp ne i32 %t1, 0
  %other = icmp ne i32 %t1, %me1
  %notnow = icmp ne i64 %s, %seq
  %t = sub i32 %t1, 1
  %tw = lshr i32 %t, 5
  %samew = icmp eq i32 %tw, %warp
  %o1w = icmp slt i32 %rwep, %wep
  %o2e = icmp slt i32 %rep, %ep
  %twv = select i1 %valid, i32 %tw, i32 0
  %twz = zext i32 %twv to i64
  %kp = getelementptr inbounds i32, ptr %kn, i64 %twz
  %k = load i32, ptr %kp, align 4
  %o2m = icmp slt i32 %rclk, %k
  %o2 = or i1 %o2e, %o2m
  %o1 = or i1 %o1w, %o2m
  %ordered = select i1 %samew, i1 %o1, i1 %o2
  %c1 = and i1 %valid, %other
  %c2 = and i1 %c1, %notnow
  %unord = xor i1 %ordered, true
  %bad = and i1 %c2, %unord
  %sev = select i1 %samew, i32 2, i32 1
  %res = select i1 %bad, i32 %sev, i32 0
  ret i32 %res
}}"""

ROW_IR = f"""define internal void @ptxc_race_row(ptr %h, i32 %cat, i32 %lane, ptr %r, i64 %off, i32 %res) noinline cold {{
entry:
{_field("n", "%h", H_NROWS, "i64")}
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %n.p, align 8
{_field("cap", "%h", H_CAP, "i64")}
  %fits = icmp ult i64 %n, %cap
  br i1 %fits, label %write, label %out
write:
{_field("rows", "%h", H_ROWS, "ptr")}
  %ro = mul i64 %n, {ROW}
  %rp = getelementptr inbounds i8, ptr %rows, i64 %ro
  store i32 %cat, ptr %rp, align 4
  %p1 = getelementptr inbounds i8, ptr %rp, i64 4
  store i32 %lane, ptr %p1, align 4
{_field("fiid", "%r", REC_IID, "i32")}
  %p2 = getelementptr inbounds i8, ptr %rp, i64 8
  store i32 %fiid, ptr %p2, align 4
  %t1 = load i32, ptr %r, align 8
  %t = sub i32 %t1, 1
  %p3 = getelementptr inbounds i8, ptr %rp, i64 12
  store i32 %t, ptr %p3, align 4
  %o = trunc i64 %off to i32
  %p4 = getelementptr inbounds i8, ptr %rp, i64 16
  store i32 %o, ptr %p4, align 4
  %same = icmp eq i32 %res, 2
  %s = zext i1 %same to i32
  %p5 = getelementptr inbounds i8, ptr %rp, i64 20
  store i32 %s, ptr %p5, align 4
  br label %out
out:
  ret void
}}"""

STAMP = f"""define internal void @ptxc_race_stamp(ptr %r, i32 %me1, i32 %iid, i32 %ep, i32 %wep, i64 %seq, i32 %clk) alwaysinline {{
entry:
  store i32 %me1, ptr %r, align 8
  %pi = getelementptr inbounds i8, ptr %r, i64 {REC_IID}
  store i32 %iid, ptr %pi, align 4
  %pe = getelementptr inbounds i8, ptr %r, i64 {REC_EP}
  store i32 %ep, ptr %pe, align 8
  %pw = getelementptr inbounds i8, ptr %r, i64 {REC_WEP}
  store i32 %wep, ptr %pw, align 4
  %ps = getelementptr inbounds i8, ptr %r, i64 {REC_SEQ}
  store i64 %seq, ptr %ps, align 8
  %pc = getelementptr inbounds i8, ptr %r, i64 {REC_CLK}
  store i32 %clk, ptr %pc, align 8
  ret void
}}"""


def _lane_loop(k: str, entry: str, body: str, done: str) -> str:
    """Blocks ``l{k}``/``l{k}body`` iterating the lanes of %lanes in lane
    order: %lane{k}, %me{k} (thread + 1), %a{k} (the masked address); the
    byte loop ``b{k}`` runs %j{k} over 0..nbytes-1, then the next lane."""
    return f"""l{k}:
  %m{k} = phi i32 [ %lanes, %{entry} ], [ %mn{k}, %b{k} ]
  %end{k} = icmp eq i32 %m{k}, 0
  br i1 %end{k}, label %{done}, label %l{k}body
l{k}body:
  %lane{k} = call i32 @llvm.cttz.i32(i32 %m{k}, i1 true)
  %mm{k} = sub i32 %m{k}, 1
  %mn{k} = and i32 %m{k}, %mm{k}
  %pa{k} = getelementptr inbounds i64, ptr %addrs, i32 %lane{k}
  %ar{k} = load i64, ptr %pa{k}, align 8
  %a{k} = and i64 %ar{k}, %lowmask
  %tid{k} = add i32 %wbase, %lane{k}
  %me{k} = add i32 %tid{k}, 1
  br label %b{k}
b{k}:
  %j{k} = phi i64 [ 0, %l{k}body ], [ %jn{k}, %b{k}next ]
  %more{k} = icmp ult i64 %j{k}, %nb
  br i1 %more{k}, label %b{k}body, label %l{k}
b{k}body:
  %idx{k} = add i64 %a{k}, %j{k}
  %ge{k} = icmp sge i64 %idx{k}, 0
  %lt{k} = icmp slt i64 %idx{k}, %size
  %in{k} = and i1 %ge{k}, %lt{k}
  br i1 %in{k}, label %{body}, label %b{k}next
b{k}next:
  %jn{k} = add i64 %j{k}, 1
  br label %b{k}"""


def _check_row(cat: int, at: str, nxt: str) -> str:
    """Check record ``cat`` (0 write, 1 r1, 2 r2) of byte %p1; a row if bad."""
    off = (B_W, B_R1, B_R2)[cat]
    res = "%rw2" if cat == 0 else f"%rr{cat}"
    head = "" if cat == 0 else (
        f"  %pr{cat} = getelementptr inbounds i8, ptr %p1, i64 {off}\n"
        f"  %rr{cat} = call i32 @ptxc_race_check(ptr %pr{cat}, i32 %me1, i32 %warp, i64 %seq, "
        f"i32 %ep, i32 %wep, ptr %kn)\n")
    rec = "%p1" if cat == 0 else f"%pr{cat}"
    return f"""{at}:
{head}  %hz{cat} = icmp ne i32 {res}, 0
  br i1 %hz{cat}, label %row{cat}, label %{nxt}
row{cat}:
  call void @ptxc_race_row(ptr %h, i32 {cat}, i32 %lane1, ptr {rec}, i64 %idx1, i32 {res})
  br label %{nxt}"""


ACCESS = f"""define internal void @ptxc_race(ptr %L, ptr %cta, ptr %ws, i32 %iid, ptr %addrs, i32 %lanes, i32 %kind, i32 %nbytes, i64 %lowmask) noinline {{
entry:
{_WARP_STATE}{_field("s0", "%h", H_SEQ, "i64")}
  %seq = add i64 %s0, 1
  store i64 %seq, ptr %s0.p, align 8
{_field("nr0", "%h", H_NROWS, "i64")}
  store i64 0, ptr %nr0.p, align 8
{_field("epb", "%h", H_EP, "ptr")}
{_field("wepb", "%h", H_WEP, "ptr")}
  %pe = getelementptr inbounds i32, ptr %epb, i64 %w
  %ep = load i32, ptr %pe, align 4
  %pw = getelementptr inbounds i32, ptr %wepb, i64 %w
  %wep = load i32, ptr %pw, align 4
{_field("clkb", "%h", H_CLK, "ptr")}
  %pclk = getelementptr inbounds i32, ptr %clkb, i64 %w
  %clk = load i32, ptr %pclk, align 4
{_field("knb", "%h", H_KNOW, "ptr")}
{_field("nwk", "%h", H_NWARPS, "i64")}
  %kro = mul i64 %w, %nwk
  %kn = getelementptr inbounds i32, ptr %knb, i64 %kro
{_field("size", "%h", H_SIZE, "i64")}
{_field("bytes", "%h", H_BYTES, "ptr")}
{_field("hip", "%h", H_HI, "i64")}
  %write = icmp ne i32 %kind, {KIND_LOAD}
  %atomic = icmp eq i32 %kind, {KIND_ATOMIC}
  %atom32 = zext i1 %atomic to i32
  %wbase = shl i32 %warp, 5
  %nb = zext i32 %nbytes to i64
  br label %l1
{_lane_loop("1", "go", "c1", "rep")}
c1:
  %bo1 = mul i64 %idx1, {BYTE}
  %p1 = getelementptr inbounds i8, ptr %bytes, i64 %bo1
  %rw = call i32 @ptxc_race_check(ptr %p1, i32 %me1, i32 %warp, i64 %seq, i32 %ep, i32 %wep, ptr %kn)
  %atp = getelementptr inbounds i8, ptr %p1, i64 {B_ATOM}
  %at = load i32, ptr %atp, align 8
  %wasat = icmp eq i32 %at, 1
  %both = and i1 %atomic, %wasat
  %rw2 = select i1 %both, i32 0, i32 %rw
  br label %cw
{_check_row(0, "cw", "cr")}
cr:
  br i1 %write, label %cr1, label %b1next
{_check_row(1, "cr1", "cr2")}
{_check_row(2, "cr2", "b1next")}
rep:
{_field("nr", "%h", H_NROWS, "i64")}
  %any = icmp ne i64 %nr, 0
  br i1 %any, label %call, label %pass2
call:
  call void @ptxc_race_report(ptr %L, ptr %cta, ptr %ws, i32 %iid, i32 %kind, i32 %nbytes, ptr %h)
  br label %pass2
pass2:
  br label %l2
{_lane_loop("2", "pass2", "u2", "out")}
u2:
  %bo2 = mul i64 %idx2, {BYTE}
  %p2 = getelementptr inbounds i8, ptr %bytes, i64 %bo2
  %hi = load i64, ptr %hip.p, align 8
  %top = add i64 %idx2, 1
  %up = icmp ugt i64 %top, %hi
  %hin = select i1 %up, i64 %top, i64 %hi
  store i64 %hin, ptr %hip.p, align 8
  br i1 %write, label %st, label %ld
st:
  call void @ptxc_race_stamp(ptr %p2, i32 %me2, i32 %iid, i32 %ep, i32 %wep, i64 %seq, i32 %clk)
  %pat = getelementptr inbounds i8, ptr %p2, i64 {B_ATOM}
  store i32 %atom32, ptr %pat, align 8
  %q1s = getelementptr inbounds i8, ptr %p2, i64 {B_R1}
  store i32 0, ptr %q1s, align 8
  %q2s = getelementptr inbounds i8, ptr %p2, i64 {B_R2}
  store i32 0, ptr %q2s, align 8
  br label %b2next
ld:
  %q1 = getelementptr inbounds i8, ptr %p2, i64 {B_R1}
  %q2 = getelementptr inbounds i8, ptr %p2, i64 {B_R2}
  %r1t = load i32, ptr %q1, align 8
{_field("r1s", "%q1", REC_SEQ, "i64")}
{_field("r2s", "%q2", REC_SEQ, "i64")}
  %now = icmp eq i64 %r1s, %seq
  %r1v = icmp ne i32 %r1t, 0
  %multi = and i1 %now, %r1v
  %r2old = icmp ne i64 %r2s, %seq
  %diff = icmp ne i32 %r1t, %me2
  %other = and i1 %r1v, %diff
  %shift = select i1 %multi, i1 %r2old, i1 %other
  br i1 %shift, label %copy, label %stamp1
copy:
  call void @llvm.memcpy.p0.p0.i64(ptr %q2, ptr %q1, i64 {REC}, i1 false)
  br label %stamp1
stamp1:
  call void @ptxc_race_stamp(ptr %q1, i32 %me2, i32 %iid, i32 %ep, i32 %wep, i64 %seq, i32 %clk)
  br label %b2next
out:
  ret void
}}"""

TEXT = "\n\n".join([STATE, SYNC, CHECK, ROW_IR, STAMP, ACCESS])
