// box: the mean over a (2r+1)² window of border-extended samples,
// (S + n/2) / n in integers with S the exact window sum and n = (2r+1)², as
// src/ops/boxfilter.rs. Sums are u32 with wrapping arithmetic, exact for the
// same reason as on the CPU (every window sum is below 2³²). Two ways:
//  * r ≤ 16 (`box_tile_*`): one kernel, a 64-row tile with its halo in
//    shared memory, running sums along the rows and then down the columns.
//  * any r (`box_colprefix_*` then `box_rows_*`): prefix sums down every
//    column, then a block a row: the window sum down each column from two to
//    nine prefix sums (the border folded in by `window_sum`), the prefix of
//    those along the row in shared memory, and the window sum along it the
//    same way. The cost does not depend on r.
// Gray is `u8`, RGBA `u8x4` (RGB filtered, alpha copied).
#include "filters.cuh"
// BOX_TH, BOX_THREADS: from the Rust code that launches these kernels (shared.cuh,
// made from seamstream-cuda's shared.rs).
#include "shared.cuh"

#define BOX_SEG 16

template <int C> struct BoxTile { static constexpr int TW = C == 1 ? 64 : 32; };

// (S + n/2) / n by one 32 × 32 → 64-bit multiply and a shift, with magic =
// ⌈2^shift / n⌉ and shift = 31 + ⌈log2 n⌉ from the host; exact for every
// numerator below 2³¹ (Granlund and Montgomery, 1994: magic·n − 2^shift < n
// ≤ 2^(shift−31)), and S + n/2 ≤ 255.5·n < 2³¹ for every radius.
__device__ __forceinline__ u8 box_mean(u32 s, u32 half, u32 magic, int shift) {
    return (u8)(((u64)(s + half) * magic) >> shift);
}

// One TW × BOX_TH output tile. The window's first sums are unrolled so that
// their shared-memory loads are in flight together; with the exact
// multiply-and-shift division that took box r = 8 on an H100 from 12.0 to
// 10.7 µs at 1080p gray (20.9 → 19.0 RGBA). Tiles of 128 rows were faster
// only at 4K gray (29.4 against 32.9 µs) and slower elsewhere, 32 rows
// slower everywhere. Dynamic shared memory, as the host computes it
// (src/cuda/ops/boxfilter.rs, `tile_smem`): (BOX_TH + 2r) rows × C channels
// × (TW + 1) u32 row sums, then (BOX_TH + 2r) rows × tile_pitch(TW + 2r)
// source pixels.
template <int C>
__device__ __forceinline__ void box_tile(const typename Px<C>::W* __restrict__ src,
                                         typename Px<C>::W* __restrict__ dst, int w, int h,
                                         int r, int border, u32 magic, int shift) {
    typedef typename Px<C>::W W;
    constexpr int TW = BoxTile<C>::TW, TH = BOX_TH, SEG = BOX_SEG, HP = TW + 1;
    extern __shared__ __align__(16) unsigned char smem[];
    const int span = 2 * r + 1, R = TH + 2 * r, IP = tile_pitch<C>(TW + 2 * r);
    u32* hsum = (u32*)smem;
    W* tile = (W*)(hsum + R * C * HP);

    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    const int ow = min(TW, w - x0), oh = min(TH, h - y0);
    const int rows = oh + 2 * r;
    load_tile<Px<C>::LANE_COLS>(src, w, h, border, x0 - r, y0 - r, rows, ow + 2 * r, tile, IP,
                                [](W p) { return p; });
    __syncthreads();

    // Along the rows: item = (tile row i, segment of SEG outputs), lanes on
    // consecutive rows (odd pitches keep them on distinct banks).
    for (int it = threadIdx.x; it < rows * (TW / SEG); it += blockDim.x) {
        const int i = it % rows, xs = (it / rows) * SEG;
        if (xs >= ow) continue;
        const W* in = tile + i * IP + xs;
        u32* out = hsum + i * C * HP + xs;
        u32 s[C];
#pragma unroll
        for (int c = 0; c < C; ++c) s[c] = 0;
#pragma unroll 4
        for (int m = 0; m < span; ++m)
#pragma unroll
            for (int c = 0; c < C; ++c) s[c] += Px<C>::ichan(in[m], c);
#pragma unroll
        for (int c = 0; c < C; ++c) out[c * HP] = s[c];
        for (int x = 1; x < SEG && xs + x < ow; ++x) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                s[c] += Px<C>::ichan(in[x + 2 * r], c) - Px<C>::ichan(in[x - 1], c);
                out[c * HP + x] = s[c];
            }
        }
    }
    __syncthreads();

    // Down the columns: item = (column x, segment of SEG rows), lanes on
    // consecutive columns so that a warp's stores are contiguous.
    const u32 n = (u32)span * (u32)span, half = n / 2;
    for (int it = threadIdx.x; it < TW * (TH / SEG); it += blockDim.x) {
        const int x = it % TW, ys = (it / TW) * SEG;
        if (x >= ow || ys >= oh) continue;
        const u32* col = hsum + ys * C * HP + x;
        u32 s[C];
#pragma unroll
        for (int c = 0; c < C; ++c) s[c] = 0;
#pragma unroll 4
        for (int m = 0; m < span; ++m)
#pragma unroll
            for (int c = 0; c < C; ++c) s[c] += col[m * C * HP + c * HP];
        for (int y = 0; y < SEG && ys + y < oh; ++y) {
            u8 v[C];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                if (y > 0)
                    s[c] += col[(y + 2 * r) * C * HP + c * HP] - col[(y - 1) * C * HP + c * HP];
                v[c] = box_mean(s[c], half, magic, shift);
            }
            const W p = tile[(ys + y + r) * IP + x + r];
            dst[(y0 + ys + y) * w + x0 + x] = Px<C>::make(v, p);
        }
    }
}

extern "C" __global__ void __launch_bounds__(BOX_THREADS)
    box_tile_u8(const u8* src, u8* dst, int w, int h, int r, int border, u32 magic, int shift) {
    box_tile<1>(src, dst, w, h, r, border, magic, shift);
}

extern "C" __global__ void __launch_bounds__(BOX_THREADS)
    box_tile_u8x4(const u32* src, u32* dst, int w, int h, int r, int border, u32 magic,
                  int shift) {
    box_tile<3>(src, dst, w, h, r, border, magic, shift);
}

// pre[(c * (h + 1) + j) * w + x] = Σ over rows y < j of channel c at column
// x. A block is 32 columns × 32 bands of rows: each thread sums its band,
// the bands' totals are added up in shared memory, then each thread writes
// its band's running sums.
template <int C>
__device__ __forceinline__ void box_colprefix(const typename Px<C>::W* __restrict__ src,
                                              u32* __restrict__ pre, int w, int h) {
    typedef typename Px<C>::W W;
    __shared__ u32 tot[32][32 * C + 1];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const int x = blockIdx.x * 32 + tx;
    const int band = (h + 31) / 32, ya = min(h, ty * band), yb = min(h, ya + band);
    u32 s[C];
#pragma unroll
    for (int c = 0; c < C; ++c) s[c] = 0;
    if (x < w)
        for (int y = ya; y < yb; ++y) {
            const W p = src[y * w + x];
#pragma unroll
            for (int c = 0; c < C; ++c) s[c] += Px<C>::ichan(p, c);
        }
#pragma unroll
    for (int c = 0; c < C; ++c) tot[ty][tx * C + c] = s[c];
    __syncthreads();
    if (x >= w) return;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        s[c] = 0;
        for (int t = 0; t < ty; ++t) s[c] += tot[t][tx * C + c];
        if (ty == 0) pre[c * (h + 1) * w + x] = 0;
    }
    for (int y = ya; y < yb; ++y) {
        const W p = src[y * w + x];
#pragma unroll
        for (int c = 0; c < C; ++c) {
            s[c] += Px<C>::ichan(p, c);
            pre[(c * (h + 1) + y + 1) * w + x] = s[c];
        }
    }
}

extern "C" __global__ void __launch_bounds__(1024)
    box_colprefix_u8(const u8* src, u32* pre, int w, int h) {
    box_colprefix<1>(src, pre, w, h);
}

extern "C" __global__ void __launch_bounds__(1024)
    box_colprefix_u8x4(const u32* src, u32* pre, int w, int h) {
    box_colprefix<3>(src, pre, w, h);
}

// Σ over i < j of the sequence of length n that `pre` (j ↦ that prefix, for
// j = 0..n) describes, extended periodically as reflect101 reads it (period
// 2(n - 1), n ≥ 2), for any integer j; wrapping.
template <class Pre>
__device__ __forceinline__ u32 reflect101_prefix(int j, int n, Pre pre) {
    const int period = 2 * (n - 1);
    int q = j / period, m = j - q * period;
    if (m < 0) {
        m += period;
        q -= 1;
    }
    // Within a period, indices n .. period-1 read n-2 down to 1.
    const u32 tail = pre(n) + pre(n - 1);
    const u32 g = m <= n ? pre(m) : tail - pre(period - m + 1);
    return (u32)q * (tail - pre(1)) + g;
}

// Σ over virtual indices lo..=hi (lo ≤ hi) of a sequence of length n read
// through `border`, from its prefix sums `pre(j)`, j = 0..n (wrapping; the
// true sum is below 2³², so the wrapped one is it).
template <class Pre>
__device__ __forceinline__ u32 window_sum(int lo, int hi, int n, int border, Pre pre) {
    if (lo >= 0 && hi < n) return pre(hi + 1) - pre(lo);
    if (border == BORDER_REFLECT101 && n > 1)
        return reflect101_prefix(hi + 1, n, pre) - reflect101_prefix(lo, n, pre);
    const int a = max(lo, 0), b = min(hi, n - 1);
    u32 s = a <= b ? pre(b + 1) - pre(a) : 0u;
    if (border == BORDER_ZERO) return s;
    // Replicate (and reflect101 of one sample, the same): the samples below
    // 0 read the first, those from n on the last.
    const u32 below = lo < 0 ? (u32)(min(hi, -1) - lo + 1) : 0u;
    const u32 above = hi >= n ? (u32)(hi - max(lo, n) + 1) : 0u;
    return s + below * pre(1) + above * (pre(n) - pre(n - 1));
}

// p[j] for j = 1..n holds a value on entry; on return p[j] = the sum of the
// entry values 1..j and p[0] = 0 (wrapping). Each thread scans a contiguous
// run, the runs' totals are scanned across the block. All threads call it.
__device__ __forceinline__ void block_prefix(u32* p, int n) {
    __shared__ u32 warp_tot[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int per = (n + blockDim.x - 1) / blockDim.x;
    const int a = 1 + min(n, (int)threadIdx.x * per), b = 1 + min(n, (int)(threadIdx.x + 1) * per);
    u32 s = 0;
    for (int j = a; j < b; ++j) s += p[j];
    u32 incl = s;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const u32 t = __shfl_up_sync(0xFFFFFFFFu, incl, off);
        if (lane >= off) incl += t;
    }
    if (lane == 31) warp_tot[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        u32 t = lane < warps ? warp_tot[lane] : 0u;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const u32 u = __shfl_up_sync(0xFFFFFFFFu, t, off);
            if (lane >= off) t += u;
        }
        __syncwarp();
        if (lane < warps) warp_tot[lane] = t;
    }
    __syncthreads();
    u32 run = incl - s + (warp > 0 ? warp_tot[warp - 1] : 0u);
    for (int j = a; j < b; ++j) {
        run += p[j];
        p[j] = run;
    }
    if (threadIdx.x == 0) p[0] = 0;
    __syncthreads();
}

// Output row blockIdx.x. Dynamic shared memory (`rows_smem` on the host):
// C planes of w + 1 u32.
template <int C>
__device__ __forceinline__ void box_rows(const typename Px<C>::W* __restrict__ src,
                                         const u32* __restrict__ pre,
                                         typename Px<C>::W* __restrict__ dst, int w, int h,
                                         int r, int border) {
    typedef typename Px<C>::W W;
    extern __shared__ __align__(16) unsigned char smem[];
    u32* rowpre = (u32*)smem;
    const int y = blockIdx.x;
    for (int x = threadIdx.x; x < w; x += blockDim.x)
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const u32* colpre = pre + c * (h + 1) * w + x;
            rowpre[c * (w + 1) + x + 1] =
                window_sum(y - r, y + r, h, border, [&](int j) { return colpre[j * w]; });
        }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < C; ++c) block_prefix(rowpre + c * (w + 1), w);
    const u32 n = (u32)(2 * r + 1) * (u32)(2 * r + 1), half = n / 2;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        u8 v[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const u32* p = rowpre + c * (w + 1);
            const u32 s = window_sum(x - r, x + r, w, border, [&](int j) { return p[j]; });
            v[c] = (u8)((s + half) / n);
        }
        dst[y * w + x] = Px<C>::make(v, src[y * w + x]);
    }
}

extern "C" __global__ void __launch_bounds__(BOX_THREADS)
    box_rows_u8(const u8* src, const u32* pre, u8* dst, int w, int h, int r, int border) {
    box_rows<1>(src, pre, dst, w, h, r, border);
}

extern "C" __global__ void __launch_bounds__(BOX_THREADS)
    box_rows_u8x4(const u32* src, const u32* pre, u32* dst, int w, int h, int r, int border) {
    box_rows<3>(src, pre, dst, w, h, r, border);
}
