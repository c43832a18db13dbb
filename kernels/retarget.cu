// retarget: exact seam carving, seam for seam the CPU's (src/ops/retarget.rs
// is the reference and explains the rules; src/cuda/ops/retarget.rs drives
// these kernels).
//
// Planes live in buffers with a fixed row pitch (in elements) while their
// width shrinks or grows in place. Images are u8 (gray) or u8x4 (RGBA, moved
// as one 32-bit word); luma and masks are u8 (a mask holds the CPU's i8
// codes: 1 protect, -1 remove); energies u32. Energies are integers and the
// cumulative costs i64, so every comparison is the CPU's.
#include "common.cuh"

typedef long long i64;
typedef signed char i8;
typedef unsigned short u16;

#define I64_MAX 0x7FFFFFFFFFFFFFFFLL

// Energy kinds (Energy::Forward has no per-pixel energy).
#define ENERGY_BASIC 0
#define ENERGY_SOBEL3 1
#define ENERGY_SOBEL5 2

// The DP kernel's block, and every how many rows it keeps a jump table for
// the backtrack (so the walk is ~h/32 + 32 dependent loads, not h).
#define DP_THREADS 1024
#define ANCHOR_ROWS 32

// ---------------------------------------------------------------- energies

// Luma of in-frame pixels, straight from the plane.
struct PlaneLuma {
    const u8* p;
    u32 pitch;
    __device__ int operator()(int x, int y) const { return p[(size_t)y * pitch + x]; }
};

// Luma of in-frame pixels from a shared tile whose (0, 0) is (x0, y0).
struct TileLuma {
    const u8* t;
    int x0, y0, tw;
    __device__ int operator()(int x, int y) const { return t[(y - y0) * tw + (x - x0)]; }
};

// ⌊√n⌋ exactly (the CPU's isqrt).
__device__ __forceinline__ u64 isqrt_u64(u64 n) {
    if (n == 0) return 0;
    u64 r = (u64)sqrt((double)n);
    while (r * r > n) --r;
    while ((r + 1) * (r + 1) <= n) ++r;
    return r;
}

// ⌊8·√(gx² + gy²)⌋ = isqrt(64·(gx² + gy²)).
__device__ __forceinline__ u32 sobel_energy(int gx, int gy) {
    u64 n = (u64)((i64)gx * gx + (i64)gy * gy);
    return (u32)isqrt_u64(n * 64);
}

// The seed's Sobel kernels as outer products G[ky][kx] = col[ky]·row[kx]
// (src/ops/sobel.rs), correlated with a replicate border.
template <int A, typename L>
__device__ __forceinline__ u32 sobel_at(const L& lum, int x, int y, int w, int h) {
    const int x_col3[3] = {1, 2, 1}, x_row3[3] = {-1, 0, 1};
    const int y_col3[3] = {-1, 0, 1}, y_row3[3] = {1, 2, 1};
    const int x_col5[5] = {1, 4, 6, 4, 1}, x_row5[5] = {1, 2, 0, -2, -1};
    const int y_col5[5] = {-1, -2, 0, 2, 1}, y_row5[5] = {1, 4, 6, 4, 1};
    int gx = 0, gy = 0;
#pragma unroll
    for (int ky = 0; ky < 2 * A + 1; ++ky) {
        int yy = min(max(y + ky - A, 0), h - 1);
        int sx = 0, sy = 0;
#pragma unroll
        for (int kx = 0; kx < 2 * A + 1; ++kx) {
            int xx = min(max(x + kx - A, 0), w - 1);
            int l = lum(xx, yy);
            sx += (A == 1 ? x_row3[kx] : x_row5[kx]) * l;
            sy += (A == 1 ? y_row3[kx] : y_row5[kx]) * l;
        }
        gx += (A == 1 ? x_col3[ky] : x_col5[ky]) * sx;
        gy += (A == 1 ? y_col3[ky] : y_col5[ky]) * sy;
    }
    return sobel_energy(gx, gy);
}

// The energy of pixel (x, y) of a w×h luma plane (energy_at on the CPU).
template <typename L>
__device__ __forceinline__ u32 energy_at(const L& lum, int x, int y, int w, int h, int kind) {
    if (kind == ENERGY_BASIC) {
        int i = lum(x, y);
        int r = x + 1 < w ? lum(x + 1, y) : 0;
        int d = y + 1 < h ? lum(x, y + 1) : 0;
        int rd = (x + 1 < w && y + 1 < h) ? lum(x + 1, y + 1) : 0;
        return 181u * (u32)(abs(i - r) + abs(i - d)) + 128u * (u32)abs(i - rd);
    }
    if (kind == ENERGY_SOBEL3) return sobel_at<1>(lum, x, y, w, h);
    return sobel_at<2>(lum, x, y, w, h);
}

#define EN_W 32
#define EN_H 8
#define EN_HALO 2

// The whole energy map: a 32×8 block reads its luma tile with a halo of 2
// into shared memory once.
extern "C" __global__ void energy_full_u8(const u8* __restrict__ luma, u32* __restrict__ energy,
                                          u32 w, u32 h, u32 pitch, int kind) {
    const int TW = EN_W + 2 * EN_HALO, TH = EN_H + 2 * EN_HALO;
    __shared__ u8 tile[TH * TW];
    int bx = blockIdx.x * EN_W, by = blockIdx.y * EN_H;
    for (int i = threadIdx.y * EN_W + threadIdx.x; i < TW * TH; i += EN_W * EN_H) {
        int gx = bx - EN_HALO + i % TW, gy = by - EN_HALO + i / TW;
        bool in = gx >= 0 && gx < (int)w && gy >= 0 && gy < (int)h;
        tile[i] = in ? luma[(size_t)gy * pitch + gx] : 0;
    }
    __syncthreads();
    int x = bx + threadIdx.x, y = by + threadIdx.y;
    if (x >= (int)w || y >= (int)h) return;
    TileLuma lum{tile, bx - EN_HALO, by - EN_HALO, TW};
    energy[(size_t)y * pitch + x] = energy_at(lum, x, y, w, h, kind);
}

// After a seam was removed (the plane is now w wide): recomputes, in each
// row, exactly the CPU's band, from `reach` + 1 left of the leftmost to
// `reach` right of the rightmost seam pixel of the rows within `reach`.
// One warp a row.
extern "C" __global__ void energy_band_u8(const u8* __restrict__ luma, u32* __restrict__ energy,
                                          const u32* __restrict__ seam, u32 w, u32 h, u32 pitch,
                                          int kind, int reach) {
    int y = blockIdx.x * blockDim.y + threadIdx.y;
    if (y >= (int)h || w == 0) return;
    int r0 = max(y - reach, 0), r1 = min(y + reach, (int)h - 1);
    int lo = seam[r0], hi = lo;
    for (int r = r0 + 1; r <= r1; ++r) {
        lo = min(lo, (int)seam[r]);
        hi = max(hi, (int)seam[r]);
    }
    int x0 = max(lo - reach - 1, 0), x1 = min(hi + reach, (int)w - 1);
    PlaneLuma lum{luma, pitch};
    for (int x = x0 + threadIdx.x; x <= x1; x += 32)
        energy[(size_t)y * pitch + x] = energy_at(lum, x, y, w, h, kind);
}

// -------------------------------------------------------- dynamic programme

// What the DP needs of one pixel, fetched a row ahead: the energy `e`, and
// in `f` the mask code (bits 24..31) and, for forward energy, the step
// costs' parts: |r−l| (bits 0..7), |d−l| (8..15), |d−r| (16..23), where l
// and r are the row's neighbours (clamped) and d the pixel below.
__device__ __forceinline__ void dp_fetch(const u32* __restrict__ energy,
                                         const u8* __restrict__ mask,
                                         const u8* __restrict__ luma, int x, int y, int w, int h,
                                         u32 pitch, bool forward, u32& e, u32& f) {
    size_t i = (size_t)y * pitch + x;
    e = energy ? energy[i] : 0u;
    f = mask ? (u32)mask[i] << 24 : 0u;
    if (forward) {
        const u8* row = luma + (size_t)y * pitch;
        int l = row[x > 0 ? x - 1 : 0];
        int r = row[x + 1 < w ? x + 1 : w - 1];
        f |= (u32)abs(r - l);
        if (y + 1 < h) {
            int d = row[pitch + x];
            f |= (u32)abs(d - l) << 8 | (u32)abs(d - r) << 16;
        }
    }
}

// The pixel's own cost: its energy, plus PROTECT_COST if protected, minus
// REMOVE_BONUS if marked for removal.
__device__ __forceinline__ i64 pixel_cost(u32 e, u32 f, i64 protect, i64 bonus) {
    i8 m = (i8)(f >> 24);
    return (i64)e + (m == 1 ? protect : (m == -1 ? -bonus : 0));
}

// One block sweeps the rows bottom-up (dp_seam on the CPU): thread t owns
// columns t, t + 1024, …; the cumulative rows `cum` (two, each with an
// OUTSIDE cell at both ends) and the jump rows `jmp` (two) are in shared
// memory or, for very wide planes, in global scratch. Writes the step of
// every pixel to `back` and, every ANCHOR_ROWS rows, where each pixel's path
// is ANCHOR_ROWS rows further down to `anchors`; then finds the start (least
// top-row cost, smallest column), writes the seam (a column per row, top to
// bottom) and its total cost.
template <int K>
__device__ __forceinline__ void dp_body(const u32* __restrict__ energy,
                                        const u8* __restrict__ mask,
                                        const u8* __restrict__ luma, u32 w_, u32 h_, u32 pitch,
                                        int forward_, i64 protect, i64 bonus, i64 outside,
                                        i8* back, u16* anchors, u32* seam, i64* total, i64* cum,
                                        u16* jmp) {
    __shared__ u16 s_anchor[DP_THREADS];
    __shared__ i64 s_best[DP_THREADS / 32];
    __shared__ int s_col[DP_THREADS / 32];
    const int w = w_, h = h_, t = threadIdx.x;
    const bool forward = forward_ != 0;
    i64* below = cum;          // the row under the one being computed
    i64* here = cum + w + 2;   // the row being computed
    u16* jbelow = jmp;
    u16* jhere = jmp + w;

    u32 e[K], f[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int x = t + k * DP_THREADS;
        if (x < w) dp_fetch(energy, mask, luma, x, h - 1, w, h, pitch, forward, e[k], f[k]);
    }
    if (t == 0) below[0] = below[w + 1] = here[0] = here[w + 1] = outside;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int x = t + k * DP_THREADS;
        if (x < w) below[x + 1] = pixel_cost(e[k], f[k], protect, bonus) + (i64)(f[k] & 0xFF);
    }
    if (h >= 2) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            int x = t + k * DP_THREADS;
            if (x < w) dp_fetch(energy, mask, luma, x, h - 2, w, h, pitch, forward, e[k], f[k]);
        }
    }
    __syncthreads();

    for (int y = h - 2; y >= 0; --y) {
        u32 ce[K], cf[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            ce[k] = e[k];
            cf[k] = f[k];
        }
        if (y > 0) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                int x = t + k * DP_THREADS;
                if (x < w) dp_fetch(energy, mask, luma, x, y - 1, w, h, pitch, forward, e[k], f[k]);
            }
        }
        // Jumps restart on the row above an anchor row (a multiple of
        // ANCHOR_ROWS, or the bottom row).
        const bool restart = (y + 1) % ANCHOR_ROWS == 0 || y == h - 2;
        const bool anchor = y % ANCHOR_ROWS == 0;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            int x = t + k * DP_THREADS;
            if (x >= w) continue;
            i64 up = cf[k] & 0xFF, dl = (cf[k] >> 8) & 0xFF, dr = (cf[k] >> 16) & 0xFF;
            i64 c = below[x + 1] + up;
            i64 l = below[x] + (up + dl);
            i64 r = below[x + 2] + (up + dr);
            bool take_l = l < c;
            i64 best = take_l ? l : c;
            bool take_r = r < best;
            best = take_r ? r : best;
            here[x + 1] = best + pixel_cost(ce[k], cf[k], protect, bonus);
            int step = take_r ? 1 : (take_l ? -1 : 0);
            back[(size_t)y * pitch + x] = (i8)step;
            u16 j = restart ? (u16)(x + step) : jbelow[x + step];
            jhere[x] = j;
            if (anchor) anchors[(size_t)(y / ANCHOR_ROWS) * pitch + x] = j;
        }
        i64* tc = below;
        below = here;
        here = tc;
        u16* tj = jbelow;
        jbelow = jhere;
        jhere = tj;
        __syncthreads();
    }

    // `below` holds the top row: the least cost, ties to the smallest column.
    i64 best = I64_MAX;
    int col = 0x7FFFFFFF;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        int x = t + k * DP_THREADS;
        if (x < w && below[x + 1] < best) {
            best = below[x + 1];
            col = x;
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        i64 ob = __shfl_down_sync(0xFFFFFFFFu, best, off);
        int oc = __shfl_down_sync(0xFFFFFFFFu, col, off);
        if (ob < best || (ob == best && oc < col)) {
            best = ob;
            col = oc;
        }
    }
    if ((t & 31) == 0) {
        s_best[t >> 5] = best;
        s_col[t >> 5] = col;
    }
    __syncthreads();
    const int chunks = (h - 1 + ANCHOR_ROWS - 1) / ANCHOR_ROWS;
    if (t == 0) {
        for (int i = 1; i < DP_THREADS / 32; ++i) {
            if (s_best[i] < best || (s_best[i] == best && s_col[i] < col)) {
                best = s_best[i];
                col = s_col[i];
            }
        }
        *total = best;
        if (h == 1) seam[0] = col;
        // Follow the jump table from anchor row to anchor row.
        int x = col;
        for (int c = 0; c < chunks; ++c) {
            s_anchor[c] = (u16)x;
            x = anchors[(size_t)c * pitch + x];
        }
    }
    __syncthreads();
    // Each chunk of rows follows its own steps from its anchor.
    for (int c = t; c < chunks; c += DP_THREADS) {
        int x = s_anchor[c];
        int y0 = c * ANCHOR_ROWS, y1 = min(y0 + ANCHOR_ROWS, h - 1);
        seam[y0] = x;
        for (int y = y0; y < y1; ++y) {
            x += back[(size_t)y * pitch + x];
            seam[y + 1] = x;
        }
    }
}

// Bytes of dynamic shared memory for width w: 2·(w + 2) i64 + 2·w u16.
#define DP_PARAMS                                                                              \
    const u32 *__restrict__ energy, const u8 *__restrict__ mask, const u8 *__restrict__ luma, \
        u32 w, u32 h, u32 pitch, int forward, i64 protect, i64 bonus, i64 outside, i8 *back,  \
        u16 *anchors, u32 *seam, i64 *total
#define DP_ARGS \
    energy, mask, luma, w, h, pitch, forward, protect, bonus, outside, back, anchors, seam, total

#define DP_SHARED(K)                                                                       \
    extern "C" __global__ void __launch_bounds__(DP_THREADS) seam_dp_k##K(DP_PARAMS) {     \
        extern __shared__ __align__(8) unsigned char dp_smem[];                            \
        i64* cum = (i64*)dp_smem;                                                          \
        dp_body<K>(DP_ARGS, cum, (u16*)(cum + 2 * ((size_t)w + 2)));                       \
    }
DP_SHARED(1)
DP_SHARED(2)
DP_SHARED(4)
DP_SHARED(8)
DP_SHARED(16)

// Planes too wide for shared memory keep the two rows in global scratch
// (`rows`: 2·(w + 2) i64 then 2·w u16); __syncthreads orders them too.
extern "C" __global__ void __launch_bounds__(DP_THREADS)
    seam_dp_global(DP_PARAMS, i64* rows) {
    dp_body<16>(DP_ARGS, rows, (u16*)(rows + 2 * ((size_t)w + 2)));
}

// ----------------------------------------------------------------- removal

// Removes pixel seam[y] from row y of every plane given (null: absent), in
// place, one block a row: chunk by chunk, each thread reads the element one
// to the right, the block syncs, each writes it one to the left (a chunk
// never reads what an earlier chunk wrote). With `chosen`, first marks the
// removed pixel's original column (enlarging).
template <typename P>
__device__ __forceinline__ void remove_rows(P* img, u8* luma, u8* mask, u32* energy, u32* origin,
                                            u8* chosen, const u32* seam, u32 w, u32 pitch) {
    const size_t row = (size_t)blockIdx.x * pitch;
    const int s = seam[blockIdx.x];
    if (chosen && threadIdx.x == 0) chosen[row + origin[row + s]] = 1;
    const int n = (int)w - 1 - s;
    for (int base = 0; base < n; base += blockDim.x) {
        const int i = base + threadIdx.x;
        const bool on = i < n;
        const size_t from = row + s + 1 + i;
        P pv;
        u8 lv = 0, mv = 0;
        u32 ev = 0, ov = 0;
        if (on) {
            if (img) pv = img[from];
            if (luma) lv = luma[from];
            if (mask) mv = mask[from];
            if (energy) ev = energy[from];
            if (origin) ov = origin[from];
        }
        __syncthreads();
        if (on) {
            if (img) img[from - 1] = pv;
            if (luma) luma[from - 1] = lv;
            if (mask) mask[from - 1] = mv;
            if (energy) energy[from - 1] = ev;
            if (origin) origin[from - 1] = ov;
        }
    }
}

#define REMOVE_ROWS(NAME, P)                                                                  \
    extern "C" __global__ void remove_rows_##NAME(P* img, u8* luma, u8* mask, u32* energy,     \
                                                  u32* origin, u8* chosen, const u32* seam,    \
                                                  u32 w, u32 pitch) {                          \
        remove_rows<P>(img, luma, mask, energy, origin, chosen, seam, w, pitch);               \
    }
REMOVE_ROWS(u8, u8)
REMOVE_ROWS(u8x4, u32)

// Removes a horizontal seam (pixel seam[x] from column x) of an h-row
// image, its luma and its mask (null: absent), into other buffers: row y of
// the result is row y or y + 1 of the source. One thread a pixel.
template <typename P>
__device__ __forceinline__ void remove_cols(const P* isrc, P* idst, const u8* lsrc, u8* ldst,
                                            const u8* msrc, u8* mdst, const u32* seam, u32 w,
                                            u32 h, u32 pitch) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y + 1 >= (int)h) return;
    size_t to = (size_t)y * pitch + x;
    size_t from = to + (y >= (int)seam[x] ? pitch : 0);
    idst[to] = isrc[from];
    ldst[to] = lsrc[from];
    if (msrc) mdst[to] = msrc[from];
}

#define REMOVE_COLS(NAME, P)                                                                   \
    extern "C" __global__ void remove_cols_##NAME(                                             \
        const P* __restrict__ isrc, P* __restrict__ idst, const u8* __restrict__ lsrc,         \
        u8* __restrict__ ldst, const u8* __restrict__ msrc, u8* __restrict__ mdst,             \
        const u32* __restrict__ seam, u32 w, u32 h, u32 pitch) {                               \
        remove_cols<P>(isrc, idst, lsrc, ldst, msrc, mdst, seam, w, h, pitch);                 \
    }
REMOVE_COLS(u8, u8)
REMOVE_COLS(u8x4, u32)

// --------------------------------------------------------------- enlarging

// Before a round of enlarging: each pixel's original column, and no column
// chosen yet.
extern "C" __global__ void origin_init(u32* __restrict__ origin, u8* __restrict__ chosen, u32 w,
                                       u32 h, u32 pitch) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y >= (int)h) return;
    origin[(size_t)y * pitch + x] = x;
    chosen[(size_t)y * pitch + x] = 0;
}

// The rounded mean of the pixel at x and its neighbours in the row (mean3
// on the CPU), every channel.
__device__ __forceinline__ u32 mean3(const u8* row, int x, int w) {
    int lo = max(x - 1, 0), hi = min(x + 1, w - 1);
    u32 n = hi - lo + 1, s = 0;
    for (int i = lo; i <= hi; ++i) s += row[i];
    return (s + n / 2) / n;
}
__device__ __forceinline__ u32 mean3(const u32* row, int x, int w) {
    int lo = max(x - 1, 0), hi = min(x + 1, w - 1);
    u32 n = hi - lo + 1, out = 0;
    for (int c = 0; c < 4; ++c) {
        u32 s = 0;
        for (int i = lo; i <= hi; ++i) s += (row[i] >> (8 * c)) & 0xFF;
        out |= ((s + n / 2) / n) << (8 * c);
    }
    return out;
}

// Copies each row of the image (and mask) w wide, putting after every
// chosen pixel a new one: the mean of it and its neighbours (the mask's
// value is repeated). One block a row; a block-wide scan of `chosen` gives
// each pixel's place.
template <typename P>
__device__ __forceinline__ void insert_seams(const P* src, P* dst, const u8* msrc, u8* mdst,
                                             const u8* chosen, u32 w, u32 pitch) {
    __shared__ u32 warp_sums[32];
    const size_t row = (size_t)blockIdx.x * pitch;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    u32 before = 0;  // chosen pixels in earlier chunks
    for (int base = 0; base < (int)w; base += blockDim.x) {
        int x = base + threadIdx.x;
        u32 c = x < (int)w ? chosen[row + x] : 0;
        u32 incl = c;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            u32 v = __shfl_up_sync(0xFFFFFFFFu, incl, off);
            if (lane >= off) incl += v;
        }
        if (lane == 31) warp_sums[warp] = incl;
        __syncthreads();
        u32 offset = before, chunk = 0;
        for (int i = 0; i < warps; ++i) {
            if (i < warp) offset += warp_sums[i];
            chunk += warp_sums[i];
        }
        if (x < (int)w) {
            size_t o = row + x + offset + incl - c;
            dst[o] = src[row + x];
            if (c) dst[o + 1] = (P)mean3(src + row, x, w);
            if (msrc) {
                mdst[o] = msrc[row + x];
                if (c) mdst[o + 1] = msrc[row + x];
            }
        }
        before += chunk;
        __syncthreads();
    }
}

#define INSERT(NAME, P)                                                                        \
    extern "C" __global__ void insert_seams_##NAME(                                            \
        const P* __restrict__ src, P* __restrict__ dst, const u8* __restrict__ msrc,           \
        u8* __restrict__ mdst, const u8* __restrict__ chosen, u32 w, u32 pitch) {              \
        insert_seams<P>(src, dst, msrc, mdst, chosen, w, pitch);                               \
    }
INSERT(u8, u8)
INSERT(u8x4, u32)

// ------------------------------------------------------ copies and layouts

// dst (pitch dpitch) = src (pitch spitch), w×h elements.
template <typename P>
__device__ __forceinline__ void copy_plane(const P* src, u32 spitch, P* dst, u32 dpitch, u32 w,
                                           u32 h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y >= (int)h) return;
    dst[(size_t)y * dpitch + x] = src[(size_t)y * spitch + x];
}

// dst (h×w, pitch dpitch) = the transpose of src (w×h, pitch spitch),
// through a 32×32 shared tile so that both sides are coalesced.
template <typename P>
__device__ __forceinline__ void transpose_plane(const P* src, u32 spitch, P* dst, u32 dpitch,
                                                u32 w, u32 h) {
    __shared__ P tile[32][33];
    int bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {
        int x = bx + threadIdx.x, y = by + j;
        if (x < (int)w && y < (int)h) tile[j][threadIdx.x] = src[(size_t)y * spitch + x];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {
        int ox = by + threadIdx.x, oy = bx + j;
        if (ox < (int)h && oy < (int)w) dst[(size_t)oy * dpitch + ox] = tile[threadIdx.x][j];
    }
}

#define LAYOUT(NAME, P)                                                                        \
    extern "C" __global__ void copy_##NAME(const P* __restrict__ src, u32 spitch,              \
                                           P* __restrict__ dst, u32 dpitch, u32 w, u32 h) {    \
        copy_plane<P>(src, spitch, dst, dpitch, w, h);                                         \
    }                                                                                          \
    extern "C" __global__ void transpose_##NAME(const P* __restrict__ src, u32 spitch,         \
                                                P* __restrict__ dst, u32 dpitch, u32 w,        \
                                                u32 h) {                                       \
        transpose_plane<P>(src, spitch, dst, dpitch, w, h);                                    \
    }
LAYOUT(u8, u8)
LAYOUT(u8x4, u32)

// BT.709 luma of an RGBA plane, as luma709 on the CPU (and kernels/gray.cu).
extern "C" __global__ void luma_u8x4(const uchar4* __restrict__ img, u8* __restrict__ luma,
                                     u32 w, u32 h, u32 pitch, float kr, float kg, float kb) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y >= (int)h) return;
    uchar4 p = img[(size_t)y * pitch + x];
    float v = __fadd_rn(__fadd_rn(__fmul_rn(kr, (float)p.x), __fmul_rn(kg, (float)p.y)),
                        __fmul_rn(kb, (float)p.z));
    luma[(size_t)y * pitch + x] = saturate_u8(v);
}
