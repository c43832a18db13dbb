// warp: affine and perspective warps (src/ops/warp.rs). The
// destination→source matrix comes inverted from the host; each thread
// evaluates it in f32 in the CPU's order (--fmad=false keeps every a*b + c
// unfused, and the divide is __fdiv_rn), floors and weighs as the CPU does
// and rounds as saturate_u8, so every tap, weight and output byte is the
// CPU's. Nearest and bicubic take one thread a destination pixel
// (warp_pixel); bilinear, the common case, has its own path (warp_bilinear,
// below).
#include "common.cuh"

// Source points are clamped to ±COORD_LIMIT before sampling (as the CPU).
#define COORD_LIMIT 4194300.0f

#define NEAREST 0
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

// The source point of destination (x, y), clamped to ±COORD_LIMIT; false
// where there is none (w == 0 or NaN). NaN points clamp to −COORD_LIMIT, so
// their (unused) taps still have valid addresses. BOUNDED (affine only):
// the host has shown that every point of the destination lies well within
// ±COORD_LIMIT (src/cuda/ops/warp.rs, affine_bounded), so the clamp and the
// NaN test would change nothing and are left out.
template <bool PERSPECTIVE, bool BOUNDED = false>
__device__ __forceinline__ bool source_point(const Matrix& mat, int x, int y, float* sx,
                                             float* sy) {
    const float* m = mat.m;
    float xf = (float)x, yf = (float)y;
    bool ok = true;
    float px, py;
    if (PERSPECTIVE) {
        float w = m[6] * xf + m[7] * yf + m[8];
        float nx = m[0] * xf + m[1] * yf + m[2];
        float ny = m[3] * xf + m[4] * yf + m[5];
        ok = w != 0.0f;
        px = __fdiv_rn(nx, w);
        py = __fdiv_rn(ny, w);
    } else {
        px = m[0] * xf + m[1] * yf + m[2];
        py = m[3] * xf + m[4] * yf + m[5];
        if (BOUNDED) {
            *sx = px;
            *sy = py;
            return true;
        }
    }
    ok &= !isnan(px) && !isnan(py);
    *sx = clamp_coord(px);
    *sy = clamp_coord(py);
    return ok;
}

// Nearest or bicubic, one thread a destination pixel.
template <typename T, bool PERSPECTIVE, int INTERP>
__device__ __forceinline__ void warp_pixel(const T* __restrict__ src, int sw, int sh,
                                           T* __restrict__ dst, int dw, int dh, Matrix mat,
                                           int replicate, u32 fill_bits) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dw || y >= dh) return;
    Source<T> s{src, sw, sh, replicate != 0, Pix<T>::unpack(fill_bits)};
    T* out = dst + (size_t)y * dw + x;
    float sx, sy;
    if (sw == 0 || sh == 0 || !source_point<PERSPECTIVE>(mat, x, y, &sx, &sy)) {
        *out = s.fill;
        return;
    }
    if (INTERP == NEAREST) {
        *out = s.tap((int)floorf(sx + 0.5f), (int)floorf(sy + 0.5f));
        return;
    }
    float x0 = floorf(sx), y0 = floorf(sy);
    float fx = sx - x0, fy = sy - y0;
    int xi = (int)x0, yi = (int)y0;
    constexpr int N = Pix<T>::N;
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
    u8 res[N];
#pragma unroll
    for (int c = 0; c < N; ++c) res[c] = saturate_u8(acc[c]);
    *out = Pix<T>::make(res);
}

// warp_{affine,perspective}_{nearest,bicubic}_{rgba,gray}(src, sw, sh, dst,
// dw, dh, m0..m8, replicate, fill): m is the row-major destination→source
// matrix (affine: m6..m8 unused); `fill` is the pixel written where taps
// fall outside with the constant border, or where there is no source point,
// packed as channel c in bits 8c..8c+8.
#define WARP_KERNEL(NAME, T, PERSPECTIVE, INTERP)                                              \
    extern "C" __global__ void NAME(const T* __restrict__ src, int sw, int sh,                  \
                                    T* __restrict__ dst, int dw, int dh, float m0, float m1,    \
                                    float m2, float m3, float m4, float m5, float m6, float m7, \
                                    float m8, int replicate, u32 fill) {                        \
        Matrix mat = {{m0, m1, m2, m3, m4, m5, m6, m7, m8}};                                    \
        warp_pixel<T, PERSPECTIVE, INTERP>(src, sw, sh, dst, dw, dh, mat, replicate, fill);     \
    }

WARP_KERNEL(warp_affine_nearest_rgba, uchar4, false, NEAREST)
WARP_KERNEL(warp_affine_bicubic_rgba, uchar4, false, BICUBIC)
WARP_KERNEL(warp_perspective_nearest_rgba, uchar4, true, NEAREST)
WARP_KERNEL(warp_perspective_bicubic_rgba, uchar4, true, BICUBIC)
WARP_KERNEL(warp_affine_nearest_gray, u8, false, NEAREST)
WARP_KERNEL(warp_affine_bicubic_gray, u8, false, BICUBIC)
WARP_KERNEL(warp_perspective_nearest_gray, u8, true, NEAREST)
WARP_KERNEL(warp_perspective_bicubic_gray, u8, true, BICUBIC)

// ---------------------------------------------------------------------------
// Bilinear: the same f32 operations in the same order as the CPU, shaped for
// throughput. The kernel is bound by issuing instructions, not by memory
// (about 115 a pixel, a third of them on the half-rate integer pipe), so
// the work a pixel is kept small. A pixel whose four taps are all inside
// the frame (nearly all of them) loads them from one address with no
// clamps; the others clamp the four tap coordinates into the frame (the
// replicate rule, and a safe address for the constant border), issue the
// four loads at once, and only then swap the fill in for constant-border
// taps that were outside. A thread does two vertically adjacent pixels, so
// it has eight loads in flight and the two share source lines. Bytes are
// unpacked to floats by a byte permute and a subtract (PRMT, FADD), and
// floors and roundings are exact magic-number adds instead of F2I
// conversions. On the H100 1080p RGBA affine took 19.9 µs as a warp_pixel
// instantiation, 14.9 µs in this shape and 13.2 µs with the inside path
// (bench/tune/variants.cu; staging each block's source box in shared
// memory instead took 24 µs).

// floor(v) as an int, and v − floor(v) in *frac, for |v| ≤ COORD_LIMIT < 2^22:
// v + 1.5·2^23 rounded down lies in [2^23, 2^24), where floats are the
// integers, so it is exactly 1.5·2^23 + floor(v) (one add, no conversion).
__device__ __forceinline__ int floor_split(float v, float* frac) {
    float f = __fadd_rd(v, 12582912.0f);
    *frac = __fsub_rn(v, __fsub_rn(f, 12582912.0f));
    return (int)(__float_as_uint(f) - 0x4B400000u);
}

// saturate_u8(v) in the low byte (the upper bytes are junk) for a bilinear
// blend v: the same half-up add, then floor(t) for t in [0, 256) by the same
// trick (t + 2^23 rounded down is 2^23 + floor(t), whose low mantissa byte is
// floor(t)). saturate_u8's clamp is left out because it changes nothing
// here: v ≥ 0 (weights and taps are ≥ 0) and v ≤ 255·(1 + a few ulps) <
// 255.5, so min(v, 255) and v round to the same byte.
__device__ __forceinline__ u32 round_blend(float v) {
    return __float_as_uint(__fadd_rd(__fadd_rn(v, 0.49999997f), 8388608.0f));
}

// Channel c of a tap as a float: a packed RGBA word (channel c in bits
// 8c..8c+8; one byte permute puts it under the 2^23 exponent, as u8f) or a
// gray byte. The constant is the permute's first operand so that the
// selector is the immediate.
__device__ __forceinline__ float chan(u32 v, int c) {
    return __fsub_rn(__uint_as_float(__byte_perm(0x4B000000u, v, 0x3104 + c)), 8388608.0f);
}
__device__ __forceinline__ float chan(u8 v, int) { return u8f(v); }

// The stored word of a pixel type: RGBA as one u32, gray as its byte.
template <typename T> struct Word;
template <> struct Word<uchar4> {
    typedef u32 W;
    static constexpr int N = 4;
    // The low bytes of r[0..4] packed as channels 0..3.
    __device__ static __forceinline__ u32 pack(const u32 r[4]) {
        return __byte_perm(__byte_perm(r[0], r[1], 0x0040), __byte_perm(r[2], r[3], 0x0040),
                           0x5410);
    }
};
template <> struct Word<u8> {
    typedef u8 W;
    static constexpr int N = 1;
    __device__ static __forceinline__ u8 pack(const u32 r[1]) { return (u8)r[0]; }
};

// The bilinear blend of taps q = {(x0,y0), (x1,y0), (x0,y1), (x1,y1)}, in
// the CPU's order, as a stored word.
template <typename T, typename W>
__device__ __forceinline__ W blend(const W q[4], float fx, float fy) {
    constexpr int N = Word<T>::N;
    float gx = 1.0f - fx, gy = 1.0f - fy;
    u32 r[N];
#pragma unroll
    for (int c = 0; c < N; ++c) {
        float top = gx * chan(q[0], c) + fx * chan(q[1], c);
        float bot = gx * chan(q[2], c) + fx * chan(q[3], c);
        r[c] = round_blend(gy * top + fy * bot);
    }
    return Word<T>::pack(r);
}

// The 2×2 taps at (xi..xi+1, yi..yi+1) of a non-empty w×h source: four
// unconditional loads at the clamped coordinates (the replicate rule), then,
// for the constant border, the fill wherever clamping moved a coordinate.
template <typename W>
__device__ __forceinline__ void load_quad(const W* __restrict__ src, int w, int h, int xi, int yi,
                                          bool replicate, W fill, W q[4]) {
    int x0 = min(max(xi, 0), w - 1), x1 = min(max(xi + 1, 0), w - 1);
    int y0 = min(max(yi, 0), h - 1), y1 = min(max(yi + 1, 0), h - 1);
    // 32-bit indices (the host refuses sources of 2^32 pixels or more): one
    // multiply-add a tap to its address instead of 64-bit arithmetic.
    u32 r0 = (u32)y0 * (u32)w, r1 = (u32)y1 * (u32)w;
    q[0] = __ldg(src + (r0 + x0));
    q[1] = __ldg(src + (r0 + x1));
    q[2] = __ldg(src + (r1 + x0));
    q[3] = __ldg(src + (r1 + x1));
    if (!replicate) {
        bool in_x0 = x0 == xi, in_x1 = x1 == xi + 1, in_y0 = y0 == yi, in_y1 = y1 == yi + 1;
        q[0] = in_x0 && in_y0 ? q[0] : fill;
        q[1] = in_x1 && in_y0 ? q[1] : fill;
        q[2] = in_x0 && in_y1 ? q[2] : fill;
        q[3] = in_x1 && in_y1 ? q[3] : fill;
    }
}

// Bilinear, destination pixels (x, R·t) to (x, R·t + R − 1) for thread
// (x, t): every pixel's loads are issued before any blend.
template <typename T, bool PERSPECTIVE, int R, bool FAST, bool BOUNDED = false>
__device__ __forceinline__ void warp_bilinear(const typename Word<T>::W* __restrict__ src,
                                              int sw, int sh,
                                              typename Word<T>::W* __restrict__ dst, int dw,
                                              int dh, Matrix mat, int replicate,
                                              u32 fill_bits) {
    typedef typename Word<T>::W W;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R;
    if (x >= dw || y0 >= dh) return;
    W fill = (W)fill_bits;
    W* out = dst + (size_t)y0 * dw + x;
    if (sw == 0 || sh == 0) {
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (y0 + r < dh) out[(size_t)r * dw] = fill;
        return;
    }
    W q[R][4];
    float fx[R], fy[R];
    bool ok[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        float sx, sy;
        ok[r] = source_point<PERSPECTIVE, BOUNDED>(mat, x, y0 + r, &sx, &sy);
        int xi = floor_split(sx, &fx[r]), yi = floor_split(sy, &fy[r]);
        if (FAST && (u32)xi < (u32)(sw - 1) && (u32)yi < (u32)(sh - 1)) {
            // All four taps inside: no clamps, no fill, and one address
            // for the four loads (constant offsets from p and p + sw).
            const W* p = src + ((u32)yi * (u32)sw + (u32)xi);
            q[r][0] = __ldg(p);
            q[r][1] = __ldg(p + 1);
            q[r][2] = __ldg(p + sw);
            q[r][3] = __ldg(p + sw + 1);
        } else {
            load_quad<W>(src, sw, sh, xi, yi, replicate != 0, fill, q[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (y0 + r < dh) out[(size_t)r * dw] = ok[r] ? blend<T>(q[r], fx[r], fy[r]) : fill;
}

// warp_{affine,perspective}_bilinear_{rgba,gray}: arguments as
// WARP_KERNEL's, the grid covering dw × ⌈dh / 2⌉ threads; the _bounded
// affine ones for matrices whose points the host has bounded.
#define WARP_BILINEAR(NAME, T, PERSPECTIVE, BOUNDED)                                           \
    extern "C" __global__ void NAME(const Word<T>::W* __restrict__ src, int sw, int sh,         \
                                    Word<T>::W* __restrict__ dst, int dw, int dh, float m0,     \
                                    float m1, float m2, float m3, float m4, float m5, float m6, \
                                    float m7, float m8, int replicate, u32 fill) {              \
        Matrix mat = {{m0, m1, m2, m3, m4, m5, m6, m7, m8}};                                    \
        warp_bilinear<T, PERSPECTIVE, 2, true, BOUNDED>(src, sw, sh, dst, dw, dh, mat,          \
                                                        replicate, fill);                       \
    }

WARP_BILINEAR(warp_affine_bilinear_rgba, uchar4, false, false)
WARP_BILINEAR(warp_affine_bilinear_rgba_bounded, uchar4, false, true)
WARP_BILINEAR(warp_perspective_bilinear_rgba, uchar4, true, false)
WARP_BILINEAR(warp_affine_bilinear_gray, u8, false, false)
WARP_BILINEAR(warp_affine_bilinear_gray_bounded, u8, false, true)
WARP_BILINEAR(warp_perspective_bilinear_gray, u8, true, false)
