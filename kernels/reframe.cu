// reframe: the window to the output (src/ops/reframe/render.rs defines
// every sum), and the analysis thumbnails (src/ops/reframe/analyze.rs).
// Frames are packed rows of C bytes a pixel (C = 4 RGBA, 1 gray).

#include "common.cuh"

typedef unsigned short u16;

// The weights' bits and the row pass's dropped bits (render.rs).
#define WEIGHT_BITS 14
#define MID_SHIFT 6

// Thumbnail: box means of f×f, (Σ + f²/2) / f² per channel; a gray frame
// gives gray RGBA with opaque alpha (Thumbs::of). One thread a pixel.
template <int C>
__device__ void thumb(const u8* __restrict__ src, u32 w, u32 f, u8* __restrict__ dst, u32 tw,
                      u32 th) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= tw || y >= th) return;
    u32 s[4] = {0, 0, 0, 0};
    for (u32 dy = 0; dy < f; ++dy) {
        const u8* row = src + ((size_t)(y * f + dy) * w + x * f) * C;
        for (u32 dx = 0; dx < f; ++dx)
            for (int c = 0; c < C; ++c) s[c] += row[dx * C + c];
    }
    u32 n = f * f;
    u8* o = dst + ((size_t)y * tw + x) * 4;
    if (C == 4) {
        for (int c = 0; c < 4; ++c) o[c] = (u8)((s[c] + n / 2) / n);
    } else {
        u8 v = (u8)((s[0] + n / 2) / n);
        o[0] = v;
        o[1] = v;
        o[2] = v;
        o[3] = 255;
    }
}

extern "C" __global__ void thumb_u8x4(const u8* src, u32 w, u32 f, u8* dst, u32 tw, u32 th) {
    thumb<4>(src, w, f, dst, tw, th);
}
extern "C" __global__ void thumb_u8(const u8* src, u32 w, u32 f, u8* dst, u32 tw, u32 th) {
    thumb<1>(src, w, f, dst, tw, th);
}

// The face picture: each pixel's BT.709 luma (as luma_u8x4 in retarget.cu
// and color::luma), box means of f×f. One thread a pixel of the result.
template <int C>
__device__ void face_luma(const u8* __restrict__ src, u32 w, u32 f, u8* __restrict__ dst,
                          u32 fw, u32 fh, float kr, float kg, float kb) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= fw || y >= fh) return;
    u32 s = 0;
    for (u32 dy = 0; dy < f; ++dy) {
        const u8* row = src + ((size_t)(y * f + dy) * w + x * f) * C;
        for (u32 dx = 0; dx < f; ++dx) {
            if (C == 4) {
                const u8* p = row + dx * 4;
                float v = __fadd_rn(__fadd_rn(__fmul_rn(kr, (float)p[0]), __fmul_rn(kg, (float)p[1])),
                                    __fmul_rn(kb, (float)p[2]));
                s += saturate_u8(v);
            } else {
                s += row[dx];
            }
        }
    }
    u32 n = f * f;
    dst[(size_t)y * fw + x] = (u8)((s + n / 2) / n);
}

extern "C" __global__ void face_luma_u8x4(const u8* src, u32 w, u32 f, u8* dst, u32 fw, u32 fh,
                                          float kr, float kg, float kb) {
    face_luma<4>(src, w, f, dst, fw, fh, kr, kg, kb);
}
extern "C" __global__ void face_luma_u8(const u8* src, u32 w, u32 f, u8* dst, u32 fw, u32 fh,
                                        float kr, float kg, float kb) {
    face_luma<1>(src, w, f, dst, fw, fh, kr, kg, kb);
}

// The row pass of a resample: rows y0.. y0+rows of the source (stride sw
// pixels), from column x0, into `mid` (ow wide): (Σ w·p + 32) >> 6.
template <int C>
__device__ void rows_pass(const u8* __restrict__ src, u32 sw, u32 x0, u32 y0, u32 rows,
                          const u32* __restrict__ first, const u16* __restrict__ weights, u32 taps,
                          u16* __restrict__ mid, u32 ow) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= ow || y >= rows) return;
    const u8* row = src + ((size_t)(y0 + y) * sw + x0 + first[x]) * C;
    const u16* wt = weights + (size_t)x * taps;
    u32 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = 0;
    for (u32 k = 0; k < taps; ++k) {
        u32 wk = wt[k];
        for (int c = 0; c < C; ++c) acc[c] += wk * row[k * C + c];
    }
    u16* o = mid + ((size_t)y * ow + x) * C;
    for (int c = 0; c < C; ++c) o[c] = (u16)((acc[c] + (1u << (MID_SHIFT - 1))) >> MID_SHIFT);
}

extern "C" __global__ void rows_u8x4(const u8* src, u32 sw, u32 x0, u32 y0, u32 rows,
                                     const u32* first, const u16* weights, u32 taps, u16* mid,
                                     u32 ow) {
    rows_pass<4>(src, sw, x0, y0, rows, first, weights, taps, mid, ow);
}
extern "C" __global__ void rows_u8(const u8* src, u32 sw, u32 x0, u32 y0, u32 rows,
                                   const u32* first, const u16* weights, u32 taps, u16* mid,
                                   u32 ow) {
    rows_pass<1>(src, sw, x0, y0, rows, first, weights, taps, mid, ow);
}

// The column pass: `mid` (ow wide) to oh rows written at (ox, oy) of `dst`
// (stride dw pixels): min(255, (Σ w·m + 2²¹) >> 22); `darken`: colour
// channels at three quarters (the backdrop, render::darken).
template <int C>
__device__ void cols_pass(const u16* __restrict__ mid, u32 ow, const u32* __restrict__ first,
                          const u16* __restrict__ weights, u32 taps, u32 oh, u8* __restrict__ dst,
                          u32 dw, u32 ox, u32 oy, int darken) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= ow || y >= oh) return;
    const u16* wt = weights + (size_t)y * taps;
    const u16* col = mid + ((size_t)first[y] * ow + x) * C;
    u32 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = 0;
    for (u32 k = 0; k < taps; ++k) {
        u32 wk = wt[k];
        for (int c = 0; c < C; ++c) acc[c] += wk * col[(size_t)k * ow * C + c];
    }
    const u32 shift = 2 * WEIGHT_BITS - MID_SHIFT;
    u8* o = dst + ((size_t)(oy + y) * dw + ox + x) * C;
    for (int c = 0; c < C; ++c) {
        u32 v = (acc[c] + (1u << (shift - 1))) >> shift;
        v = v > 255 ? 255 : v;
        // The colour channels: all of gray, three of RGBA.
        if (darken && (C == 1 || c < 3)) v = (v * 3) >> 2;
        o[c] = (u8)v;
    }
}

extern "C" __global__ void cols_u8x4(const u16* mid, u32 ow, const u32* first,
                                     const u16* weights, u32 taps, u32 oh, u8* dst, u32 dw,
                                     u32 ox, u32 oy, int darken) {
    cols_pass<4>(mid, ow, first, weights, taps, oh, dst, dw, ox, oy, darken);
}
extern "C" __global__ void cols_u8(const u16* mid, u32 ow, const u32* first, const u16* weights,
                                   u32 taps, u32 oh, u8* dst, u32 dw, u32 ox, u32 oy,
                                   int darken) {
    cols_pass<1>(mid, ow, first, weights, taps, oh, dst, dw, ox, oy, darken);
}

// A w×h rectangle copied from (x0, y0) of `src` (stride sw) to (ox, oy) of
// `dst` (stride dw): a crop at full scale, or a carved picture into its
// padding.
template <int C>
__device__ void copy_rect(const u8* __restrict__ src, u32 sw, u32 x0, u32 y0, u32 w, u32 h,
                          u8* __restrict__ dst, u32 dw, u32 ox, u32 oy) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const u8* s = src + ((size_t)(y0 + y) * sw + x0 + x) * C;
    u8* d = dst + ((size_t)(oy + y) * dw + ox + x) * C;
    if (C == 4) {
        *(uchar4*)d = *(const uchar4*)s;
    } else {
        d[0] = s[0];
    }
}

extern "C" __global__ void copy_rect_u8x4(const u8* src, u32 sw, u32 x0, u32 y0, u32 w, u32 h,
                                          u8* dst, u32 dw, u32 ox, u32 oy) {
    copy_rect<4>(src, sw, x0, y0, w, h, dst, dw, ox, oy);
}
extern "C" __global__ void copy_rect_u8(const u8* src, u32 sw, u32 x0, u32 y0, u32 w, u32 h,
                                        u8* dst, u32 dw, u32 ox, u32 oy) {
    copy_rect<1>(src, sw, x0, y0, w, h, dst, dw, ox, oy);
}

// A box blur of radius r along rows (dir 0) or columns (dir 1), the edges
// repeated: (Σ + (2r+1)/2) / (2r+1) per channel (render::box_blur).
template <int C>
__device__ void blur(const u8* __restrict__ src, u8* __restrict__ dst, u32 w, u32 h, int r,
                     int dir) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (int)w || y >= (int)h) return;
    u32 s[C];
    for (int c = 0; c < C; ++c) s[c] = 0;
    for (int d = -r; d <= r; ++d) {
        int xx = dir == 0 ? min(max(x + d, 0), (int)w - 1) : x;
        int yy = dir == 1 ? min(max(y + d, 0), (int)h - 1) : y;
        const u8* p = src + ((size_t)yy * w + xx) * C;
        for (int c = 0; c < C; ++c) s[c] += p[c];
    }
    u32 n = 2 * r + 1;
    u8* o = dst + ((size_t)y * w + x) * C;
    for (int c = 0; c < C; ++c) o[c] = (u8)((s[c] + n / 2) / n);
}

extern "C" __global__ void blur_u8x4(const u8* src, u8* dst, u32 w, u32 h, int r, int dir) {
    blur<4>(src, dst, w, h, r, dir);
}
extern "C" __global__ void blur_u8(const u8* src, u8* dst, u32 w, u32 h, int r, int dir) {
    blur<1>(src, dst, w, h, r, dir);
}

// Every pixel of a w×h frame set to the first C bytes of `px` (bytes in
// memory order: R, G, B, A).
template <int C>
__device__ void fill(u8* __restrict__ dst, u32 w, u32 h, u32 px) {
    u32 x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    u8* d = dst + ((size_t)y * w + x) * C;
    for (int c = 0; c < C; ++c) d[c] = (u8)(px >> (8 * c));
}

extern "C" __global__ void fill_u8x4(u8* dst, u32 w, u32 h, u32 px) { fill<4>(dst, w, h, px); }
extern "C" __global__ void fill_u8(u8* dst, u32 w, u32 h, u32 px) { fill<1>(dst, w, h, px); }
