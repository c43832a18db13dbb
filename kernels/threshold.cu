// threshold: OpenCV's five types with its strict v > t, on the value (gray)
// or on BT.709 luma (RGBA: the result to R, G and B, alpha kept). The level
// is read from a device scalar: set once for a fixed t, or chosen per frame
// by otsu_level from the luma histogram, with no host round trip. See
// src/ops/threshold.rs.
#include "common.cuh"
#include "histogram.cuh"

// Numbered as in src/cuda/ops/threshold.rs.
#define THRESH_BINARY 0
#define THRESH_BINARY_INV 1
#define THRESH_TRUNC 2
#define THRESH_TOZERO 3
#define THRESH_TOZERO_INV 4

// The rule on four bytes at once; t4 and max4 hold t and max in every byte.
__device__ __forceinline__ u32 rule4(u32 v, u32 t4, u32 max4, u32 type) {
    u32 above = __vcmpgtu4(v, t4);  // 0xff in each byte where v > t
    switch (type) {
        case THRESH_BINARY: return max4 & above;
        case THRESH_BINARY_INV: return max4 & ~above;
        case THRESH_TRUNC: return __vminu4(v, t4);
        case THRESH_TOZERO: return v & above;
        default: return v & ~above;
    }
}

// An RGBA pixel: the rule on its luma to R, G and B, alpha kept.
__device__ __forceinline__ u32 threshold_pixel(u32 p, u32 t4, u32 max4, u32 type) {
    u32 r = rule4(luma709(p), t4, max4, type) & 0xff;
    return r * 0x010101u | (p & 0xff000000u);
}

// N 16-byte units a thread (map_units): 16 gray or 4 RGBA pixels each.
template <bool RGBA, int N>
__device__ __forceinline__ void threshold(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                                          const u32* __restrict__ level, u32 max, u32 type) {
    u32 t4 = *level * 0x01010101u, max4 = max * 0x01010101u;
    map_units<RGBA, N>(in, out, n, [&](u32 v) {
        return RGBA ? threshold_pixel(v, t4, max4, type) : rule4(v, t4, max4, type);
    });
}

// threshold_{gray,rgba}_x{2,8}(in, out, n, level, max, type): 2 or 8 units
// a thread (unit_grid in src/cuda/ops/threshold.rs chooses).
#define THRESHOLD_KERNEL(NAME, RGBA, N)                                                       \
    extern "C" __global__ void NAME(const u8* __restrict__ in, u8* __restrict__ out, u32 n,    \
                                    const u32* __restrict__ level, u32 max, u32 type) {        \
        threshold<RGBA, N>(in, out, n, level, max, type);                                      \
    }

THRESHOLD_KERNEL(threshold_gray_x2, false, 2)
THRESHOLD_KERNEL(threshold_gray_x8, false, 8)
THRESHOLD_KERNEL(threshold_rgba_x2, true, 2)
THRESHOLD_KERNEL(threshold_rgba_x8, true, 8)

// Otsu's level from the histogram, as otsu() in src/ops/threshold.rs, one
// thread a candidate t: w0, s0 by scan, then in f64 with the CPU's
// operations num = S·w0 − s0·N and sigma = num² / (w0·w1) (0 where a class
// is empty). The CPU keeps the first strict maximum starting from 0.0, that
// is the smallest t of the largest sigma (t = 0 when every sigma is 0), which
// is what the reduction keeps. Writes t to `level` and zeroes the histogram
// for the next frame.
extern "C" __global__ void __launch_bounds__(HIST_THREADS)
    otsu_level(u32* __restrict__ hist, u32* __restrict__ level) {
    u32 t = threadIdx.x;
    u64 c = hist[t];
    hist[t] = 0;
    u64 n, total;
    u64 w0 = block_scan_256(c, n);
    u64 s0 = block_scan_256((u64)t * c, total);
    u64 w1 = n - w0;
    double sigma = 0.0;
    if (w0 != 0 && w1 != 0) {
        double num =
            __dsub_rn(__dmul_rn((double)total, (double)w0), __dmul_rn((double)s0, (double)n));
        sigma = __ddiv_rn(__dmul_rn(num, num), __dmul_rn((double)w0, (double)w1));
    }
    // (sigma, t) pairs: the larger sigma, ties to the smaller t.
    u32 best_t = t;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        double os = __shfl_down_sync(0xffffffffu, sigma, d);
        u32 ot = __shfl_down_sync(0xffffffffu, best_t, d);
        if (os > sigma || (os == sigma && ot < best_t)) {
            sigma = os;
            best_t = ot;
        }
    }
    __shared__ double warp_sigma[HIST_WARPS];
    __shared__ u32 warp_t[HIST_WARPS];
    if ((t & 31) == 0) {
        warp_sigma[t >> 5] = sigma;
        warp_t[t >> 5] = best_t;
    }
    __syncthreads();
    if (t == 0) {
        // Warps in order of t: a later warp wins only with a larger sigma.
        double best = warp_sigma[0];
        u32 bt = warp_t[0];
        for (int w = 1; w < HIST_WARPS; w++) {
            if (warp_sigma[w] > best) {
                best = warp_sigma[w];
                bt = warp_t[w];
            }
        }
        *level = bt;
    }
}
