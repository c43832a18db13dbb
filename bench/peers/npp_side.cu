// NPP timed the way `seamstream bench` times our operations, on the same
// cases with the same parameters, for the three-way table of
// bench/results/peers-h100.md.
//
// Method (src/cuda/timing.rs): random inputs; 20 warm-up calls; then `runs`
// batches of 8 calls, each batch captured once into a CUDA graph and
// replayed between two CUDA events, the calls rotating over 4 input/output
// sets so that a 1080p frame is not simply re-read from the 50 MB L2. The
// figure is per call: median, 10th and 90th percentile over the batches. A
// call that cannot be captured is timed as 8 direct calls instead (the
// "method" field says which).
//
// Built and run on the GPU host (bench/gpu-check.sh peers):
//   nvcc -O2 -arch=sm_90 npp_side.cu -lnppif -lnppig -lnppist -lnppidei \
//        -lnppitc -lnppicc -lnppial -lnppc -o npp_side
//   ./npp_side [runs] > npp.json
#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e = (x);                                                             \
        if (e != cudaSuccess) {                                                          \
            fprintf(stderr, "CUDA %s at line %d\n", cudaGetErrorString(e), __LINE__);    \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static const int SETS = 4, BATCH = 8, WARMUP = 20;
static NppStreamContext ctx;
static cudaStream_t stream;

struct Timing {
    double p10, median, p90;
    const char* method;
    int status;
};

// Times call(i) (one call on set i % SETS) as described at the top.
static Timing time_call(const std::function<NppStatus(int)>& call, int runs) {
    Timing t = {0, 0, 0, "graph", 0};
    for (int i = 0; i < WARMUP; i++) {
        NppStatus st = call(i % SETS);
        if (st != NPP_SUCCESS) {
            t.status = (int)st;
            return t;
        }
    }
    CK(cudaStreamSynchronize(stream));
    cudaGraphExec_t exec = nullptr;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess) {
        bool ok = true;
        for (int i = 0; i < BATCH; i++) ok &= call(i % SETS) == NPP_SUCCESS;
        cudaGraph_t graph = nullptr;
        ok &= cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr;
        if (ok && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) exec = nullptr;
        if (graph) cudaGraphDestroy(graph);
    }
    cudaGetLastError();  // a refused capture leaves its error behind
    if (!exec) t.method = "direct";
    CK(cudaStreamSynchronize(stream));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> us;
    for (int r = 0; r < runs; r++) {
        CK(cudaEventRecord(a, stream));
        if (exec) {
            CK(cudaGraphLaunch(exec, stream));
        } else {
            for (int i = 0; i < BATCH; i++) call(i % SETS);
        }
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1000.0 / BATCH);
    }
    std::sort(us.begin(), us.end());
    t.p10 = us[us.size() / 10];
    t.median = us[us.size() / 2];
    t.p90 = us[us.size() * 9 / 10];
    if (exec) cudaGraphExecDestroy(exec);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t;
}

// An affine matrix mapping source to destination, as NPP wants it, from
// ours (the same row-major 2×3, `warp:affine=[...]` in src/bench/mod.rs).
static const double AFFINE[2][3] = {{0.96, -0.17, 40}, {0.17, 0.96, -60}};
static const double PERSPECTIVE[3][3] = {
    {0.9, -0.1, 30}, {0.05, 0.95, -20}, {0.00002, 0.00001, 1}};

int main(int argc, char** argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int dev = 0;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    ctx.hStream = stream;
    ctx.nCudaDeviceId = dev;
    ctx.nMultiProcessorCount = p.multiProcessorCount;
    ctx.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    ctx.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    ctx.nSharedMemPerBlock = p.sharedMemPerBlock;
    cudaDeviceGetAttribute(&ctx.nCudaDevAttrComputeCapabilityMajor,
                           cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&ctx.nCudaDevAttrComputeCapabilityMinor,
                           cudaDevAttrComputeCapabilityMinor, dev);
    cudaStreamGetFlags(stream, &ctx.nStreamFlags);
    const NppLibraryVersion* v = nppGetLibVersion();
    printf("{\"peer\":\"NPP %d.%d.%d\",\"device\":\"%s\",\"runs\":%d,\"rows\":[\n", v->major,
           v->minor, v->build, p.name, runs);
    bool first = true;
    int sizes[2][2] = {{1920, 1080}, {3840, 2160}};
    for (auto& s : sizes) {
        int W = s[0], H = s[1];
        size_t n1 = (size_t)W * H, n4 = n1 * 4;
        std::vector<unsigned char> host(n4);
        srand(1);
        for (auto& b : host) b = rand() & 255;
        Npp8u *g[SETS], *go[SETS], *c[SETS], *co[SETS], *tmp;
        Npp32s* integral[SETS];
        Npp64f* squares[SETS];
        size_t iw = (size_t)W + 1, ih = (size_t)H + 1;
        for (int k = 0; k < SETS; k++) {
            CK(cudaMalloc(&g[k], n1));
            CK(cudaMalloc(&go[k], n1));
            CK(cudaMalloc(&c[k], n4));
            CK(cudaMalloc(&co[k], n4));
            CK(cudaMalloc(&integral[k], iw * ih * 4));
            CK(cudaMalloc(&squares[k], iw * ih * 8));
            CK(cudaMemcpy(g[k], host.data(), n1, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(c[k], host.data(), n4, cudaMemcpyHostToDevice));
        }
        CK(cudaMalloc(&tmp, n4));
        // Our gaussian:sigma=2.5 taps: radius ceil(3σ) = 8, exp(−x²/2σ²), normalised.
        float taps[17];
        double sum = 0;
        for (int i = 0; i < 17; i++) sum += taps[i] = expf(-(i - 8) * (i - 8) / (2.f * 2.5f * 2.5f));
        for (auto& t : taps) t = (float)(t / sum);
        Npp32f* dtaps;
        CK(cudaMalloc(&dtaps, sizeof taps));
        CK(cudaMemcpy(dtaps, taps, sizeof taps, cudaMemcpyHostToDevice));
        NppiSize sz = {W, H};
        NppiPoint zero = {0, 0};
        NppiRect rect = {0, 0, W, H};
        int W4 = W * 4;
        struct Case {
            const char* op;
            const char* npp;
            std::function<NppStatus(int)> call;
        };
        std::vector<Case> cases = {
            {"gaussian 17 taps RGBA", "FilterRowBorder32f + FilterColumnBorder32f 8u C4 (8u between)",
             [&](int k) {
                 NppStatus a = nppiFilterRowBorder32f_8u_C4R_Ctx(c[k], W4, sz, zero, tmp, W4, sz, dtaps,
                                                                  17, 8, NPP_BORDER_REPLICATE, ctx);
                 return a ? a
                          : nppiFilterColumnBorder32f_8u_C4R_Ctx(tmp, W4, sz, zero, co[k], W4, sz,
                                                                 dtaps, 17, 8, NPP_BORDER_REPLICATE,
                                                                 ctx);
             }},
            {"gaussian 17 taps gray", "FilterRowBorder32f + FilterColumnBorder32f 8u C1 (8u between)",
             [&](int k) {
                 NppStatus a = nppiFilterRowBorder32f_8u_C1R_Ctx(g[k], W, sz, zero, tmp, W, sz, dtaps,
                                                                  17, 8, NPP_BORDER_REPLICATE, ctx);
                 return a ? a
                          : nppiFilterColumnBorder32f_8u_C1R_Ctx(tmp, W, sz, zero, go[k], W, sz,
                                                                 dtaps, 17, 8, NPP_BORDER_REPLICATE,
                                                                 ctx);
             }},
            {"box r=8 gray", "FilterBoxBorder 8u C1 17x17",
             [&](int k) {
                 return nppiFilterBoxBorder_8u_C1R_Ctx(g[k], W, sz, zero, go[k], W, sz, NppiSize{17, 17},
                                                       NppiPoint{8, 8}, NPP_BORDER_REPLICATE, ctx);
             }},
            {"box r=8 RGBA", "FilterBoxBorder 8u C4 17x17",
             [&](int k) {
                 return nppiFilterBoxBorder_8u_C4R_Ctx(c[k], W4, sz, zero, co[k], W4, sz,
                                                       NppiSize{17, 17}, NppiPoint{8, 8},
                                                       NPP_BORDER_REPLICATE, ctx);
             }},
            {"warp affine bilinear RGBA", "WarpAffine 8u C4 linear (writes only pixels with a source)",
             [&](int k) {
                 return nppiWarpAffine_8u_C4R_Ctx(c[k], sz, W4, rect, co[k], W4, rect, AFFINE,
                                                  NPPI_INTER_LINEAR, ctx);
             }},
            {"warp perspective bilinear RGBA", "WarpPerspective 8u C4 linear (writes only pixels with a source)",
             [&](int k) {
                 return nppiWarpPerspective_8u_C4R_Ctx(c[k], sz, W4, rect, co[k], W4, rect,
                                                       PERSPECTIVE, NPPI_INTER_LINEAR, ctx);
             }},
            {"threshold gray", "CompareC 8u C1 GREATER 128 (binary: 255 or 0)",
             [&](int k) {
                 return nppiCompareC_8u_C1R_Ctx(g[k], W, 128, go[k], W, sz, NPP_CMP_GREATER, ctx);
             }},
            {"threshold gray", "Threshold_GTVal 8u C1 (v > 128 -> 255, else kept)",
             [&](int k) {
                 return nppiThreshold_GTVal_8u_C1R_Ctx(g[k], W, go[k], W, sz, 128, 255, ctx);
             }},
            {"integral u32 gray", "Integral 8u32s C1",
             [&](int k) {
                 return nppiIntegral_8u32s_C1R_Ctx(g[k], W, integral[k], (int)iw * 4, sz, 0, ctx);
             }},
            {"integral u32 + squared gray", "SqrIntegral 8u32s64f C1 (squares in f64)",
             [&](int k) {
                 return nppiSqrIntegral_8u32s64f_C1R_Ctx(g[k], W, integral[k], (int)iw * 4,
                                                        squares[k], (int)iw * 8, sz, 0, 0.0, ctx);
             }},
            {"RGBA to gray", "RGBToGray 8u AC4C1 (BT.601 weights)",
             [&](int k) { return nppiRGBToGray_8u_AC4C1R_Ctx(c[k], W4, go[k], W, sz, ctx); }},
        };
        for (auto& cs : cases) {
            Timing t = time_call(cs.call, runs);
            fprintf(stderr, "%-32s %dx%d  %8.2f us  (%s; %s)\n", cs.op, W, H, t.median, t.method, cs.npp);
            printf("%s{\"op\":\"%s\",\"width\":%d,\"height\":%d,\"call\":\"%s\",", first ? "" : ",\n",
                   cs.op, W, H, cs.npp);
            if (t.status)
                printf("\"error\":\"NPP status %d\"}", t.status);
            else
                printf("\"median_us\":%.3f,\"p10_us\":%.3f,\"p90_us\":%.3f,\"method\":\"%s\"}", t.median,
                       t.p10, t.p90, t.method);
            first = false;
        }
        for (int k = 0; k < SETS; k++) {
            cudaFree(g[k]);
            cudaFree(go[k]);
            cudaFree(c[k]);
            cudaFree(co[k]);
            cudaFree(integral[k]);
            cudaFree(squares[k]);
        }
        cudaFree(tmp);
        cudaFree(dtaps);
    }
    printf("\n]}\n");
    return 0;
}
