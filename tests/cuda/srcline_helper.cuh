// Helper of srcline.cu (a second .file for source attribution): inlined into
// the kernel, so its .loc lines carry `inlined_at` pointing into srcline.cu.
__device__ __forceinline__ float scale(float v, int k)
{
    return v * (float)k + 0.5f;                           // @scale
}
