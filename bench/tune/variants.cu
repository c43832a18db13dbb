// Variants of our own kernels (kernels/*.cu, included as they are) timed
// side by side the way `seamstream bench` times them (results and the
// variants tried and dropped: bench/results/peers-h100.md): 4 rotating
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
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
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
        auto row = [&](const char* name, double us) { printf("%-48s %8.2f\n", name, us); };
        char name[96];
        row("empty kernel (a graph node's own cost)", time_call([&](int) { empty_kernel<<<1, 32, 0, stream>>>(); }));
        // The floor for a byte op: a device-to-device copy of the frame.
        row("copy gray frame d2d", time_call([&](int k) { cudaMemcpyAsync(go[k], g[k], n, cudaMemcpyDeviceToDevice, stream); }));
        row("copy RGBA frame d2d", time_call([&](int k) { cudaMemcpyAsync(co[k], c[k], (size_t)n * 4, cudaMemcpyDeviceToDevice, stream); }));

        // threshold: the product's 2 and 8 units a thread, and grid-stride loops.
        u32 units = n / 16;
        u32 g2 = std::max(1u, (units + 511) / 512), g8 = std::max(1u, (units + 2047) / 2048);
        row("threshold gray x2", time_call([&](int k) { threshold_gray_x2<<<g2, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0); }));
        row("threshold gray x8", time_call([&](int k) { threshold_gray_x8<<<g8, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0); }));
        for (int per_sm : {1, 2, 4, 8})
            for (int NN : {1, 2, 4}) {
                snprintf(name, sizeof name, "threshold gray stride %d units, %d blocks/SM", NN, per_sm);
                u32 gb = std::min<u32>(sms * per_sm, (units + 255) / 256);
                row(name, time_call([&](int k) {
                        if (NN == 1) thr_gray_stride<1><<<gb, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0);
                        if (NN == 2) thr_gray_stride<2><<<gb, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0);
                        if (NN == 4) thr_gray_stride<4><<<gb, 256, 0, stream>>>(g[k], go[k], n, level, 255, 0);
                    }));
            }

        // RGBA → gray: the product (one group of 4 pixels a thread) and more a thread.
        u32 groups = n / 4;
        row("gray product (1 group, 256)", time_call([&](int k) {
                rgba_to_gray<<<(groups + 1 + 255) / 256, 256, 0, stream>>>((const u32*)c[k], go[k], n, 0.2126f, 0.7152f, 0.0722f);
            }));
        for (int bs : {256, 512})
            for (int NN : {1, 2, 4}) {
                snprintf(name, sizeof name, "gray %d groups, block %d", NN, bs);
                u32 gb = std::max(1u, (groups + bs * NN - 1) / (bs * NN));
                row(name, time_call([&](int k) {
                        const u32* in = (const u32*)c[k];
                        if (NN == 1) gray_n<1><<<gb, bs, 0, stream>>>(in, go[k], n, 0.2126f, 0.7152f, 0.0722f);
                        if (NN == 2) gray_n<2><<<gb, bs, 0, stream>>>(in, go[k], n, 0.2126f, 0.7152f, 0.0722f);
                        if (NN == 4) gray_n<4><<<gb, bs, 0, stream>>>(in, go[k], n, 0.2126f, 0.7152f, 0.0722f);
                    }));
            }

        // warp: the kernel before the inside path (1, 2 or 4 rows a thread),
        // against the product's kernels, whose output must equal it.
        const double aff[6] = {0.96, -0.17, 40, 0.17, 0.96, -60};
        const double per[9] = {0.9, -0.1, 30, 0.05, 0.95, -20, 0.00002, 0.00001, 1};
        Matrix ma = invert_affine(aff), mp = invert3(per), mz = ma;
        for (int k = 0; k < 6; k++) mz.m[k] *= 3.0f;  // a zoom-out by 3
        u32 fill = 0xff000000u;
        dim3 blk(32, 8), grd((W + 31) / 32, ((H + 1) / 2 + 7) / 8);
        for (int R : {1, 2, 4}) {
            dim3 gr((W + 31) / 32, ((H + R - 1) / R + 7) / 8);
            snprintf(name, sizeof name, "warp affine, before, R=%d", R);
            row(name, time_call([&](int k) {
                    const u32* in = (const u32*)c[k];
                    u32* out = (u32*)co[k];
                    if (R == 1) warp_affine_r<1><<<gr, blk, 0, stream>>>(in, W, H, out, W, H, ma, 0, fill);
                    if (R == 2) warp_affine_r<2><<<gr, blk, 0, stream>>>(in, W, H, out, W, H, ma, 0, fill);
                    if (R == 4) warp_affine_r<4><<<gr, blk, 0, stream>>>(in, W, H, out, W, H, ma, 0, fill);
                }));
        }
        row("warp perspective, before, R=2", time_call([&](int k) {
                warp_persp_r<2><<<grd, blk, 0, stream>>>((const u32*)c[k], W, H, (u32*)co[k], W, H, mp, 0, fill);
            }));
        auto product = [&](const char* kind, const Matrix& m, int rep, const u8* in, u8* out) {
            const u32* i32 = (const u32*)in;
            u32* o32 = (u32*)out;
            const float* q = m.m;
            if (kind[0] == 'a')
                warp_affine_bilinear_rgba<<<grd, blk, 0, stream>>>(i32, W, H, o32, W, H, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], rep, fill);
            else if (kind[0] == 'b')
                warp_affine_bilinear_rgba_bounded<<<grd, blk, 0, stream>>>(i32, W, H, o32, W, H, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], rep, fill);
            else
                warp_perspective_bilinear_rgba<<<grd, blk, 0, stream>>>(i32, W, H, o32, W, H, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], rep, fill);
        };
        row("warp affine, product", time_call([&](int k) { product("affine", ma, 0, c[k], co[k]); }));
        row("warp affine, product bounded", time_call([&](int k) { product("bounded", ma, 0, c[k], co[k]); }));
        row("warp perspective, product", time_call([&](int k) { product("perspective", mp, 0, c[k], co[k]); }));
        row("warp affine, product, zoom-out 3x", time_call([&](int k) { product("affine", mz, 1, c[k], co[k]); }));
        const char* kinds[4] = {"affine", "bounded", "perspective", "affine"};
        const Matrix* mats[4] = {&ma, &ma, &mp, &mz};
        for (int pass = 0; pass < 4; pass++) {
            int rep = pass == 3;
            if (pass == 2)
                warp_persp_r<2><<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[0], W, H, *mats[pass], rep, fill);
            else
                warp_affine_r<2><<<grd, blk, 0, stream>>>((const u32*)c[0], W, H, (u32*)co[0], W, H, *mats[pass], rep, fill);
            product(kinds[pass], *mats[pass], rep, c[0], co[1]);
            std::vector<unsigned char> a((size_t)n * 4), b((size_t)n * 4);
            CK(cudaMemcpy(a.data(), co[0], a.size(), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(b.data(), co[1], b.size(), cudaMemcpyDeviceToHost));
            printf("warp %s (pass %d): product output equals the kernel before: %s\n", kinds[pass], pass,
                   a == b ? "yes" : "NO");
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
