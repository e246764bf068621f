"""Cost of a device call (docs/executor.md, "Recursion: the call stack"):
a call of a non-recursive function (inlined) vs the same body in a
recursive function that is called but not re-entered (a framed call: the
stack checked, a frame pushed and popped) vs re-entering recursive calls 20
deep (the chain's registers saved and restored). Full mode, one worker,
64 CTAs of one warp, warm JIT, best of 3.

    python bench/calls.py
"""
import numpy as np

import ptxc
HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"
def kernel(callee, call_arg):
    return HDR + callee + """
.visible .entry k(.param .u64 out, .param .u32 iters)
{
  .reg .b32 %r<10>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r5, [iters];
  mov.u32 %r6, 0;
  mov.u32 %r7, 0;
LOOP:
  setp.ge.u32 %p1, %r6, %r5;
  @%p1 bra DONE;
  add.u32 %r8, %r1, %r6;
  {
  .param .b32 a;
  .param .b32 d;
  .param .b32 b;
  st.param.b32 [a], %r8;
  st.param.b32 [d], """ + call_arg + """;
  call (b), f, (a, d);
  ld.param.b32 %r2, [b];
  }
  add.u32 %r7, %r7, %r2;
  add.u32 %r6, %r6, 1;
  bra.uni LOOP;
DONE:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
"""
PLAIN = """
.func (.param .b32 r) f(.param .b32 x, .param .b32 depth)
{
  .reg .b32 %r<6>;
  ld.param.b32 %r1, [x];
  mul.lo.s32 %r2, %r1, 3;
  add.s32 %r3, %r2, 1;
  st.param.b32 [r], %r3;
  ret;
}
"""
REC = """
.func (.param .b32 r) f(.param .b32 x, .param .b32 depth)
{
  .reg .b32 %r<8>; .reg .pred %p;
  ld.param.b32 %r1, [x];
  ld.param.b32 %r4, [depth];
  mul.lo.s32 %r2, %r1, 3;
  add.s32 %r3, %r2, 1;
  setp.eq.s32 %p, %r4, 0;
  @%p bra BASE;
  sub.s32 %r5, %r4, 1;
  {
  .param .b32 a;
  .param .b32 d;
  .param .b32 b;
  st.param.b32 [a], %r1;
  st.param.b32 [d], %r5;
  call (b), f, (a, d);
  ld.param.b32 %r6, [b];
  }
  add.s32 %r3, %r6, 1;
BASE:
  st.param.b32 [r], %r3;
  ret;
}
"""
def run(text, iters, ctas=64, reps=3):
    m = ptxc.parse(text, "b.ptx")
    out = np.zeros(32 * ctas, np.int32)
    ptxc.launch(m, "k", ctas, 32, [out, 1], mode="full", threads=1)   # compile
    best = 1e9
    for _ in range(reps):
        pr = ptxc.launch(m, "k", ctas, 32, [out, iters], mode="full", threads=1)
        best = min(best, pr.timings["run"])
    return best, pr.inst_executed, out.copy()
iters = 2000
ctas = 64
t_plain, i_plain, o1 = run(kernel(PLAIN, "0"), iters, ctas)
t_flat, i_flat, o2 = run(kernel(REC, "0"), iters, ctas)      # recursive callee, never re-enters
depth = 20
t_deep, i_deep, o3 = run(kernel(REC, str(depth)), iters // (depth + 1), ctas)
calls = ctas * iters          # warp-level calls
print(f"inlined call (non-recursive f):      {t_plain/calls*1e9:8.1f} ns per warp call  (run {t_plain:.3f} s, {i_plain} warp instructions)")
print(f"framed call (recursive f, depth 0):  {t_flat/calls*1e9:8.1f} ns per warp call  (run {t_flat:.3f} s, {i_flat})")
calls_deep = ctas * (iters // (depth + 1)) * (depth + 1)
print(f"re-entering calls (depth {depth}):       {t_deep/calls_deep*1e9:8.1f} ns per warp call  (run {t_deep:.3f} s, {i_deep})")
print("plain == flat results:", (o1 == o2).all())
