// retarget's shared definitions: the types, the energy kinds and the DP's
// constants and window shapes, for retarget.cu and the sweep files
// (retarget_dp_*.cu), which src/cuda/ops/retarget/ loads one at a time so
// that a chain compiles only the sweeps it launches.
#pragma once
#include "common.cuh"
// The constants the Rust code shares (ANCHOR_ROWS, DP_*, CO_*, OUT32,
// ENERGY_*, …): made from it, see seamstream-cuda's shared.rs.
#include "shared.cuh"

typedef long long i64;
typedef signed char i8;
typedef unsigned short u16;

#define I64_MAX 0x7FFFFFFFFFFFFFFFLL

// Energy kinds (Energy::Forward has no per-pixel energy).

// Every how many rows the DP keeps a jump table for the backtrack (so the
// walk is ~h/32 + 32 dependent loads, not h); ANCHOR_ROWS in
// src/cuda/ops/retarget/dp.rs.

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
#define DP_WIN (DP_OWN + 2 * DP_PAD)
#define DP_DEPTH 16
// Bands (anchor chunks) of the tallest plane (MAX_SIDE rows).
// "Outside" for 32-bit sums (the host takes the 32-bit sweep only where
// every in-frame sum stays below it).

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

// The least of a row's w sums and its column (ties to the smallest), for a
// whole block: thread 0 returns true with them in `best` and `col` (the
// others return false); `top` (if not null) gets the row as i64. s_best
// and s_col are shared scratch of 32 entries; one barrier.
template <typename V>
__device__ __forceinline__ bool dp_top_argmin(const V* row, int w, i64* top, i64* s_best,
                                              int* s_col, i64& best, int& col) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwb = blockDim.x >> 5;
    best = I64_MAX;
    col = 0x7FFFFFFF;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        const i64 v = (i64)__ldcg(row + x);
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
    if (threadIdx.x != 0) return false;
    for (int i = 1; i < nwb; ++i) {
        if (s_best[i] < best || (s_best[i] == best && s_col[i] < col)) {
            best = s_best[i];
            col = s_col[i];
        }
    }
    return true;
}
