// retarget, fast mode: the steps of src/ops/retarget_fast.rs (which
// explains the algorithm) that the exact mode's kernels (retarget.cu) do not
// already do. src/cuda/ops/retarget_fast.rs drives them. Planes keep a fixed
// row pitch (elements) while their width shrinks; every step is integer, so
// the frames are the CPU's.
#include "common.cuh"

typedef long long i64;
typedef signed char i8;

// The cut-detection grid and the cap on the temporal cost's distance
// (CUT_GRID and DISTANCE_CAP in src/ops/retarget_fast.rs).
#define CUT_GRID 8
#define DISTANCE_CAP 8
#define MASK_PROTECT 1

// The DP's packed cost word (dp_prep in retarget.cu): for forward energy
// three 10-bit step costs, else the energy in the low bits.
#define DP_PAD 32

// State words (u64) shared by the kernels of one stream.
#define ST_DIFF 0      // Σ|luma − held| on the grid, this frame
#define ST_HELD 1      // whether `held` holds a frame
#define ST_CUT 2       // whether this frame is a cut (or the first)
#define ST_MEM 3       // ST_MEM + d: whether dimension d's memory is valid
#define ST_CUTS 5      // cuts seen

// ------------------------------------------------------------ held luma

__device__ __forceinline__ u64 grid_points(u32 w, u32 h) {
    return (u64)((w + CUT_GRID - 1) / CUT_GRID) * ((h + CUT_GRID - 1) / CUT_GRID);
}

// Σ|luma − held| over the grid points (FastState::observe). One thread a
// grid point; a warp adds its part with one atomic.
extern "C" __global__ void fast_cut_diff(const u8* __restrict__ luma, const u8* __restrict__ held,
                                         u32 w, u32 h, u64* state) {
    u32 gw = (w + CUT_GRID - 1) / CUT_GRID;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 d = 0;
    if (i < grid_points(w, h)) {
        size_t p = (size_t)(i / gw) * CUT_GRID * w + (i % gw) * CUT_GRID;
        d = abs((int)luma[p] - (int)held[p]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) d += __shfl_down_sync(0xFFFFFFFFu, d, off);
    if ((threadIdx.x & 31) == 0 && d) atomicAdd(&state[ST_DIFF], (u64)d);
}

__device__ __forceinline__ bool is_cut(const u64* state, u32 w, u32 h, u32 cut) {
    return state[ST_HELD] == 0 || state[ST_DIFF] > (u64)cut * grid_points(w, h);
}

// The held luma follows the input where it changed by more than `noise`,
// or everywhere on a cut. One thread a pixel (packed planes).
extern "C" __global__ void fast_hold(const u8* __restrict__ luma, u8* __restrict__ held, u32 w,
                                     u32 h, u32 noise, u32 cut, const u64* __restrict__ state) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (u64)w * h) return;
    u8 v = luma[i];
    if (is_cut(state, w, h, cut) || (u32)abs((int)v - (int)held[i]) > noise) held[i] = v;
}

// After fast_hold: records the decision, forgets both memories on a cut.
extern "C" __global__ void fast_commit(u64* state, u32 w, u32 h, u32 cut) {
    bool c = is_cut(state, w, h, cut);
    if (c) {
        if (state[ST_HELD]) state[ST_CUTS] += 1;
        state[ST_MEM] = 0;
        state[ST_MEM + 1] = 0;
    }
    state[ST_CUT] = c;
    state[ST_HELD] = 1;
    state[ST_DIFF] = 0;
}

// state[idx] = value.
extern "C" __global__ void fast_set(u64* state, u32 idx, u64 value) { state[idx] = value; }

// ------------------------------------------------------------ temporal cost

// The distance from x to the nearest of a non-decreasing run (n > 0).
__device__ __forceinline__ u32 nearest(const u32* run, u32 n, u32 x) {
    u32 lo = 0, hi = n;
    while (lo < hi) {
        u32 mid = (lo + hi) / 2;
        if (run[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    u32 d = 0xFFFFFFFFu;
    if (lo < n) d = run[lo] - x;
    if (lo > 0) d = min(d, x - run[lo - 1]);
    return d;
}

// Adds the temporal cost to the DP's packed words (add_temporal_cost):
// `step` per pixel of distance from the pixel's original column to the
// nearest of the last frame's paths in its row, up to DISTANCE_CAP. The
// memory holds K columns a row as `passes` non-decreasing runs (pass p has
// pass_sizes' K/passes + (p < K % passes) of them); the nearest of their
// union is the nearest of the runs' nearest. For forward energy the cost
// goes into each of the three step costs (the same DP: the least of three
// sums each plus c is the least plus c). Does nothing unless the memory is
// valid (state[ST_MEM + dim]).
extern "C" __global__ void fast_temporal(u32* __restrict__ cost, u32 cpitch,
                                         const u32* __restrict__ origin, u32 pitch,
                                         const u32* __restrict__ mem, u32 K, u32 passes, u32 w,
                                         u32 h, u32 step, int forward,
                                         const u64* __restrict__ state, u32 dim) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y >= (int)h || state[ST_MEM + dim] == 0) return;
    u32 o = origin[(size_t)y * pitch + x];
    const u32* row = mem + (size_t)y * K;
    u32 d = 0xFFFFFFFFu, off = 0;
    for (u32 p = 0; p < passes; ++p) {
        u32 n = K / passes + (p < K % passes ? 1 : 0);
        if (n) d = min(d, nearest(row + off, n, o));
        off += n;
    }
    u32 c = step * min(d, (u32)DISTANCE_CAP);
    u32* word = cost + (size_t)y * cpitch + x + DP_PAD;
    *word += forward ? c * (1u + (1u << 10) + (1u << 20)) : c;
}

// ------------------------------------------------------------ the k starts

// Marks the k least top-row costs (ties to the smaller column): x is
// chosen when fewer than k columns come before it in that order. One
// thread a column, the row read through shared memory in tiles.
extern "C" __global__ void fast_rank(const i64* __restrict__ top, u32 w, u32 k,
                                     u8* __restrict__ chosen) {
    __shared__ i64 tile[256];
    u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    i64 v = x < w ? top[x] : 0;
    u32 before = 0;
    for (u32 base = 0; base < w; base += 256) {
        __syncthreads();
        if (base + threadIdx.x < w) tile[threadIdx.x] = top[base + threadIdx.x];
        __syncthreads();
        u32 n = min(256u, w - base);
        for (u32 j = 0; j < n; ++j) {
            i64 t = tile[j];
            before += (t < v || (t == v && base + j < x)) ? 1 : 0;
        }
    }
    if (x < w) chosen[x] = before < k;
}

// Block-wide exclusive sum of one value a thread (blockDim.x ≤ 1024, a
// multiple of 32); `total` gets the block's sum.
__device__ __forceinline__ u32 block_exclusive_sum(u32 v, u32& total) {
    __shared__ u32 warp_sums[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    u32 incl = v;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        u32 o = __shfl_up_sync(0xFFFFFFFFu, incl, off);
        if (lane >= off) incl += o;
    }
    __syncthreads();
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    u32 before = 0;
    total = 0;
    for (int i = 0; i < warps; ++i) {
        if (i < warp) before += warp_sums[i];
        total += warp_sums[i];
    }
    return before + incl - v;
}

// The chosen columns in column order: starts[i] = the i-th. One block.
extern "C" __global__ void fast_starts(const u8* __restrict__ chosen, u32 w,
                                       u32* __restrict__ starts) {
    u32 base_count = 0;
    for (u32 base = 0; base < w; base += blockDim.x) {
        u32 x = base + threadIdx.x;
        u32 c = x < w ? chosen[x] : 0;
        u32 total;
        u32 at = block_exclusive_sum(c, total);
        if (c) starts[base_count + at] = x;
        base_count += total;
    }
}

// ------------------------------------------------------------ the paths

// Each seam's column at the top of every band of ANCHOR_ROWS (32) rows,
// from the DP's jumps: col[c·k + i]. One thread a seam.
extern "C" __global__ void fast_trace_bands(const unsigned short* __restrict__ anchors,
                                            const u32* __restrict__ starts, u32 k, u32 h,
                                            u32 pitch, u32* __restrict__ col) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    u32 x = starts[i];
    u32 bands = (h + 31) / 32;
    for (u32 c = 0; c < bands; ++c) {
        col[(size_t)c * k + i] = x;
        if (32 * (c + 1) <= h - 1) x = anchors[(size_t)c * pitch + x];
    }
}

// Each seam's path through its band: paths[y·k + i]. One thread a (seam,
// band).
extern "C" __global__ void fast_trace_rows(const i8* __restrict__ back, const u32* __restrict__ col,
                                           u32 k, u32 h, u32 pitch, u32* __restrict__ paths) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
    if (i >= k) return;
    int x = col[(size_t)c * k + i];
    u32 y0 = 32 * c, y1 = min(y0 + 32, h);
    for (u32 y = y0; y < y1; ++y) {
        paths[(size_t)y * k + i] = x;
        if (y + 1 < h) x += back[(size_t)y * pitch + x];
    }
}

// The memory of this frame (before the pass removes anything): the paths in
// original columns, at offset `off` of K a row. One thread a path pixel.
extern "C" __global__ void fast_remember(const u32* __restrict__ paths,
                                         const u32* __restrict__ origin, u32 k, u32 h, u32 pitch,
                                         u32* __restrict__ mem, u32 K, u32 off) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (i >= k || y >= h) return;
    u32 x = paths[(size_t)y * k + i];
    mem[(size_t)y * K + off + i] = origin[(size_t)y * pitch + x];
}

// ------------------------------------------------------------ placing

// Block-wide running max (prefix, REV false) or min from the right (REV
// true) of d_i − i over the k entries of a row, each thread a contiguous
// chunk; writes i + the running value to out[i].
template <bool REV>
__device__ __forceinline__ void running(const int* d, int* out, int k) {
    __shared__ int chunk_val[1024];
    const int t = threadIdx.x, n = blockDim.x;
    const int per = (k + n - 1) / n;
    const int lo = min(t * per, k), hi = min(lo + per, k);
    const int none = REV ? 0x7FFFFFFF : (int)0x80000000;
    int acc = none;
    for (int j = lo; j < hi; ++j) {
        int v = d[j] - j;
        acc = REV ? min(acc, v) : max(acc, v);
    }
    chunk_val[t] = acc;
    __syncthreads();
    // What the chunks before (or after) this one carry in.
    int carry = none;
    if (REV) {
        for (int c = t + 1; c < n; ++c) carry = min(carry, chunk_val[c]);
    } else {
        for (int c = 0; c < t; ++c) carry = max(carry, chunk_val[c]);
    }
    if (REV) {
        for (int j = hi - 1; j >= lo; --j) {
            carry = min(carry, d[j] - j);
            out[j] = j + carry;
        }
    } else {
        for (int j = lo; j < hi; ++j) {
            carry = max(carry, d[j] - j);
            out[j] = j + carry;
        }
    }
    __syncthreads();
}

// Places one row's seams (place_seams): the k paths, in the ranks of the
// unprotected columns when the row has at least k (else of all columns),
// spread apart (spread), back to columns. One block a row; `work` holds
// 3·k ints a row and `ranks`/`free` a pitch each (only with a mask).
extern "C" __global__ void fast_place(const u32* __restrict__ paths, u32 k,
                                      const u8* __restrict__ mask, u32 w, u32 pitch,
                                      int* __restrict__ work, u32* __restrict__ ranks,
                                      u32* __restrict__ free_cols, u32* __restrict__ cols) {
    const u32 y = blockIdx.x;
    int* d = work + (size_t)y * 3 * k;
    int* right = d + k;
    int* left = right + k;
    const u32* path = paths + (size_t)y * k;
    bool use_free = false;
    u32 n = w;
    if (mask) {
        const u8* m = mask + (size_t)y * pitch;
        u32* rk = ranks + (size_t)y * pitch;
        u32* fc = free_cols + (size_t)y * pitch;
        u32 count = 0;
        for (u32 base = 0; base < w; base += blockDim.x) {
            u32 x = base + threadIdx.x;
            u32 f = x < w ? ((i8)m[x] != MASK_PROTECT) : 0;
            u32 total;
            u32 at = count + block_exclusive_sum(f, total);
            if (x < w) {
                rk[x] = at;
                if (f) fc[at] = x;
            }
            count += total;
        }
        __syncthreads();
        use_free = count >= k;
        if (use_free) n = count;
        for (u32 i = threadIdx.x; i < k; i += blockDim.x)
            d[i] = use_free ? (int)rk[path[i]] : (int)path[i];
    } else {
        for (u32 i = threadIdx.x; i < k; i += blockDim.x) d[i] = (int)path[i];
    }
    __syncthreads();
    running<false>(d, right, k);
    running<true>(d, left, k);
    const u32* fc = free_cols + (size_t)y * pitch;
    for (u32 i = threadIdx.x; i < k; i += blockDim.x) {
        int mid = (right[i] + left[i]) >> 1;  // floor, as div_euclid(2)
        mid = min(max(mid, (int)i), (int)n - (int)k + (int)i);
        cols[(size_t)y * k + i] = use_free ? fc[mid] : (u32)mid;
    }
}

// ------------------------------------------------------------ removal

// The number of a row's k increasing seam columns below x, and whether x is
// one of them.
__device__ __forceinline__ u32 below(const u32* c, u32 k, u32 x, bool& hit) {
    u32 lo = 0, hi = k;
    while (lo < hi) {
        u32 mid = (lo + hi) / 2;
        if (c[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    hit = lo < k && c[lo] == x;
    return lo;
}

// Removes the k columns of each row from the planes given (null: absent),
// from `s*` into `d*` (remove_columns). One thread a pixel.
template <typename P>
__device__ __forceinline__ void remove_k(const P* si, P* di, const u8* sl, u8* dl, const u8* sm,
                                         u8* dm, const u32* so, u32* dout, const u32* cols, u32 k,
                                         u32 w, u32 h, u32 pitch) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    bool hit;
    u32 j = below(cols + (size_t)y * k, k, x, hit);
    if (hit) return;
    size_t from = (size_t)y * pitch + x, to = from - j;
    if (si) di[to] = si[from];
    if (sl) dl[to] = sl[from];
    if (sm) dm[to] = sm[from];
    if (so) dout[to] = so[from];
}

#define REMOVE_K(NAME, P)                                                                      \
    extern "C" __global__ void fast_remove_##NAME(                                             \
        const P* __restrict__ si, P* __restrict__ di, const u8* __restrict__ sl,               \
        u8* __restrict__ dl, const u8* __restrict__ sm, u8* __restrict__ dm,                   \
        const u32* __restrict__ so, u32* __restrict__ dout, const u32* __restrict__ cols,      \
        u32 k, u32 w, u32 h, u32 pitch) {                                                      \
        remove_k<P>(si, di, sl, dl, sm, dm, so, dout, cols, k, w, h, pitch);                   \
    }
REMOVE_K(u8, u8)
REMOVE_K(u8x4, u32)

// ------------------------------------------------------------ setup

// origin[y][x] = x for a w×h plane.
extern "C" __global__ void fast_origin(u32* __restrict__ origin, u32 w, u32 h, u32 pitch) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) origin[(size_t)y * pitch + x] = x;
}

// Enlarging: chosen[y][x] = 1 for the w columns, then 0 where a pixel of
// the carved copy (kw wide) came from.
extern "C" __global__ void fast_chosen_fill(u8* __restrict__ chosen, u32 w, u32 h, u32 pitch) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) chosen[(size_t)y * pitch + x] = 1;
}
extern "C" __global__ void fast_chosen_clear(const u32* __restrict__ origin, u8* __restrict__ chosen,
                                             u32 kw, u32 h, u32 pitch) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < kw && y < h) chosen[(size_t)y * pitch + origin[(size_t)y * pitch + x]] = 0;
}
