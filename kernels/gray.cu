// gray: RGBA to luma, Y = kr*R + kg*G + kb*B in f32 (no fused multiply-add,
// in the CPU's order), rounded as saturate_u8. See src/ops/gray.rs.
//
// Each thread takes four pixels: one 16-byte load, one 4-byte store (gray)
// or one 16-byte store (gray as RGBA). The last n % 4 pixels are done one by
// one by the thread past the full groups.
#include "common.cuh"

__device__ __forceinline__ u8 luma(u32 p, float kr, float kg, float kb) {
    float y = __fadd_rn(__fadd_rn(__fmul_rn(kr, u8f(p)), __fmul_rn(kg, u8f(p >> 8))),
                        __fmul_rn(kb, u8f(p >> 16)));
    return saturate_u8(y);
}

__device__ __forceinline__ u32 gray_rgba(u8 v) {
    return (u32)v | ((u32)v << 8) | ((u32)v << 16) | 0xff000000u;
}

extern "C" __global__ void rgba_to_gray(const u32* __restrict__ in, u8* __restrict__ out,
                                        u32 n, float kr, float kg, float kb) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 groups = n / 4;
    if (t < groups) {
        uint4 p = reinterpret_cast<const uint4*>(in)[t];
        uchar4 y = make_uchar4(luma(p.x, kr, kg, kb), luma(p.y, kr, kg, kb),
                               luma(p.z, kr, kg, kb), luma(p.w, kr, kg, kb));
        reinterpret_cast<uchar4*>(out)[t] = y;
    } else if (t == groups) {
        for (u32 i = groups * 4; i < n; i++) out[i] = luma(in[i], kr, kg, kb);
    }
}

extern "C" __global__ void rgba_to_gray_rgba(const u32* __restrict__ in, u32* __restrict__ out,
                                             u32 n, float kr, float kg, float kb) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 groups = n / 4;
    if (t < groups) {
        uint4 p = reinterpret_cast<const uint4*>(in)[t];
        uint4 o = make_uint4(gray_rgba(luma(p.x, kr, kg, kb)), gray_rgba(luma(p.y, kr, kg, kb)),
                             gray_rgba(luma(p.z, kr, kg, kb)), gray_rgba(luma(p.w, kr, kg, kb)));
        reinterpret_cast<uint4*>(out)[t] = o;
    } else if (t == groups) {
        for (u32 i = groups * 4; i < n; i++) out[i] = gray_rgba(luma(in[i], kr, kg, kb));
    }
}

// Gray in, gray-as-RGBA out.
extern "C" __global__ void gray_to_rgba(const u8* __restrict__ in, u32* __restrict__ out,
                                        u32 n) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 groups = n / 4;
    if (t < groups) {
        uchar4 v = reinterpret_cast<const uchar4*>(in)[t];
        reinterpret_cast<uint4*>(out)[t] =
            make_uint4(gray_rgba(v.x), gray_rgba(v.y), gray_rgba(v.z), gray_rgba(v.w));
    } else if (t == groups) {
        for (u32 i = groups * 4; i < n; i++) out[i] = gray_rgba(in[i]);
    }
}
