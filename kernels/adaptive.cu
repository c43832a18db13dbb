// adaptive: local thresholds from the integral tables of luma
// (src/ops/adaptive.rs), one thread a pixel (block 32×8). The window is
// clipped to the frame; its sum and squared sum are read from the u32 and u64
// tables with the CPU's wrapping arithmetic, and the mean, deviation and
// level are computed in f64 with the CPU's operations in the CPU's order
// (--fmad=false keeps them unfused; division and sqrt are correctly rounded
// on both sides), so every decision is the CPU's.
#include "common.cuh"

#define MEAN 0
#define SAUVOLA 1
#define NIBLACK 2

// a, b: c for MEAN; k, r for SAUVOLA; k for NIBLACK.
template <int METHOD>
__device__ __forceinline__ u8 decide(const u8* __restrict__ luma, const u32* __restrict__ sum,
                                     const u64* __restrict__ sq, u32 w, u32 h, u32 half,
                                     double a, double b, u8 max, u32 x, u32 y) {
    const u32 x0 = x > half ? x - half : 0, x1 = min(x + half + 1, w);
    const u32 y0 = y > half ? y - half : 0, y1 = min(y + half + 1, h);
    const size_t tw = (size_t)w + 1, top = y0 * tw, bot = y1 * tw;
    const u32 s = sum[bot + x1] - sum[bot + x0] - sum[top + x1] + sum[top + x0];
    const double n = (double)(x1 - x0) * (double)(y1 - y0);
    const double m = (double)s / n;
    double level;
    if (METHOD == MEAN) {
        level = m - a;
    } else {
        const u64 q = sq[bot + x1] - sq[bot + x0] - sq[top + x1] + sq[top + x0];
        const double sd = sqrt(fmax((double)q / n - m * m, 0.0));
        level = METHOD == SAUVOLA ? m * (1.0 + a * (sd / b - 1.0)) : m + a * sd;
    }
    return (double)luma[(size_t)y * w + x] > level ? max : 0;
}

// adaptive_{mean,sauvola,niblack}_gray(luma, sum, sq, out, w, h, half, a, b,
// max): `luma` is the input frame. `sq` is not read by mean.
#define ADAPTIVE_GRAY(NAME, METHOD)                                                              \
    extern "C" __global__ void NAME(const u8* __restrict__ luma, const u32* __restrict__ sum,    \
                                    const u64* __restrict__ sq, u8* __restrict__ out, u32 w,     \
                                    u32 h, u32 half, double a, double b, u32 max) {              \
        const u32 x = blockIdx.x * blockDim.x + threadIdx.x;                                     \
        const u32 y = blockIdx.y * blockDim.y + threadIdx.y;                                     \
        if (x >= w || y >= h) return;                                                            \
        out[(size_t)y * w + x] = decide<METHOD>(luma, sum, sq, w, h, half, a, b, (u8)max, x, y); \
    }

// adaptive_{mean,sauvola,niblack}_rgba(luma, sum, sq, src, out, w, h, half,
// a, b, max): R, G and B take the decision, alpha is the source's.
#define ADAPTIVE_RGBA(NAME, METHOD)                                                              \
    extern "C" __global__ void NAME(const u8* __restrict__ luma, const u32* __restrict__ sum,    \
                                    const u64* __restrict__ sq, const uchar4* __restrict__ src,  \
                                    uchar4* __restrict__ out, u32 w, u32 h, u32 half, double a,  \
                                    double b, u32 max) {                                         \
        const u32 x = blockIdx.x * blockDim.x + threadIdx.x;                                     \
        const u32 y = blockIdx.y * blockDim.y + threadIdx.y;                                     \
        if (x >= w || y >= h) return;                                                            \
        const size_t i = (size_t)y * w + x;                                                      \
        const u8 v = decide<METHOD>(luma, sum, sq, w, h, half, a, b, (u8)max, x, y);             \
        out[i] = make_uchar4(v, v, v, src[i].w);                                                 \
    }

ADAPTIVE_GRAY(adaptive_mean_gray, MEAN)
ADAPTIVE_GRAY(adaptive_sauvola_gray, SAUVOLA)
ADAPTIVE_GRAY(adaptive_niblack_gray, NIBLACK)
ADAPTIVE_RGBA(adaptive_mean_rgba, MEAN)
ADAPTIVE_RGBA(adaptive_sauvola_rgba, SAUVOLA)
ADAPTIVE_RGBA(adaptive_niblack_rgba, NIBLACK)
