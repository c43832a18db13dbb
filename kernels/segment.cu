// segment: quad-tree forest split-and-merge segmentation
// (src/ops/segment.rs, the reference for every decision here).
//
//  1. segment_split, once per level above the leaves' level: one thread a
//     node of that level decides, from its children's statistics read in
//     O(1) from the integral tables, whether it splits. All levels' flags
//     are independent, so every node is decided whether or not its
//     ancestors split.
//  2. segment_leaves: one thread a pixel walks down the flags to its leaf;
//     the leaf's id is the raster index of its top-left pixel, whose thread
//     also makes it a union-find root, stores its level, and zeroes its
//     colour sums.
//  3. segment_merge: one thread a pixel joins its leaf with the leaves of
//     its right and lower neighbours where they are similar (Eq. 2.10),
//     with a lock-free union-find: roots are hooked with atomicCAS, always
//     the larger id under the smaller, so parent[x] <= x holds throughout,
//     and each final root is the smallest leaf id of its component: the
//     raster index of the segment's first pixel, the CPU's label exactly.
//  4. segment_labels(_sums): one thread a pixel finds its root (its label)
//     and, for output=mean, adds its colour to the root's sums, one atomic
//     per run of equal labels within a warp.
//  5. segment_paint_*: each pixel from its label (mean, borders or false
//     colours), as the CPU paints.
//
// Statistics are integer sums turned into f64 by the CPU's sequence of
// correctly rounded operations (compiled with --fmad=false), so every split
// and merge decision is the CPU's.
#include "common.cuh"
// SEGMENT_MAX_LEVELS: from the Rust code that launches these kernels (shared.cuh,
// made from seamstream-cuda's shared.rs).
#include "shared.cuh"

// (mean, deviation) of [x0, x1) x [y0, y1): Stats::mean_sd of the CPU.
struct MeanSd {
    double m, sd;
    u32 n;
};

__device__ __forceinline__ MeanSd rect_stats(const u32* __restrict__ sum,
                                             const u64* __restrict__ sq, u32 w, u32 x0, u32 y0,
                                             u32 x1, u32 y1) {
    const size_t tw = (size_t)w + 1;
    const size_t a = (size_t)y0 * tw + x0, b = (size_t)y0 * tw + x1;
    const size_t c = (size_t)y1 * tw + x0, d = (size_t)y1 * tw + x1;
    const u32 s = sum[d] - sum[c] - sum[b] + sum[a];
    const u64 q = sq[d] - sq[c] - sq[b] + sq[a];
    MeanSd r;
    r.n = (x1 - x0) * (y1 - y0);
    const double n = (double)r.n;
    r.m = (double)s / n;
    const double var = (double)q / n - r.m * r.m;
    r.sd = sqrt(fmax(var, 0.0));
    return r;
}

// One node of side `side` at level `level` of nx x ny nodes a level; flags
// of this level start at flags[offset]. The CPU's Forest::splits.
extern "C" __global__ void segment_split(const u32* __restrict__ sum, const u64* __restrict__ sq,
                                         u32 w, u32 h, u32 side, u32 nx, u32 ny,
                                         double threshold, double alpha, u8* __restrict__ flags,
                                         u32 offset) {
    const u32 ix = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= nx || iy >= ny) return;
    const u32 x0 = ix * side, y0 = iy * side, half = side / 2;
    const u32 cx = x0 + half < w ? 2 : 1, cy = y0 + half < h ? 2 : 1;
    u8 split = 1;
    if (cx * cy > 1) {
        // Extremes of the children's ranges m ± alpha·s (min and max are
        // exact, so the order of the children does not matter).
        double lo_max = 0, lo_min = 0, hi_max = 0, hi_min = 0;
        for (u32 k = 0; k < cx * cy; ++k) {
            const u32 a = x0 + (k % cx) * half, b = y0 + (k / cx) * half;
            const MeanSd c = rect_stats(sum, sq, w, a, b, min(a + half, w), min(b + half, h));
            const double r = alpha * c.sd;
            const double lo = c.m - r, hi = c.m + r;
            lo_max = k == 0 ? lo : fmax(lo_max, lo);
            lo_min = k == 0 ? lo : fmin(lo_min, lo);
            hi_max = k == 0 ? hi : fmax(hi_max, hi);
            hi_min = k == 0 ? hi : fmin(hi_min, hi);
        }
        split = !(hi_min - lo_max >= threshold * (hi_max - lo_min));
    }
    flags[offset + iy * nx + ix] = split;
}

// Up to 11 levels (tile 1024 down to min 1): each level's node side and,
// for the levels above the leaves' level, its nodes a row and where its
// flags start. The Rust struct Levels in src/cuda/ops/segment.rs.
struct Levels {
    u32 side[SEGMENT_MAX_LEVELS];
    u32 nx[SEGMENT_MAX_LEVELS];
    u32 offset[SEGMENT_MAX_LEVELS];
};

// One thread a pixel (block 32 x 8); `depth` levels have flags, level
// `depth` nodes are leaves.
extern "C" __global__ void segment_leaves(const u8* __restrict__ flags, Levels lv, u32 depth,
                                          u32 w, u32 h, u32* __restrict__ leaf,
                                          u32* __restrict__ parent, u8* __restrict__ level,
                                          u64* __restrict__ sums, u32 with_sums) {
    const u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    u32 l = 0;
    while (l < depth && flags[lv.offset[l] + (y / lv.side[l]) * lv.nx[l] + x / lv.side[l]]) ++l;
    const u32 side = lv.side[l];
    const u32 x0 = x / side * side, y0 = y / side * side;
    const u32 id = y0 * w + x0;
    leaf[(size_t)y * w + x] = id;
    if (x == x0 && y == y0) {
        parent[id] = id;
        level[id] = (u8)l;
        if (with_sums) {
            sums[4 * (size_t)id] = 0;
            sums[4 * (size_t)id + 1] = 0;
            sums[4 * (size_t)id + 2] = 0;
            sums[4 * (size_t)id + 3] = 0;
        }
    }
}

// The (mean, deviation) leaf `id` brings to the merge test: Forest::
// merge_stats of the CPU (a one-pixel leaf below the roots takes its parent
// node's deviation). `tile` is the roots' side.
__device__ __forceinline__ MeanSd leaf_stats(const u32* __restrict__ sum,
                                             const u64* __restrict__ sq,
                                             const u8* __restrict__ level, u32 tile, u32 w, u32 h,
                                             u32 id) {
    const u32 l = level[id];
    const u32 x0 = id % w, y0 = id / w, side = tile >> l;
    MeanSd r = rect_stats(sum, sq, w, x0, y0, min(x0 + side, w), min(y0 + side, h));
    if (r.n == 1 && l > 0) {
        const u32 ps = side * 2, px = x0 / ps * ps, py = y0 / ps * ps;
        r.sd = rect_stats(sum, sq, w, px, py, min(px + ps, w), min(py + ps, h)).sd;
    }
    return r;
}

__device__ __forceinline__ bool similar(MeanSd a, MeanSd b, double threshold) {
    const double d = fabs(a.m - b.m);
    return d == 0.0 || d < threshold * (a.sd + b.sd);
}

// The root of x. Other threads hook roots meanwhile, so parents are read
// past the cache (volatile); a stale read only lengthens the walk.
__device__ __forceinline__ u32 find_root(const u32* parent, u32 x) {
    const volatile u32* p = parent;
    u32 up = p[x];
    while (up != x) {
        x = up;
        up = p[x];
    }
    return x;
}

// Joins the sets of a and b: the larger root is hooked under the smaller,
// retried when another thread hooked it first.
__device__ __forceinline__ void unite(u32* parent, u32 a, u32 b) {
    while (true) {
        a = find_root(parent, a);
        b = find_root(parent, b);
        if (a == b) return;
        if (a < b) {
            const u32 t = a;
            a = b;
            b = t;
        }
        if (atomicCAS(&parent[a], a, b) == a) return;
    }
}

// One thread a pixel (block 32 x 8).
extern "C" __global__ void segment_merge(const u32* __restrict__ sum, const u64* __restrict__ sq,
                                         const u8* __restrict__ level,
                                         const u32* __restrict__ leaf, u32* parent, u32 tile,
                                         u32 w, u32 h, double threshold) {
    const u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const size_t p = (size_t)y * w + x;
    const u32 a = leaf[p];
    const u32 right = x + 1 < w ? leaf[p + 1] : a;
    const u32 below = y + 1 < h ? leaf[p + w] : a;
    if (right == a && below == a) return;
    const MeanSd sa = leaf_stats(sum, sq, level, tile, w, h, a);
    if (right != a && similar(sa, leaf_stats(sum, sq, level, tile, w, h, right), threshold))
        unite(parent, a, right);
    if (below != a && similar(sa, leaf_stats(sum, sq, level, tile, w, h, below), threshold))
        unite(parent, a, below);
}

// One thread a pixel, block 32 x 8 (a warp is 32 pixels of a row): each
// pixel's label is its leaf's root. With SUMS, the colour channels (R, G, B
// of RGBA, STRIDE 4, or the gray value, STRIDE 1) and a count are added to the root's sums: lanes with equal labels
// in a run form one group whose first lane adds the group's totals (from a
// prefix sum over the warp) with one atomic each.
template <int STRIDE, bool SUMS>
__device__ __forceinline__ void labels(const u8* __restrict__ src, const u32* __restrict__ leaf,
                                       const u32* parent, u32 w, u32 h, u32* __restrict__ label,
                                       u64* __restrict__ sums) {
    const u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    const bool inside = x < w && y < h;
    const size_t p = (size_t)y * w + x;
    u32 root = 0xffffffffu;
    if (inside) {
        root = find_root(parent, leaf[p]);
        label[p] = root;
    }
    if (!SUMS) return;
    // Every lane takes part in the shuffles below (no early exit above).
    constexpr int CH = STRIDE == 4 ? 3 : 1;
    const u32 lane = threadIdx.x & 31;
    u32 v[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c) v[c] = inside ? src[p * STRIDE + c] : 0;
    const u32 before = __shfl_up_sync(0xffffffffu, root, 1);
    const bool head = lane == 0 || before != root || !inside;
    const u32 heads = __ballot_sync(0xffffffffu, head);
    // The group's last lane: the lane before the next head (or 31).
    const u32 after = heads & ~((2u << lane) - 1u);
    const u32 last = (lane == 31 || after == 0) ? 31 : (u32)__ffs(after) - 2;
    u32 pre[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c) {
        u32 s = v[c];
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const u32 o = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= (u32)d) s += o;
        }
        pre[c] = s;
    }
    u32 total[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c) total[c] = __shfl_sync(0xffffffffu, pre[c], last) - (pre[c] - v[c]);
    if (head && inside) {
#pragma unroll
        for (int c = 0; c < CH; ++c) atomicAdd(&sums[4 * (size_t)root + c], (u64)total[c]);
        atomicAdd(&sums[4 * (size_t)root + 3], (u64)(last - lane + 1));
    }
}

extern "C" __global__ void segment_labels(const u32* __restrict__ leaf, const u32* parent, u32 w,
                                          u32 h, u32* __restrict__ label) {
    labels<1, false>(nullptr, leaf, parent, w, h, label, nullptr);
}

extern "C" __global__ void segment_labels_sums_gray(const u8* __restrict__ src,
                                                    const u32* __restrict__ leaf,
                                                    const u32* parent, u32 w, u32 h,
                                                    u32* __restrict__ label,
                                                    u64* __restrict__ sums) {
    labels<1, true>(src, leaf, parent, w, h, label, sums);
}

// RGBA: the sums of R, G and B (alpha is kept, not averaged).
extern "C" __global__ void segment_labels_sums_rgba(const u8* __restrict__ src,
                                                    const u32* __restrict__ leaf,
                                                    const u32* parent, u32 w, u32 h,
                                                    u32* __restrict__ label,
                                                    u64* __restrict__ sums) {
    labels<4, true>(src, leaf, parent, w, h, label, sums);
}

// lowbias32 of the label, as label_colour on the CPU.
__device__ __forceinline__ u32 hash(u32 x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// MODE 0: mean colour, (2·sum + n) / (2·n) per channel; 1: borders (the
// right or lower neighbour in another segment) in red, gray 255; 2: false
// colours. CH channels of which the first FILTERED are written (alpha kept).
template <int CH, int MODE>
__device__ __forceinline__ void paint(const u8* __restrict__ src, const u32* __restrict__ label,
                                      const u64* __restrict__ sums, u32 w, u32 h,
                                      u8* __restrict__ out) {
    const u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const size_t p = (size_t)y * w + x;
    const u32 l = label[p];
    const int filtered = CH == 4 ? 3 : 1;
    u8 px[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c) px[c] = src[p * CH + c];
    if (MODE == 0) {
        const u64 n = sums[4 * (size_t)l + 3];
#pragma unroll
        for (int c = 0; c < filtered; ++c) px[c] = (u8)((2 * sums[4 * (size_t)l + c] + n) / (2 * n));
    } else if (MODE == 1) {
        const bool border = (x + 1 < w && label[p + 1] != l) || (y + 1 < h && label[p + w] != l);
        if (border) {
            if (CH == 4) {
                px[0] = 255;
                px[1] = 0;
                px[2] = 0;
            } else {
                px[0] = 255;
            }
        }
    } else {
        const u32 k = hash(l);
#pragma unroll
        for (int c = 0; c < filtered; ++c) px[c] = (u8)(k >> (8 * c));
    }
#pragma unroll
    for (int c = 0; c < CH; ++c) out[p * CH + c] = px[c];
}

#define PAINT(name, CH, MODE)                                                                    \
    extern "C" __global__ void name(const u8* __restrict__ src, const u32* __restrict__ label,   \
                                    const u64* __restrict__ sums, u32 w, u32 h,                 \
                                    u8* __restrict__ out) {                                     \
        paint<CH, MODE>(src, label, sums, w, h, out);                                            \
    }
PAINT(segment_paint_mean_gray, 1, 0)
PAINT(segment_paint_mean_rgba, 4, 0)
PAINT(segment_paint_borders_gray, 1, 1)
PAINT(segment_paint_borders_rgba, 4, 1)
PAINT(segment_paint_labels_gray, 1, 2)
PAINT(segment_paint_labels_rgba, 4, 2)
