// retarget, fast mode: the steps of src/ops/retarget/{motion,passes,
// temporal,fast}.rs (which explain them) that exact mode's kernels
// (retarget.cu) do not already do; src/cuda/ops/retarget/fast.rs drives
// them. Planes keep a fixed row pitch (elements) while their width changes;
// every step is integer, so the frames are the CPU's.
#include "common.cuh"
// MASK_*, PROTECT_COST, REMOVE_BONUS, BAND_OUT, FLAT, STILL, MOTION_*,
// STACKED_*, CHOOSE_THREADS, MS_LEVEL_X and MS_WORDS: from the Rust code.
#include "shared.cuh"

typedef long long i64;
typedef signed char i8;
typedef unsigned short u16;

// Rows of the band DP whose costs are fetched before their steps (a
// divisor of 32).
#define BAND_AHEAD 8

// The words of the motion state, shared by the kernels of one frame
// (MS_WORDS of them): MS_LEVEL_X + 2·l and MS_LEVEL_X + 2·l + 1 hold level
// l's answer; then the cut test's Σ|cur − last| and its number of grid
// points.
#define MS_DIFF 8
#define MS_POINTS 9
static_assert(MS_LEVEL_X + 6 <= MS_DIFF && MS_POINTS < MS_WORDS, "the motion state's words");

// A vote that is no vote.
#define NO_VOTE 0x7FFFFFFF

__device__ __forceinline__ i64 mask_cost(u8 m) {
    i8 v = (i8)m;
    return v == MASK_PROTECT ? PROTECT_COST : (v == MASK_REMOVE ? -REMOVE_BONUS : 0);
}

// ------------------------------------------------------------ global shift

// Luma summed over f×f cells (the last partial cells dropped): out is
// (w/f)×(h/f), packed. One thread a cell.
extern "C" __global__ void cell_sums(const u8* __restrict__ luma, u32 pitch, u32 w, u32 h, u32 f,
                                     u16* __restrict__ out) {
    u32 cw = w / f, ch = h / f;
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cw || y >= ch) return;
    u32 s = 0;
    for (u32 j = 0; j < f; ++j) {
        const u8* row = luma + (size_t)(y * f + j) * pitch + x * f;
        for (u32 i = 0; i < f; ++i) s += row[i];
    }
    out[(size_t)y * cw + x] = (u16)s;
}

// Whether a is the better of two equally good offsets (nearer in
// motion.rs): the smaller |x| + |y|, then the smaller (y, x).
__device__ __forceinline__ bool nearer(int ax, int ay, int bx, int by) {
    int na = abs(ax) + abs(ay), nb = abs(bx) + abs(by);
    return na < nb || (na == nb && (ay < by || (ay == by && ax < bx)));
}

// One block of 8×8 samples (vote in motion.rs): the block at (bx·step,
// by·step) blocks of `cur` finds its offset within centre ± r against
// `prev` (both cw×ch, packed). votes[block] = the offset packed as
// (x + 1024) | (y + 1024) << 16, or NO_VOTE. The centre is state's level
// `level - 1` answer doubled (level 0: no motion). One block of 256 threads
// a block of samples, a thread a candidate offset.
extern "C" __global__ void shift_vote(const u16* __restrict__ prev, const u16* __restrict__ cur,
                                      u32 cw, u32 ch, u32 step, int r, u32 unit, u32 level,
                                      const int* __restrict__ state, int* __restrict__ votes) {
    __shared__ u16 block[64];
    __shared__ u32 best_sad[256], worst_sad[256];
    __shared__ int best_at[256];
    __shared__ u32 still_sad;
    const u32 bs = 8;
    u32 bw = cw / bs, bh = ch / bs;
    u32 nbx = (bw + step - 1) / step;
    u32 b = blockIdx.x;
    u32 bx = (b % nbx) * step, by = (b / nbx) * step;
    int cx = 0, cy = 0;
    if (level > 0) {
        cx = 2 * state[MS_LEVEL_X + 2 * (level - 1)];
        cy = 2 * state[MS_LEVEL_X + 2 * (level - 1) + 1];
    }
    int x0 = bx * bs, y0 = by * bs;
    if (threadIdx.x < 64) block[threadIdx.x] = cur[(size_t)(y0 + threadIdx.x / 8) * cw + x0 + threadIdx.x % 8];
    if (threadIdx.x == 0) still_sad = 0xFFFFFFFFu;
    __syncthreads();
    int side = 2 * r + 1;
    u32 mine = 0xFFFFFFFFu, worst = 0;
    int at = NO_VOTE;
    for (int c = threadIdx.x; c < side * side; c += blockDim.x) {
        int sx = cx - r + c % side, sy = cy - r + c / side;
        int px = x0 - sx, py = y0 - sy;
        if (px < 0 || py < 0 || px + 8 > (int)cw || py + 8 > (int)ch) continue;
        u32 sad = 0;
        for (int j = 0; j < 8; ++j) {
            const u16* p = prev + (size_t)(py + j) * cw + px;
            for (int i = 0; i < 8; ++i) sad += abs((int)block[j * 8 + i] - (int)p[i]);
        }
        if (sx == 0 && sy == 0) still_sad = sad;
        worst = max(worst, sad);
        int ax = at == NO_VOTE ? 0 : (at & 0xFFFF) - 1024, ay = at == NO_VOTE ? 0 : (at >> 16) - 1024;
        if (at == NO_VOTE || sad < mine || (sad == mine && nearer(sx, sy, ax, ay))) {
            mine = sad;
            at = (sx + 1024) | ((sy + 1024) << 16);
        }
    }
    best_sad[threadIdx.x] = mine;
    worst_sad[threadIdx.x] = worst;
    best_at[threadIdx.x] = at;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            u32 o = threadIdx.x + s;
            worst_sad[threadIdx.x] = max(worst_sad[threadIdx.x], worst_sad[o]);
            int a = best_at[threadIdx.x], bo = best_at[o];
            if (bo != NO_VOTE) {
                bool take = a == NO_VOTE || best_sad[o] < best_sad[threadIdx.x];
                if (!take && best_sad[o] == best_sad[threadIdx.x])
                    take = nearer((bo & 0xFFFF) - 1024, (bo >> 16) - 1024, (a & 0xFFFF) - 1024,
                                  (a >> 16) - 1024);
                if (take) {
                    best_sad[threadIdx.x] = best_sad[o];
                    best_at[threadIdx.x] = bo;
                }
            }
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    int v = NO_VOTE;
    if (best_at[0] != NO_VOTE) {
        u32 n = bs * bs * unit, best = best_sad[0];
        if (worst_sad[0] - best >= FLAT * n) {
            v = best_at[0];
            if (still_sad != 0xFFFFFFFFu && still_sad - best < STILL * n) v = 1024 | (1024 << 16);
        }
    }
    votes[b] = v;
}

// The most common of `n` votes (see motion.rs): state's level answer is it
// when at least a third of the voters cast it, else the centre (level 0: no
// motion). One block.
extern "C" __global__ void shift_mode(const int* __restrict__ votes, u32 n, int r, u32 level,
                                      int* __restrict__ state) {
    __shared__ u32 counts[33 * 33];
    int cx = 0, cy = 0;
    if (level > 0) {
        cx = 2 * state[MS_LEVEL_X + 2 * (level - 1)];
        cy = 2 * state[MS_LEVEL_X + 2 * (level - 1) + 1];
    }
    int side = 2 * r + 1;
    for (int i = threadIdx.x; i < side * side; i += blockDim.x) counts[i] = 0;
    __syncthreads();
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
        int v = votes[i];
        if (v == NO_VOTE) continue;
        int vx = (v & 0xFFFF) - 1024, vy = (v >> 16) - 1024;
        atomicAdd(&counts[(vy - cy + r) * side + (vx - cx + r)], 1u);
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    u32 voters = 0, best = 0;
    int bx = 0, by = 0;
    bool any = false;
    for (int i = 0; i < side * side; ++i) {
        u32 c = counts[i];
        voters += c;
        if (c == 0) continue;
        int vx = cx - r + i % side, vy = cy - r + i / side;
        if (!any || c > best || (c == best && nearer(vx, vy, bx, by))) {
            best = c;
            bx = vx;
            by = vy;
            any = true;
        }
    }
    if (!any || 3 * best < voters) {
        bx = cx;
        by = cy;
    }
    state[MS_LEVEL_X + 2 * level] = bx;
    state[MS_LEVEL_X + 2 * level + 1] = by;
}

// The cut test's sums (is_cut in fast.rs): Σ|cur − last moved by the
// shift| and the number of grid points of every 8th pixel whose source is
// inside. One thread a grid point.
extern "C" __global__ void cut_sums(const u8* __restrict__ cur, const u8* __restrict__ last,
                                    u32 w, u32 h, int* __restrict__ state_i,
                                    u64* __restrict__ sums) {
    u32 gw = (w + 7) / 8;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    int sx = state_i[MS_LEVEL_X + 4], sy = state_i[MS_LEVEL_X + 5];
    u32 d = 0, n = 0;
    if (i < (u64)gw * ((h + 7) / 8)) {
        int x = (i % gw) * 8, y = (i / gw) * 8;
        int px = x - sx, py = y - sy;
        if (px >= 0 && py >= 0 && px < (int)w && py < (int)h) {
            d = abs((int)cur[(size_t)y * w + x] - (int)last[(size_t)py * w + px]);
            n = 1;
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        d += __shfl_down_sync(0xFFFFFFFFu, d, off);
        n += __shfl_down_sync(0xFFFFFFFFu, n, off);
    }
    if ((threadIdx.x & 31) == 0) {
        if (d) atomicAdd(&sums[0], (u64)d);
        if (n) atomicAdd(&sums[1], (u64)n);
    }
}

// ------------------------------------------------------------ motion map

// What moved in each 4×4 cell (partial cells included): the largest
// (|cur − last moved by (sx, sy)| − noise)⁺, at most `cap` (MOTION_CAP);
// `moved` counts the cells that moved. One thread a cell.
extern "C" __global__ void motion_cells(const u8* __restrict__ cur, const u8* __restrict__ last,
                                        u32 w, u32 h, int sx, int sy, u32 noise, u32 cap,
                                        u16* __restrict__ cells, u32* __restrict__ moved) {
    u32 cw = (w + 3) / 4, ch = (h + 3) / 4;
    u32 cx = blockIdx.x * blockDim.x + threadIdx.x, cy = blockIdx.y * blockDim.y + threadIdx.y;
    if (cx >= cw || cy >= ch) return;
    u32 m = 0;
    for (u32 y = cy * 4; y < min(cy * 4 + 4, h); ++y) {
        int py = (int)y - sy;
        if (py < 0 || py >= (int)h) continue;
        for (u32 x = cx * 4; x < min(cx * 4 + 4, w); ++x) {
            int px = (int)x - sx;
            if (px < 0 || px >= (int)w) continue;
            u32 d = abs((int)cur[(size_t)y * w + x] - (int)last[(size_t)py * w + px]);
            m = max(m, d > noise ? d - noise : 0);
        }
    }
    cells[(size_t)cy * cw + cx] = (u16)min(m, cap);
    if (m) atomicAdd(moved, 1u);
}

// The shot's running mean of the moving share (running_moving, 1/65536)
// and the share of the motion weight that applies (motion_share: clamp(hi
// − mean, 0, hi − lo) / (hi − lo)), from this frame's count of moved
// cells; `first` starts the mean. One thread.
extern "C" __global__ void motion_share(const u32* __restrict__ moved, u32 cells, int first,
                                        u32 lo, u32 hi, u32* __restrict__ moving,
                                        i64* __restrict__ share) {
    u32 now = (u32)((u64)moved[0] * 65536 / max(cells, 1u));
    u32 m = first ? now : (31 * moving[0] + now) / 32;
    moving[0] = m;
    i64 span = (i64)hi - (i64)lo;
    i64 num = (i64)hi - (i64)m;
    share[0] = num < 0 ? 0 : (num > span ? span : num);
    share[1] = span;
}

// The largest of each row's cells within r (grow's first half).
extern "C" __global__ void motion_grow_rows(const u16* __restrict__ src, u16* __restrict__ dst,
                                            u32 cw, u32 ch, u32 r) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cw || y >= ch) return;
    u32 lo = x > r ? x - r : 0, hi = min(x + r + 1, cw);
    u16 m = 0;
    for (u32 i = lo; i < hi; ++i) m = max(m, src[(size_t)y * cw + i]);
    dst[(size_t)y * cw + x] = m;
}

// The largest within r down the columns, then the memory: the larger of
// that and 12/16 of the old value when `keep`, else that alone.
extern "C" __global__ void motion_grow_cols(const u16* __restrict__ src, u16* __restrict__ memory,
                                            u32 cw, u32 ch, u32 r, int keep) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cw || y >= ch) return;
    u32 lo = y > r ? y - r : 0, hi = min(y + r + 1, ch);
    u16 m = 0;
    for (u32 j = lo; j < hi; ++j) m = max(m, src[(size_t)j * cw + x]);
    size_t at = (size_t)y * cw + x;
    if (keep) m = max(m, (u16)((u32)memory[at] * MOTION_KEEP / 16));
    memory[at] = m;
}

// The map at full resolution into a plane of `pitch` (zero when `valid` is
// 0: no memory yet).
extern "C" __global__ void motion_pixels(const u16* __restrict__ cells, u32 w, u32 h, u32 pitch,
                                         int valid, u16* __restrict__ out) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    u32 cw = (w + 3) / 4;
    out[(size_t)y * pitch + x] = valid ? cells[(size_t)(y / 4) * cw + x / 4] : 0;
}

// ------------------------------------------------------------ following

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

// G of gradient_sums: out[y][x] = Σ_{i<x} |L(i+1) − L(i)| for x < w, and
// out[y][w] = out[y][w − 1]. One block a row.
extern "C" __global__ void gradient_sums(const u8* __restrict__ luma, u32 pitch, u32 w,
                                         u32* __restrict__ out, u32 opitch) {
    const u8* row = luma + (size_t)blockIdx.x * pitch;
    u32* o = out + (size_t)blockIdx.x * opitch;
    u32 carry = 0;
    for (u32 base = 0; base < w; base += blockDim.x) {
        u32 x = base + threadIdx.x;
        u32 v = x + 1 < w ? abs((int)row[x + 1] - (int)row[x]) : 0;
        u32 total;
        u32 before = block_exclusive_sum(x < w ? v : 0, total);
        if (x < w) o[x] = carry + before;
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) o[w] = w ? o[w - 1] : 0;
}

// Whether a follow moved any seam: flag[0] becomes 1 where the new
// seams `a` differ from the old `b` (n of each).
extern "C" __global__ void seams_differ(const u32* __restrict__ a, const u32* __restrict__ b,
                                        u32 n, u32* __restrict__ flag) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n && a[t] != b[t]) flag[0] = 1;
}

// The costs of every seam's band DP (band_dp in temporal.rs), one warp a
// seam and row: lane j holds column c(y) − B + j of row y, c(y) the last
// frame's seam moved by (sx, sy). `own` gets each cell's cost, `fwd` its
// forward terms (the straight, left and right step's, 10 bits each) and in
// bit 31 whether the cell is in the frame; `centres` each row's c(y). Apart
// from the DP's chain of rows, these are all of its reads, made here in
// parallel over every row, so that the chain reads one coalesced line a row.
extern "C" __global__ void band_costs(const u32* __restrict__ seams, u32 k, int sx, int sy,
                                      const u8* __restrict__ luma,
                                      const u32* __restrict__ energy,
                                      const u16* __restrict__ motion, const u8* __restrict__ mask,
                                      u32 pitch, const u32* __restrict__ grad, u32 gpitch, u32 w,
                                      u32 h, int band, int forward, i64 per_level,
                                      i64 per_level_div, i64 motion_num, i64 motion_den,
                                      const i64* __restrict__ share, i64* __restrict__ own,
                                      u32* __restrict__ fwd, u32* __restrict__ centres) {
    const u32 lane = threadIdx.x & 31;
    const size_t g = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (g >= (size_t)k * h) return;
    const u32 i = (u32)(g / h);
    const int y = (int)(g % h);
    const int bw = 2 * band + 1;
    const int j = (int)lane;
    if (motion) {
        motion_num *= share[0];
        motion_den *= share[1];
    }
    int from = min(max(y - sy, 0), (int)h - 1);
    int cy = min(max((int)seams[(size_t)from * k + i] + sx, 0), (int)w - 1);
    int x = cy - band + j;
    bool valid = j < bw && x >= 0 && x < (int)w;
    i64 o = 0;
    u32 sc = 0, sl = 0, sr = 0;
    if (valid) {
        const u32* gr = grad + (size_t)y * gpitch;
        size_t at = (size_t)y * pitch + x;
        if (energy) o += energy[at];
        if (motion) o += (i64)motion[at] * motion_num / motion_den;
        if (mask) o += mask_cost(mask[at]);
        i64 dg = (i64)gr[x] - (i64)gr[cy];
        o += per_level * (dg < 0 ? -dg : dg) / per_level_div + abs(x - cy);
        if (forward) {
            const u8* row = luma + (size_t)y * pitch;
            int l = row[max(x - 1, 0)], r = row[min(x + 1, (int)w - 1)];
            u32 up = (u32)(l > r ? l - r : r - l);
            sc = sl = sr = up;
            if (y + 1 < (int)h) {
                int d = luma[(size_t)(y + 1) * pitch + x];
                sl += (u32)(d > l ? d - l : l - d);
                sr += (u32)(d > r ? d - r : r - d);
            }
        }
    }
    own[g * 32 + lane] = o;
    fwd[g * 32 + lane] = sc | (sl << 10) | (sr << 20) | ((u32)valid << 31);
    if (lane == 0) centres[g] = (u32)cy;
}

// Every seam's band DP over the costs of band_costs, one warp a seam: back
// gets, a row a seam, the lanes that stepped left and right; then the warp
// walks the steps down and writes the path into paths[y·k + i]. The costs
// of BAND_AHEAD rows are read before their steps, so that those loads are
// in flight together.
extern "C" __global__ void band_dp(u32 k, u32 w, u32 h, int band,
                                   const i64* __restrict__ own, const u32* __restrict__ fwd,
                                   u64* __restrict__ back, const u32* __restrict__ centres,
                                   u32* __restrict__ paths) {
    const u32 lane = threadIdx.x & 31;
    const u32 i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (i >= k) return;
    const int bw = 2 * band + 1;
    const int j = (int)lane;
    i64 next = BAND_OUT;
    int cn = 0;
    u64* myback = back + (size_t)i * h;
    const u32* mycentres = centres + (size_t)i * h;
    const i64* myown = own + (size_t)i * h * 32;
    const u32* myfwd = fwd + (size_t)i * h * 32;
    for (int y0 = (int)h - 1; y0 >= 0; y0 -= 32) {
        int yl = y0 - j;
        int cl = yl >= 0 ? (int)mycentres[yl] : 0;
        for (int t0 = 0; t0 < 32 && y0 - t0 >= 0; t0 += BAND_AHEAD) {
            i64 os[BAND_AHEAD];
            u32 fs[BAND_AHEAD];
#pragma unroll
            for (int u = 0; u < BAND_AHEAD; ++u) {
                int y = y0 - t0 - u;
                os[u] = y >= 0 ? myown[(size_t)y * 32 + j] : 0;
                fs[u] = y >= 0 ? myfwd[(size_t)y * 32 + j] : 0;
            }
#pragma unroll
            for (int u = 0; u < BAND_AHEAD; ++u) {
                int y = y0 - t0 - u;
                if (y < 0) break;
                int cy = __shfl_sync(0xFFFFFFFFu, cl, (t0 + u) & 31);
                int x = cy - band + j;
                bool valid = (fs[u] >> 31) != 0;
                i64 sc = fs[u] & 1023, sl = (fs[u] >> 10) & 1023, sr = (fs[u] >> 20) & 1023;
                i64 cum;
                int step = 0;
                if (y == (int)h - 1) {
                    cum = valid ? os[u] + sc : BAND_OUT;
                } else {
                    // The row below's value at x + d, from the lane that holds it.
                    i64 v[3];
#pragma unroll
                    for (int d = -1; d <= 1; ++d) {
                        int jn = x + d - cn + band;
                        int src = min(max(jn, 0), 31);
                        i64 got = __shfl_sync(0xFFFFFFFFu, next, src);
                        bool ok = jn >= 0 && jn < bw && x + d >= 0 && x + d < (int)w;
                        v[d + 1] = ok ? got : BAND_OUT;
                    }
                    i64 best = v[1] + sc;
                    i64 left = v[0] + sl;
                    if (left < best) {
                        best = left;
                        step = -1;
                    }
                    i64 right = v[2] + sr;
                    if (right < best) {
                        best = right;
                        step = 1;
                    }
                    cum = (!valid || best >= BAND_OUT) ? BAND_OUT : best + os[u];
                    if (!valid) step = 0;
                }
                u32 lefts = __ballot_sync(0xFFFFFFFFu, step < 0);
                u32 rights = __ballot_sync(0xFFFFFFFFu, step > 0);
                if (lane == 0) myback[y] = (u64)lefts | ((u64)rights << 32);
                next = cum;
                cn = cy;
            }
        }
    }
    // The top row's least, ties to the smaller lane.
    i64 bv = (j < bw) ? next : BAND_OUT;
    int bj = j;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        i64 ov = __shfl_down_sync(0xFFFFFFFFu, bv, off);
        int oj = __shfl_down_sync(0xFFFFFFFFu, bj, off);
        if (ov < bv || (ov == bv && oj < bj)) {
            bv = ov;
            bj = oj;
        }
    }
    bv = __shfl_sync(0xFFFFFFFFu, bv, 0);
    bj = __shfl_sync(0xFFFFFFFFu, bj, 0);
    __syncwarp();
    // Walk down 32 rows at a time: each lane fetches one row's centre and
    // steps, then the column passes from lane to lane.
    int x = 0;
    bool keep_centre = bv >= BAND_OUT;
    for (u32 y0 = 0; y0 < h; y0 += 32) {
        u32 y = y0 + lane;
        u32 c = y < h ? mycentres[y] : 0;
        u64 bk = y < h ? myback[y] : 0;
        for (u32 t = 0; t < 32 && y0 + t < h; ++t) {
            int ct = __shfl_sync(0xFFFFFFFFu, (int)c, t);
            u64 bt = __shfl_sync(0xFFFFFFFFu, bk, t);
            if (y0 + t == 0) x = ct - band + bj;
            if (keep_centre) x = ct;
            if (lane == 0) paths[(size_t)(y0 + t) * k + i] = (u32)x;
            if (!keep_centre) {
                int jj = x - ct + band;
                x += ((bt >> jj) & 1) ? -1 : (((bt >> (32 + jj)) & 1) ? 1 : 0);
            }
        }
    }
}

// Each row's k values sorted (ranks by counting: the values before, and
// equal ones of lower index). One block a row.
extern "C" __global__ void sort_rows(const u32* __restrict__ src, u32 k, u32* __restrict__ dst) {
    __shared__ u32 tile[1024];
    const u32* row = src + (size_t)blockIdx.x * k;
    u32* out = dst + (size_t)blockIdx.x * k;
    for (u32 base_i = 0; base_i < k; base_i += blockDim.x) {
        u32 i = base_i + threadIdx.x;
        u32 v = i < k ? row[i] : 0;
        u32 rank = 0;
        for (u32 base = 0; base < k; base += 1024) {
            __syncthreads();
            for (u32 t = threadIdx.x; t < 1024 && base + t < k; t += blockDim.x)
                tile[t] = row[base + t];
            __syncthreads();
            u32 n = min(1024u, k - base);
            for (u32 t = 0; t < n; ++t) {
                u32 o = tile[t];
                rank += (o < v || (o == v && base + t < i)) ? 1 : 0;
            }
        }
        if (i < k) out[rank] = v;
    }
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

// Places one row's seams (place_seams in passes.rs): the k desired columns
// (non-decreasing), in the ranks of the unprotected columns when the row
// has at least k (else of all columns), spread apart (spread), back to
// columns. One block a row; `work` holds 3·k ints a row and `ranks`/`free`
// a pitch each (only with a mask).
extern "C" __global__ void place_seams(const u32* __restrict__ paths, u32 k,
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
                                         u8* dm, const u32* so, u32* dout, const u16* sv, u16* dv,
                                         const u32* cols, u32 k, u32 w, u32 h, u32 pitch) {
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
    if (sv) dv[to] = sv[from];
}

#define REMOVE_K(NAME, P)                                                                      \
    extern "C" __global__ void fast_remove_##NAME(                                             \
        const P* __restrict__ si, P* __restrict__ di, const u8* __restrict__ sl,               \
        u8* __restrict__ dl, const u8* __restrict__ sm, u8* __restrict__ dm,                   \
        const u32* __restrict__ so, u32* __restrict__ dout, const u16* __restrict__ sv,        \
        u16* __restrict__ dv, const u32* __restrict__ cols, u32 k, u32 w, u32 h, u32 pitch) {  \
        remove_k<P>(si, di, sl, dl, sm, dm, so, dout, sv, dv, cols, k, w, h, pitch);           \
    }
REMOVE_K(u8, u8)
REMOVE_K(u8x4, u32)

// ------------------------------------------------------------ passes

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

// The original columns of a pass's placed seams: removed[y·K + off + i] =
// origin[y][cols[y·k + i]]. One thread a seam pixel.
extern "C" __global__ void fast_remember(const u32* __restrict__ cols,
                                         const u32* __restrict__ origin, u32 k, u32 h, u32 pitch,
                                         u32* __restrict__ removed, u32 K, u32 off) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (i >= k || y >= h) return;
    u32 x = cols[(size_t)y * k + i];
    removed[(size_t)y * K + off + i] = origin[(size_t)y * pitch + x];
}

// origin[y][x] = x for a w×h plane.
extern "C" __global__ void fast_origin(u32* __restrict__ origin, u32 w, u32 h, u32 pitch) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) origin[(size_t)y * pitch + x] = x;
}

// ------------------------------------------------------------ the start

// prefer_stacked's sums for one placement, a row: the joins (Σ over runs
// of adjacent removed columns of |L(left) − L(right)|) and the removed
// detail (Σ of `detail` over removed pixels), into sums[y] and sums[h + y].
// One thread a row.
extern "C" __global__ void start_sums(const u8* __restrict__ luma, const u32* __restrict__ detail,
                                      u32 pitch, u32 w, u32 h, const u32* __restrict__ seams,
                                      u32 k, u64* __restrict__ sums) {
    u32 y = blockIdx.x * blockDim.x + threadIdx.x;
    if (y >= h) return;
    const u8* row = luma + (size_t)y * pitch;
    const u32* dt = detail + (size_t)y * pitch;
    const u32* c = seams + (size_t)y * k;
    u64 j = 0, r = 0;
    u32 i = 0;
    while (i < k) {
        u32 a = c[i];
        while (i + 1 < k && c[i + 1] == c[i] + 1) ++i;
        u32 b = c[i];
        if (a > 0 && b + 1 < w) j += abs((int)row[a - 1] - (int)row[b + 1]);
        for (u32 x = a; x <= b; ++x) r += dt[x];
        ++i;
    }
    sums[y] = j;
    sums[h + y] = r;
}

// Chooses between the two placements (prefer_stacked: 20·J < 13·J' and
// 10·R < 14·R') from the rows' sums (stacked's, then fine's), and copies
// the winner into `out` (n values). One block.
extern "C" __global__ void __launch_bounds__(CHOOSE_THREADS) start_choose(const u64* __restrict__ sums, u32 h,
                                        const u32* __restrict__ stacked,
                                        const u32* __restrict__ fine, u32 n, u32* __restrict__ out) {
    __shared__ u64 part[4][CHOOSE_THREADS];
    __shared__ int take_stacked;
    u64 s[4] = {0, 0, 0, 0};
    for (u32 y = threadIdx.x; y < h; y += blockDim.x)
        for (int q = 0; q < 4; ++q) s[q] += sums[(size_t)q * h + y];
    for (int q = 0; q < 4; ++q) part[q][threadIdx.x] = s[q];
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st)
            for (int q = 0; q < 4; ++q) part[q][threadIdx.x] += part[q][threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        u64 js = part[0][0], rs = part[1][0], jf = part[2][0], rf = part[3][0];
        take_stacked = STACKED_JOINS_DEN * js < STACKED_JOINS_NUM * jf &&
                       STACKED_DETAIL_DEN * rs < STACKED_DETAIL_NUM * rf;
    }
    __syncthreads();
    const u32* src = take_stacked ? stacked : fine;
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) out[i] = src[i];
}

// ------------------------------------------------------------ enlarging

// chosen[y][x] = whether x is one of row y's k seams, for the w columns.
extern "C" __global__ void chosen_from_seams(const u32* __restrict__ seams, u32 k, u32 w, u32 h,
                                             u32 pitch, u8* __restrict__ chosen) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    bool hit;
    below(seams + (size_t)y * k, k, x, hit);
    chosen[(size_t)y * pitch + x] = hit;
}

// Copies each row of a u16 plane w wide, repeating every chosen pixel
// (repeat_chosen in fast.rs). One block a row.
extern "C" __global__ void repeat_chosen_u16(const u16* __restrict__ src, u16* __restrict__ dst,
                                             const u8* __restrict__ chosen, u32 w, u32 pitch) {
    const size_t row = (size_t)blockIdx.x * pitch;
    u32 before = 0;
    for (u32 base = 0; base < w; base += blockDim.x) {
        u32 x = base + threadIdx.x;
        u32 c = x < w ? chosen[row + x] : 0;
        u32 total;
        u32 at = block_exclusive_sum(c, total);
        if (x < w) {
            size_t o = row + x + before + at;
            dst[o] = src[row + x];
            if (c) dst[o + 1] = src[row + x];
        }
        before += total;
        __syncthreads();
    }
}
