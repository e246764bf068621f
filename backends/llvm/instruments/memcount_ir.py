"""The native part of the memory counters (docs/metrics.md, "Memory access
counters"), as LLVM IR text added to a kernel module when they are on.

Every helper works on the 32 lane addresses of one warp-level access and the
mask of its executing (active, pred-on) lanes, with vector code:

* ``ptxc_firsts(keys, mask)``: the lanes of ``mask`` holding the first
  occurrence of their key. When the keys are non-decreasing in lane order
  (strided accesses), an inclusive prefix maximum over lanes (Hillis &
  Steele's scan, 5 shuffles) gives them at once: a lane is first where its
  key exceeds the maximum of the lanes before it. Otherwise SASSI's leader
  loop (case study II of Stephenson et al., ISCA 2015: the first remaining
  lane's key removes every lane holding it; one round per distinct key).
* ``ptxc_distinct(keys, mask)``: how many distinct keys the lanes of ``mask``
  hold. Fast path: when every key lies within 64 of the smallest one, the
  popcount of the OR of ``1 << (key - min)``; else ``ptxc_firsts``.
* ``ptxc_mem_global``: one request; distinct 32-byte sectors (``addr >> 5``)
  and 128-byte lines (``addr >> 7``), requested bytes, and the bin
  ``sectors - 1`` of the sectors-per-request histogram. When the sectors
  lie within 61 of the smallest (a coalesced warp), both counts come from
  one mask of ``1 << (sector - min)``: lines are that mask shifted by
  ``min % 4`` and folded by groups of 4 bits.
* ``ptxc_bank_tx(words, mask)``: shared-memory transactions of one phase =
  the largest number of distinct words that fall into one bank (``word % 32``);
  lanes reading the same word share it (broadcast). Fast path: all lanes in
  different banks -> 1; else the first occurrences of the words, counted per
  bank present.
* ``ptxc_mem_shared_S_W``: one request of S bytes per lane with W-byte banks,
  cut into phases (``shared_phases``); per phase the words its lanes touch go
  through ``ptxc_bank_tx``.
* ``ptxc_mem_atomic``: one request and its distinct addresses.

Counter blocks (i64, at ``base`` in the kernel's counter array):
global ``[requests, sectors, lines, bytes, hist(1..32 sectors)]``, shared
``[requests, transactions, phases, bytes]``, atomic ``[requests, addresses]``.
"""
from __future__ import annotations

GLOBAL_SLOTS = 4 + 32
SHARED_SLOTS = 4
ATOMIC_SLOTS = 2
BANKS = 32

DECLS = ("declare i64 @llvm.vector.reduce.umin.v32i64(<32 x i64>)",
         "declare i64 @llvm.vector.reduce.umax.v32i64(<32 x i64>)",
         "declare i64 @llvm.vector.reduce.or.v32i64(<32 x i64>)",
         "declare i32 @llvm.vector.reduce.or.v32i32(<32 x i32>)",
         "declare i32 @llvm.umax.i32(i32, i32)",
         "declare <32 x i64> @llvm.umax.v32i64(<32 x i64>, <32 x i64>)",
         "declare i64 @llvm.ctpop.i64(i64)")


def _splat_of(name: str, scalar: str, t: str) -> str:
    """Two lines that broadcast scalar ``scalar`` of type ``t`` into %name."""
    return (f"  %{name}.0 = insertelement <32 x {t}> poison, {t} {scalar}, i32 0\n"
            f"  %{name} = shufflevector <32 x {t}> %{name}.0, <32 x {t}> poison, "
            f"<32 x i32> zeroinitializer")


def spread(vec: str, masked: str) -> str:
    """Lines giving the lowest value %lo of the lanes %mv of ``vec`` (<32 x
    i64>; ``masked``: a name for it with the others at the maximum), each
    lane's distance %d from it (0 outside %mv) and the largest %hi."""
    return "\n".join([
        f"  %{masked} = select <32 x i1> %mv, <32 x i64> {vec}, <32 x i64> splat (i64 -1)",
        f"  %lo = call i64 @llvm.vector.reduce.umin.v32i64(<32 x i64> %{masked})",
        _splat_of("lov", "%lo", "i64"),
        f"  %d0 = sub <32 x i64> {vec}, %lov",
        "  %d = select <32 x i1> %mv, <32 x i64> %d0, <32 x i64> zeroinitializer",
        "  %hi = call i64 @llvm.vector.reduce.umax.v32i64(<32 x i64> %d)"])


def _bump(name: str, index: str, amount: str) -> str:
    """cnt[index] += amount (``index`` an i64 value)."""
    return (f"  %{name}.p = getelementptr inbounds i64, ptr %cnt, i64 {index}\n"
            f"  %{name}.v = load i64, ptr %{name}.p, align 8\n"
            f"  %{name}.n = add i64 %{name}.v, {amount}\n"
            f"  store i64 %{name}.n, ptr %{name}.p, align 8")


def _indices() -> list[str]:
    return [f"  %i{k} = add i64 %base, {k}" for k in (1, 2, 3)]


def global_tally(sec: str, lines: str, nbytes: str) -> str:
    """Count one global request at counter ``%base`` (mem_count.py's
    layout: requests, sectors, lines, bytes, then the sectors-per-request
    histogram); ``sec``, ``lines``, ``nbytes`` are i64 values."""
    return "\n".join(_indices() + [f"  %ih = add i64 %i3, {sec}",
                                   _bump("req", "%base", "1"), _bump("sec", "%i1", sec),
                                   _bump("lines", "%i2", lines), _bump("bytes", "%i3", nbytes),
                                   _bump("hist", "%ih", "1")])


def shared_tally(tx: str, phases: str, nbytes: str) -> str:
    """Count one shared request at counter ``%base`` (requests, bank
    transactions, phases, bytes); the amounts are i64 values."""
    return "\n".join(_indices() + [_bump("req", "%base", "1"), _bump("tx", "%i1", tx),
                                   _bump("ph", "%i2", phases), _bump("bytes", "%i3", nbytes)])


def _shift_mask(s: int) -> str:
    """Shuffle indices that move lane i - s to lane i (lanes < s: zero)."""
    return "<" + ", ".join(f"i32 {i - s if i >= s else 32 + i}" for i in range(32)) + ">"


def _prefix_max() -> str:
    """%pm = inclusive prefix max of %kk over lanes (Hillis-Steele scan),
    %ex = the exclusive one (lane 0: 0)."""
    lines, cur = [], "%kk"
    for s in (1, 2, 4, 8, 16):
        lines += [f"  %sh{s} = shufflevector <32 x i64> {cur}, <32 x i64> zeroinitializer, "
                  f"<32 x i32> {_shift_mask(s)}",
                  f"  %mx{s} = call <32 x i64> @llvm.umax.v32i64(<32 x i64> {cur}, <32 x i64> %sh{s})"]
        cur = f"%mx{s}"
    lines.append(f"  %ex = shufflevector <32 x i64> {cur}, <32 x i64> zeroinitializer, "
                 f"<32 x i32> {_shift_mask(1)}")
    return "\n".join(lines)


FIRSTS = f"""define internal i32 @ptxc_firsts(<32 x i64> %k, i32 %m) {{
entry:
  %mv = bitcast i32 %m to <32 x i1>
  %k1 = add <32 x i64> %k, splat (i64 1)
  %kk = select <32 x i1> %mv, <32 x i64> %k1, <32 x i64> zeroinitializer
{_prefix_max()}
  %up = icmp ugt <32 x i64> %kk, %ex
  %down = icmp ult <32 x i64> %kk, %ex
  %upi = bitcast <32 x i1> %up to i32
  %downi = bitcast <32 x i1> %down to i32
  %new = and i32 %upi, %m
  %bad = and i32 %downi, %m
  %sorted = icmp eq i32 %bad, 0
  br i1 %sorted, label %done, label %loop
done:
  ret i32 %new
loop:
  %work = phi i32 [ %m, %entry ], [ %rest, %loop ]
  %firsts = phi i32 [ 0, %entry ], [ %firsts1, %loop ]
  %lead = call i32 @llvm.cttz.i32(i32 %work, i1 true)
  %lk = extractelement <32 x i64> %k, i32 %lead
{_splat_of("lkv", "%lk", "i64")}
  %eq = icmp eq <32 x i64> %k, %lkv
  %eqi = bitcast <32 x i1> %eq to i32
  %ne = xor i32 %eqi, -1
  %rest = and i32 %work, %ne
  %leadbit = shl i32 1, %lead
  %firsts1 = or i32 %firsts, %leadbit
  %more = icmp ne i32 %rest, 0
  br i1 %more, label %loop, label %out
out:
  ret i32 %firsts1
}}"""

DISTINCT = f"""define internal i32 @ptxc_distinct(<32 x i64> %k, i32 %m) {{
entry:
  %mv = bitcast i32 %m to <32 x i1>
{spread("%k", "km")}
  %near = icmp ult i64 %hi, 64
  br i1 %near, label %window, label %far
window:
  %bits0 = shl <32 x i64> splat (i64 1), %d
  %bits = select <32 x i1> %mv, <32 x i64> %bits0, <32 x i64> zeroinitializer
  %u = call i64 @llvm.vector.reduce.or.v32i64(<32 x i64> %bits)
  %n64 = call i64 @llvm.ctpop.i64(i64 %u)
  %n = trunc i64 %n64 to i32
  ret i32 %n
far:
  %f = call i32 @ptxc_firsts(<32 x i64> %k, i32 %m)
  %nf = call i32 @llvm.ctpop.i32(i32 %f)
  ret i32 %nf
}}"""

MEM_GLOBAL = f"""define internal void @ptxc_mem_global(ptr %cnt, i64 %base, ptr %addrs, i32 %m, i64 %nbytes) {{
entry:
  %none = icmp eq i32 %m, 0
  br i1 %none, label %out, label %count
count:
  %a = load <32 x i64>, ptr %addrs, align 64
  %mv = bitcast i32 %m to <32 x i1>
  %sec = lshr <32 x i64> %a, splat (i64 5)
  %secm = select <32 x i1> %mv, <32 x i64> %sec, <32 x i64> splat (i64 -1)
  %lo = call i64 @llvm.vector.reduce.umin.v32i64(<32 x i64> %secm)
{_splat_of("lov", "%lo", "i64")}
  %d0 = sub <32 x i64> %sec, %lov
  %d = select <32 x i1> %mv, <32 x i64> %d0, <32 x i64> zeroinitializer
  %hi = call i64 @llvm.vector.reduce.umax.v32i64(<32 x i64> %d)
  %near = icmp ult i64 %hi, 61
  br i1 %near, label %window, label %far
window:
  %bits0 = shl <32 x i64> splat (i64 1), %d
  %bits = select <32 x i1> %mv, <32 x i64> %bits0, <32 x i64> zeroinitializer
  %u = call i64 @llvm.vector.reduce.or.v32i64(<32 x i64> %bits)
  %ws64 = call i64 @llvm.ctpop.i64(i64 %u)
  %ws = trunc i64 %ws64 to i32
  %ph = and i64 %lo, 3
  %v = shl i64 %u, %ph
  %v1 = lshr i64 %v, 1
  %v2 = lshr i64 %v, 2
  %v3 = lshr i64 %v, 3
  %f01 = or i64 %v, %v1
  %f23 = or i64 %v2, %v3
  %f = or i64 %f01, %f23
  %fl = and i64 %f, 1229782938247303441
  %wl64 = call i64 @llvm.ctpop.i64(i64 %fl)
  %wl = trunc i64 %wl64 to i32
  br label %tally
far:
  %fsm = call i32 @ptxc_firsts(<32 x i64> %sec, i32 %m)
  %fs = call i32 @llvm.ctpop.i32(i32 %fsm)
  %lin = lshr <32 x i64> %a, splat (i64 7)
  %fl2 = call i32 @ptxc_distinct(<32 x i64> %lin, i32 %m)
  br label %tally
tally:
  %ns = phi i32 [ %ws, %window ], [ %fs, %far ]
  %nl = phi i32 [ %wl, %window ], [ %fl2, %far ]
  %lanes32 = call i32 @llvm.ctpop.i32(i32 %m)
  %lanes = zext i32 %lanes32 to i64
  %bytes = mul i64 %lanes, %nbytes
  %ns64 = zext i32 %ns to i64
  %nl64 = zext i32 %nl to i64
{global_tally("%ns64", "%nl64", "%bytes")}
  br label %out
out:
  ret void
}}"""

def bank_tx_head(otherwise: str) -> str:
    """The start of @ptxc_bank_tx (the general helper here and the closed
    form of memcount_fast.py): no lane -> 0; every lane in a bank of its
    own -> label %one; else on to label ``%otherwise``."""
    return f"""define internal i32 @ptxc_bank_tx(<32 x i64> %w, i32 %m) {{
entry:
  %none = icmp eq i32 %m, 0
  br i1 %none, label %zero, label %banks
zero:
  ret i32 0
banks:
  %mv = bitcast i32 %m to <32 x i1>
  %b64 = and <32 x i64> %w, splat (i64 {BANKS - 1})
  %b = trunc <32 x i64> %b64 to <32 x i32>
  %bits0 = shl <32 x i32> splat (i32 1), %b
  %bits = select <32 x i1> %mv, <32 x i32> %bits0, <32 x i32> zeroinitializer
  %u = call i32 @llvm.vector.reduce.or.v32i32(<32 x i32> %bits)
  %nb = call i32 @llvm.ctpop.i32(i32 %u)
  %nl = call i32 @llvm.ctpop.i32(i32 %m)
  %spread = icmp eq i32 %nb, %nl
  br i1 %spread, label %one, label %{otherwise}
"""


BANK_TX = bank_tx_head("words") + f"""one:
  ret i32 1
words:
  %firsts = call i32 @ptxc_firsts(<32 x i64> %w, i32 %m)
  br label %per_bank
per_bank:
  %work2 = phi i32 [ %firsts, %words ], [ %rest2, %per_bank ]
  %worst = phi i32 [ 0, %words ], [ %worst1, %per_bank ]
  %lead2 = call i32 @llvm.cttz.i32(i32 %work2, i1 true)
  %lb = extractelement <32 x i32> %b, i32 %lead2
{_splat_of("lbv", "%lb", "i32")}
  %same = icmp eq <32 x i32> %b, %lbv
  %samei = bitcast <32 x i1> %same to i32
  %inbank = and i32 %samei, %work2
  %c = call i32 @llvm.ctpop.i32(i32 %inbank)
  %worst1 = call i32 @llvm.umax.i32(i32 %worst, i32 %c)
  %nots = xor i32 %samei, -1
  %rest2 = and i32 %work2, %nots
  %more2 = icmp ne i32 %rest2, 0
  br i1 %more2, label %per_bank, label %done
done:
  ret i32 %worst1
}}"""

MEM_ATOMIC = f"""define internal void @ptxc_mem_atomic(ptr %cnt, i64 %base, ptr %addrs, i32 %m) {{
entry:
  %none = icmp eq i32 %m, 0
  br i1 %none, label %out, label %count
count:
  %a = load <32 x i64>, ptr %addrs, align 64
  %n = call i32 @ptxc_distinct(<32 x i64> %a, i32 %m)
  %n64 = zext i32 %n to i64
  %i1 = add i64 %base, 1
{_bump("req", "%base", "1")}
{_bump("addr", "%i1", "%n64")}
  br label %out
out:
  ret void
}}"""


def shared_phases(nbytes: int, bank_bytes: int) -> int:
    """Phases of a warp access of ``nbytes`` per lane with 32 banks of
    ``bank_bytes``: a phase serves 32 bank words, so lanes of ``nbytes`` >
    ``bank_bytes`` are served 32 * bank_bytes / nbytes at a time."""
    return max(1, nbytes // bank_bytes)


def _lane_consts(t: str, values) -> str:
    return "<" + ", ".join(f"{t} {v}" for v in values) + ">"


def shared_helper(nbytes: int, bank_bytes: int) -> tuple[str, str]:
    """(name, IR text) of the shared-memory counter for one access shape."""
    name = f"ptxc_mem_shared_{nbytes}_{bank_bytes}"
    phases = shared_phases(nbytes, bank_bytes)
    per_lane = phases                    # words per lane = phases (32 slots per phase)
    lanes = 32 // phases
    shift = bank_bytes.bit_length() - 1
    body = [f"define internal void @{name}(ptr %cnt, i64 %base, ptr %addrs, i32 %m) {{",
            "entry:",
            "  %none = icmp eq i32 %m, 0",
            "  br i1 %none, label %out, label %count",
            "count:",
            "  %a = load <32 x i64>, ptr %addrs, align 64",
            f"  %w = lshr <32 x i64> %a, splat (i64 {shift})",
            "  %mv = bitcast i32 %m to <32 x i1>"]
    tx, ph = "0", "0"
    for p in range(phases):
        if phases == 1:
            words, mask = "%w", "%m"
        else:
            idx = _lane_consts("i32", [p * lanes + j // per_lane for j in range(32)])
            ks = _lane_consts("i64", [j % per_lane for j in range(32)])
            body += [f"  %w{p}.l = shufflevector <32 x i64> %w, <32 x i64> poison, <32 x i32> {idx}",
                     f"  %w{p} = add <32 x i64> %w{p}.l, {ks}",
                     f"  %m{p}.v = shufflevector <32 x i1> %mv, <32 x i1> poison, <32 x i32> {idx}",
                     f"  %m{p} = bitcast <32 x i1> %m{p}.v to i32"]
            words, mask = f"%w{p}", f"%m{p}"
        body += [f"  %t{p} = call i32 @ptxc_bank_tx(<32 x i64> {words}, i32 {mask})",
                 f"  %tx{p} = add i32 {tx}, %t{p}",
                 f"  %on{p} = icmp ne i32 {mask}, 0",
                 f"  %on{p}.i = zext i1 %on{p} to i32",
                 f"  %ph{p} = add i32 {ph}, %on{p}.i"]
        tx, ph = f"%tx{p}", f"%ph{p}"
    body += ["  %lanes32 = call i32 @llvm.ctpop.i32(i32 %m)",
             "  %lanes = zext i32 %lanes32 to i64",
             f"  %bytes = mul i64 %lanes, {nbytes}",
             f"  %tx64 = zext i32 {tx} to i64",
             f"  %ph64 = zext i32 {ph} to i64",
             shared_tally("%tx64", "%ph64", "%bytes"),
             "  br label %out", "out:", "  ret void", "}"]
    return name, "\n".join(body)


COMMON = {"ptxc_firsts": FIRSTS, "ptxc_distinct": DISTINCT, "ptxc_mem_global": MEM_GLOBAL,
          "ptxc_bank_tx": BANK_TX, "ptxc_mem_atomic": MEM_ATOMIC}
