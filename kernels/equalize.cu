// equalize: the luma histogram, then, in every block of the apply kernel,
// the table of equalize_lut (src/ops/equalize.rs) from the histogram's CDF in
// the same integer arithmetic, applied to the value (gray) or to R, G and B
// alike (RGBA, alpha kept). All on the device, in two launches.
#include "common.cuh"
#include "histogram.cuh"

// Entry v of the table, for thread v of a block of HIST_THREADS (every
// thread must call it): ((cdf − cdf_min)·255 + range/2) / range with range =
// N − cdf_min, 0 below the lowest present level. A frame of fewer than two
// levels (N ≤ cdf_min, or empty) gets the identity, so it passes unchanged.
// Frames under 2^24 pixels divide in 32 bits (where (cdf − cdf_min)·255 +
// range/2 < 256·N cannot overflow), exactly as in 64.
__device__ __forceinline__ u8 lut_entry(u32 count) {
    __shared__ u64 cdf_min;
    u32 v = threadIdx.x;
    if (v == 0) cdf_min = 0;
    u64 n;
    // The scan's barriers order the write above before the one below.
    u64 cdf = block_scan_256(count, n);
    // The lowest present level is the one level whose cdf is its own count.
    if (count > 0 && cdf == count) cdf_min = count;
    __syncthreads();
    u64 m = cdf_min;
    if (m == 0 || n <= m) return (u8)v;
    if (cdf < m) return 0;
    u64 range = n - m;
    u64 q = n < (1ull << 24)
                ? (u64)(((u32)(cdf - m) * 255u + (u32)range / 2u) / (u32)range)
                : ((cdf - m) * 255 + range / 2) / range;
    return (u8)(q < 255 ? q : 255);
}

// Four gray values through the table.
__device__ __forceinline__ u32 map4(u32 w, const u8* table) {
    return (u32)table[w & 0xff] | (u32)table[(w >> 8) & 0xff] << 8 |
           (u32)table[(w >> 16) & 0xff] << 16 | (u32)table[w >> 24] << 24;
}

// R, G and B of an RGBA pixel through the table, alpha kept.
__device__ __forceinline__ u32 map_pixel(u32 p, const u8* table) {
    return (u32)table[p & 0xff] | (u32)table[(p >> 8) & 0xff] << 8 |
           (u32)table[(p >> 16) & 0xff] << 16 | (p & 0xff000000u);
}

// N 16-byte units a thread (map_units: 16 gray or 4 RGBA pixels each),
// through the table each block makes in shared memory from `hist`. Blocks of
// HIST_THREADS threads (one table entry each). The last block to finish
// zeroes `hist` and `done` for the next frame: every block has read the
// histogram before it counts itself done.
template <bool RGBA, int N>
__device__ __forceinline__ void equalize(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                                         u32* __restrict__ hist, u32* __restrict__ done) {
    __shared__ u8 table[256];
    __shared__ bool last;
    table[threadIdx.x] = lut_entry(__ldcg(&hist[threadIdx.x]));
    __syncthreads();
    map_units<RGBA, N>(in, out, n, [&](u32 v) {
        return RGBA ? map_pixel(v, table) : map4(v, table);
    });
    if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last) {
        hist[threadIdx.x] = 0;
        if (threadIdx.x == 0) *done = 0;
    }
}

// equalize_{gray,rgba}_x{2,8}(in, out, n, hist, done): 2 or 8 units a
// thread (unit_grid in src/cuda/ops/threshold.rs chooses).
#define EQUALIZE_KERNEL(NAME, RGBA, N)                                                        \
    extern "C" __global__ void __launch_bounds__(HIST_THREADS)                                 \
        NAME(const u8* __restrict__ in, u8* __restrict__ out, u32 n, u32* __restrict__ hist,   \
             u32* __restrict__ done) {                                                         \
        equalize<RGBA, N>(in, out, n, hist, done);                                             \
    }

EQUALIZE_KERNEL(equalize_gray_x2, false, 2)
EQUALIZE_KERNEL(equalize_gray_x8, false, 8)
EQUALIZE_KERNEL(equalize_rgba_x2, true, 2)
EQUALIZE_KERNEL(equalize_rgba_x8, true, 8)
