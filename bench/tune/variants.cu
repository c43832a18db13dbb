// Variants of our own kernels (kernels/*.cu, included as they are) timed
// side by side the way `seamstream bench` times them: 4 rotating
// input/output sets, batches of 8 calls captured into a CUDA graph and
// replayed between events, median over the batches. For choosing launch
// shapes and work per thread on the GPU host; the product keeps the winner.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 --fmad=false -I kernels bench/tune/variants.cu -o variants
//   ./variants [runs]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "warp.cu"
#include "threshold.cu"
#include "gray.cu"
#include "equalize.cu"

#define CK(x)                                                                         \
    do {                                                                              \
        cudaError_t e = (x);                                                          \
        if (e != cudaSuccess) {                                                       \
            fprintf(stderr, "CUDA %s at line %d\n", cudaGetErrorString(e), __LINE__); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static const int SETS = 4, BATCH = 8;
static cudaStream_t stream;
static int RUNS = 200;

static double time_call(const std::function<void(int)>& call) {
    for (int i = 0; i < 20; i++) call(i % SETS);
    CK(cudaStreamSynchronize(stream));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
    for (int i = 0; i < BATCH; i++) call(i % SETS);
    CK(cudaStreamEndCapture(stream, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> us;
    for (int r = 0; r < RUNS; r++) {
        CK(cudaEventRecord(a, stream));
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1000.0 / BATCH);
    }
    std::sort(us.begin(), us.end());
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    return us[us.size() / 2];
}

// ---- elementwise: N 16-byte units a thread, all loads before any store.
template <bool RGBA, int N, class F>
__device__ __forceinline__ void map_units_n(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                                            F f) {
    const u32 per_unit = RGBA ? 4 : 16;
    u32 units = n / per_unit;
    u32 base = blockIdx.x * blockDim.x * N + threadIdx.x;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    uint4 q[N];
#pragma unroll
    for (int k = 0; k < N; k++) {
        u32 i = base + k * blockDim.x;
        if (i < units) q[k] = in4[i];
    }
#pragma unroll
    for (int k = 0; k < N; k++) {
        u32 i = base + k * blockDim.x;
        if (i < units) {
            q[k].x = f(q[k].x);
            q[k].y = f(q[k].y);
            q[k].z = f(q[k].z);
            q[k].w = f(q[k].w);
            out4[i] = q[k];
        }
    }
}

template <int N>
__global__ void thr_gray_n(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                           const u32* __restrict__ level, u32 max, u32 type) {
    u32 t4 = *level * 0x01010101u, max4 = max * 0x01010101u;
    map_units_n<false, N>(in, out, n, [&](u32 v) { return rule4(v, t4, max4, type); });
}

// Grid-stride: a grid of a few blocks a multiprocessor, N units in flight a
// thread each step.
template <int N>
__global__ void thr_gray_stride(const u8* __restrict__ in, u8* __restrict__ out, u32 n,
                                const u32* __restrict__ level, u32 max, u32 type) {
    u32 t4 = *level * 0x01010101u, max4 = max * 0x01010101u;
    u32 units = n / 16;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    u32 step = gridDim.x * blockDim.x;
    for (u32 base = blockIdx.x * blockDim.x + threadIdx.x; base < units; base += step * N) {
        uint4 q[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            if (base + k * step < units) q[k] = in4[base + k * step];
#pragma unroll
        for (int k = 0; k < N; k++)
            if (base + k * step < units) {
                q[k].x = rule4(q[k].x, t4, max4, type);
                q[k].y = rule4(q[k].y, t4, max4, type);
                q[k].z = rule4(q[k].z, t4, max4, type);
                q[k].w = rule4(q[k].w, t4, max4, type);
                out4[base + k * step] = q[k];
            }
    }
}

// RGBA → gray, N groups of 4 pixels a thread.
template <int N>
__global__ void gray_n(const u32* __restrict__ in, u8* __restrict__ out, u32 n, float kr, float kg,
                       float kb) {
    u32 groups = n / 4;
    u32 base = blockIdx.x * blockDim.x * N + threadIdx.x;
    uint4 p[N];
#pragma unroll
    for (int k = 0; k < N; k++) {
        u32 i = base + k * blockDim.x;
        if (i < groups) p[k] = reinterpret_cast<const uint4*>(in)[i];
    }
#pragma unroll
    for (int k = 0; k < N; k++) {
        u32 i = base + k * blockDim.x;
        if (i < groups)
            reinterpret_cast<uchar4*>(out)[i] =
                make_uchar4(luma(p[k].x, kr, kg, kb), luma(p[k].y, kr, kg, kb),
                            luma(p[k].z, kr, kg, kb), luma(p[k].w, kr, kg, kb));
    }
}

// ---- warp variant: no loads at all for a pixel whose taps all fall
// outside under the constant border, and the in-frame pairs (x0, x0 + 1)
// on one row fetched with one 8-byte load where x0 is even.
template <bool PERSPECTIVE, bool PAIRS>
__global__ void warp_skip(const u32* __restrict__ src, int sw, int sh, u32* __restrict__ dst,
                          int dw, int dh, Matrix mat, int replicate, u32 fill) {
    constexpr int R = 2;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R;
    if (x >= dw || y0 >= dh) return;
    u32* out = dst + (size_t)y0 * dw + x;
    u32 q[R][4];
    float fx[R], fy[R];
    bool ok[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        float sx, sy;
        ok[r] = source_point<PERSPECTIVE>(mat, x, y0 + r, &sx, &sy);
        int xi = floor_split(sx, &fx[r]), yi = floor_split(sy, &fy[r]);
        bool outside = xi < -1 || xi >= sw || yi < -1 || yi >= sh;
        if (!replicate && outside) {
            q[r][0] = q[r][1] = q[r][2] = q[r][3] = fill;
        } else if (PAIRS && xi >= 0 && xi + 1 < sw && (xi & 1) == 0 && yi >= 0 && yi + 1 < sh) {
            uint2 a = __ldg(reinterpret_cast<const uint2*>(src + (u32)yi * (u32)sw + xi));
            uint2 b = __ldg(reinterpret_cast<const uint2*>(src + (u32)(yi + 1) * (u32)sw + xi));
            q[r][0] = a.x; q[r][1] = a.y; q[r][2] = b.x; q[r][3] = b.y;
        } else {
            load_quad<u32>(src, sw, sh, xi, yi, replicate != 0, fill, q[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (y0 + r < dh) out[(size_t)r * dw] = ok[r] ? blend<uchar4>(q[r], fx[r], fy[r]) : fill;
}

// ---- warp variant: load_quad with plain loads (the LSU path, L1-cached)
// instead of __ldg.
__device__ __forceinline__ void load_quad_plain(const u32* __restrict__ src, int w, int h, int xi,
                                                int yi, bool replicate, u32 fill, u32 q[4]) {
    int x0 = min(max(xi, 0), w - 1), x1 = min(max(xi + 1, 0), w - 1);
    int y0 = min(max(yi, 0), h - 1), y1 = min(max(yi + 1, 0), h - 1);
    u32 r0 = (u32)y0 * (u32)w, r1 = (u32)y1 * (u32)w;
    q[0] = src[r0 + x0];
    q[1] = src[r0 + x1];
    q[2] = src[r1 + x0];
    q[3] = src[r1 + x1];
    if (!replicate) {
        bool in_x0 = x0 == xi, in_x1 = x1 == xi + 1, in_y0 = y0 == yi, in_y1 = y1 == yi + 1;
        q[0] = in_x0 && in_y0 ? q[0] : fill;
        q[1] = in_x1 && in_y0 ? q[1] : fill;
        q[2] = in_x0 && in_y1 ? q[2] : fill;
        q[3] = in_x1 && in_y1 ? q[3] : fill;
    }
}

template <bool PERSPECTIVE, int R, int MINB>
__global__ void __launch_bounds__(256, MINB)
    warp_plain(const u32* __restrict__ src, int sw, int sh, u32* __restrict__ dst, int dw, int dh,
               Matrix mat, int replicate, u32 fill) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R;
    if (x >= dw || y0 >= dh) return;
    u32* out = dst + (size_t)y0 * dw + x;
    u32 q[R][4];
    float fx[R], fy[R];
    bool ok[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        float sx, sy;
        ok[r] = source_point<PERSPECTIVE>(mat, x, y0 + r, &sx, &sy);
        int xi = floor_split(sx, &fx[r]), yi = floor_split(sy, &fy[r]);
        load_quad_plain(src, sw, sh, xi, yi, replicate != 0, fill, q[r]);
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (y0 + r < dh) out[(size_t)r * dw] = ok[r] ? blend<uchar4>(q[r], fx[r], fy[r]) : fill;
}

// ---- warp: R rows a thread, in bx × by blocks.
template <int R>
__global__ void warp_affine_r(const u32* __restrict__ src, int sw, int sh, u32* __restrict__ dst,
                              int dw, int dh, Matrix mat, int replicate, u32 fill) {
    warp_bilinear<uchar4, false, R, false>(src, sw, sh, dst, dw, dh, mat, replicate, fill);
}
template <int R>
__global__ void warp_persp_r(const u32* __restrict__ src, int sw, int sh, u32* __restrict__ dst,
                             int dw, int dh, Matrix mat, int replicate, u32 fill) {
    warp_bilinear<uchar4, true, R, false>(src, sw, sh, dst, dw, dh, mat, replicate, fill);
}

__global__ void empty_kernel() {}

static Matrix invert_affine(const double m[6]) {
    double det = m[0] * m[4] - m[1] * m[3];
    double a = m[4] / det, b = -m[1] / det, d = -m[3] / det, e = m[0] / det;
    double c = -(a * m[2] + b * m[5]), f = -(d * m[2] + e * m[5]);
    return Matrix{{(float)a, (float)b, (float)c, (float)d, (float)e, (float)f, 0, 0, 1}};
}

static Matrix invert3(const double m[9]) {
    double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7], i = m[8];
    double A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    double det = a * A + b * B + c * C;
    double r[9] = {A, -(b * i - c * h), b * f - c * e, B, a * i - c * g, -(a * f - c * d),
                   C, -(a * h - b * g), a * e - b * d};
    Matrix out;
    for (int k = 0; k < 9; k++) out.m[k] = (float)(r[k] / det);
    return out;
}

int main(int argc, char** argv) {
    if (argc > 1) RUNS = atoi(argv[1]);
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int sizes[2][2] = {{1920, 1080}, {3840, 2160}};
    for (auto& s : sizes) {
        int W = s[0], H = s[1];
        u32 n = (u32)W * H;
        std::vector<unsigned char> host((size_t)n * 4);
        srand(1);
        for (auto& b : host) b = rand() & 255;
        u8 *g[SETS], *go[SETS], *c[SETS], *co[SETS];
        for (int k = 0; k < SETS; k++) {
            CK(cudaMalloc(&g[k], n));
            CK(cudaMalloc(&go[k], n));
            CK(cudaMalloc(&c[k], (size_t)n * 4));
            CK(cudaMalloc(&co[k], (size_t)n * 4));
            CK(cudaMemcpy(g[k], host.data(), n, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(c[k], host.data(), (size_t)n * 4, cudaMemcpyHostToDevice));
        }
        u32* level;
        CK(cudaMalloc(&level, 4));
        u32 t = 128;
        CK(cudaMemcpy(level, &t, 4, cudaMemcpyHostToDevice));
        printf("\n== %dx%d (us per call, median of %d batches of 8)\n", W, H, RUNS);
        auto row = [&](const char* name, double us) { printf("%-44s %8.2f\n", name, us); };
        row("empty kernel (a graph node's own cost)", time_call([&](int) { empty_kernel<<<1, 32, 0, stream>>>(); }));
        u32 units = n / 16;
        for (int bs : {256, 512, 1024}) {
            char name[96];
            if (bs == 256) {
                u32 g2 = std::max(1u, (units + 511) / 512), g8 = std::max(1u, (units + 2047) / 2048);
                row("threshold gray product x2", time_call([&](int k) { threshold_gray_x2<<<g2, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0); }));
                row("threshold gray product x8", time_call([&](int k) { threshold_gray_x8<<<g8, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0); }));
            }
#define THR(NN)                                                                                  \
    snprintf(name, sizeof name, "threshold gray %d units, block %d", NN, bs);                    \
    row(name, time_call([&](int k) {                                                             \
            u32 per = bs * NN;                                                                   \
            thr_gray_n<NN><<<std::max(1u, (units + per - 1) / per), bs, 0, stream>>>(g[k], go[k], n, level, 255, 0); \
        }));
            THR(1) THR(2) THR(4) THR(8)
        }
        {
            int sms;
            CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
            for (int per_sm : {1, 2, 4, 8})
                for (int NN : {1, 2, 4}) {
                    char name[96];
                    snprintf(name, sizeof name, "threshold gray stride %d units, %d blocks/SM", NN, per_sm);
                    u32 gb = std::min<u32>(sms * per_sm, (units + 255) / 256);
                    row(name, time_call([&](int k) {
                            if (NN == 1) thr_gray_stride<1><<<gb, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0);
                            if (NN == 2) thr_gray_stride<2><<<gb, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0);
                            if (NN == 4) thr_gray_stride<4><<<gb, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0);
                        }));
                }
        }
        u32 groups = n / 4;
        row("gray now (1 group, 256)", time_call([&](int k) {
                rgba_to_gray<<<(groups + 1 + 255) / 256, 256, 0, stream>>>((const u32*)c[k], go[k], n, 0.2126f, 0.7152f, 0.0722f);
            }));
        for (int bs : {256, 512}) {
            char name[96];
#define GRAY(NN)                                                                                  \
    snprintf(name, sizeof name, "gray %d groups, block %d", NN, bs);                              \
    row(name, time_call([&](int k) {                                                              \
            u32 per = bs * NN;                                                                    \
            gray_n<NN><<<std::max(1u, (groups + per - 1) / per), bs, 0, stream>>>((const u32*)c[k], go[k], n, 0.2126f, 0.7152f, 0.0722f); \
        }));
            GRAY(1) GRAY(2) GRAY(4)
        }
        // The floor for a byte op: a device-to-device copy of the frame.
        row("copy gray frame d2d", time_call([&](int k) { cudaMemcpyAsync(go[k], g[k], n, cudaMemcpyDeviceToDevice, stream); }));
        row("copy RGBA frame d2d", time_call([&](int k) { cudaMemcpyAsync(co[k], c[k], (size_t)n * 4, cudaMemcpyDeviceToDevice, stream); }));
        // warp
        const double aff[6] = {0.96, -0.17, 40, 0.17, 0.96, -60};
        const double per[9] = {0.9, -0.1, 30, 0.05, 0.95, -20, 0.00002, 0.00001, 1};
        Matrix ma = invert_affine(aff), mp = invert3(per);
        u32 fill = 0xff000000u;
        int shapes[][2] = {{32, 8}};
        for (auto& sh : shapes) {
            for (int R : {1, 2, 4}) {
                dim3 blk(sh[0], sh[1]);
                dim3 grd((W + sh[0] - 1) / sh[0], ((H + R - 1) / R + sh[1] - 1) / sh[1]);
                char name[96];
                snprintf(name, sizeof name, "warp affine R=%d %dx%d", R, sh[0], sh[1]);
                row(name, time_call([&](int k) {
                        if (R == 1) warp_affine_r<1><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                        if (R == 2) warp_affine_r<2><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                        if (R == 4) warp_affine_r<4><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                    }));
                snprintf(name, sizeof name, "warp perspective R=%d %dx%d", R, sh[0], sh[1]);
                row(name, time_call([&](int k) {
                        if (R == 1) warp_persp_r<1><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
                        if (R == 2) warp_persp_r<2><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
                        if (R == 4) warp_persp_r<4><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
                    }));
            }
        }
        {
            dim3 blk(32, 8), grd((W + 31) / 32, ((H + 1) / 2 + 7) / 8);
            row("warp affine skip-outside", time_call([&](int k) {
                    warp_skip<false, false><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                }));
            row("warp affine skip-outside + pairs", time_call([&](int k) {
                    warp_skip<false, true><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                }));
            row("warp perspective skip-outside", time_call([&](int k) {
                    warp_skip<true, false><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
                }));
            row("warp perspective skip-outside + pairs", time_call([&](int k) {
                    warp_skip<true, true><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
                }));
            dim3 grd1((W + 31) / 32, (H + 7) / 8);
            row("warp affine plain loads R=2", time_call([&](int k) {
                    warp_plain<false, 2, 1><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                }));
            row("warp affine plain loads R=1", time_call([&](int k) {
                    warp_plain<false, 1, 1><<<grd1, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                }));
            row("warp affine __ldg R=2, 8 blocks/SM bound", time_call([&](int k) {
                    warp_plain<false, 2, 8><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, ma, 0, fill);
                }));
            row("warp perspective plain loads R=2", time_call([&](int k) {
                    warp_plain<true, 2, 1><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
                }));
            row("warp affine product (fast inside path)", time_call([&](int k) {
                    warp_affine_bilinear_rgba<<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H,
                        ma.m[0], ma.m[1], ma.m[2], ma.m[3], ma.m[4], ma.m[5], ma.m[6], ma.m[7], ma.m[8], 0, fill);
                }));
            row("warp affine product bounded", time_call([&](int k) {
                    warp_affine_bilinear_rgba_bounded<<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H,
                        ma.m[0], ma.m[1], ma.m[2], ma.m[3], ma.m[4], ma.m[5], ma.m[6], ma.m[7], ma.m[8], 0, fill);
                }));
            row("warp perspective product (fast inside path)", time_call([&](int k) {
                    warp_perspective_bilinear_rgba<<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H,
                        mp.m[0], mp.m[1], mp.m[2], mp.m[3], mp.m[4], mp.m[5], mp.m[6], mp.m[7], mp.m[8], 0, fill);
                }));
            // A zoom-out by 3 (boxes too large to stage: the global path).
            Matrix mz = ma;
            for (int k = 0; k < 6; k++) mz.m[k] *= 3.0f;
            row("warp affine product, zoom-out 3x", time_call([&](int k) {
                    warp_affine_bilinear_rgba<<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H,
                        mz.m[0], mz.m[1], mz.m[2], mz.m[3], mz.m[4], mz.m[5], mz.m[6], mz.m[7], mz.m[8], 0, fill);
                }));
            for (int pass = 0; pass < 3; pass++) {
                Matrix mm = pass == 0 ? ma : pass == 1 ? mp : mz;
                int rep = pass == 2;
                if (pass == 1) {
                    warp_persp_r<2><<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[0], W, H, mm, rep, fill);
                    warp_perspective_bilinear_rgba<<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[1], W, H,
                        mm.m[0], mm.m[1], mm.m[2], mm.m[3], mm.m[4], mm.m[5], mm.m[6], mm.m[7], mm.m[8], rep, fill);
                } else {
                    warp_affine_r<2><<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[0], W, H, mm, rep, fill);
                    warp_affine_bilinear_rgba<<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[1], W, H,
                        mm.m[0], mm.m[1], mm.m[2], mm.m[3], mm.m[4], mm.m[5], mm.m[6], mm.m[7], mm.m[8], rep, fill);
                }
                std::vector<unsigned char> a((size_t)n * 4), b((size_t)n * 4);
                CK(cudaMemcpy(a.data(), co[0], a.size(), cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(b.data(), co[1], b.size(), cudaMemcpyDeviceToHost));
                printf("fast-path output equals the old kernel's (case %d): %s\n", pass, a == b ? "yes" : "NO");
            }
            // Equal output to the product kernel?
            warp_affine_r<2><<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[0], W, H, ma, 0, fill);
            warp_plain<false, 2, 1><<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[1], W, H, ma, 0, fill);
            std::vector<unsigned char> h0((size_t)n * 4), h1((size_t)n * 4);
            CK(cudaMemcpy(h0.data(), co[0], h0.size(), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h1.data(), co[1], h1.size(), cudaMemcpyDeviceToHost));
            printf("plain-load output equals the product's: %s\n", h0 == h1 ? "yes" : "NO");
        }
        for (int k = 0; k < SETS; k++) {
            cudaFree(g[k]);
            cudaFree(go[k]);
            cudaFree(c[k]);
            cudaFree(co[k]);
        }
        cudaFree(level);
    }
    return 0;
}
