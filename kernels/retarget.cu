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
#include "common.cuh"

typedef long long i64;
typedef signed char i8;
typedef unsigned short u16;

#define I64_MAX 0x7FFFFFFFFFFFFFFFLL

// Energy kinds (Energy::Forward has no per-pixel energy).
#define ENERGY_BASIC 0
#define ENERGY_SOBEL3 1
#define ENERGY_SOBEL5 2

// Every how many rows the DP keeps a jump table for the backtrack (so the
// walk is ~h/32 + 32 dependent loads, not h); ANCHOR_ROWS in
// src/cuda/ops/retarget/dp.rs.
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
//
// The DP (dp_seam on the CPU) is two launches. `dp_prep` packs what the
// sweep needs of each pixel into one word, over the whole plane at once.
// `seam_dp_*` then sweeps the rows bottom-up without a block barrier per
// row: the columns are cut into windows of DP_WIN = 128 (4 a lane of one
// warp) that each own the middle DP_OWN = 64 and overlap their neighbours
// by DP_PAD = 32 on each side. A warp advances its window a band of (up to)
// 32 rows using only shuffles; a window's edges read "outside", so after k
// rows only its columns [k, 128 − k) are exact, which still covers the
// owned ones after 32 rows (a trapezoid). Then every warp writes the band's
// top row of its owned columns to global memory, all warps meet at one
// barrier (a thread-block cluster's, spread over 8 SMs, or a block's where
// clusters are missing) and each reads its window's next starting row.
// Bands are the anchor chunks, so the jumps restart in every band and only
// the cumulative costs cross a barrier (this is the wide shape; DpShape
// has the narrow one). Each warp streams its windows' packed words through
// a ring of DP_DEPTH rows in shared memory (cp.async), DP_GROUP rows at a
// time and up to DP_DEPTH − DP_GROUP rows ahead, so no global latency is on
// a row's path.

// The cost plane's columns start DP_PAD elements into each row, so that a
// window's first column (64g − 32) is at a 16-byte aligned element (64g).
#define DP_PAD 32
#define DP_OWN 64
#define DP_WIN (DP_OWN + 2 * DP_PAD)
#define DP_DEPTH 16
#define DP_CLUSTER 8
#define DP_MAX_WARPS_CLUSTER 8
#define DP_MAX_WARPS_BLOCK 16
// Bands (anchor chunks) of the tallest plane (MAX_SIDE rows).
#define DP_MAX_CHUNKS 512
// "Outside" for 32-bit sums (the host takes the 32-bit sweep only where
// every in-frame sum stays below it).
#define OUT32 (1 << 30)

// The profiled sweeps' record (u64 words), for the first and the last
// block: a header (nanoseconds of %globaltimer, cycles of %clock64) and
// DP_PROF_BAND words for each band c at DP_PROF_HEADER + DP_PROF_BAND·c:
// its start, the end of its writes, the end of the release fence, the end
// of the barrier (ns), then warp 0's DpProf (cycles).
#define DP_PROF_START 0
#define DP_PROF_START_CLK 1
#define DP_PROF_SWEPT_FROM 2  // the bottom row written and met
#define DP_PROF_SWEPT 3       // the last band met
#define DP_PROF_ARGMIN 4      // first block: the seam's cost known
#define DP_PROF_ANCHORS 5     // first block: the anchors followed
#define DP_PROF_END_CLK 6
#define DP_PROF_END 7
#define DP_PROF_BANDS 8
#define DP_PROF_WINDOWS 9
#define DP_PROF_HEADER 16
#define DP_PROF_BAND 8
#define DP_PROF_SLOT (DP_PROF_HEADER + DP_PROF_BAND * DP_MAX_CHUNKS)

// A window shape: LC columns a lane, so windows of 32·LC columns that own
// the middle 16·LC and overlap their neighbours by a halo of 8·LC on each
// side, swept in bands of 8·LC rows (so the owned columns are still exact
// at a band's top). LC = 4 (the wide shape): DP_WIN, DP_OWN, DP_PAD, bands
// of ANCHOR_ROWS. LC = 2 (the narrow shape, clusters only): twice the
// windows, so two warps a scheduler at 1080p, bands of 16 rows, two an
// anchor chunk: the lower band's top-row jumps cross the barrier (`jumps`)
// and the upper band carries them on instead of restarting.
template <int LC>
struct DpShape {
    static constexpr int WIN = 32 * LC, OWN = 16 * LC, HALO = 8 * LC, BAND = 8 * LC;
    static_assert(LC == 2 || LC == 4, "a lane has 2 or 4 columns");
    static_assert(ANCHOR_ROWS % BAND == 0 && HALO <= DP_PAD, "bands tile the anchor chunks");
};
static_assert(DpShape<4>::WIN == DP_WIN && DpShape<4>::HALO == DP_PAD, "the wide shape");
static_assert(DpShape<4>::BAND == ANCHOR_ROWS, "the wide shape's bands are the anchor chunks");

// A lane's LC packed words of one row in the ring.
template <int LC>
struct alignas(4 * LC) DpSlot {
    u32 v[LC];
};
static_assert((DP_DEPTH & (DP_DEPTH - 1)) == 0, "the ring's depth is a power of two");

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

// A pixel's own cost `pc` and its step costs to the centre, left and right
// (dp_seam's cost and forward_steps) from its packed word. The 32-bit sweep
// never has a mask.
template <typename V, bool FWD>
__device__ __forceinline__ void dp_unpack(u32 word, i64 protect, i64 bonus, V& pc, u32& up,
                                          u32& ul, u32& ur) {
    if (FWD) {
        up = word & 0x3FF;
        ul = (word >> 10) & 0x3FF;
        // Bits 30..31 (the mask) are clear in the 32-bit sweep.
        ur = sizeof(V) == 8 ? (word >> 20) & 0x3FF : word >> 20;
        pc = 0;
    } else {
        up = ul = ur = 0;
        pc = (V)(word & 0x3FFFFFFF);
    }
    if (sizeof(V) == 8) {
        const u32 m = word >> 30;
        pc += m == 1 ? (V)protect : (m == 2 ? -(V)bonus : (V)0);
    }
}

// One row of a window: from this lane's LC sums `b` and jumps `jm` of the
// row below and the row's packed words `wd`, this row's, and the LC steps
// (bytes, low first). FIRST: the first row of a band whose jumps restart.
// EDGE: the window reaches past the frame, whose columns (`in` false) stay
// "outside".
template <typename V, bool FWD, bool FIRST, bool EDGE, int LC>
__device__ __forceinline__ u32 dp_row(const u32 (&wd)[LC], V (&b)[LC], int (&jm)[LC],
                                      const bool (&in)[LC], int x0, V out, i64 protect,
                                      i64 bonus) {
    // Lane 0's left and lane 31's right neighbours are its own values (the
    // shuffles do not wrap): the window's outermost columns, which are
    // outside the frame (and forced "outside" below) or inexact anyway, so
    // they need no fixing up (nor the lane tests that would cost every row).
    const V left = __shfl_up_sync(0xFFFFFFFFu, b[LC - 1], 1);
    const V right = __shfl_down_sync(0xFFFFFFFFu, b[0], 1);
    const int jl = FIRST ? 0 : __shfl_up_sync(0xFFFFFFFFu, jm[LC - 1], 1);
    const int jr = FIRST ? 0 : __shfl_down_sync(0xFFFFFFFFu, jm[0], 1);
    V nb[LC];
    int nj[LC];
    u32 steps = 0;
#pragma unroll
    for (int i = 0; i < LC; ++i) {
        V pc;
        u32 up, ul, ur;
        dp_unpack<V, FWD>(wd[i], protect, bonus, pc, up, ul, ur);
        const V bl = i == 0 ? left : b[i - 1];
        const V br = i == LC - 1 ? right : b[i + 1];
        const V c = b[i] + (V)up, l = bl + (V)ul, r = br + (V)ur;
        const bool take_l = l < c;
        V best = take_l ? l : c;
        const bool take_r = r < best;
        best = take_r ? r : best;
        nb[i] = (!EDGE || in[i]) ? best + pc : out;
        // The step (−1, 0, +1) as a byte, already in its place.
        steps |= take_r ? 1u << (8 * i) : (take_l ? 0xFFu << (8 * i) : 0u);
        if (FIRST) {
            nj[i] = x0 + i + (take_r ? 1 : (take_l ? -1 : 0));
        } else {
            const int jlft = i == 0 ? jl : jm[i - 1], jrgt = i == LC - 1 ? jr : jm[i + 1];
            nj[i] = take_r ? jrgt : (take_l ? jlft : jm[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < LC; ++i) {
        b[i] = nb[i];
        jm[i] = nj[i];
    }
    return steps;
}

// A lane's words of one row, from its slot of the ring.
template <int LC>
__device__ __forceinline__ void dp_load(const DpSlot<LC>* slot, u32 (&wd)[LC]) {
    if constexpr (LC == 4) {
        const uint4 q = *(const uint4*)slot;
        wd[0] = q.x, wd[1] = q.y, wd[2] = q.z, wd[3] = q.w;
    } else {
        const uint2 q = *(const uint2*)slot;
        wd[0] = q.x, wd[1] = q.y;
    }
}

// Copies a lane's words of one row (16 or 8 bytes) from global to shared
// memory without waiting.
template <int LC>
__device__ __forceinline__ void dp_copy(DpSlot<LC>* dst, const u32* src) {
#if __CUDA_ARCH__ >= 800
    u32 d = (u32)__cvta_generic_to_shared(dst);
    if constexpr (LC == 4)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d), "l"(src) : "memory");
#else
    *dst = *(const DpSlot<LC>*)src;
#endif
}

__device__ __forceinline__ void dp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most N committed groups of copies are in flight.
template <int N>
__device__ __forceinline__ void dp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// The profiled sweeps (PROF, kernels `*_profile`): the SM's cycle counter
// and the GPU's nanosecond clock, ordered with the memory operations around
// them.
__device__ __forceinline__ u64 dp_clock() {
    u64 t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ u64 dp_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// Every thread of the launch meets here, and what each wrote to global
// memory before is seen by all after (release / acquire at cluster scope).
// SPLIT (profiled sweeps only): the release is a separate fence, after
// which the time goes to `fenced` (where not null), so that the fence's wait
// and the barrier's are told apart.
template <bool CLUSTER, bool SPLIT = false>
__device__ __forceinline__ void dp_sync(u64* fenced = nullptr) {
#if __CUDA_ARCH__ >= 900
    if (CLUSTER) {
        if (SPLIT) {
            asm volatile("fence.acq_rel.cluster;" ::: "memory");
            if (fenced) *fenced = dp_ns();
            asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
            return;
        }
        asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
        return;
    }
#endif
    if (SPLIT && fenced) *fenced = dp_ns();
    __syncthreads();
}

// The rows of anchor chunk c (rows [32c, y1) reached from row y1).
__device__ __forceinline__ int dp_band_top(int c) { return ANCHOR_ROWS * c; }
__device__ __forceinline__ int dp_band_from(int c, int h) {
    return min(ANCHOR_ROWS * c + ANCHOR_ROWS, h - 1);
}
// The rows of band c of a sweep with bands of `band` rows.
__device__ __forceinline__ int dp_sweep_top(int c, int band) { return band * c; }
__device__ __forceinline__ int dp_sweep_from(int c, int band, int h) {
    return min(band * c + band, h - 1);
}

// Rows a warp fetches and sweeps at a time: a group of DP_GROUP rows is one
// commit of copies and one piece of bookkeeping, its steps are stored
// together, and the ring holds DP_DEPTH / DP_GROUP groups (one being swept,
// the rest in flight). A window's rows are padded up to whole groups (the
// padding is fetched, swept nor stored), so a group never straddles two
// windows. DP_GROUP 1 is the row-by-row schedule.
#define DP_GROUP 4
#define DP_GROUPS (DP_DEPTH / DP_GROUP)
static_assert(DP_DEPTH % DP_GROUP == 0 && DP_GROUPS >= 2, "the ring holds whole groups");

// Where a warp's prefetch stands: the next (band c, window j, group of rows
// from k) it fetches, in the order it sweeps them, and row k's words for
// this lane at cost + `at`. `c` < 0 once it is past the last.
template <int LC>
struct DpCursor {
    typedef DpShape<LC> S;
    const u32* cost;
    long long at, cpitch;
    int c, j, k, rows, h, gw, nw, nwin, lane;

    __device__ __forceinline__ void aim() {
        const int y1 = dp_sweep_from(c, S::BAND, h);
        rows = y1 - dp_sweep_top(c, S::BAND);
        at = (y1 - 1) * cpitch + (gw + j * nw) * S::OWN + DP_PAD - S::HALO + LC * lane;
    }

    __device__ __forceinline__ void start(const u32* cost_, u32 cpitch_, int nb, int h_, int gw_,
                                          int nw_, int nwin_, int lane_) {
        cost = cost_;
        cpitch = cpitch_;
        h = h_;
        gw = gw_;
        nw = nw_;
        nwin = nwin_;
        lane = lane_;
        c = nwin > 0 ? nb - 1 : -1;
        j = k = 0;
        if (c >= 0) aim();
    }

    // Issues the copies of the next group's rows into `dst` (the group's
    // first slot; row u at dst + 32·u), if any is left, and commits one
    // group of copies either way, so that commits and groups stay paired.
    __device__ __forceinline__ void fetch(DpSlot<LC>* dst) {
        if (c >= 0) {
#pragma unroll
            for (int u = 0; u < DP_GROUP; ++u)
                if (k + u < rows) dp_copy<LC>(dst + 32 * u, cost + (at - u * cpitch));
            at -= DP_GROUP * cpitch;
            k += DP_GROUP;
            if (k >= rows) {
                k = 0;
                if (++j == nwin) {
                    j = 0;
                    --c;
                }
                if (c >= 0) aim();
            }
        }
        dp_commit();
    }
};

// What a profiled sweep adds up in a band (cycles of warp 0): waiting for
// the ring, the first group of rows of each window (whose first row waits
// for the sums read after the barrier), its other groups (both with their
// stores of the steps), and refilling the ring.
struct DpProf {
    u64 wait, row0, rows, rest;
};

// One warp's part of the sweep: its prefetch and what it writes.
template <typename V, bool FWD, bool PROF, int LC>
struct DpWarp {
    DpCursor<LC> f;
    DpSlot<LC>* ring;  // this lane's words of slot 0; slot i at ring + 32·i
    int s;        // rows swept (padding included): row s is in slot s mod DP_DEPTH
    int w;
    bool owner, word_back;
    u32 pitch;
    i8* back;
    V out;
    i64 protect, bonus;
    DpProf prof;
    bool lead;  // PROF: the group is its window's first in the band

    // One group of rows: the first `n` (all where !PART) of the DP_GROUP
    // rows from `at` (back + at: this lane's steps of the group's first
    // row). FIRST: the group starts a band whose jumps restart.
    template <bool EDGE, bool FIRST, bool PART>
    __device__ __forceinline__ void group(V (&b)[LC], int (&jm)[LC], const bool (&in)[LC],
                                          int x0, long long at, int n) {
        u64 t0 = 0, t1 = 0, t2 = 0;
        if constexpr (PROF) t0 = dp_clock();
        // Into the slots of the group before this one (done with: swept).
        f.fetch(ring + ((s + DP_DEPTH - DP_GROUP) & (DP_DEPTH - 1)) * 32);
        if constexpr (PROF) t1 = dp_clock();
        dp_wait<DP_GROUPS - 1>();
        if constexpr (PROF) t2 = dp_clock();
        u32 q[DP_GROUP][LC];
#pragma unroll
        for (int u = 0; u < DP_GROUP; ++u)
            dp_load<LC>(ring + ((s + u) & (DP_DEPTH - 1)) * 32, q[u]);
        u32 steps[DP_GROUP];
#pragma unroll
        for (int u = 0; u < DP_GROUP; ++u) {
            if (PART && u >= n) break;
            steps[u] = FIRST && u == 0 ? dp_row<V, FWD, true, EDGE, LC>(q[u], b, jm, in, x0, out,
                                                                         protect, bonus)
                                       : dp_row<V, FWD, false, EDGE, LC>(q[u], b, jm, in, x0, out,
                                                                          protect, bonus);
        }
        // Whole words (LC = 4) or halves where the lane's columns are in
        // the frame and aligned (every row but at the right edge), else
        // byte by byte.
        if (owner && word_back && x0 + LC - 1 < w) {
#pragma unroll
            for (int u = 0; u < DP_GROUP; ++u) {
                if (PART && u >= n) break;
                i8* to = back + (at - u * (long long)pitch);
                if constexpr (LC == 4)
                    *(u32*)to = steps[u];
                else
                    *(u16*)to = (u16)steps[u];
            }
        } else if (owner) {
#pragma unroll
            for (int u = 0; u < DP_GROUP; ++u) {
                if (PART && u >= n) break;
#pragma unroll
                for (int i = 0; i < LC; ++i)
                    if (x0 + i < w) back[at - u * (long long)pitch + i] = (i8)(steps[u] >> (8 * i));
            }
        }
        s += DP_GROUP;
        if constexpr (PROF) {
            const u64 t3 = dp_clock();
            prof.rest += t1 - t0;
            prof.wait += t2 - t1;
            (lead ? prof.row0 : prof.rows) += t3 - t2;
        }
    }

    // Sweeps a window from row y1 (sums `b`, and jumps `jm` unless
    // `restart`) up `rows` rows, writing the steps of the owned columns;
    // leaves the top row's sums and jumps.
    template <bool EDGE>
    __device__ __forceinline__ void window(V (&b)[LC], int (&jm)[LC], const bool (&in)[LC],
                                           int x0, int y1, int rows, bool restart) {
        long long at = (long long)(y1 - 1) * pitch + x0;
        if constexpr (PROF) lead = true;
        if (rows < DP_GROUP) {
            if (restart)
                group<EDGE, true, true>(b, jm, in, x0, at, rows);
            else
                group<EDGE, false, true>(b, jm, in, x0, at, rows);
            return;
        }
        if (restart)
            group<EDGE, true, false>(b, jm, in, x0, at, DP_GROUP);
        else
            group<EDGE, false, false>(b, jm, in, x0, at, DP_GROUP);
        if constexpr (PROF) lead = false;
        int k = DP_GROUP;
        for (; k + DP_GROUP <= rows; k += DP_GROUP)
            group<EDGE, false, false>(b, jm, in, x0, at - k * (long long)pitch, DP_GROUP);
        if (k < rows) group<EDGE, false, true>(b, jm, in, x0, at - k * (long long)pitch, rows - k);
    }
};

// The sweep, then the seam. Outputs, for a w×h plane whose packed words are
// in `cost` (dp_prep):
// - back[y·pitch + x] (y < h − 1): the step (−1, 0, +1) the best path takes
//   from (x, y) to row y + 1;
// - anchors[c·pitch + x] (c < ⌈(h−1)/32⌉): the column at row
//   min(32(c + 1), h − 1) that the best path from (x, 32c) reaches;
// - top[x] (x < w), when `top` is not null: the top row's cumulative costs;
// - seam[y] (y < h): the best seam, the column of each row top to bottom
//   (the least top-row cost, ties to the smallest column);
// - *total: its cost.
// `xrows` is scratch for 2·w values of V (the band rows that cross the
// barriers) and then w ints (the narrow shape's jumps that do). V is i64,
// or int where the host has checked that no sum can reach OUT32 (no mask,
// and h times the largest cost of a row below 2^30): the sums are then the
// same integers and every comparison is the CPU's. LC: the window shape
// (DpShape).
// PROF (the `*_profile` kernels, for profile_the_dp_on_the_gpu in
// src/cuda/ops/retarget/profile.rs, a test): thread 0 of the first and of the last block
// also writes timings to `prof`, DP_PROF_SLOT words each (DP_PROF_*; bands
// past DP_MAX_CHUNKS go unrecorded).
template <typename V, bool FWD, bool CLUSTER, bool PROF, int LC>
__device__ __forceinline__ void dp_sweep(const u32* __restrict__ cost, u32 w_, u32 h_, u32 pitch,
                                         u32 cpitch, i64 protect, i64 bonus, i64 outside,
                                         i8* back, u16* anchors, u32* seam, i64* total, i64* top,
                                         V* xrows, u64* prof) {
    typedef DpShape<LC> S;
    extern __shared__ __align__(16) unsigned char dp_smem[];
    __shared__ i64 s_best[32];
    __shared__ int s_col[32];
    __shared__ u16 s_anchor[DP_MAX_CHUNKS];
    const int w = w_, h = h_;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwb = blockDim.x >> 5;
    const int nw = nwb * gridDim.x, gw = blockIdx.x * nwb + warp;
    // Window g computes columns [OWN·g − HALO, OWN·(g + 1) + HALO) and owns
    // [OWN·g, OWN·(g + 1)); warp gw sweeps windows gw, gw + nw, …
    const int windows = (w + S::OWN - 1) / S::OWN;
    const int nwin = gw < windows ? (windows - gw + nw - 1) / nw : 0;
    // Anchor chunks, and bands of the sweep.
    const int nb = (h - 1 + ANCHOR_ROWS - 1) / ANCHOR_ROWS;
    const int nbands = (h - 1 + S::BAND - 1) / S::BAND;
    const V out = sizeof(V) == 8 ? (V)outside : (V)OUT32;
    // Lanes 8..23 hold the owned columns.
    const bool owner = lane >= S::HALO / LC && lane < (S::HALO + S::OWN) / LC;
    // PROF: where thread 0 of this block writes (null: it does not).
    u64* pr = nullptr;
    if constexpr (PROF) {
        if (threadIdx.x == 0 && (blockIdx.x == 0 || blockIdx.x == gridDim.x - 1))
            pr = prof + (blockIdx.x == 0 ? 0 : DP_PROF_SLOT);
        if (pr) {
            pr[DP_PROF_START_CLK] = dp_clock();
            pr[DP_PROF_START] = dp_ns();
            pr[DP_PROF_BANDS] = nbands;
            pr[DP_PROF_WINDOWS] = nwin;
        }
    }
    DpWarp<V, FWD, PROF, LC> me;
    me.ring = (DpSlot<LC>*)dp_smem + warp * DP_DEPTH * 32 + lane;
    me.s = 0;
    me.w = w;
    me.owner = owner;
    me.word_back = (pitch & (LC - 1)) == 0 && ((size_t)back & (LC - 1)) == 0;
    me.pitch = pitch;
    me.back = back;
    me.out = out;
    me.protect = protect;
    me.bonus = bonus;
    V* xin = xrows;
    V* xout = xrows + w;
    int* jumps = (int*)(xrows + 2 * w);

    // The bottom row: each pixel's cost plus its centre step.
    for (int j = 0; j < nwin; ++j) {
        const int g = gw + j * nw;
        const int x0 = g * S::OWN - S::HALO + LC * lane;
        if (!owner) continue;
        u32 wd[LC];
        dp_load<LC>((const DpSlot<LC>*)(cost + (size_t)(h - 1) * cpitch + x0 + DP_PAD), wd);
#pragma unroll
        for (int i = 0; i < LC; ++i) {
            V pc;
            u32 up, ul, ur;
            dp_unpack<V, FWD>(wd[i], protect, bonus, pc, up, ul, ur);
            if (x0 + i < w) xin[x0 + i] = pc + (V)up;
        }
    }

    me.f.start(cost, cpitch, nbands, h, gw, nw, nwin, lane);
    for (int i = 0; i < DP_GROUPS - 1; ++i) me.f.fetch(me.ring + i * DP_GROUP * 32);
    dp_sync<CLUSTER>();
    if (PROF && pr) pr[DP_PROF_SWEPT_FROM] = dp_ns();

    for (int c = nbands - 1; c >= 0; --c) {
        const int y0 = dp_sweep_top(c, S::BAND), y1 = dp_sweep_from(c, S::BAND, h);
        const int rows = y1 - y0;
        // Whether the band ends at an anchor row (its jumps restart; else
        // they carry on from the band below's, in `jumps`), and whether it
        // starts at one (its top row's jumps are anchors; else they go to
        // `jumps`). Both always in the wide shape.
        const bool restart = S::BAND == ANCHOR_ROWS || y1 % ANCHOR_ROWS == 0 || y1 == h - 1;
        const bool anchored = S::BAND == ANCHOR_ROWS || y0 % ANCHOR_ROWS == 0;
        u64* band = nullptr;
        if constexpr (PROF) {
            me.prof = DpProf{0, 0, 0, 0};
            if (pr && c < DP_MAX_CHUNKS) {
                band = pr + DP_PROF_HEADER + DP_PROF_BAND * c;
                band[0] = dp_ns();
            }
        }
        for (int j = 0; j < nwin; ++j) {
            const int g = gw + j * nw;
            const int x0 = g * S::OWN - S::HALO + LC * lane;
            // Whether the window reaches past the frame.
            const bool edge = g == 0 || g * S::OWN + S::OWN + S::HALO > w;
            bool in[LC];
            V b[LC];
            int jm[LC];
#pragma unroll
            for (int i = 0; i < LC; ++i) {
                in[i] = x0 + i >= 0 && x0 + i < w;
                b[i] = in[i] ? __ldcg(xin + x0 + i) : out;
                jm[i] = !restart && in[i] ? __ldcg(jumps + x0 + i) : 0;
            }
            if (edge)
                me.template window<true>(b, jm, in, x0, y1, rows, restart);
            else
                me.template window<false>(b, jm, in, x0, y1, rows, restart);
            if (owner) {
#pragma unroll
                for (int i = 0; i < LC; ++i) {
                    if (x0 + i < w) {
                        xout[x0 + i] = b[i];
                        if (anchored)
                            anchors[(size_t)(y0 / ANCHOR_ROWS) * pitch + x0 + i] = (u16)jm[i];
                        else
                            jumps[x0 + i] = jm[i];
                    }
                }
            }
        }
        V* t = xin;
        xin = xout;
        xout = t;
        if (PROF && band) band[1] = dp_ns();
        dp_sync<CLUSTER, PROF>(band ? band + 2 : nullptr);
        if (PROF && band) {
            band[3] = dp_ns();
            band[4] = me.prof.wait;
            band[5] = me.prof.row0;
            band[6] = me.prof.rows;
            band[7] = me.prof.rest;
        }
    }
    dp_wait<0>();
    if (PROF && pr) {
        pr[DP_PROF_SWEPT] = dp_ns();
        if (blockIdx.x != 0) {
            pr[DP_PROF_END_CLK] = dp_clock();
            pr[DP_PROF_END] = dp_ns();
        }
    }
    if (blockIdx.x != 0) return;

    // `xin` holds the top row: the least cost, ties to the smallest column.
    i64 best = I64_MAX;
    int col = 0x7FFFFFFF;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        const i64 v = (i64)__ldcg(xin + x);
        if (top) top[x] = v;
        if (v < best) {
            best = v;
            col = x;
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const i64 ob = __shfl_down_sync(0xFFFFFFFFu, best, off);
        const int oc = __shfl_down_sync(0xFFFFFFFFu, col, off);
        if (ob < best || (ob == best && oc < col)) {
            best = ob;
            col = oc;
        }
    }
    if (lane == 0) {
        s_best[warp] = best;
        s_col[warp] = col;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < nwb; ++i) {
            if (s_best[i] < best || (s_best[i] == best && s_col[i] < col)) {
                best = s_best[i];
                col = s_col[i];
            }
        }
        *total = best;
        if (PROF && pr) pr[DP_PROF_ARGMIN] = dp_ns();
        if (h == 1) seam[0] = col;
        // Follow the jumps from anchor row to anchor row (written by other
        // blocks: read from L2).
        int x = col;
        for (int c = 0; c < nb; ++c) {
            s_anchor[c] = (u16)x;
            x = __ldcg(anchors + (size_t)c * pitch + x);
        }
        if (PROF && pr) pr[DP_PROF_ANCHORS] = dp_ns();
    }
    __syncthreads();
    // Each chunk of rows follows its own steps from its anchor.
    for (int c = threadIdx.x; c < nb; c += blockDim.x) {
        int x = s_anchor[c];
        const int y0 = dp_band_top(c), y1 = dp_band_from(c, h);
        seam[y0] = x;
        for (int y = y0; y < y1; ++y) {
            x += __ldcg(back + (size_t)y * pitch + x);
            seam[y + 1] = x;
        }
    }
    if constexpr (PROF) {
        __syncthreads();
        if (pr) {
            pr[DP_PROF_END_CLK] = dp_clock();
            pr[DP_PROF_END] = dp_ns();
        }
    }
}

#define DP_PARAMS                                                                               \
    const u32 *__restrict__ cost, u32 w, u32 h, u32 pitch, u32 cpitch, i64 protect, i64 bonus,  \
        i64 outside, i8 *back, u16 *anchors, u32 *seam, i64 *total, i64 *top, i64 *xrows
#define DP_ARGS(V) \
    cost, w, h, pitch, cpitch, protect, bonus, outside, back, anchors, seam, total, top, (V*)xrows

// The sweeps run one block an SM: `__launch_bounds__(.., 1)` says so, or
// ptxas aims at two and squeezes them into 64 registers (spilling the
// 64-bit energy sweep's).
// One block (where clusters are missing): up to DP_MAX_WARPS_BLOCK warps.
#define DP_BLOCK(NAME, V, FWD)                                                                  \
    extern "C" __global__ void __launch_bounds__(DP_MAX_WARPS_BLOCK * 32, 1)                    \
        seam_dp_block_##NAME(DP_PARAMS) {                                                       \
        dp_sweep<V, FWD, false, false, 4>(DP_ARGS(V), nullptr);                                    \
    }
DP_BLOCK(i32_forward, int, true)
DP_BLOCK(i64_forward, i64, true)
DP_BLOCK(i32_energy, int, false)
DP_BLOCK(i64_energy, i64, false)
// Profiled (tests only): the same sweep, which also writes its timings.
extern "C" __global__ void __launch_bounds__(DP_MAX_WARPS_BLOCK * 32, 1)
    seam_dp_block_i32_forward_profile(DP_PARAMS, u64* prof) {
    dp_sweep<int, true, false, true, 4>(DP_ARGS(int), prof);
}

// A cluster of DP_CLUSTER blocks (Hopper on), up to DP_MAX_WARPS_CLUSTER
// warps each.
#if __CUDA_ARCH__ >= 900
// Stops the launch, loudly, if it did not form the cluster the barriers
// count on (rather than letting blocks race).
__device__ __forceinline__ void dp_check_cluster() {
    u32 n;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    if (n != DP_CLUSTER) __trap();
}
// seam_dp_cluster_*: the wide shape; seam_dp_cluster2_*: the narrow one
// (2 columns a lane).
#define DP_CLUSTER_KERNEL(NAME, V, FWD, LC)                                                     \
    extern "C" __global__ void __cluster_dims__(DP_CLUSTER, 1, 1)                               \
        __launch_bounds__(DP_MAX_WARPS_CLUSTER * 32, 1) seam_dp_##NAME(DP_PARAMS) {             \
        dp_check_cluster();                                                                     \
        dp_sweep<V, FWD, true, false, LC>(DP_ARGS(V), nullptr);                                 \
    }
DP_CLUSTER_KERNEL(cluster_i32_forward, int, true, 4)
DP_CLUSTER_KERNEL(cluster_i64_forward, i64, true, 4)
DP_CLUSTER_KERNEL(cluster_i32_energy, int, false, 4)
DP_CLUSTER_KERNEL(cluster_i64_energy, i64, false, 4)
DP_CLUSTER_KERNEL(cluster2_i32_forward, int, true, 2)
DP_CLUSTER_KERNEL(cluster2_i64_forward, i64, true, 2)
DP_CLUSTER_KERNEL(cluster2_i32_energy, int, false, 2)
DP_CLUSTER_KERNEL(cluster2_i64_energy, i64, false, 2)
#define DP_CLUSTER_PROFILE(NAME, V, LC)                                                         \
    extern "C" __global__ void __cluster_dims__(DP_CLUSTER, 1, 1)                               \
        __launch_bounds__(DP_MAX_WARPS_CLUSTER * 32, 1)                                         \
            seam_dp_##NAME##_profile(DP_PARAMS, u64* prof) {                                    \
        dp_check_cluster();                                                                     \
        dp_sweep<V, true, true, true, LC>(DP_ARGS(V), prof);                                    \
    }
DP_CLUSTER_PROFILE(cluster_i32_forward, int, 4)
DP_CLUSTER_PROFILE(cluster_i64_forward, i64, 4)
DP_CLUSTER_PROFILE(cluster2_i32_forward, int, 2)
DP_CLUSTER_PROFILE(cluster2_i64_forward, i64, 2)
#endif

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
