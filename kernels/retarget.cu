// retarget: exact seam carving, seam for seam the CPU's (src/ops/retarget/
// is the reference and explains the rules; src/cuda/ops/retarget/ drives
// these kernels).
//
// Planes live in buffers with a fixed row pitch (in elements) while their
// width shrinks or grows in place. Images are u8 (gray) or u8x4 (RGBA, moved
// as one 32-bit word); luma and masks are u8 (a mask holds the CPU's i8
// codes: 1 protect, -1 remove); energies u32. Energies are integers and the
// cumulative costs i64 (or int where they provably fit), so every
// comparison is the CPU's.
//
// The DP sweeps themselves are in retarget_dp_*.cu (retarget_dp.cuh).
#include "retarget.cuh"

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


// The packed word of pixel (x, y) of a w×h plane: in bits 30..31 the mask
// (1 protect, 2 remove) and, for forward energy, the costs of the steps to
// the centre, left and right (forward_steps on the CPU) in bits 0..9,
// 10..19 and 20..29: |r−l|, |r−l| + |d−l| and |r−l| + |d−r|, where l and r
// are the row's neighbours (clamped) and d the pixel below (on the last row
// all three are |r−l|); else the energy, which every kind keeps below 2^19.
// `cost` has pitch `cpitch` and column x at element x + DP_PAD. One thread
// a pixel.
extern "C" __global__ void dp_prep(const u32* __restrict__ energy, const u8* __restrict__ mask,
                                   const u8* __restrict__ luma, u32* __restrict__ cost, u32 w,
                                   u32 h, u32 pitch, u32 cpitch, int forward) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y >= (int)h) return;
    size_t i = (size_t)y * pitch + x;
    const i8 m = mask ? (i8)mask[i] : 0;
    u32 word = m == 1 ? 1u << 30 : (m == -1 ? 2u << 30 : 0u);
    if (forward) {
        const u8* row = luma + (size_t)y * pitch;
        int l = row[x > 0 ? x - 1 : 0];
        int r = row[x + 1 < (int)w ? x + 1 : w - 1];
        u32 up = abs(r - l), ul = up, ur = up;
        if (y + 1 < (int)h) {
            int d = row[pitch + x];
            ul += abs(d - l);
            ur += abs(d - r);
        }
        word |= up | ul << 10 | ur << 20;
    } else {
        word |= energy[i];
    }
    cost[(size_t)y * cpitch + x + DP_PAD] = word;
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
// Fast mode's motion plane (copy_u16 goes unused).
LAYOUT(u16, u16)

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
