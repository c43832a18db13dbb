// convolve and gaussian: correlation with a 2-D kernel (up to 7×7) or with
// separable row and column taps, exactly as the CPU reference
// (src/ops/convolve.rs): f32 sums in ascending tap order, each term a fused
// multiply-add (the first a plain product), an f32 intermediate between the
// row and the column pass, then + delta and saturate_u8. Anchor len / 2; samples outside the frame
// through the border (zero reads 0, the same as the CPU skipping a row).
// Gray is `u8`, RGBA `u8x4` (RGB filtered, alpha copied).
#include "filters.cuh"
// SEP_*, ROWS_TW, ROWS_TH, F2D_TH, F2D_THREADS: from the Rust code that launches these kernels (shared.cuh,
// made from seamstream-cuda's shared.rs).
#include "shared.cuh"

// Outputs a thread computes along the filtered axis (register blocking).
// Output tile height of the fused kernels.
// Longest tap list of the fixed-length fused kernels (`sep_fused_*_n*`).

// Output tile width of the fused kernel: 64 gray pixels, 32 RGBA pixels.
template <int C> struct SepTile { static constexpr int TW = C == 1 ? 64 : 32; };

// Row then column taps of the fixed-length kernels, passed by value: with
// the count known at compile time every tap is a constant-bank operand of
// its multiply-add, so there is no shared-memory load and no loop per tap
// (gaussian σ = 2.5, 17 taps, on an H100: 29.8 → 24.7 µs at 1080p RGBA,
// 14.3 → 11.6 µs gray, against the run-time kernel).
struct SepTaps {
    float t[2 * SEP_NMAX];
};

// Fused separable filter of one TW × SEP_TH output tile: the source tile
// with its halo goes to shared memory, the row pass over all its rows into
// an f32 tile in shared memory, the column pass from there to the frame.
// N = 0: nr, nc at run time, the taps in global memory (`gtaps`), copied to
// shared memory; N > 0: nr = nc = N and the taps in `ktaps` (a kernel
// parameter). Dynamic shared memory, laid out as the host computes it
// (src/cuda/ops/convolve.rs, `fused_smem`):
//   taps:  row taps then column taps, nr + nc floats rounded up to 4
//          (unused where N > 0)
//   mid:   (SEP_TH + nc - 1) rows × C channels × (TW + 1) floats (the
//          channels of a row at compile-time offsets from each other)
//   tile:  (SEP_TH + nc - 1) rows × tile_pitch(TW + nr - 1) pixels
template <int C, int N>
__device__ __forceinline__ void sep_fused(const typename Px<C>::W* __restrict__ src,
                                          typename Px<C>::W* __restrict__ dst, int w, int h,
                                          const float* __restrict__ gtaps, const float* ktaps,
                                          int nr, int nc, float delta, int border) {
    typedef typename Px<C>::W W;
    constexpr int B = SEP_B, TW = SepTile<C>::TW, TH = SEP_TH;
    extern __shared__ __align__(16) unsigned char smem[];
    constexpr int MP = TW + 1;
    const int R = TH + nc - 1, IP = tile_pitch<C>(TW + nr - 1);
    float* s_taps = (float*)smem;
    float* mid = s_taps + ((nr + nc + 3) & ~3);
    W* tile = (W*)(mid + C * R * MP);

    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    const int ow = min(TW, w - x0), oh = min(TH, h - y0);
    const int rows = oh + nc - 1, cols = ow + nr - 1;
    const int ar = nr / 2, ac = nc / 2;

    const float* rt = ktaps;
    if constexpr (N == 0) {
        for (int k = threadIdx.x; k < nr + nc; k += blockDim.x) s_taps[k] = gtaps[k];
        rt = s_taps;
    }
    const float* ct = rt + nr;
    load_tile<Px<C>::LANE_COLS>(src, w, h, border, x0 - ar, y0 - ac, rows, cols, tile, IP,
                                [](W p) { return p; });
    __syncthreads();

    // Row pass: item = (tile row i, group of B columns); lanes take
    // consecutive rows, so the odd pitch keeps them on distinct banks.
    const int groups = (ow + B - 1) / B;
    for (int it = threadIdx.x; it < rows * groups; it += blockDim.x) {
        const int i = it % rows, g = it / rows;
        const W* row = tile + i * IP + g * B;
        float acc[B][C];
        mac_window<C, B>(
            [&](int m, float (&v)[C]) {
                const W p = row[m];
#pragma unroll
                for (int c = 0; c < C; ++c) v[c] = Px<C>::chan(p, c);
            },
            rt, nr, acc);
#pragma unroll
        for (int j = 0; j < B; ++j)
#pragma unroll
            for (int c = 0; c < C; ++c) mid[(i * C + c) * MP + g * B + j] = acc[j][c];
    }
    __syncthreads();

    // Column pass: item = (column x, group of B rows); lanes take consecutive
    // columns, so the stores of a warp are contiguous.
    for (int it = threadIdx.x; it < TW * ((oh + B - 1) / B); it += blockDim.x) {
        const int x = it % TW, yb = (it / TW) * B;
        if (x >= ow) continue;
        const float* col = mid + yb * (C * MP) + x;
        float acc[B][C];
        mac_window<C, B>(
            [&](int m, float (&v)[C]) {
                const float* p = col + m * (C * MP);
#pragma unroll
                for (int c = 0; c < C; ++c) v[c] = p[c * MP];
            },
            ct, nc, acc);
#pragma unroll
        for (int j = 0; j < B; ++j) {
            const int y = yb + j;
            if (y >= oh) break;
            u8 v[C];
#pragma unroll
            for (int c = 0; c < C; ++c) v[c] = saturate_u8(__fadd_rn(acc[j][c], delta));
            const W s = tile[(y + ac) * IP + x + ar];
            dst[(y0 + y) * w + x0 + x] = Px<C>::make(v, s);
        }
    }
}

#if !defined(SEP_N) && !defined(F2D_N)  // the run-time kernels: the plain file
extern "C" __global__ void __launch_bounds__(SEP_THREADS)
    sep_fused_u8(const u8* src, u8* dst, int w, int h, const float* taps, int nr, int nc,
                 float delta, int border) {
    sep_fused<1, 0>(src, dst, w, h, taps, nullptr, nr, nc, delta, border);
}

extern "C" __global__ void __launch_bounds__(SEP_THREADS)
    sep_fused_u8x4(const u32* src, u32* dst, int w, int h, const float* taps, int nr, int nc,
                   float delta, int border) {
    sep_fused<3, 0>(src, dst, w, h, taps, nullptr, nr, nc, delta, border);
}
#endif

// The fixed-length fused kernels `sep_fused_{u8,u8x4}_n{N}`: odd N up to
// SEP_NMAX (src/cuda/ops/convolve.rs picks them for equal row and column
// counts, the run-time kernel otherwise).
#define SEP_FIXED(N)                                                                       \
    extern "C" __global__ void __launch_bounds__(SEP_THREADS)                              \
        sep_fused_u8_n##N(const u8* src, u8* dst, int w, int h, SepTaps k, float delta,    \
                          int border) {                                                    \
        sep_fused<1, N>(src, dst, w, h, nullptr, k.t, N, N, delta, border);                \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(SEP_THREADS)                              \
        sep_fused_u8x4_n##N(const u32* src, u32* dst, int w, int h, SepTaps k, float delta, \
                            int border) {                                                  \
        sep_fused<3, N>(src, dst, w, h, nullptr, k.t, N, N, delta, border);                \
    }

// Built one length at a time: src/cuda/ops/convolve.rs loads the variant
// `convolve.cu?SEP_N=n`, which holds only these two kernels (the whole set
// took NVRTC 20–25 s on a first start).
#define SEP_FIXED_OF(N) SEP_FIXED(N)
#ifdef SEP_N
SEP_FIXED_OF(SEP_N)
#endif

// Taps too long for the fused tile (a wide Gaussian): the row pass over
// every frame row into `mid` (C planes of w × h floats), then the column
// pass from `mid` to the frame.

// Row pass of a ROWS_TW × ROWS_TH block of frame rows. Dynamic shared memory
// (`rows_smem` on the host): nr taps rounded up to 4, then ROWS_TH rows ×
// tile_pitch(ROWS_TW + nr - 1) pixels.
template <int C>
__device__ __forceinline__ void sep_rows(const typename Px<C>::W* __restrict__ src,
                                         float* __restrict__ mid, int w, int h,
                                         const float* __restrict__ taps, int nr, int border) {
    typedef typename Px<C>::W W;
    constexpr int B = SEP_B;
    extern __shared__ __align__(16) unsigned char smem[];
    const int IP = tile_pitch<C>(ROWS_TW + nr - 1);
    float* s_taps = (float*)smem;
    W* tile = (W*)(s_taps + ((nr + 3) & ~3));

    const int x0 = blockIdx.x * ROWS_TW, y0 = blockIdx.y * ROWS_TH;
    const int ow = min(ROWS_TW, w - x0), oh = min(ROWS_TH, h - y0);
    const int ar = nr / 2;
    for (int k = threadIdx.x; k < nr; k += blockDim.x) s_taps[k] = taps[k];
    load_tile<Px<C>::LANE_COLS>(src, w, h, border, x0 - ar, y0, oh, ow + nr - 1, tile, IP,
                                [](W p) { return p; });
    __syncthreads();

    const int groups = (ow + B - 1) / B;
    for (int it = threadIdx.x; it < oh * groups; it += blockDim.x) {
        const int i = it % oh, g = it / oh;
        const W* row = tile + i * IP + g * B;
        float acc[B][C];
        mac_window<C, B>(
            [&](int m, float (&v)[C]) {
                const W p = row[m];
#pragma unroll
                for (int c = 0; c < C; ++c) v[c] = Px<C>::chan(p, c);
            },
            s_taps, nr, acc);
#pragma unroll
        for (int j = 0; j < B; ++j) {
            const int x = x0 + g * B + j;
            if (x >= w) break;
#pragma unroll
            for (int c = 0; c < C; ++c) mid[(c * h + y0 + i) * w + x] = acc[j][c];
        }
    }
}

#if !defined(SEP_N) && !defined(F2D_N)  // the run-time kernels: the plain file
extern "C" __global__ void __launch_bounds__(SEP_THREADS)
    sep_rows_u8(const u8* src, float* mid, int w, int h, const float* taps, int nr, int border) {
    sep_rows<1>(src, mid, w, h, taps, nr, border);
}

extern "C" __global__ void __launch_bounds__(SEP_THREADS)
    sep_rows_u8x4(const u32* src, float* mid, int w, int h, const float* taps, int nr,
                  int border) {
    sep_rows<3>(src, mid, w, h, taps, nr, border);
}
#endif

// Column pass: a 32 × 4 block, each thread B consecutive rows of one column
// (32 × 32 outputs a block), reading `mid` through the border. Dynamic shared
// memory: the nc column taps (taps[nr..nr + nc]).
template <int C>
__device__ __forceinline__ void sep_cols(const typename Px<C>::W* __restrict__ src,
                                         const float* __restrict__ mid,
                                         typename Px<C>::W* __restrict__ dst, int w, int h,
                                         const float* __restrict__ taps, int nr, int nc,
                                         float delta, int border) {
    typedef typename Px<C>::W W;
    constexpr int B = SEP_B;
    extern __shared__ __align__(16) unsigned char smem[];
    float* s_taps = (float*)smem;
    for (int k = threadIdx.x; k < nc; k += blockDim.x) s_taps[k] = taps[nr + k];
    __syncthreads();

    const int x = blockIdx.x * 32 + (threadIdx.x & 31);
    const int yb = (blockIdx.y * 4 + (threadIdx.x >> 5)) * B;
    if (x >= w || yb >= h) return;
    const int top = yb - nc / 2;
    float acc[B][C];
    mac_window<C, B>(
        [&](int m, float (&v)[C]) {
            const int sy = border_index(top + m, h, border);
#pragma unroll
            for (int c = 0; c < C; ++c) v[c] = sy < 0 ? 0.0f : mid[(c * h + sy) * w + x];
        },
        s_taps, nc, acc);
#pragma unroll
    for (int j = 0; j < B; ++j) {
        const int y = yb + j;
        if (y >= h) break;
        u8 v[C];
#pragma unroll
        for (int c = 0; c < C; ++c) v[c] = saturate_u8(__fadd_rn(acc[j][c], delta));
        dst[y * w + x] = Px<C>::make(v, src[y * w + x]);
    }
}

#if !defined(SEP_N) && !defined(F2D_N)  // the run-time kernels: the plain file
extern "C" __global__ void __launch_bounds__(SEP_THREADS)
    sep_cols_u8(const u8* src, const float* mid, u8* dst, int w, int h, const float* taps,
                int nr, int nc, float delta, int border) {
    sep_cols<1>(src, mid, dst, w, h, taps, nr, nc, delta, border);
}

extern "C" __global__ void __launch_bounds__(SEP_THREADS)
    sep_cols_u8x4(const u32* src, const float* mid, u32* dst, int w, int h, const float* taps,
                  int nr, int nc, float delta, int border) {
    sep_cols<3>(src, mid, dst, w, h, taps, nr, nc, delta, border);
}
#endif

// 2-D kernel, n × n row-major, passed by value so that with n known at
// compile time every tap is a constant-bank operand.
struct Kernel49 {
    float k[49];
};


// One TW × F2D_TH output tile: the source tile with its halo in shared
// memory, then per thread B consecutive outputs of one row, summed over ky
// ascending, then kx ascending (the CPU's order).
template <int C, int N>
__device__ __forceinline__ void filter2d(const typename Px<C>::W* __restrict__ src,
                                         typename Px<C>::W* __restrict__ dst, int w, int h,
                                         const Kernel49& kern, float delta, int border) {
    typedef typename Px<C>::W W;
    constexpr int B = SEP_B, TW = SepTile<C>::TW, TH = F2D_TH;
    constexpr int IW = TW + N - 1;
    constexpr int IP = C == 1 ? 4 * (((IW + 3) / 4) | 1) : (IW | 1);
    __shared__ W tile[(TH + N - 1) * IP];

    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    const int ow = min(TW, w - x0), oh = min(TH, h - y0);
    const int a = N / 2;
    load_tile<Px<C>::LANE_COLS>(src, w, h, border, x0 - a, y0 - a, oh + N - 1, ow + N - 1,
                                tile, IP, [](W p) { return p; });
    __syncthreads();

    // Item = (row i, group of B columns), lanes on consecutive rows.
    for (int it = threadIdx.x; it < TH * (TW / B); it += blockDim.x) {
        const int i = it % TH, g = it / TH;
        if (i >= oh || g * B >= ow) continue;
        float acc[B][C];
#pragma unroll
        for (int ky = 0; ky < N; ++ky) {
            const W* row = tile + (i + ky) * IP + g * B;
            float win[B + N - 1][C];
#pragma unroll
            for (int m = 0; m < B + N - 1; ++m)
#pragma unroll
                for (int c = 0; c < C; ++c) win[m][c] = Px<C>::chan(row[m], c);
#pragma unroll
            for (int kx = 0; kx < N; ++kx) {
                const float t = kern.k[ky * N + kx];
#pragma unroll
                for (int j = 0; j < B; ++j)
#pragma unroll
                    for (int c = 0; c < C; ++c) {
                        const float v = win[j + kx][c];
                        acc[j][c] = ky == 0 && kx == 0 ? __fmul_rn(t, v)
                                                       : __fmaf_rn(t, v, acc[j][c]);
                    }
            }
        }
        W* out = dst + (y0 + i) * w + x0 + g * B;
        const W* in = tile + (i + a) * IP + g * B + a;
#pragma unroll
        for (int j = 0; j < B; ++j) {
            if (g * B + j >= ow) break;
            u8 v[C];
#pragma unroll
            for (int c = 0; c < C; ++c) v[c] = saturate_u8(__fadd_rn(acc[j][c], delta));
            out[j] = Px<C>::make(v, in[j]);
        }
    }
}

#define FILTER2D(N)                                                                        \
    extern "C" __global__ void __launch_bounds__(F2D_THREADS)                              \
        filter2d_u8_n##N(const u8* src, u8* dst, int w, int h, Kernel49 k, float delta,    \
                         int border) {                                                     \
        filter2d<1, N>(src, dst, w, h, k, delta, border);                                  \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(F2D_THREADS)                              \
        filter2d_u8x4_n##N(const u32* src, u32* dst, int w, int h, Kernel49 k, float delta, \
                           int border) {                                                   \
        filter2d<3, N>(src, dst, w, h, k, delta, border);                                  \
    }

// One size at a time, as the fixed separable kernels: the variant
// `convolve.cu?F2D_N=n`.
#define FILTER2D_OF(N) FILTER2D(N)
#ifdef F2D_N
FILTER2D_OF(F2D_N)
#endif
