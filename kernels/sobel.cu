// sobel: the gradient of the luma with the integer 3×3 and 5×5 kernels of
// src/ops/sobel.rs (correlation, anchor at the centre, exact in integers),
// written as magnitude = saturate_u8(sqrt(f32(gx² + gy²))) (output 0),
// min(255, |gx|) (1) or min(255, |gy|) (2). Gray in gives gray out; RGBA in
// gives the value in R, G and B with alpha kept, the luma being the CPU's
// Pixel::luma (BT.709 weights passed in, f32 operations in gray.cu's order).
#include "filters.cuh"
// SOBEL_TW, SOBEL_TH, SOBEL_THREADS: from the Rust code that launches these kernels (shared.cuh,
// made from seamstream-cuda's shared.rs).
#include "shared.cuh"


// The kernels as outer products G[ky][kx] = col[ky] · row[kx], with the
// factors of src/ops/sobel.rs (`separated`), Gx5's sign as specified there.
template <int K> __device__ __forceinline__ int smooth(int i) {
    return K == 3 ? (i == 1 ? 2 : 1) : (i == 2 ? 6 : (i == 1 || i == 3) ? 4 : 1);
}
template <int K> __device__ __forceinline__ int x_row(int i) {
    return K == 3 ? i - 1 : (i == 0 ? 1 : i == 1 ? 2 : i == 2 ? 0 : i == 3 ? -2 : -1);
}
template <int K> __device__ __forceinline__ int y_col(int i) {
    return K == 3 ? i - 1 : (i == 0 ? -1 : i == 1 ? -2 : i == 2 ? 0 : i == 3 ? 2 : 1);
}

// One 32 × 32 output tile: the luma of the tile and its halo in shared
// memory, then 4 outputs a thread, lanes along x.
template <int C, int K>
__device__ __forceinline__ void sobel(const typename Px<C>::W* __restrict__ src,
                                      typename Px<C>::W* __restrict__ dst, int w, int h,
                                      int output, int border, float kr, float kg, float kb) {
    typedef typename Px<C>::W W;
    constexpr int TW = SOBEL_TW, TH = SOBEL_TH, LP = TW + K - 1, A = K / 2;
    __shared__ u8 luma[(TH + K - 1) * LP];
    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    const int ow = min(TW, w - x0), oh = min(TH, h - y0);
    load_tile<2>(src, w, h, border, x0 - A, y0 - A, oh + K - 1, ow + K - 1, luma, LP,
                 [=](W p) -> u8 {
                     if (C == 1) return (u8)p;
                     const float y = __fadd_rn(__fadd_rn(__fmul_rn(kr, Px<C>::chan(p, 0)),
                                                         __fmul_rn(kg, Px<C>::chan(p, 1))),
                                               __fmul_rn(kb, Px<C>::chan(p, 2)));
                     return saturate_u8(y);
                 });
    __syncthreads();

    const int x = threadIdx.x & 31;
    for (int y = threadIdx.x >> 5; y < oh; y += SOBEL_THREADS / 32) {
        if (x >= ow) break;
        int gx = 0, gy = 0;
#pragma unroll
        for (int ky = 0; ky < K; ++ky)
#pragma unroll
            for (int kx = 0; kx < K; ++kx) {
                const int l = luma[(y + ky) * LP + x + kx];
                gx += smooth<K>(ky) * x_row<K>(kx) * l;
                gy += y_col<K>(ky) * smooth<K>(kx) * l;
            }
        u8 v;
        if (output == 0)
            v = saturate_u8(__fsqrt_rn((float)(gx * gx + gy * gy)));
        else
            v = (u8)min(255, abs(output == 1 ? gx : gy));
        u8 vs[C];
#pragma unroll
        for (int c = 0; c < C; ++c) vs[c] = v;
        const int at = (y0 + y) * w + x0 + x;
        dst[at] = Px<C>::make(vs, C == 1 ? (W)0 : src[at]);
    }
}

#define SOBEL(K)                                                                           \
    extern "C" __global__ void __launch_bounds__(SOBEL_THREADS)                            \
        sobel##K##_u8(const u8* src, u8* dst, int w, int h, int output, int border,       \
                      float kr, float kg, float kb) {                                      \
        sobel<1, K>(src, dst, w, h, output, border, kr, kg, kb);                          \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(SOBEL_THREADS)                            \
        sobel##K##_u8x4(const u32* src, u32* dst, int w, int h, int output, int border,   \
                        float kr, float kg, float kb) {                                    \
        sobel<3, K>(src, dst, w, h, output, border, kr, kg, kb);                          \
    }

SOBEL(3)
SOBEL(5)
