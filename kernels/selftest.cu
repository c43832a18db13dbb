// A trivial kernel, so the loader and the cache have something to compile
// in tests on machines with NVRTC but no GPU.
#include "common.cuh"

extern "C" __global__ void fill_u8(u8* out, u32 n, u8 value) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = saturate_u8((float)value);
}
