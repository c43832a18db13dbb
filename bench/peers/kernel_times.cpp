// Kernel durations of any CUDA program, as CUPTI's activity records give
// them: the same figure torch.profiler reports for CV-CUDA in
// cvcuda_side.py, so that ours, NPP's and CV-CUDA's kernel times can be put
// side by side measured one way.
//
// Loaded by the CUDA driver itself through CUDA_INJECTION64_PATH; at exit it
// appends one line a kernel name to $KERNEL_TIMES_OUT (or stderr):
//   <tag>\t<kernel>\t<launches>\t<total ns>\t<median ns>
// where <tag> is $KERNEL_TIMES_TAG.
//
// Built on the GPU host (bench/gpu-check.sh peers); KV is the newest
// CUpti_ActivityKernel<KV> record the toolkit's CUPTI defines:
//   nvcc -shared -Xcompiler -fPIC -DKV=9 -I$CUPTI/include kernel_times.cpp \
//        -L$CUPTI/lib64 -lcupti -Xlinker -rpath=$CUPTI/lib64 -o libkernel_times.so
#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
typedef CAT(CUpti_ActivityKernel, KV) KernelRecord;

static std::mutex lock;
static std::map<std::string, std::vector<unsigned long long>> durations;

static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = 8 << 20;
    *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    CUpti_Activity* record = nullptr;
    std::lock_guard<std::mutex> g(lock);
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            auto* k = reinterpret_cast<KernelRecord*>(record);
            durations[k->name ? k->name : "?"].push_back(k->end - k->start);
        }
    }
    free(buffer);
}

static void report() {
    cuptiActivityFlushAll(1);
    std::lock_guard<std::mutex> g(lock);
    const char* path = getenv("KERNEL_TIMES_OUT");
    const char* tag = getenv("KERNEL_TIMES_TAG");
    FILE* f = path ? fopen(path, "a") : stderr;
    if (!f) f = stderr;
    for (auto& [name, d] : durations) {
        unsigned long long total = 0;
        for (auto v : d) total += v;
        std::sort(d.begin(), d.end());
        fprintf(f, "%s\t%s\t%zu\t%llu\t%llu\n", tag ? tag : "", name.c_str(), d.size(), total,
                d[d.size() / 2]);
    }
    if (f != stderr) fclose(f);
}

extern "C" int InitializeInjection(void) {
    if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) return 0;
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    atexit(report);
    return 1;
}
