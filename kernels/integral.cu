// integral: summed-area tables of a gray frame (src/ops/integral.rs): the
// u32 table of sums and, in the `_sq` kernels, the u64 table of squares, both
// (W+1)×(H+1) with a zero first row and column.
//
// The frame is cut into tiles of INTEGRAL_TILE_H rows × INTEGRAL_TILE_W columns (bands b of
// INTEGRAL_TILE_H rows, tile columns t; nt tile columns). Three passes, so that the
// tables are written once and the frame read twice:
//  1. integral_tile_sums: per tile, the column sums over the band and the
//     tile's total into `cols` (nb rows of W + nt: cols[b][x] for x < W,
//     cols[b][W + t] the totals), and each row's sum over the tile into
//     `rows` (H rows of nt).
//  2. integral_band_scan: `cols` scanned down the bands (exclusive), so that
//     cols[b][x] is the sum of column x above band b and cols[b][W + t] the
//     sum of tile column t above band b.
//  3. integral_tiles: each tile writes its INTEGRAL_TILE_H rows of the table: the
//     table row above the band (the corner from the scanned totals, then the
//     scanned column sums along the tile) plus, row by row, the row's prefix
//     sums, which start from the row's sum left of the tile (from `rows`).
// Every sum is unsigned and wraps as the CPU's wrapping adds do, so any
// order of additions gives the CPU's table exactly.
#include "common.cuh"
// INTEGRAL_*: from the Rust code that launches these kernels (shared.cuh,
// made from seamstream-cuda's shared.rs).
#include "shared.cuh"

// One thread a tile column; warp w takes rows w, w + 4, w + 8, w + 12, each
// lane four adjacent columns of them.
#define WARPS (INTEGRAL_THREADS / 32)

template <typename T> __device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

template <typename T> __device__ __forceinline__ T warp_inclusive_scan(T v, u32 lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T o = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= (u32)d) v += o;
    }
    return v;
}

// Pixels x0..x0+3 of row y, zero outside the frame. `aligned`: W is a
// multiple of 4, so the four are one aligned word (x0 is a multiple of 4).
__device__ __forceinline__ void load4(const u8* __restrict__ src, u32 w, u32 h, u32 y, u32 x0,
                                      bool aligned, u32 v[4]) {
    v[0] = v[1] = v[2] = v[3] = 0;
    if (y >= h) return;
    const u8* row = src + (size_t)y * w;
    if (aligned && x0 + 3 < w) {
        uchar4 p = __ldg((const uchar4*)(row + x0));
        v[0] = p.x, v[1] = p.y, v[2] = p.z, v[3] = p.w;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (x0 + j < w) v[j] = __ldg(row + x0 + j);
}

// Pass 1; grid (nt, nb). Squares of 16 rows or 128 columns of pixels fit
// u32 (at most 2048 · 255² < 2^28); they are stored as u64 for pass 2.
template <bool SQ>
__device__ __forceinline__ void tile_sums(const u8* __restrict__ src, u32 w, u32 h, u32 nt,
                                          u32* __restrict__ cols, u32* __restrict__ rows,
                                          u64* __restrict__ cols_sq, u64* __restrict__ rows_sq) {
    __shared__ __align__(16) u32 part[WARPS][INTEGRAL_TILE_W];
    __shared__ __align__(16) u32 part_sq[SQ ? WARPS : 1][INTEGRAL_TILE_W];
    __shared__ u32 tot[WARPS], tot_sq[WARPS];
    const u32 t = blockIdx.x, b = blockIdx.y;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 x0 = t * INTEGRAL_TILE_W + 4 * lane;
    const bool aligned = (w & 3) == 0;
    u32 cs[4] = {0, 0, 0, 0}, cq[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < INTEGRAL_TILE_H / WARPS; ++k) {
        const u32 y = b * INTEGRAL_TILE_H + warp + WARPS * k;
        u32 v[4];
        load4(src, w, h, y, x0, aligned, v);
        u32 rs = 0, rq = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            cs[j] += v[j];
            rs += v[j];
            if (SQ) {
                cq[j] += v[j] * v[j];
                rq += v[j] * v[j];
            }
        }
        rs = warp_sum(rs);
        if (SQ) rq = warp_sum(rq);
        if (lane == 0 && y < h) {
            rows[(size_t)y * nt + t] = rs;
            if (SQ) rows_sq[(size_t)y * nt + t] = rq;
        }
    }
    *(uint4*)&part[warp][4 * lane] = make_uint4(cs[0], cs[1], cs[2], cs[3]);
    if (SQ) *(uint4*)&part_sq[warp][4 * lane] = make_uint4(cq[0], cq[1], cq[2], cq[3]);
    __syncthreads();
    const u32 x = threadIdx.x, gx = t * INTEGRAL_TILE_W + x;
    const size_t stride = (size_t)w + nt;
    u32 c = 0, q = 0;
#pragma unroll
    for (int i = 0; i < WARPS; ++i) {
        c += part[i][x];
        if (SQ) q += part_sq[i][x];
    }
    if (gx < w) {
        cols[b * stride + gx] = c;
        if (SQ) cols_sq[b * stride + gx] = q;
    }
    c = warp_sum(c);
    if (SQ) q = warp_sum(q);
    if (lane == 0) {
        tot[warp] = c;
        tot_sq[warp] = q;
    }
    __syncthreads();
    if (x == 0) {
        u32 s = 0, sq = 0;
#pragma unroll
        for (int i = 0; i < WARPS; ++i) {
            s += tot[i];
            sq += tot_sq[i];
        }
        cols[b * stride + w + t] = s;
        if (SQ) cols_sq[b * stride + w + t] = sq;
    }
}

// Pass 2; block (32, INTEGRAL_SCAN_GROUPS), grid ceil((W + nt) / 32): each column of
// `cols` scanned down its nb bands, each group of threads taking a run of
// bands: the runs' totals, their exclusive scan in shared memory, then each
// run rewritten from its start.

template <bool SQ>
__device__ __forceinline__ void band_scan(u32 ncols, u32 nb, u32* __restrict__ cols,
                                          u64* __restrict__ cols_sq) {
    __shared__ u32 tot[INTEGRAL_SCAN_GROUPS][32];
    __shared__ u64 tot_sq[SQ ? INTEGRAL_SCAN_GROUPS : 1][32];
    const u32 x = threadIdx.x, g = threadIdx.y, col = blockIdx.x * 32 + x;
    const u32 per = (nb + INTEGRAL_SCAN_GROUPS - 1) / INTEGRAL_SCAN_GROUPS;
    const u32 b0 = min(nb, g * per), b1 = min(nb, b0 + per);
    u32 s = 0;
    u64 q = 0;
    if (col < ncols) {
        for (u32 b = b0; b < b1; ++b) {
            s += cols[(size_t)b * ncols + col];
            if (SQ) q += cols_sq[(size_t)b * ncols + col];
        }
    }
    tot[g][x] = s;
    if (SQ) tot_sq[g][x] = q;
    __syncthreads();
    s = 0;
    q = 0;
    for (u32 i = 0; i < g; ++i) {
        s += tot[i][x];
        if (SQ) q += tot_sq[i][x];
    }
    if (col >= ncols) return;
    for (u32 b = b0; b < b1; ++b) {
        const size_t k = (size_t)b * ncols + col;
        const u32 v = cols[k];
        cols[k] = s;
        s += v;
        if (SQ) {
            const u64 vq = cols_sq[k];
            cols_sq[k] = q;
            q += vq;
        }
    }
}

// Pass 3; grid (nt, nb).
template <bool SQ>
__device__ __forceinline__ void tiles(const u8* __restrict__ src, u32 w, u32 h, u32 nt,
                                      const u32* __restrict__ cols, const u32* __restrict__ rows,
                                      const u64* __restrict__ cols_sq,
                                      const u64* __restrict__ rows_sq, u32* __restrict__ sum,
                                      u64* __restrict__ sq) {
    // Each row's prefix sums over the tile, from the row's sum left of it.
    __shared__ __align__(16) u32 pre[INTEGRAL_TILE_H][INTEGRAL_TILE_W];
    __shared__ __align__(16) u64 pre_sq[SQ ? INTEGRAL_TILE_H : 1][INTEGRAL_TILE_W];
    __shared__ u32 edge[WARPS];
    __shared__ u64 edge_sq[WARPS];
    __shared__ u32 corner;
    __shared__ u64 corner_sq;
    const u32 t = blockIdx.x, b = blockIdx.y;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 x0 = t * INTEGRAL_TILE_W + 4 * lane;
    const bool aligned = (w & 3) == 0;
#pragma unroll
    for (int k = 0; k < INTEGRAL_TILE_H / WARPS; ++k) {
        const u32 r = warp + WARPS * k, y = b * INTEGRAL_TILE_H + r;
        u32 v[4];
        load4(src, w, h, y, x0, aligned, v);
        u32 left = 0;
        u64 left_sq = 0;
        if (y < h) {
            for (u32 i = lane; i < t; i += 32) {
                left += rows[(size_t)y * nt + i];
                if (SQ) left_sq += rows_sq[(size_t)y * nt + i];
            }
        }
        left = warp_sum(left);
        u32 p[4], pq[4];
        p[0] = v[0];
        pq[0] = v[0] * v[0];
#pragma unroll
        for (int j = 1; j < 4; ++j) {
            p[j] = p[j - 1] + v[j];
            pq[j] = pq[j - 1] + v[j] * v[j];
        }
        const u32 before = warp_inclusive_scan(p[3], lane) - p[3] + left;
        *(uint4*)&pre[r][4 * lane] =
            make_uint4(before + p[0], before + p[1], before + p[2], before + p[3]);
        if (SQ) {
            // A row's squares over the tile fit u32 (128 · 255² < 2^23).
            left_sq = warp_sum(left_sq);
            const u64 before_sq = warp_inclusive_scan(pq[3], lane) - pq[3] + left_sq;
            *(ulonglong2*)&pre_sq[r][4 * lane] =
                make_ulonglong2(before_sq + pq[0], before_sq + pq[1]);
            *(ulonglong2*)&pre_sq[r][4 * lane + 2] =
                make_ulonglong2(before_sq + pq[2], before_sq + pq[3]);
        }
    }
    // The table row above the band over this tile: the corner (everything
    // above the band and left of the tile), then the sums of the columns
    // above the band, scanned along the tile.
    const u32 x = threadIdx.x, gx = t * INTEGRAL_TILE_W + x;
    const size_t stride = (size_t)w + nt;
    const u32 above = gx < w ? cols[b * stride + gx] : 0;
    const u32 above_scan = warp_inclusive_scan(above, lane);
    u64 above_scan_sq = 0;
    if (SQ) above_scan_sq = warp_inclusive_scan(gx < w ? cols_sq[b * stride + gx] : 0ull, lane);
    if (lane == 31) {
        edge[warp] = above_scan;
        edge_sq[warp] = above_scan_sq;
    }
    if (warp == 0) {
        u32 c = 0;
        u64 cq = 0;
        for (u32 i = lane; i < t; i += 32) {
            c += cols[b * stride + w + i];
            if (SQ) cq += cols_sq[b * stride + w + i];
        }
        c = warp_sum(c);
        if (SQ) cq = warp_sum(cq);
        if (lane == 0) {
            corner = c;
            corner_sq = cq;
        }
    }
    __syncthreads();
    u32 run = corner + above_scan;
    u64 run_sq = corner_sq + above_scan_sq;
    for (u32 i = 0; i < warp; ++i) {
        run += edge[i];
        if (SQ) run_sq += edge_sq[i];
    }
    // Down the band: each table cell once, rows coalesced.
    const size_t tw = (size_t)w + 1;
    if (gx < w) {
        if (b == 0) {
            sum[gx + 1] = 0;
            if (SQ) sq[gx + 1] = 0;
        }
        for (u32 r = 0; r < INTEGRAL_TILE_H; ++r) {
            const u32 y = b * INTEGRAL_TILE_H + r;
            if (y >= h) break;
            const size_t k = (y + 1) * tw + gx + 1;
            run += pre[r][x];
            sum[k] = run;
            if (SQ) {
                run_sq += pre_sq[r][x];
                sq[k] = run_sq;
            }
        }
    }
    // The zero first column of the band's rows, and the corner cell.
    if (t == 0 && x <= INTEGRAL_TILE_H) {
        const u32 y = b * INTEGRAL_TILE_H + x;  // table row y (x = 0: the row above, for b = 0 only)
        if ((x > 0 || b == 0) && y <= h) {
            sum[y * tw] = 0;
            if (SQ) sq[y * tw] = 0;
        }
    }
}

extern "C" __global__ void __launch_bounds__(INTEGRAL_THREADS)
    integral_tile_sums(const u8* __restrict__ src, u32 w, u32 h, u32 nt, u32* __restrict__ cols,
                       u32* __restrict__ rows) {
    tile_sums<false>(src, w, h, nt, cols, rows, nullptr, nullptr);
}

extern "C" __global__ void __launch_bounds__(INTEGRAL_THREADS)
    integral_tile_sums_sq(const u8* __restrict__ src, u32 w, u32 h, u32 nt,
                          u32* __restrict__ cols, u32* __restrict__ rows,
                          u64* __restrict__ cols_sq, u64* __restrict__ rows_sq) {
    tile_sums<true>(src, w, h, nt, cols, rows, cols_sq, rows_sq);
}

extern "C" __global__ void integral_band_scan(u32 ncols, u32 nb, u32* __restrict__ cols) {
    band_scan<false>(ncols, nb, cols, nullptr);
}

extern "C" __global__ void integral_band_scan_sq(u32 ncols, u32 nb, u32* __restrict__ cols,
                                                 u64* __restrict__ cols_sq) {
    band_scan<true>(ncols, nb, cols, cols_sq);
}

extern "C" __global__ void __launch_bounds__(INTEGRAL_THREADS)
    integral_tiles(const u8* __restrict__ src, u32 w, u32 h, u32 nt,
                   const u32* __restrict__ cols, const u32* __restrict__ rows,
                   u32* __restrict__ sum) {
    tiles<false>(src, w, h, nt, cols, rows, nullptr, nullptr, sum, nullptr);
}

extern "C" __global__ void __launch_bounds__(INTEGRAL_THREADS)
    integral_tiles_sq(const u8* __restrict__ src, u32 w, u32 h, u32 nt,
                      const u32* __restrict__ cols, const u32* __restrict__ rows,
                      const u64* __restrict__ cols_sq, const u64* __restrict__ rows_sq,
                      u32* __restrict__ sum, u64* __restrict__ sq) {
    tiles<true>(src, w, h, nt, cols, rows, cols_sq, rows_sq, sum, sq);
}

// The `integral` op's picture, one thread a pixel (block 32×8): the u32 table
// scaled to round(255·I(x+1, y+1)/I(W, H)) in f64 (0 where the total is 0),
// the CPU's integral_view operation for operation.
extern "C" __global__ void integral_view(const u32* __restrict__ sum, u32 w, u32 h,
                                         u8* __restrict__ out) {
    const u32 x = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const size_t tw = (size_t)w + 1;
    const u32 total = sum[h * tw + w];
    u8 v = 0;
    if (total != 0) {
        // round() is half away from zero like Rust's; the min is the CPU's
        // saturating cast (a wrapped table can exceed its total).
        const double r = round(255.0 * (double)sum[(y + 1) * tw + x + 1] / (double)total);
        v = (u8)fmin(r, 255.0);
    }
    out[(size_t)y * w + x] = v;
}
