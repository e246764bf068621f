"""The initcheck variant's hook in ld/st/atom/red/cp.async (initcheck.py).

In a kernel compiled with ``initcheck=True`` every access of a global or
generic address (not a module variable named by its symbol: module variables
are initialised) runs ``ptxc_initcheck_fast`` after its address checks (so
under memcheck the failing lanes are already left out): for each accessing
lane in lane order, the shadow bytes of its allocation (the 4th field of
its segment-table entry, layout.SEG_ENTRY_BYTES; 0 = untracked) are checked
(a load or atomic: all ``nbytes`` written?) and set (a store or atomic).
Only when some lane read an unwritten byte does the access call Python's
``ptxc_initcheck`` to record those lanes. The default code has no such call.
"""
from __future__ import annotations

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.memcheck import KIND_LOAD, KIND_STORE

FAST = f"""define internal i32 @ptxc_initcheck_fast(ptr %segs, i32 %nsegs, ptr %addrs, i32 %mask, i32 %n, i32 %kind, i64 %shift) noinline {{
entry:
  %mp = alloca i32, align 4
  %badp = alloca i32, align 4
  store i32 %mask, ptr %mp, align 4
  store i32 0, ptr %badp, align 4
  %one = shl i64 1, %shift
  %lowm = sub i64 %one, 1
  %nsegs64 = zext i32 %nsegs to i64
  %isstore = icmp eq i32 %kind, {KIND_STORE}
  %isload = icmp eq i32 %kind, {KIND_LOAD}
  br label %lane
lane:
  %m = load i32, ptr %mp, align 4
  %done = icmp eq i32 %m, 0
  br i1 %done, label %exit, label %body
body:
  %l = call i32 @llvm.cttz.i32(i32 %m, i1 true)
  %lbit = shl i32 1, %l
  %mrest = xor i32 %m, %lbit
  store i32 %mrest, ptr %mp, align 4
  %pa = getelementptr i64, ptr %addrs, i32 %l
  %a = load i64, ptr %pa, align 8
  %seg = lshr i64 %a, %shift
  %inr = icmp ult i64 %seg, %nsegs64
  br i1 %inr, label %look, label %lane
look:
  %eoff = mul i64 %seg, {Lo.SEG_ENTRY_BYTES}
  %ep = getelementptr i8, ptr %segs, i64 %eoff
  %sp = getelementptr i8, ptr %ep, i64 24
  %sh = load ptr, ptr %sp, align 8
  %tracked = icmp ne ptr %sh, null
  br i1 %tracked, label %have, label %lane
have:
  %off = and i64 %a, %lowm
  %p = getelementptr i8, ptr %sh, i64 %off
  br i1 %isstore, label %mark, label %chk
chk:
  %i = phi i32 [ 0, %have ], [ %inext, %chk ]
  %acc = phi i8 [ 1, %have ], [ %acc2, %chk ]
  %bp = getelementptr i8, ptr %p, i32 %i
  %byte = load i8, ptr %bp, align 1
  %acc2 = and i8 %acc, %byte
  %inext = add i32 %i, 1
  %more = icmp ult i32 %inext, %n
  br i1 %more, label %chk, label %checked
checked:
  %unw = icmp eq i8 %acc2, 0
  %lbad = select i1 %unw, i32 %lbit, i32 0
  %bad0 = load i32, ptr %badp, align 4
  %bad1 = or i32 %bad0, %lbad
  store i32 %bad1, ptr %badp, align 4
  br i1 %isload, label %lane, label %mark
mark:
  %j = phi i32 [ 0, %have ], [ 0, %checked ], [ %jnext, %mark ]
  %wp = getelementptr i8, ptr %p, i32 %j
  store i8 1, ptr %wp, align 1
  %jnext = add i32 %j, 1
  %jmore = icmp ult i32 %jnext, %n
  br i1 %jmore, label %mark, label %lane
exit:
  %bad = load i32, ptr %badp, align 4
  ret i32 %bad
}}"""


def track(cg, space: str, static, addr, emi: str, kind: int, nbytes: int) -> None:
    """Check and mark this access's shadow bytes (nothing outside the variant)."""
    if not getattr(cg, "initcheck", False) or static is not None or space not in ("global", "generic"):
        return
    f = cg.f
    if not hasattr(cg, "initcheck_tmp"):
        cg.initcheck_tmp = f.alloca("<32 x i64>", "icaddr", 64)
    f.store("<32 x i64>", addr, cg.initcheck_tmp, 64)
    cg.helpers["ptxc_initcheck_fast"] = FAST
    bad = f.call("i32", "ptxc_initcheck_fast", [
        ("ptr", "%segs"), ("i32", cg.nsegs), ("ptr", cg.initcheck_tmp), ("i32", emi),
        ("i32", str(nbytes)), ("i32", str(kind)), ("i64", str(cg.plan.shift))])
    rec, ok = f.fresh_label("icrec"), f.fresh_label("icok")
    f.cbr(f.icmp("ne", "i32", bad, "0"), rec, ok)
    f.label(rec, dominated=True)
    cg.decls.add("declare void @ptxc_initcheck(ptr, ptr, ptr, i32, ptr, i32, i32, i32)")
    f.call("void", "ptxc_initcheck", [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"),
                                      ("i32", str(cg.iid())), ("ptr", cg.initcheck_tmp),
                                      ("i32", bad), ("i32", str(kind)), ("i32", str(nbytes))])
    f.br(ok)
    f.label(ok, dominated=True)
