// equalize: the luma histogram, its CDF by scan, the table of equalize_lut
// (src/ops/equalize.rs) in the same u64 arithmetic, applied to the value
// (gray) or to R, G and B alike (RGBA, alpha kept). All on the device.
#include "common.cuh"
#include "histogram.cuh"

// The table from the histogram, one thread a level:
// ((cdf − cdf_min)·255 + range/2) / range with range = N − cdf_min, 0 below
// the lowest present level. A frame of fewer than two levels (N ≤ cdf_min,
// or empty) gets the identity, so it passes unchanged. Zeroes the histogram
// for the next frame.
extern "C" __global__ void __launch_bounds__(HIST_THREADS)
    equalize_lut(u32* __restrict__ hist, u8* __restrict__ lut) {
    __shared__ u64 cdf_min;
    u32 v = threadIdx.x;
    u64 c = hist[v];
    hist[v] = 0;
    if (v == 0) cdf_min = 0;
    u64 n;
    // The scan's barriers order the write above before the one below.
    u64 cdf = block_scan_256(c, n);
    // The lowest present level is the one level whose cdf is its own count.
    if (c > 0 && cdf == c) cdf_min = c;
    __syncthreads();
    u64 m = cdf_min;
    u32 out;
    if (m == 0 || n <= m) {
        out = v;
    } else if (cdf < m) {
        out = 0;
    } else {
        u64 range = n - m;
        u64 q = ((cdf - m) * 255 + range / 2) / range;
        out = (u32)(q < 255 ? q : 255);
    }
    lut[v] = (u8)out;
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

// One thread a 16-byte unit (map_units: 16 gray or 4 RGBA pixels), the
// table in shared memory. Blocks of HIST_THREADS threads (one table entry
// each).
template <bool RGBA>
__device__ __forceinline__ void equalize(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                                         const u8* __restrict__ lut) {
    __shared__ u8 table[256];
    table[threadIdx.x] = lut[threadIdx.x];
    __syncthreads();
    map_units<RGBA>(in, out, n, blockIdx.x * HIST_THREADS + threadIdx.x, [&](u32 v) {
        return RGBA ? map_pixel(v, table) : map4(v, table);
    });
}

extern "C" __global__ void __launch_bounds__(HIST_THREADS)
    equalize_gray(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                  const u8* __restrict__ lut) {
    equalize<false>(in, out, n, lut);
}

extern "C" __global__ void __launch_bounds__(HIST_THREADS)
    equalize_rgba(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                  const u8* __restrict__ lut) {
    equalize<true>(in, out, n, lut);
}
