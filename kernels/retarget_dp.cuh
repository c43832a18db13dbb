// The DP's sweep (dp_sweep and its helpers), and the macros that make
// kernels of it: each retarget_dp_*.cu file instantiates the few a chain
// launches together (one energy kind, i32 and i64, one shape), so that a
// first start compiles two sweeps, not all of them.
#pragma once
#include "retarget.cuh"

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
    i64 best;
    int col;
    if (dp_top_argmin(xin, w, top, s_best, s_col, best, col)) {
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
        dp_sweep<V, FWD, false, false, 4>(DP_ARGS(V), nullptr);                                 \
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
#define DP_CLUSTER_PROFILE(NAME, V, LC)                                                         \
    extern "C" __global__ void __cluster_dims__(DP_CLUSTER, 1, 1)                               \
        __launch_bounds__(DP_MAX_WARPS_CLUSTER * 32, 1)                                         \
            seam_dp_##NAME##_profile(DP_PARAMS, u64* prof) {                                    \
        dp_check_cluster();                                                                     \
        dp_sweep<V, true, true, true, LC>(DP_ARGS(V), prof);                                    \
    }
#endif
