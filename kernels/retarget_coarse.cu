// The seam DP in steps of four rows (forward energy, no mask, 32-bit sums;
// Hopper on): the same sums, steps, jumps and seam as dp_sweep
// (retarget_dp.cuh), in a quarter of its sequential steps.
//
// The sweep is bound by the latency of each row (about 240 cycles across
// the cluster), not by its work, so the rows it walks one after another
// are what to cut. The sum of a cell four rows up is the least, over the
// nine columns x − 4 … x + 4 of row y + 4, of that column's sum plus the
// cheapest path between the two within the frame: M(x, y) = min_k
// T(x, y, k) + M(x + k − 4, y + 4). T (the "taps") depends only on the
// costs, so it is computed for every cell at once; integer sums make the
// min-plus steps exact. Four launches (after dp_prep):
// - coarse_taps: T of every fourth row (rows 4g, g < G), nine 16-bit taps a
//   cell (at most 4·510 each), and, in its last block, the rows from the
//   bottom up to row RB = 4·⌊(h − 1)/4⌋ one at a time;
// - coarse_sweep: a cluster's warps carry M from row RB up to row 0 in
//   steps of four rows, windows of 64 columns that own the middle 32 and
//   bands of 16 rows between barriers (the narrow shape's geometry: a step
//   reaches four columns, so four steps use up the 16-column halo), and
//   write the rows that are multiples of 32 (`mrows`);
// - coarse_fill: one block a chunk of 32 rows sweeps its rows one at a time
//   from the exact row below it, all chunks at once, writing the steps and
//   the chunk's jumps (`back`, `anchors`), exactly dp_sweep's;
// - coarse_walk: the least top-row cost and the seam, as dp_sweep's tail.
#include "retarget.cuh"

// A cell's taps: word j of group g (rows 4g … 4g + 3) at
// taps[(5g + j)·cpitch + x + DP_PAD] holds taps 2j (low half) and 2j + 1;
// tap k leads to column x + k − 4, 0xFFFF where that is outside the frame.
#define CO_WORDS 5
#define CO_NONE 0xFFFF
#define CO_INF (1 << 24)

__device__ __forceinline__ void co_unpack(u32 word, u32& up, u32& ul, u32& ur) {
    up = word & 0x3FF;
    ul = (word >> 10) & 0x3FF;
    ur = word >> 20;
}

// The bottom rows: M(h − 1) = the centre step's cost, then rows up to RB
// one at a time, into xrows[0, w) (and mrows if RB is a multiple of 32).
__device__ __forceinline__ void co_base(const u32* __restrict__ cost, int w, int h, u32 cpitch,
                                        int rb, int* xrows, int* mrows, u32 pitch) {
    int* rows[2] = {xrows, xrows + w};
    int cur = (h - 1 - rb) & 1;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        u32 up, ul, ur;
        co_unpack(cost[(size_t)(h - 1) * cpitch + x + DP_PAD], up, ul, ur);
        rows[cur][x] = (int)up;
    }
    for (int y = h - 2; y >= rb; --y) {
        __syncthreads();
        const int* b = rows[cur];
        int* o = rows[cur ^ 1];
        for (int x = threadIdx.x; x < w; x += blockDim.x) {
            u32 up, ul, ur;
            co_unpack(cost[(size_t)y * cpitch + x + DP_PAD], up, ul, ur);
            const int c = b[x] + (int)up;
            const int l = (x > 0 ? b[x - 1] : OUT32) + (int)ul;
            const int r = (x + 1 < w ? b[x + 1] : OUT32) + (int)ur;
            int best = l < c ? l : c;
            best = r < best ? r : best;
            o[x] = best;
        }
        cur ^= 1;
    }
    // cur is 0 here: the row count was chosen so.
    if (rb % ANCHOR_ROWS == 0) {
        __syncthreads();
        for (int x = threadIdx.x; x < w; x += blockDim.x)
            mrows[(size_t)(rb / ANCHOR_ROWS) * pitch + x] = xrows[x];
    }
}

// One thread a cell (x, 4g) of the G groups, and a last block for the
// bottom rows.
extern "C" __global__ void coarse_taps(const u32* __restrict__ cost, u32* __restrict__ taps,
                                       u32 w_, u32 h_, u32 cpitch, u32 groups, int* xrows,
                                       int* mrows, u32 pitch) {
    const int w = w_, h = h_, rb = 4 * groups;
    if (blockIdx.x == gridDim.x - 1) {
        co_base(cost, w, h, cpitch, rb, xrows, mrows, pitch);
        return;
    }
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)w * groups) return;
    const int x = (int)(i % w), g = (int)(i / w);
    // The cheapest path from (x, 4g) to each column x + o − 4 of the row
    // reached so far.
    int d[9];
#pragma unroll
    for (int o = 0; o < 9; ++o) d[o] = o == 4 ? 0 : CO_INF;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        const u32* row = cost + (size_t)(4 * g + s) * cpitch + DP_PAD;
        int n[9];
#pragma unroll
        for (int o = 0; o < 9; ++o) n[o] = CO_INF;
#pragma unroll
        for (int o = 4 - s; o <= 4 + s; ++o) {
            const int c = x + o - 4;
            if (c < 0 || c >= w) continue;
            u32 up, ul, ur;
            co_unpack(row[c], up, ul, ur);
            n[o] = min(n[o], d[o] + (int)up);
            if (c > 0) n[o - 1] = min(n[o - 1], d[o] + (int)ul);
            if (c + 1 < w) n[o + 1] = min(n[o + 1], d[o] + (int)ur);
        }
#pragma unroll
        for (int o = 0; o < 9; ++o) d[o] = n[o];
    }
    u32* out = taps + (size_t)g * CO_WORDS * cpitch + x + DP_PAD;
#pragma unroll
    for (int j = 0; j < CO_WORDS; ++j) {
        const u32 lo = d[2 * j] >= CO_INF ? CO_NONE : (u32)d[2 * j];
        const u32 hi = 2 * j + 1 < 9 && d[2 * j + 1] < CO_INF ? (u32)d[2 * j + 1] : CO_NONE;
        out[(size_t)j * cpitch] = lo | hi << 16;
    }
}

// The taps of a lane's two columns for one step: word j's low halves in
// .x (column x0), high in .y... as loaded: q[j].x is column x0's word j,
// q[j].y column x0 + 1's.
struct CoStep {
    uint2 q[CO_WORDS];
};

__device__ __forceinline__ void co_load(CoStep& s, const u32* taps, int g, u32 cpitch, int x0) {
    const u32* p = taps + (size_t)g * CO_WORDS * cpitch + x0 + DP_PAD;
#pragma unroll
    for (int j = 0; j < CO_WORDS; ++j) s.q[j] = __ldcg((const uint2*)(p + (size_t)j * cpitch));
}

__device__ __forceinline__ int co_tap(const uint2 (&q)[CO_WORDS], int k, bool second) {
    const u32 word = second ? q[k >> 1].y : q[k >> 1].x;
    return (int)((k & 1) ? word >> 16 : word & 0xFFFF);
}

// One step of a lane's two columns (x0, x0 + 1) from the sums `b` of the
// row four below.
template <bool EDGE>
__device__ __forceinline__ void co_step(const CoStep& s, int& b0, int& b1, bool in0, bool in1) {
    const int u2a = __shfl_up_sync(0xFFFFFFFFu, b0, 2), u2b = __shfl_up_sync(0xFFFFFFFFu, b1, 2);
    const int u1a = __shfl_up_sync(0xFFFFFFFFu, b0, 1), u1b = __shfl_up_sync(0xFFFFFFFFu, b1, 1);
    const int d1a = __shfl_down_sync(0xFFFFFFFFu, b0, 1), d1b = __shfl_down_sync(0xFFFFFFFFu, b1, 1);
    const int d2a = __shfl_down_sync(0xFFFFFFFFu, b0, 2), d2b = __shfl_down_sync(0xFFFFFFFFu, b1, 2);
    // Columns x0 − 4 … x0 + 5.
    const int v[10] = {u2a, u2b, u1a, u1b, b0, b1, d1a, d1b, d2a, d2b};
    int c[2][9];
#pragma unroll
    for (int k = 0; k < 9; ++k) {
        c[0][k] = v[k] + co_tap(s.q, k, false);
        c[1][k] = v[k + 1] + co_tap(s.q, k, true);
    }
    int n[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int a = __vimin3_s32(c[i][0], c[i][1], c[i][2]);
        const int b = __vimin3_s32(c[i][3], c[i][4], c[i][5]);
        const int d = __vimin3_s32(c[i][6], c[i][7], c[i][8]);
        n[i] = __vimin3_s32(a, b, d);
    }
    b0 = (!EDGE || in0) ? n[0] : OUT32;
    b1 = (!EDGE || in1) ? n[1] : OUT32;
}

#define CO_OWN 32
#define CO_HALO 16
#define CO_BAND 16
#define CO_CLUSTER 8
#define CO_MAX_WARPS 8

// The sweep's work, in the order a warp does it: (band c, window j), from
// the bottom band; its taps are fetched one item ahead.
struct CoItem {
    int c, j;
};

extern "C" __global__ void __cluster_dims__(CO_CLUSTER, 1, 1)
    __launch_bounds__(CO_MAX_WARPS * 32, 1)
        coarse_sweep(const u32* __restrict__ taps, u32 w_, u32 groups, u32 cpitch, int* xrows,
                     int* mrows, u32 pitch) {
#if __CUDA_ARCH__ >= 900
    {
        u32 n;
        asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
        if (n != CO_CLUSTER) __trap();
    }
#endif
    const int w = w_, rb = 4 * groups;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwb = blockDim.x >> 5;
    const int nw = nwb * gridDim.x, gw = blockIdx.x * nwb + warp;
    const int windows = (w + CO_OWN - 1) / CO_OWN;
    const int nwin = gw < windows ? (windows - gw + nw - 1) / nw : 0;
    const int nbands = (rb + CO_BAND - 1) / CO_BAND;
    const bool owner = lane >= CO_HALO / 2 && lane < (CO_HALO + CO_OWN) / 2;
    int* xin = xrows;
    int* xout = xrows + w;
    // The steps of an item: from row y1 (its band's bottom) up.
    auto steps_of = [&](int c) {
        const int y0 = CO_BAND * c, y1 = min(y0 + CO_BAND, rb);
        return (y1 - y0) / 4;
    };
    auto load = [&](CoStep (&s)[4], int c, int j) {
        if (c < 0) return;
        const int g = gw + j * nw;
        const int x0 = g * CO_OWN - CO_HALO + 2 * lane;
        const int y1 = min(CO_BAND * c + CO_BAND, rb), n = steps_of(c);
#pragma unroll
        for (int u = 0; u < 4; ++u)
            if (u < n) co_load(s[u], taps, y1 / 4 - 1 - u, cpitch, x0);
    };
    CoStep cur[4], nxt[4];
    int c = nbands - 1, j = 0;
    if (nwin > 0) load(cur, c, j);
    for (int cb = nbands - 1; cb >= 0; --cb) {
        for (int jj = 0; jj < nwin; ++jj) {
            // The next item's taps, while this one's steps run.
            int nc = cb, nj = jj + 1;
            if (nj == nwin) {
                nj = 0;
                --nc;
            }
            load(nxt, nc, nj);
            const int g = gw + jj * nw;
            const int x0 = g * CO_OWN - CO_HALO + 2 * lane;
            const bool in0 = x0 >= 0 && x0 < w, in1 = x0 + 1 >= 0 && x0 + 1 < w;
            int b0 = in0 ? __ldcg(xin + x0) : OUT32;
            int b1 = in1 ? __ldcg(xin + x0 + 1) : OUT32;
            const bool edge = g == 0 || g * CO_OWN + CO_OWN + CO_HALO > w;
            const int n = steps_of(cb);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                if (u < n) {
                    if (edge)
                        co_step<true>(cur[u], b0, b1, in0, in1);
                    else
                        co_step<false>(cur[u], b0, b1, in0, in1);
                }
            }
            if (owner) {
                const int y0 = CO_BAND * cb;
                if (in0) xout[x0] = b0;
                if (in1) xout[x0 + 1] = b1;
                if (y0 % ANCHOR_ROWS == 0) {
                    int* m = mrows + (size_t)(y0 / ANCHOR_ROWS) * pitch;
                    if (in0) m[x0] = b0;
                    if (in1) m[x0 + 1] = b1;
                }
            }
#pragma unroll
            for (int u = 0; u < 4; ++u) cur[u] = nxt[u];
        }
        int* t = xin;
        xin = xout;
        xout = t;
#if __CUDA_ARCH__ >= 900
        asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
#endif
    }
    (void)c;
    (void)j;
}

// Chunk c (rows [32c, R), R = min(32c + 32, h − 1)) from the exact row R:
// mrows' row for R, or the bottom row. Writes each row's steps and the
// chunk's jumps (its anchors). One block a chunk, each thread up to
// CO_FILL_COLS columns (t, t + blockDim, …) whose next row's costs it
// fetches while this row runs; rows of w ints and shorts in shared memory,
// twice.
#define CO_FILL_COLS 8
extern "C" __global__ void __launch_bounds__(1024, 1) coarse_fill(const u32* __restrict__ cost, u32 w_, u32 h_, u32 cpitch,
                                       const int* __restrict__ mrows, u32 pitch, i8* back,
                                       u16* anchors) {
    extern __shared__ __align__(16) unsigned char co_smem[];
    const int w = w_, h = h_, c = blockIdx.x, t = threadIdx.x, nt = blockDim.x;
    const int y0 = ANCHOR_ROWS * c, R = min(y0 + ANCHOR_ROWS, h - 1);
    int* m[2] = {(int*)co_smem, (int*)co_smem + w};
    u16* jm[2] = {(u16*)((int*)co_smem + 2 * w), (u16*)((int*)co_smem + 2 * w) + w};
    for (int x = t; x < w; x += nt) {
        int v;
        if (R % ANCHOR_ROWS == 0) {
            v = __ldcg(mrows + (size_t)(R / ANCHOR_ROWS) * pitch + x);
        } else {
            u32 up, ul, ur;
            co_unpack(cost[(size_t)R * cpitch + x + DP_PAD], up, ul, ur);
            v = (int)up;
        }
        m[0][x] = v;
    }
    u32 wd[CO_FILL_COLS];
#pragma unroll
    for (int k = 0; k < CO_FILL_COLS; ++k) {
        const int x = t + k * nt;
        wd[k] = x < w ? __ldg(cost + (size_t)(R - 1) * cpitch + x + DP_PAD) : 0;
    }
    int cur = 0;
    for (int y = R - 1; y >= y0; --y) {
        u32 nx[CO_FILL_COLS];
#pragma unroll
        for (int k = 0; k < CO_FILL_COLS; ++k) {
            const int x = t + k * nt;
            nx[k] = x < w && y > y0 ? __ldg(cost + (size_t)(y - 1) * cpitch + x + DP_PAD) : 0;
        }
        __syncthreads();
        const int* b = m[cur];
        const u16* jb = jm[cur];
        int* o = m[cur ^ 1];
        u16* jo = jm[cur ^ 1];
        const bool restart = y == R - 1;
#pragma unroll
        for (int k = 0; k < CO_FILL_COLS; ++k) {
            const int x = t + k * nt;
            if (x >= w) break;
            u32 up, ul, ur;
            co_unpack(wd[k], up, ul, ur);
            const int cv = b[x] + (int)up;
            const int lv = (x > 0 ? b[x - 1] : OUT32) + (int)ul;
            const int rv = (x + 1 < w ? b[x + 1] : OUT32) + (int)ur;
            const bool take_l = lv < cv;
            int best = take_l ? lv : cv;
            const bool take_r = rv < best;
            best = take_r ? rv : best;
            const int step = take_r ? 1 : (take_l ? -1 : 0);
            o[x] = best;
            const int j = restart ? x + step : jb[x + step];
            jo[x] = (u16)j;
            back[(size_t)y * pitch + x] = (i8)step;
            if (y == y0) anchors[(size_t)c * pitch + x] = (u16)j;
        }
#pragma unroll
        for (int k = 0; k < CO_FILL_COLS; ++k) wd[k] = nx[k];
        cur ^= 1;
    }
}

// The least top-row cost (ties to the smallest column) into *total, the
// top row's sums into `top` (if not null), and the seam: from anchor row to
// anchor row, then each chunk's steps. One block.
extern "C" __global__ void __launch_bounds__(1024, 1) coarse_walk(const int* __restrict__ mrows, u32 w_, u32 h_, u32 pitch,
                                       const i8* __restrict__ back,
                                       const u16* __restrict__ anchors, u32* seam, i64* total,
                                       i64* top) {
    __shared__ i64 s_best[32];
    __shared__ int s_col[32];
    __shared__ u16 s_anchor[DP_MAX_CHUNKS];
    const int w = w_, h = h_, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwb = blockDim.x >> 5;
    i64 best = I64_MAX;
    int col = 0x7FFFFFFF;
    for (int x = threadIdx.x; x < w; x += blockDim.x) {
        const i64 v = (i64)__ldcg(mrows + x);
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
    const int nb = (h - 1 + ANCHOR_ROWS - 1) / ANCHOR_ROWS;
    if (threadIdx.x == 0) {
        for (int i = 1; i < nwb; ++i) {
            if (s_best[i] < best || (s_best[i] == best && s_col[i] < col)) {
                best = s_best[i];
                col = s_col[i];
            }
        }
        *total = best;
        if (h == 1) seam[0] = col;
        int x = col;
        for (int c = 0; c < nb; ++c) {
            s_anchor[c] = (u16)x;
            x = __ldcg(anchors + (size_t)c * pitch + x);
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < nb; c += blockDim.x) {
        int x = s_anchor[c];
        const int y0 = ANCHOR_ROWS * c, y1 = min(y0 + ANCHOR_ROWS, h - 1);
        seam[y0] = x;
        for (int y = y0; y < y1; ++y) {
            x += __ldcg(back + (size_t)y * pitch + x);
            seam[y + 1] = x;
        }
    }
}
