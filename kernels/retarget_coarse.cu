// The seam DP in steps of four rows (forward energy, no mask, 32-bit sums;
// Hopper on): the same sums, steps, jumps and seam as dp_sweep
// (retarget_dp.cuh), in a quarter of its sequential steps.
//
// The row-by-row sweep is bound by the latency of each row, not by its
// work, so the rows it walks one after another are what to cut. The sum of
// a cell four rows up is the least, over the nine columns x − 4 … x + 4 of
// row y + 4, of that column's sum plus the cheapest path between the two
// within the frame: M(x, y) = min_k T(x, y, k) + M(x + k − 4, y + 4). T
// (the "taps") depends only on the costs, so it is computed for every cell
// at once; integer sums make the min-plus steps exact. Four launches
// (after dp_prep):
// - coarse_taps: T of every fourth row (rows 4g, g < G), nine 16-bit taps a
//   cell (at most 4·510 each), and, in its last block, the rows from the
//   bottom up to row RB = 4·⌊(h − 1)/4⌋ one at a time;
// - coarse_sweep: a cluster of 8 blocks carries M from row RB up to row 0
//   in steps of four rows, each block a range of columns with a 32-column
//   halo either side, a thread a column and a block barrier a step; after
//   each band of 32 rows (8 steps) the blocks hand their edge columns to
//   their neighbours (st.async onto the neighbour's mbarrier) and write the
//   band's top to `mrows` (the anchor rows);
// - coarse_fill: from the exact row below each chunk of 32 rows, all
//   chunks at once, tiles of 256 columns with a 32-column halo sweep the
//   chunk's rows one at a time, writing the steps, the jumps (`back`,
//   `anchors`, exactly dp_sweep's) and each column's path down the chunk;
// - coarse_walk: the least top-row cost and the seam: anchor to anchor,
//   then each chunk's path.
#include "retarget.cuh"
// CO_WORDS, CO_TILE, CO_CLUSTER, CO_HALO, CO_RING and CO_FILL_OWN come
// from the Rust code (shared.cuh, by way of retarget.cuh).

// A cell's taps: word j of group g (rows 4g … 4g + 3) at
// taps[(5g + j)·cpitch + x + DP_PAD] holds taps 2j (low half) and 2j + 1;
// tap k leads to column x + k − 4, 0xFFFF where that is outside the frame.
#define CO_NONE 0xFFFF
#define CO_INF (1 << 24)

__device__ __forceinline__ void co_unpack(u32 word, u32& up, u32& ul, u32& ur) {
    up = word & 0x3FF;
    ul = (word >> 10) & 0x3FF;
    ur = word >> 20;
}

// The bottom rows: M(h − 1) = the centre step's cost, then rows up to RB
// one at a time, into xrows[0, w) (and mrows if RB is a multiple of 32).
// One block; each thread fetches 8 of its columns' words at once, so that
// a row waits for memory once, not once a column.
#define CO_BASE_BATCH 8
__device__ __forceinline__ void co_base(const u32* __restrict__ cost, int w, int h, u32 cpitch,
                                        int rb, int* xrows, int* mrows, u32 pitch) {
    int* rows[2] = {xrows, xrows + w};
    int cur = (h - 1 - rb) & 1;
    const int t = threadIdx.x, nt = blockDim.x;
    for (int y = h - 1; y >= rb; --y) {
        if (y < h - 1) __syncthreads();
        const int* b = rows[cur];
        int* o = y == h - 1 ? rows[cur] : rows[cur ^ 1];
        for (int x0 = 0; x0 < w; x0 += CO_BASE_BATCH * nt) {
            u32 wd[CO_BASE_BATCH];
#pragma unroll
            for (int k = 0; k < CO_BASE_BATCH; ++k) {
                const int x = x0 + t + k * nt;
                wd[k] = x < w ? __ldg(cost + (size_t)y * cpitch + x + DP_PAD) : 0;
            }
#pragma unroll
            for (int k = 0; k < CO_BASE_BATCH; ++k) {
                const int x = x0 + t + k * nt;
                if (x >= w) break;
                u32 up, ul, ur;
                co_unpack(wd[k], up, ul, ur);
                if (y == h - 1) {
                    o[x] = (int)up;
                    continue;
                }
                const int c = b[x] + (int)up;
                const int l = (x > 0 ? b[x - 1] : OUT32) + (int)ul;
                const int r = (x + 1 < w ? b[x + 1] : OUT32) + (int)ur;
                int best = l < c ? l : c;
                best = r < best ? r : best;
                o[x] = best;
            }
        }
        if (y < h - 1) cur ^= 1;
    }
    // cur is 0 here: the row count was chosen so.
    if (rb % ANCHOR_ROWS == 0) {
        __syncthreads();
        for (int x = t; x < w; x += nt) mrows[(size_t)(rb / ANCHOR_ROWS) * pitch + x] = xrows[x];
    }
}

// A block a tile of CO_TILE columns of one group (its four rows' cost
// words, with four columns either side, in shared memory), a thread a cell
// (x, 4g); and a last block for the bottom rows.
extern "C" __global__ void __launch_bounds__(CO_TILE) coarse_taps(
    const u32* __restrict__ cost, u32* __restrict__ taps, u32 w_, u32 h_, u32 cpitch,
    u32 groups, int* xrows, int* mrows, u32 pitch) {
    const int w = w_, h = h_, rb = 4 * groups;
    if (blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1) {
        co_base(cost, w, h, cpitch, rb, xrows, mrows, pitch);
        return;
    }
    if (blockIdx.x == gridDim.x - 1 || blockIdx.y >= groups) return;
    __shared__ u32 tile[4][CO_TILE + 8];
    const int g = blockIdx.y, x = blockIdx.x * CO_TILE + threadIdx.x;
    for (int i = threadIdx.x; i < 4 * (CO_TILE + 8); i += CO_TILE) {
        const int r = i / (CO_TILE + 8), k = i % (CO_TILE + 8);
        const int c = blockIdx.x * CO_TILE + k - 4;
        tile[r][k] = c >= 0 && c < w ? cost[(size_t)(4 * g + r) * cpitch + c + DP_PAD] : 0;
    }
    __syncthreads();
    if (x >= w) return;
    // The cheapest path from (x, 4g) to each column x + o − 4 of the row
    // reached so far.
    int d[9];
#pragma unroll
    for (int o = 0; o < 9; ++o) d[o] = o == 4 ? 0 : CO_INF;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        int n[9];
#pragma unroll
        for (int o = 0; o < 9; ++o) n[o] = CO_INF;
#pragma unroll
        for (int o = 4 - s; o <= 4 + s; ++o) {
            const int c = x + o - 4;
            if (c < 0 || c >= w) continue;
            u32 up, ul, ur;
            co_unpack(tile[s][threadIdx.x + o], up, ul, ur);
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

// The sweep: a cluster of CO_CLUSTER blocks, each owning `own` columns
// (a multiple of 4, at least CO_HALO) and holding them with CO_HALO columns
// either side (the span), a thread a column. A step of four rows is one
// barrier of the block: every column's nine taps against the sums of the
// row four below, in shared memory. A band of 8 steps (32 rows) reaches
// CO_HALO columns in from the span's edges, so the owned columns are exact
// at the band's top; each block then stores its edge columns into its
// neighbours' shared memory (st.async, counted on the neighbour's
// mbarrier), and waits for its own halo the same way: no cluster-wide
// barrier and no memory fence a band. The work of a step is all
// independent columns, so the warps of a block hide each other's latency,
// where a warp a window waited on its own chain of shuffles.
#define CO_BAND 32
// The taps ring: CO_RING steps of the span's CO_WORDS rows of words, fetched
// (cp.async, 16 bytes a copy) CO_AHEAD steps ahead. A slot is refilled two
// steps after its last read, past a block barrier.
#define CO_AHEAD 6
// The most copies a thread makes a step: 5·span/4 ≤ 2·threads.
#define CO_COPIES 2

#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ u32 co_remote(const void* local, int block) {
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(r)
                 : "r"((u32)__cvta_generic_to_shared(local)), "r"(block));
    return r;
}

// Stores v at `at` in block `to` of the cluster, counted on that block's
// mbarrier `bar` (its address in this block's shared memory, mapped).
__device__ __forceinline__ void co_send(const int* at, int to, const unsigned long long* bar,
                                        int v) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
                     co_remote(at, to)),
                 "r"(v), "r"(co_remote(bar, to))
                 : "memory");
}
#endif

// Rows RB down to 0 in steps of four: M(RB) in xrows[0, w) on entry (from
// coarse_taps' last block); each band's top row into mrows. Dynamic shared
// memory: the ring (CO_RING · CO_WORDS · span words), then the sums of two
// rows (2 · (span + 8) ints, four columns of OUT32 either side).
extern "C" __global__ void __cluster_dims__(CO_CLUSTER, 1, 1) __launch_bounds__(1024, 1)
    coarse_sweep(const u32* __restrict__ taps, u32 w_, u32 groups, u32 cpitch, u32 own_,
                 const int* __restrict__ xrows, int* __restrict__ mrows, u32 pitch) {
    extern __shared__ __align__(16) u32 co_smem[];
    // The halo a neighbour hands over at a band's top, by band parity: [p][0]
    // from the left (its last CO_HALO owned columns), [p][1] from the right
    // (its first); and the mbarrier that counts its bytes.
    __shared__ int s_halo[2][2][CO_HALO];
    __shared__ __align__(8) unsigned long long s_bar[2];
    const int w = w_, own = own_, span = own + 2 * CO_HALO, G = groups, rb = 4 * G;
    const int t = threadIdx.x, nt = blockDim.x, blk = blockIdx.x;
    const int X = blk * own - CO_HALO;  // the span's first column
    const int rowi = span + 8;          // a row of sums, with its pads
    u32* const ring = co_smem;
    int* const sums = (int*)(co_smem + CO_RING * CO_WORDS * span);
    const bool has_left = blk > 0, has_right = blk + 1 < CO_CLUSTER;
#if __CUDA_ARCH__ >= 900
    {
        u32 n;
        asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
        if (n != CO_CLUSTER) __trap();
    }
    if (t == 0) {
        for (int p = 0; p < 2; ++p)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(
                (u32)__cvta_generic_to_shared(&s_bar[p])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    // Every block's mbarriers are ready before any neighbour stores to them.
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
#endif
    // This thread's column of the span (the host gives a thread a column),
    // and its copies of the taps: word row j, chunk c of four columns, from
    // the group the fetch is at (each fetch moves the pointers a group up).
    const int i = t;
    const bool live = i < span, inx = X + i >= 0 && X + i < w;
    const int nch = span / 4;
    const u32 ring_sa = (u32)__cvta_generic_to_shared(ring);
    const u32 slot_bytes = CO_WORDS * span * 4;
    const size_t group = (size_t)CO_WORDS * cpitch;
    u32 cdst[CO_COPIES];
    const u32* csrc[CO_COPIES];
    bool cok[CO_COPIES];
#pragma unroll
    for (int k = 0; k < CO_COPIES; ++k) {
        const int q = t + k * nt;
        const int j = q / nch, c = q - j * nch;
        cok[k] = q < CO_WORDS * nch && X + 4 * c < w;
        cdst[k] = (j * span + 4 * c) * 4;
        csrc[k] = taps + (size_t)(G - 1) * group + (size_t)j * cpitch + X + 4 * c + DP_PAD;
    }
    // Step s sweeps group G − 1 − s; its taps are fetched at step s − CO_AHEAD.
    auto fetch = [&](int s) {
        if (s < G) {
            const u32 dst = ring_sa + (u32)(s & (CO_RING - 1)) * slot_bytes;
#pragma unroll
            for (int k = 0; k < CO_COPIES; ++k) {
                if (cok[k])
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + cdst[k]),
                                 "l"(csrc[k])
                                 : "memory");
                csrc[k] -= group;
            }
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    };
    for (int s = 0; s < CO_AHEAD; ++s) fetch(s);
    // The sums of row RB, OUT32 outside the frame and in the pads.
    for (int k = t; k < rowi; k += nt) {
        const int x = X + k - 4;
        const bool pad = k < 4 || k >= span + 4;
        sums[k] = !pad && x >= 0 && x < w ? __ldcg(xrows + x) : OUT32;
        sums[rowi + k] = pad ? OUT32 : 0;
    }
#if __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
#endif
    int cur = 0, s = 0;
    const int nbands = (rb + CO_BAND - 1) / CO_BAND;
    for (int cb = nbands - 1; cb >= 0; --cb) {
        const int y0 = CO_BAND * cb, y1 = min(y0 + CO_BAND, rb), n = (y1 - y0) / 4;
        for (int u = 0; u < n; ++u, ++s) {
            fetch(s + CO_AHEAD);
            asm volatile("cp.async.wait_group %0;" ::"n"(CO_AHEAD) : "memory");
            __syncthreads();
            if (live) {
                const u32* slot = ring + (s & (CO_RING - 1)) * CO_WORDS * span + i;
                const int* b = sums + cur * rowi + i;
                u32 q[CO_WORDS];
#pragma unroll
                for (int j = 0; j < CO_WORDS; ++j) q[j] = slot[j * span];
                int c[9];
#pragma unroll
                for (int k = 0; k < 9; ++k) {
                    const u32 word = q[k >> 1];
                    c[k] = b[k] + (int)((k & 1) ? word >> 16 : word & 0xFFFF);
                }
                const int a = __vimin3_s32(c[0], c[1], c[2]);
                const int e = __vimin3_s32(c[3], c[4], c[5]);
                const int f = __vimin3_s32(c[6], c[7], c[8]);
                sums[(cur ^ 1) * rowi + i + 4] = inx ? __vimin3_s32(a, e, f) : OUT32;
            }
            cur ^= 1;
        }
        // Row y0 is exact in the owned columns, which each thread wrote
        // itself: into mrows, and the edges to the neighbours.
        const int p = cb & 1;
        const int* top = sums + cur * rowi + 4;
#if __CUDA_ARCH__ >= 900
        const u32 bar = (u32)__cvta_generic_to_shared(&s_bar[p]);
        if (cb > 0 && t == 0) {
            const u32 bytes = (has_left + has_right) * CO_HALO * 4;
            unsigned long long state;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                         : "=l"(state)
                         : "r"(bar), "r"(bytes)
                         : "memory");
        }
#endif
        const int k = i - CO_HALO;
        const bool owned = live && k >= 0 && k < own;
        if (owned && X + i < w) mrows[(size_t)cb * pitch + X + i] = top[i];
#if __CUDA_ARCH__ >= 900
        if (owned && cb > 0) {
            if (k < CO_HALO && has_left) co_send(&s_halo[p][1][k], blk - 1, &s_bar[p], top[i]);
            if (k >= own - CO_HALO && has_right)
                co_send(&s_halo[p][0][k - own + CO_HALO], blk + 1, &s_bar[p], top[i]);
        }
#endif
        if (cb == 0) break;
#if __CUDA_ARCH__ >= 900
        // This block's halo for the next band: wait for both neighbours'
        // bytes (the mbarrier's use count of this parity gives the phase).
        const int phase = ((nbands - 1 - cb) >> 1) & 1;
        for (;;) {
            u32 done;
            asm volatile(
                "{ .reg .pred d; mbarrier.try_wait.parity.shared::cta.b64 d, [%1], %2; selp.u32 %0, 1, 0, d; }"
                : "=r"(done)
                : "r"(bar), "r"(phase)
                : "memory");
            if (done) break;
        }
#endif
        if (live && !owned) {
            const int v = k < 0 ? s_halo[p][0][i] : s_halo[p][1][k - own];
            sums[cur * rowi + 4 + i] = inx ? v : OUT32;
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// Chunk c (rows [32c, R), R = min(32c + 32, h − 1)) from the exact row R
// (mrows' row for R, or the bottom row), a tile of CO_FILL_OWN columns a
// block with a halo of 32 either side (a path moves at most 32 columns in
// a chunk, and a row's sums go inexact one column further in from the
// tile's edges each row, so the owned columns' steps, paths and jumps are
// exact), a thread a column, its 32 rows' costs fetched at once. Writes the
// owned columns' steps, their chunk's jumps (anchors) and `paths`: for each
// row y in (32c, R], the column at row y of the path from (x, 32c).
#define CO_FILL (CO_FILL_OWN + 2 * ANCHOR_ROWS)
extern "C" __global__ void __launch_bounds__(CO_FILL) coarse_fill(
    const u32* __restrict__ cost, u32 w_, u32 h_, u32 cpitch, const int* __restrict__ mrows,
    u32 pitch, i8* back, u16* anchors, u16* paths) {
    __shared__ int m[2][CO_FILL];
    __shared__ i8 st[ANCHOR_ROWS][CO_FILL];
    const int w = w_, h = h_, c = blockIdx.y, t = threadIdx.x;
    const int y0 = ANCHOR_ROWS * c, R = min(y0 + ANCHOR_ROWS, h - 1);
    const int x0 = blockIdx.x * CO_FILL_OWN - ANCHOR_ROWS, x = x0 + t;
    const bool in = x >= 0 && x < w;
    u32 wd[ANCHOR_ROWS];
#pragma unroll
    for (int k = 0; k < ANCHOR_ROWS; ++k)
        wd[k] = in && R - 1 - k >= y0 ? __ldg(cost + (size_t)(R - 1 - k) * cpitch + x + DP_PAD) : 0;
    int v = OUT32;
    if (in) {
        if (R % ANCHOR_ROWS == 0) {
            v = __ldcg(mrows + (size_t)(R / ANCHOR_ROWS) * pitch + x);
        } else {
            u32 up, ul, ur;
            co_unpack(__ldg(cost + (size_t)R * cpitch + x + DP_PAD), up, ul, ur);
            v = (int)up;
        }
    }
    m[0][t] = v;
    int cur = 0;
#pragma unroll
    for (int k = 0; k < ANCHOR_ROWS; ++k) {
        const int y = R - 1 - k;
        if (y < y0) break;
        __syncthreads();
        const int* b = m[cur];
        u32 up, ul, ur;
        co_unpack(wd[k], up, ul, ur);
        const int cv = b[t] + (int)up;
        const int lv = (t > 0 && x > 0 ? b[t - 1] : OUT32) + (int)ul;
        const int rv = (t + 1 < CO_FILL && x + 1 < w ? b[t + 1] : OUT32) + (int)ur;
        const bool take_l = lv < cv;
        int best = take_l ? lv : cv;
        const bool take_r = rv < best;
        best = take_r ? rv : best;
        const int step = take_r ? 1 : (take_l ? -1 : 0);
        m[cur ^ 1][t] = in ? best : OUT32;
        st[y - y0][t] = (i8)step;
        if (in && t >= ANCHOR_ROWS && t < ANCHOR_ROWS + CO_FILL_OWN)
            back[(size_t)y * pitch + x] = (i8)step;
        cur ^= 1;
    }
    __syncthreads();
    // The owned columns' paths down the chunk.
    if (in && t >= ANCHOR_ROWS && t < ANCHOR_ROWS + CO_FILL_OWN) {
        int p = t;
        for (int y = y0; y < R; ++y) {
            p += st[y - y0][p];
            paths[(size_t)(y + 1) * pitch + x] = (u16)(x0 + p);
        }
        anchors[(size_t)c * pitch + x] = (u16)(x0 + p);
    }
}

// Chunks whose anchors the walk loads at once; the block's threads cover
// the widest window (2·32·(K − 1) + 1 columns).
#define CO_WALK_K 12
static_assert(2 * ANCHOR_ROWS * (CO_WALK_K - 1) + 1 <= 1024, "a thread a column of a window");

// The least top-row cost (ties to the smallest column) into *total, the
// top row's sums into `top` (if not null), and the seam: from anchor row to
// anchor row, then each chunk's steps. One block.
extern "C" __global__ void __launch_bounds__(1024, 1) coarse_walk(const int* __restrict__ mrows, u32 w_, u32 h_, u32 pitch,
                                       const u16* __restrict__ paths,
                                       const u16* __restrict__ anchors, u32* seam, i64* total,
                                       i64* top) {
    __shared__ i64 s_best[32];
    __shared__ int s_col[32];
    __shared__ u16 s_anchor[DP_MAX_CHUNKS];
    __shared__ u16 s_win[CO_WALK_K][2 * ANCHOR_ROWS * (CO_WALK_K - 1) + 1];
    __shared__ int s_x;
    const int w = w_, h = h_;
    i64 best;
    int col;
    const bool first = dp_top_argmin(mrows, w, top, s_best, s_col, best, col);
    const int nb = (h - 1 + ANCHOR_ROWS - 1) / ANCHOR_ROWS;
    if (first) {
        *total = best;
        if (h == 1) seam[0] = col;
        s_x = col;
    }
    // The anchors CO_WALK_K chunks at a time: from the column x where a
    // group starts, the path is within 32·j columns of x at the top of
    // chunk j of the group, so the block loads those windows of the anchor
    // rows at once (one wait on memory, not K) and one thread follows them
    // in shared memory.
    for (int c0 = 0; c0 < nb; c0 += CO_WALK_K) {
        __syncthreads();
        const int x = s_x;
#pragma unroll
        for (int j = 0; j < CO_WALK_K; ++j) {
            const int o = threadIdx.x, xc = x - ANCHOR_ROWS * j + o;
            if (o <= 2 * ANCHOR_ROWS * j && c0 + j < nb && xc >= 0 && xc < w)
                s_win[j][o] = __ldcg(anchors + (size_t)(c0 + j) * pitch + xc);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            int cx = x;
            for (int j = 0; j < CO_WALK_K && c0 + j < nb; ++j) {
                s_anchor[c0 + j] = (u16)cx;
                cx = s_win[j][cx - x + ANCHOR_ROWS * j];
            }
            s_x = cx;
        }
    }
    __syncthreads();
    // Each row's column: its chunk's path from the chunk's entry.
    for (int y = threadIdx.x; y < h && nb > 0; y += blockDim.x) {
        const int c = min(y / ANCHOR_ROWS, nb - 1);
        const int x = s_anchor[c];
        seam[y] = y == ANCHOR_ROWS * c ? x : __ldcg(paths + (size_t)y * pitch + x);
    }
}
