// gray: RGBA to luma, Y = kr*R + kg*G + kb*B in f32 (no fused multiply-add,
// in the CPU's order), rounded as saturate_u8. See src/ops/gray.rs.
#include "common.cuh"

// One thread a pixel; `as_rgba` writes Y to R, G and B with alpha 255.
extern "C" __global__ void rgba_to_gray(const uchar4* __restrict__ in, u8* __restrict__ out,
                                        u32 n, float kr, float kg, float kb) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uchar4 p = in[i];
    float y = __fadd_rn(__fadd_rn(__fmul_rn(kr, (float)p.x), __fmul_rn(kg, (float)p.y)),
                        __fmul_rn(kb, (float)p.z));
    out[i] = saturate_u8(y);
}

extern "C" __global__ void rgba_to_gray_rgba(const uchar4* __restrict__ in,
                                             uchar4* __restrict__ out, u32 n, float kr,
                                             float kg, float kb) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uchar4 p = in[i];
    float y = __fadd_rn(__fadd_rn(__fmul_rn(kr, (float)p.x), __fmul_rn(kg, (float)p.y)),
                        __fmul_rn(kb, (float)p.z));
    u8 v = saturate_u8(y);
    out[i] = make_uchar4(v, v, v, 255);
}

// Gray in, gray-as-RGBA out.
extern "C" __global__ void gray_to_rgba(const u8* __restrict__ in, uchar4* __restrict__ out,
                                        u32 n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u8 v = in[i];
    out[i] = make_uchar4(v, v, v, 255);
}
