// Shared by the filter kernels (convolve.cu, which gaussian uses too,
// boxfilter.cu, sobel.cu): pixels of gray (u8) and RGBA (one u32 word, R in
// the low byte, three filtered channels, alpha kept) frames, exact byte to
// float, border-mapped tile loads into shared memory, and the sliding-window
// multiply-accumulate of the separable passes.
#pragma once
#include "common.cuh"

// Pixel access for C filtered channels: C = 1 is a gray u8, C = 3 the RGB of
// an RGBA word.
template <int C> struct Px;

template <> struct Px<1> {
    typedef u8 W;
    // Columns a lane loads a round in load_tile (a warp: 128 bytes).
    static constexpr int LANE_COLS = 4;
    // The channel as an exact f32: the byte as the low mantissa bits of 2^23,
    // minus 2^23 (one integer op and one add, where I2F runs at 1/8 rate).
    static __device__ __forceinline__ float chan(W p, int) {
        return __fsub_rn(__uint_as_float(0x4B000000u | p), 8388608.0f);
    }
    static __device__ __forceinline__ u32 ichan(W p, int) { return p; }
    static __device__ __forceinline__ W make(const u8 (&v)[1], W) { return v[0]; }
};

template <> struct Px<3> {
    typedef u32 W;
    static constexpr int LANE_COLS = 2;
    static __device__ __forceinline__ float chan(W p, int c) {
        return __fsub_rn(__uint_as_float(__byte_perm(p, 0x4B000000u, 0x7540u | c)),
                         8388608.0f);
    }
    static __device__ __forceinline__ u32 ichan(W p, int c) { return (p >> (8 * c)) & 0xFFu; }
    // R, G, B from v and alpha from `src`.
    static __device__ __forceinline__ W make(const u8 (&v)[3], W src) {
        return (u32)v[0] | ((u32)v[1] << 8) | ((u32)v[2] << 16) | (src & 0xFF000000u);
    }
};

// Elements in a shared-memory tile row of `cols` pixels, chosen so that a
// warp whose lanes read the same column of 32 consecutive rows hits 32
// different banks: an odd number of 4-byte words. The host computes the same
// (src/cuda/ops/convolve.rs, `tile_pitch`).
template <int C> __device__ __forceinline__ int tile_pitch(int cols);
template <> __device__ __forceinline__ int tile_pitch<1>(int cols) {
    return 4 * (((cols + 3) / 4) | 1);
}
template <> __device__ __forceinline__ int tile_pitch<3>(int cols) { return cols | 1; }

// Loads frame rows y0 + i (i < rows) and columns x0 + j (j < cols), read
// through `border`, into tile[i * pitch + j] as `conv(pixel)`; where the zero
// border reads nothing, `conv` gets a zero pixel. Lanes take consecutive
// columns (coalesced); each round a thread issues the independent loads of
// 8 rows × V columns before storing any, so that they are in flight together
// (1-D blocks).
template <int V, class W, class T, class Conv>
__device__ __forceinline__ void load_tile(const W* __restrict__ src, int w, int h, int border,
                                          int x0, int y0, int rows, int cols, T* tile,
                                          int pitch, Conv conv) {
    constexpr int U = 8;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int c0 = 0; c0 < cols; c0 += 32 * V) {
        // Source column of each of this lane's V columns; -1 zero, -2 none.
        int sx[V];
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const int j = c0 + 32 * v + lane;
            sx[v] = j < cols ? border_index(x0 + j, w, border) : -2;
        }
        for (int i0 = warp; i0 < rows; i0 += U * warps) {
            W raw[U][V];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int i = i0 + u * warps;
                const int sy = i < rows ? border_index(y0 + i, h, border) : -1;
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    raw[u][v] = 0;
                    if (sy >= 0 && sx[v] >= 0) raw[u][v] = src[sy * w + sx[v]];
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int i = i0 + u * warps;
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (i < rows && sx[v] != -2) tile[i * pitch + c0 + 32 * v + lane] = conv(raw[u][v]);
            }
        }
    }
}

// One chunk of the separable multiply-accumulate: taps k0 + kk for kk from
// KK0 to B - 1 (stopping at n when GUARD), with win[m] = sample k0 + m.
template <int C, int B, int KK0, bool GUARD>
__device__ __forceinline__ void mac_chunk(float (&acc)[B][C], const float (&win)[2 * B - 1][C],
                                          const float* taps, int k0, int n) {
#pragma unroll
    for (int kk = KK0; kk < B; ++kk) {
        if (GUARD && k0 + kk >= n) break;
        const float t = taps[k0 + kk];
#pragma unroll
        for (int j = 0; j < B; ++j)
#pragma unroll
            for (int c = 0; c < C; ++c)
                acc[j][c] = __fmaf_rn(t, win[j + kk][c], acc[j][c]);
    }
}

// acc[j] = Σ over k = 0..n-1 ascending of taps[k] · sample(j + k), for the B
// outputs j of one thread, in f32, each term a fused multiply-add: the
// CPU's operations and order (src/ops/convolve.rs, `mac_row`). The sum starts from the first
// product where the CPU starts from +0.0 and adds it; the two differ only in
// the sign of a zero sum, which neither a later product nor saturate_u8 can
// tell apart. `sample(m, v)` writes the C channels of sample m into v; it is
// asked for each m from 0 to n + B - 2 once, and for no other.
template <int C, int B, class Sample>
__device__ __forceinline__ void mac_window(Sample sample, const float* taps, int n,
                                           float (&acc)[B][C]) {
    // For the chunk of taps from k0, win[m] = sample k0 + m for the
    // m < B - 1 + min(B, n - k0) it reads.
    float win[2 * B - 1][C];
#pragma unroll
    for (int m = 0; m < B; ++m) sample(m, win[m]);
#pragma unroll
    for (int m = 0; m < B - 1; ++m)
        if (m + 1 < n) sample(B + m, win[B + m]);
    const float t0 = taps[0];
#pragma unroll
    for (int j = 0; j < B; ++j)
#pragma unroll
        for (int c = 0; c < C; ++c) acc[j][c] = __fmul_rn(t0, win[j][c]);
    if (n >= B)
        mac_chunk<C, B, 1, false>(acc, win, taps, 0, n);
    else
        mac_chunk<C, B, 1, true>(acc, win, taps, 0, n);
    // Fully unrolled where n is a compile-time constant (the fixed-length
    // kernels); otherwise left a loop.
#pragma unroll
    for (int k0 = B; k0 < n; k0 += B) {
#pragma unroll
        for (int m = 0; m < B - 1; ++m)
#pragma unroll
            for (int c = 0; c < C; ++c) win[m][c] = win[B + m][c];
        if (k0 + B <= n) {
#pragma unroll
            for (int m = 0; m < B; ++m) sample(k0 + B - 1 + m, win[B - 1 + m]);
            mac_chunk<C, B, 0, false>(acc, win, taps, k0, n);
        } else {
#pragma unroll
            for (int m = 0; m < B; ++m)
                if (m < n - k0) sample(k0 + B - 1 + m, win[B - 1 + m]);
            mac_chunk<C, B, 0, true>(acc, win, taps, k0, n);
        }
    }
}
