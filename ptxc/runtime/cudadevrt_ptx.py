"""The device runtime functions of libcudadevrt that numba-cuda links, as PTX.

libcudadevrt.a ships SASS, which ptxc cannot run; when a link
(cuLinkAddFile, nvJitLink) brings it in, ptxc links this PTX instead
(driver_images.py). numba-cuda's grid groups (``cuda.cg.this_grid().sync()``)
call two of its functions:

* ``cudaCGGetIntrinsicHandle(scope)``: the grid's workspace, the 64-bit
  address in ``%envreg1:%envreg2`` that a cooperative launch provides
  (backends/llvm/ops/coop.py);
* ``cudaCGSynchronize(handle, flags)``: a grid-wide barrier, the protocol of
  cooperative groups' ``sync_grids`` (what nvcc inlines for
  ``cg::this_grid().sync()``): after a block barrier, thread 0 of every CTA
  adds 1 to the arrival counter at ``handle + 4`` with ``atom.add.release.gpu``
  (CTA 0 adds ``0x80000001 - CTAs``, which flips the counter's top bit when
  the last CTA arrives) and spins with ``ld.acquire.gpu`` until the top bit
  differs from what it read; a block barrier ends it. Returns 0.

The device runtime's calls of dynamic parallelism (``__cudaCDP2GetParameter
BufferV2``, ``__cudaCDP2LaunchDeviceV2``, device streams and errors) are not
here: they stay extern in the linked PTX and the executor serves them as
built-in calls (backends/llvm/plan.BUILTIN_CALLS; ops/device_launch.py), so
a link must leave them unresolved, as it leaves ``vprintf`` and ``malloc``.
"""
from __future__ import annotations

NAMES = ("cudaCGGetIntrinsicHandle", "cudaCGSynchronize")

PTX = """
.version 7.0
.target sm_70
.address_size 64

.visible .func (.param .b64 handle) cudaCGGetIntrinsicHandle(.param .b32 scope)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %envreg2;
    mov.u32 %r2, %envreg1;
    cvt.u64.u32 %rd1, %r1;
    cvt.u64.u32 %rd2, %r2;
    bfi.b64 %rd3, %rd2, %rd1, 32, 32;
    st.param.b64 [handle], %rd3;
    ret;
}

.visible .func (.param .b32 status) cudaCGSynchronize(.param .b64 handle, .param .b32 flags)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [handle];
    barrier.sync 0;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %tid.z;
    or.b32 %r4, %r1, %r2;
    or.b32 %r4, %r4, %r3;
    setp.ne.u32 %p1, %r4, 0;
    @%p1 bra DONE;
    mov.u32 %r5, %ctaid.x;
    mov.u32 %r6, %ctaid.y;
    mov.u32 %r7, %ctaid.z;
    or.b32 %r8, %r5, %r6;
    or.b32 %r8, %r8, %r7;
    setp.eq.u32 %p2, %r8, 0;
    mov.u32 %r9, %nctaid.x;
    mov.u32 %r10, %nctaid.y;
    mov.u32 %r11, %nctaid.z;
    mul.lo.u32 %r12, %r9, %r10;
    mul.lo.u32 %r12, %r12, %r11;
    sub.s32 %r13, -2147483647, %r12;
    selp.b32 %r14, %r13, 1, %p2;
    add.s64 %rd2, %rd1, 4;
    atom.add.release.gpu.u32 %r15, [%rd2], %r14;
SPIN:
    ld.acquire.gpu.u32 %r9, [%rd2];
    xor.b32 %r10, %r9, %r15;
    setp.gt.s32 %p3, %r10, -1;
    @%p3 bra SPIN;
DONE:
    barrier.sync 0;
    st.param.b32 [status], 0;
    ret;
}
"""
