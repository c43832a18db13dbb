// yuv: RGBA ⇄ 4:2:0 YUV with the f32 operations of src/ops/yuv.rs in the
// same order, without fused multiply-adds, so every stored value matches the
// CPU's. YUV buffers are packed as crate::frame::Yuv420 lays its planes out,
// one after another, rows packed: Y (w×h), then NV12's interleaved UV
// (2·cw×ch) or I420's U and V (cw×ch each), with cw, ch = ⌈w/2⌉, ⌈h/2⌉.
// One thread a 2×2 block, that is one chroma sample.
#include "common.cuh"

struct Colour {
    float kr, kg, kb;  // luma weights
    float ys, yo, cs;  // to stored units: y scale, y offset, chroma scale
    float dr, db;      // 2(1 − Kr), 2(1 − Kb)
};

__device__ __forceinline__ Colour colour(float kr, float kg, float kb, float ys, float yo,
                                         float cs) {
    return Colour{kr, kg, kb, ys, yo, cs, __fmul_rn(2.0f, __fsub_rn(1.0f, kr)),
                  __fmul_rn(2.0f, __fsub_rn(1.0f, kb))};
}

// Offsets of the (U, V) bytes of chroma sample (cx, cy) in a packed buffer.
__device__ __forceinline__ void chroma_offsets(u32 cx, u32 cy, u32 w, u32 h, u32 nv12, u32& u,
                                               u32& v) {
    u32 cw = (w + 1) / 2, ch = (h + 1) / 2;
    if (nv12) {
        u = w * h + cy * 2 * cw + 2 * cx;
        v = u + 1;
    } else {
        u = w * h + cy * cw + cx;
        v = u + cw * ch;
    }
}

// The stored Y of each pixel of the block at chroma (cx, cy), and the
// block's (U, V) from the mean Cb and Cr of its pixels inside the frame,
// summed in row order as the CPU does. `rgb(i)` gives pixel i's R, G, B.
template <class Rgb>
__device__ __forceinline__ void encode_block(Rgb rgb, u32 cx, u32 cy, u32 w, u32 h,
                                             const Colour& c, u8 ys[2][2], u8& u, u8& v) {
    float sb = 0.0f, sr = 0.0f, count = 0.0f;
#pragma unroll
    for (u32 dy = 0; dy < 2; dy++) {
#pragma unroll
        for (u32 dx = 0; dx < 2; dx++) {
            u32 x = 2 * cx + dx, y = 2 * cy + dy;
            if (x < w && y < h) {
                float3 p = rgb(y * w + x);
                float l = __fadd_rn(__fadd_rn(__fmul_rn(c.kr, p.x), __fmul_rn(c.kg, p.y)),
                                    __fmul_rn(c.kb, p.z));
                ys[dy][dx] = saturate_u8(__fadd_rn(__fmul_rn(l, c.ys), c.yo));
                sb = __fadd_rn(sb, __fdiv_rn(__fsub_rn(p.z, l), c.db));
                sr = __fadd_rn(sr, __fdiv_rn(__fsub_rn(p.x, l), c.dr));
                count = __fadd_rn(count, 1.0f);
            }
        }
    }
    u = saturate_u8(__fadd_rn(128.0f, __fmul_rn(__fdiv_rn(sb, count), c.cs)));
    v = saturate_u8(__fadd_rn(128.0f, __fmul_rn(__fdiv_rn(sr, count), c.cs)));
}

// One pixel back to R, G, B from its Y and its block's (U, V).
__device__ __forceinline__ uchar3 decode(u8 y, u8 u, u8 v, const Colour& c) {
    float l = __fdiv_rn(__fsub_rn((float)y, c.yo), c.ys);
    float cb = __fdiv_rn(__fsub_rn((float)u, 128.0f), c.cs);
    float cr = __fdiv_rn(__fsub_rn((float)v, 128.0f), c.cs);
    float r = __fadd_rn(l, __fmul_rn(c.dr, cr));
    float b = __fadd_rn(l, __fmul_rn(c.db, cb));
    float g = __fdiv_rn(__fsub_rn(__fsub_rn(l, __fmul_rn(c.kr, r)), __fmul_rn(c.kb, b)), c.kg);
    return make_uchar3(saturate_u8(r), saturate_u8(g), saturate_u8(b));
}

// A pixel's R, G, B: RGBA, or gray with R = G = B (the CPU's Frame::to_rgba).
template <bool RGBA>
struct Source {
    const u8* in;
    __device__ __forceinline__ float3 operator()(u32 i) const {
        if constexpr (RGBA) {
            uchar4 p = reinterpret_cast<const uchar4*>(in)[i];
            return make_float3((float)p.x, (float)p.y, (float)p.z);
        } else {
            float g = (float)in[i];
            return make_float3(g, g, g);
        }
    }
};

template <bool RGBA>
__device__ __forceinline__ void to_yuv420(const u8* __restrict__ in, u8* __restrict__ yuv, u32 w,
                                          u32 h, u32 nv12, const Colour& c) {
    u32 cx = blockIdx.x * blockDim.x + threadIdx.x, cy = blockIdx.y * blockDim.y + threadIdx.y;
    if (cx >= (w + 1) / 2 || cy >= (h + 1) / 2) return;
    u8 ys[2][2], u, v;
    encode_block(Source<RGBA>{in}, cx, cy, w, h, c, ys, u, v);
#pragma unroll
    for (u32 dy = 0; dy < 2; dy++) {
#pragma unroll
        for (u32 dx = 0; dx < 2; dx++) {
            u32 x = 2 * cx + dx, y = 2 * cy + dy;
            if (x < w && y < h) yuv[y * w + x] = ys[dy][dx];
        }
    }
    u32 ou, ov;
    chroma_offsets(cx, cy, w, h, nv12, ou, ov);
    yuv[ou] = u;
    yuv[ov] = v;
}

extern "C" __global__ void rgba_to_yuv420(const u8* __restrict__ in, u8* __restrict__ yuv, u32 w,
                                          u32 h, u32 nv12, float kr, float kg, float kb,
                                          float ys, float yo, float cs) {
    to_yuv420<true>(in, yuv, w, h, nv12, colour(kr, kg, kb, ys, yo, cs));
}

extern "C" __global__ void gray_to_yuv420(const u8* __restrict__ in, u8* __restrict__ yuv, u32 w,
                                          u32 h, u32 nv12, float kr, float kg, float kb,
                                          float ys, float yo, float cs) {
    to_yuv420<false>(in, yuv, w, h, nv12, colour(kr, kg, kb, ys, yo, cs));
}

// Packed NV12/I420 to RGBA, alpha opaque.
extern "C" __global__ void yuv420_to_rgba(const u8* __restrict__ yuv, uchar4* __restrict__ out,
                                          u32 w, u32 h, u32 nv12, float kr, float kg, float kb,
                                          float ys, float yo, float cs) {
    u32 cx = blockIdx.x * blockDim.x + threadIdx.x, cy = blockIdx.y * blockDim.y + threadIdx.y;
    if (cx >= (w + 1) / 2 || cy >= (h + 1) / 2) return;
    Colour c = colour(kr, kg, kb, ys, yo, cs);
    u32 ou, ov;
    chroma_offsets(cx, cy, w, h, nv12, ou, ov);
    u8 u = yuv[ou], v = yuv[ov];
#pragma unroll
    for (u32 dy = 0; dy < 2; dy++) {
#pragma unroll
        for (u32 dx = 0; dx < 2; dx++) {
            u32 x = 2 * cx + dx, y = 2 * cy + dy;
            if (x < w && y < h) {
                uchar3 q = decode(yuv[y * w + x], u, v, c);
                out[y * w + x] = make_uchar4(q.x, q.y, q.z, 255);
            }
        }
    }
}

// The `yuv` op: RGBA (or gray) to YUV and back in registers, the block's
// stored values never leaving the thread. RGBA keeps the source's alpha;
// gray keeps R, as the CPU op.
template <bool RGBA>
__device__ __forceinline__ void round_trip(const u8* __restrict__ in, u8* __restrict__ out, u32 w,
                                           u32 h, const Colour& c) {
    u32 cx = blockIdx.x * blockDim.x + threadIdx.x, cy = blockIdx.y * blockDim.y + threadIdx.y;
    if (cx >= (w + 1) / 2 || cy >= (h + 1) / 2) return;
    u8 ys[2][2], u, v;
    encode_block(Source<RGBA>{in}, cx, cy, w, h, c, ys, u, v);
#pragma unroll
    for (u32 dy = 0; dy < 2; dy++) {
#pragma unroll
        for (u32 dx = 0; dx < 2; dx++) {
            u32 x = 2 * cx + dx, y = 2 * cy + dy;
            if (x < w && y < h) {
                u32 i = y * w + x;
                uchar3 q = decode(ys[dy][dx], u, v, c);
                if constexpr (RGBA) {
                    u8 a = reinterpret_cast<const uchar4*>(in)[i].w;
                    reinterpret_cast<uchar4*>(out)[i] = make_uchar4(q.x, q.y, q.z, a);
                } else {
                    out[i] = q.x;
                }
            }
        }
    }
}

extern "C" __global__ void yuv_round_trip_rgba(const u8* __restrict__ in, u8* __restrict__ out,
                                               u32 w, u32 h, float kr, float kg, float kb,
                                               float ys, float yo, float cs) {
    round_trip<true>(in, out, w, h, colour(kr, kg, kb, ys, yo, cs));
}

extern "C" __global__ void yuv_round_trip_gray(const u8* __restrict__ in, u8* __restrict__ out,
                                               u32 w, u32 h, float kr, float kg, float kb,
                                               float ys, float yo, float cs) {
    round_trip<false>(in, out, w, h, colour(kr, kg, kb, ys, yo, cs));
}
