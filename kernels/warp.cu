// warp: affine and perspective warps (src/ops/warp.rs), one thread a
// destination pixel. The destination→source matrix comes inverted from the
// host; each thread evaluates it in f32 in the CPU's order (--fmad=false
// keeps every a*b + c unfused, and the divide is __fdiv_rn), floors and
// weighs as the CPU does and rounds with saturate_u8, so every tap, weight
// and output byte is the CPU's.
#include "common.cuh"

// Source points are clamped to ±COORD_LIMIT before sampling (as the CPU).
#define COORD_LIMIT 4194300.0f

#define NEAREST 0
#define BILINEAR 1
#define BICUBIC 2

// A pixel type's channels as floats, and a fill pixel from its packed bits
// (channel c in bits 8c..8c+8).
template <typename T> struct Pix;

template <> struct Pix<uchar4> {
    static constexpr int N = 4;
    __device__ static __forceinline__ float ch(uchar4 p, int c) {
        return u8f(c == 0 ? p.x : c == 1 ? p.y : c == 2 ? p.z : p.w);
    }
    __device__ static __forceinline__ uchar4 make(const u8* v) {
        return make_uchar4(v[0], v[1], v[2], v[3]);
    }
    __device__ static __forceinline__ uchar4 unpack(u32 b) {
        return make_uchar4(b & 255, (b >> 8) & 255, (b >> 16) & 255, b >> 24);
    }
};

template <> struct Pix<u8> {
    static constexpr int N = 1;
    __device__ static __forceinline__ float ch(u8 p, int) { return u8f(p); }
    __device__ static __forceinline__ u8 make(const u8* v) { return v[0]; }
    __device__ static __forceinline__ u8 unpack(u32 b) { return (u8)(b & 255); }
};

// The source with its border rule: outside taps read `fill` or the clamped
// coordinate. Reads go through the read-only cache.
template <typename T> struct Source {
    const T* __restrict__ data;
    int w, h;
    bool replicate;
    T fill;

    __device__ __forceinline__ T tap(int x, int y) const {
        if (x >= 0 && x < w && y >= 0 && y < h) return __ldg(data + (size_t)y * w + x);
        if (!replicate) return fill;
        x = min(max(x, 0), w - 1);
        y = min(max(y, 0), h - 1);
        return __ldg(data + (size_t)y * w + x);
    }
};

// fminf/fmaxf return the number when one side is NaN, as the CPU's clamp.
__device__ __forceinline__ float clamp_coord(float v) {
    return fminf(fmaxf(v, -COORD_LIMIT), COORD_LIMIT);
}

// OpenCV's interpolateCubic, A = −0.75, the CPU's cubic_weights operation
// for operation.
__device__ __forceinline__ void cubic_weights(float f, float w[4]) {
    const float A = -0.75f;
    float f1 = f + 1.0f, g = 1.0f - f;
    w[0] = ((A * f1 - 5.0f * A) * f1 + 8.0f * A) * f1 - 4.0f * A;
    w[1] = ((A + 2.0f) * f - (A + 3.0f)) * f * f + 1.0f;
    w[2] = ((A + 2.0f) * g - (A + 3.0f)) * g * g + 1.0f;
    w[3] = 1.0f - w[0] - w[1] - w[2];
}

struct Matrix {
    float m[9];
};

template <typename T, bool PERSPECTIVE, int INTERP>
__device__ __forceinline__ void warp_pixel(const T* __restrict__ src, int sw, int sh,
                                           T* __restrict__ dst, int dw, int dh, Matrix mat,
                                           int replicate, u32 fill_bits) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dw || y >= dh) return;
    const float* m = mat.m;
    float xf = (float)x, yf = (float)y;
    float sx, sy;
    bool none = sw == 0 || sh == 0;
    if (PERSPECTIVE) {
        float w = m[6] * xf + m[7] * yf + m[8];
        float nx = m[0] * xf + m[1] * yf + m[2];
        float ny = m[3] * xf + m[4] * yf + m[5];
        none |= w == 0.0f;
        sx = __fdiv_rn(nx, w);
        sy = __fdiv_rn(ny, w);
    } else {
        sx = m[0] * xf + m[1] * yf + m[2];
        sy = m[3] * xf + m[4] * yf + m[5];
    }
    none |= isnan(sx) || isnan(sy);
    Source<T> s{src, sw, sh, replicate != 0, Pix<T>::unpack(fill_bits)};
    T* out = dst + (size_t)y * dw + x;
    if (none) {
        *out = s.fill;
        return;
    }
    sx = clamp_coord(sx);
    sy = clamp_coord(sy);
    if (INTERP == NEAREST) {
        *out = s.tap((int)floorf(sx + 0.5f), (int)floorf(sy + 0.5f));
        return;
    }
    float x0 = floorf(sx), y0 = floorf(sy);
    float fx = sx - x0, fy = sy - y0;
    int xi = (int)x0, yi = (int)y0;
    constexpr int N = Pix<T>::N;
    u8 res[N];
    if (INTERP == BILINEAR) {
        T p00 = s.tap(xi, yi), p01 = s.tap(xi + 1, yi);
        T p10 = s.tap(xi, yi + 1), p11 = s.tap(xi + 1, yi + 1);
        float gx = 1.0f - fx, gy = 1.0f - fy;
#pragma unroll
        for (int c = 0; c < N; ++c) {
            float top = gx * Pix<T>::ch(p00, c) + fx * Pix<T>::ch(p01, c);
            float bot = gx * Pix<T>::ch(p10, c) + fx * Pix<T>::ch(p11, c);
            res[c] = saturate_u8(gy * top + fy * bot);
        }
    } else {
        float wx[4], wy[4];
        cubic_weights(fx, wx);
        cubic_weights(fy, wy);
        float acc[N];
#pragma unroll
        for (int c = 0; c < N; ++c) acc[c] = 0.0f;
        // Rows first (h = w0·t0 + w1·t1 + w2·t2 + w3·t3 from 0), then the
        // vertical sum, as the CPU.
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            float hsum[N];
#pragma unroll
            for (int c = 0; c < N; ++c) hsum[c] = 0.0f;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                T p = s.tap(xi - 1 + k, yi - 1 + r);
#pragma unroll
                for (int c = 0; c < N; ++c) hsum[c] += wx[k] * Pix<T>::ch(p, c);
            }
#pragma unroll
            for (int c = 0; c < N; ++c) acc[c] += wy[r] * hsum[c];
        }
#pragma unroll
        for (int c = 0; c < N; ++c) res[c] = saturate_u8(acc[c]);
    }
    *out = Pix<T>::make(res);
}

// warp_{affine,perspective}_{nearest,bilinear,bicubic}_{rgba,gray}(src, sw,
// sh, dst, dw, dh, m0..m8, replicate, fill): m is the row-major
// destination→source matrix (affine: m6..m8 unused); `fill` is the pixel
// written where taps fall outside with the constant border, or where there
// is no source point, packed as channel c in bits 8c..8c+8.
#define WARP_KERNEL(NAME, T, PERSPECTIVE, INTERP)                                              \
    extern "C" __global__ void NAME(const T* __restrict__ src, int sw, int sh,                  \
                                    T* __restrict__ dst, int dw, int dh, float m0, float m1,    \
                                    float m2, float m3, float m4, float m5, float m6, float m7, \
                                    float m8, int replicate, u32 fill) {                        \
        Matrix mat = {{m0, m1, m2, m3, m4, m5, m6, m7, m8}};                                    \
        warp_pixel<T, PERSPECTIVE, INTERP>(src, sw, sh, dst, dw, dh, mat, replicate, fill);     \
    }

WARP_KERNEL(warp_affine_nearest_rgba, uchar4, false, NEAREST)
WARP_KERNEL(warp_affine_bilinear_rgba, uchar4, false, BILINEAR)
WARP_KERNEL(warp_affine_bicubic_rgba, uchar4, false, BICUBIC)
WARP_KERNEL(warp_perspective_nearest_rgba, uchar4, true, NEAREST)
WARP_KERNEL(warp_perspective_bilinear_rgba, uchar4, true, BILINEAR)
WARP_KERNEL(warp_perspective_bicubic_rgba, uchar4, true, BICUBIC)
WARP_KERNEL(warp_affine_nearest_gray, u8, false, NEAREST)
WARP_KERNEL(warp_affine_bilinear_gray, u8, false, BILINEAR)
WARP_KERNEL(warp_affine_bicubic_gray, u8, false, BICUBIC)
WARP_KERNEL(warp_perspective_nearest_gray, u8, true, NEAREST)
WARP_KERNEL(warp_perspective_bilinear_gray, u8, true, BILINEAR)
WARP_KERNEL(warp_perspective_bicubic_gray, u8, true, BICUBIC)
