// Shared by threshold.cu and equalize.cu: BT.709 luma of a packed pixel, the
// 256-bin luma histogram of a frame, and a scan of 256 counts by one block.
// Frames are read 16 bytes at a time: device allocations are aligned for any
// type, so a frame's first byte is 16-byte aligned.
#pragma once
#include "common.cuh"
// HIST_THREADS: from the Rust code that launches these kernels (shared.cuh,
// made from seamstream-cuda's shared.rs).
#include "shared.cuh"

// Threads a block of every kernel here (and of the apply kernels that load
// a 256-entry table, one entry a thread).
#define HIST_WARPS (HIST_THREADS / 32)

// The CPU's Pixel::luma for RGBA: gray.cu's f32 operations with
// Matrix::Bt709's weights, on a pixel packed R | G << 8 | B << 16 | A << 24.
__device__ __forceinline__ u32 luma709(u32 p) {
    float r = u8f(p), g = u8f(p >> 8), b = u8f(p >> 16);
    float y = __fadd_rn(__fadd_rn(__fmul_rn(0.2126f, r), __fmul_rn(0.7152f, g)),
                        __fmul_rn(0.0722f, b));
    return saturate_u8(y);
}

// Adds the luma histogram of n pixels (gray: the bytes; RGBA: luma709 of
// each pixel) to `hist` (256 counts, zeroed by the caller). Grid-stride over
// 16-byte units; each warp counts into its own shared sub-histogram, so that
// only the warps' own lanes contend, and each block adds its bins to `hist`
// once at the end.
template <bool RGBA>
__device__ __forceinline__ void luma_histogram(const u8* __restrict__ in, u32 n,
                                               u32* __restrict__ hist) {
    __shared__ u32 sub[HIST_WARPS][256];
    for (u32 i = threadIdx.x; i < HIST_WARPS * 256; i += HIST_THREADS) (&sub[0][0])[i] = 0;
    __syncthreads();
    u32* mine = sub[threadIdx.x >> 5];
    const u32 per_unit = RGBA ? 4 : 16;
    u32 units = n / per_unit;
    u32 gid = blockIdx.x * HIST_THREADS + threadIdx.x;
    u32 stride = gridDim.x * HIST_THREADS;
    const uint4* v = reinterpret_cast<const uint4*>(in);
    for (u32 i = gid; i < units; i += stride) {
        uint4 q = v[i];
        u32 words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (RGBA) {
                atomicAdd(&mine[luma709(words[k])], 1u);
            } else {
#pragma unroll
                for (int s = 0; s < 32; s += 8) atomicAdd(&mine[(words[k] >> s) & 0xff], 1u);
            }
        }
    }
    // The last n % per_unit pixels, one a thread of the first block.
    if (gid < n - units * per_unit) {
        u32 i = units * per_unit + gid;
        u32 value = RGBA ? luma709(reinterpret_cast<const u32*>(in)[i]) : in[i];
        atomicAdd(&mine[value], 1u);
    }
    __syncthreads();
    for (u32 b = threadIdx.x; b < 256; b += HIST_THREADS) {
        u32 s = 0;
#pragma unroll
        for (int w = 0; w < HIST_WARPS; w++) s += sub[w][b];
        if (s) atomicAdd(&hist[b], s);
    }
}

extern "C" __global__ void __launch_bounds__(HIST_THREADS)
    luma_histogram_gray(const u8* __restrict__ in, u32 n, u32* __restrict__ hist) {
    luma_histogram<false>(in, n, hist);
}

extern "C" __global__ void __launch_bounds__(HIST_THREADS)
    luma_histogram_rgba(const u8* __restrict__ in, u32 n, u32* __restrict__ hist) {
    luma_histogram<true>(in, n, hist);
}

// The inclusive prefix sum of x over the HIST_THREADS threads of the block
// in thread order; `total` receives the sum of all. Every thread must call it.
__device__ __forceinline__ u64 block_scan_256(u64 x, u64& total) {
    __shared__ u64 warp_sums[HIST_WARPS];
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        u64 y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= (u32)d) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    u64 before = 0, all = 0;
#pragma unroll
    for (u32 w = 0; w < HIST_WARPS; w++) {
        u64 s = warp_sums[w];
        if (w < warp) before += s;
        all += s;
    }
    // Everyone has read warp_sums before a second call writes it.
    __syncthreads();
    total = all;
    return x + before;
}
