// The profiled DP sweeps (tests only: src/cuda/ops/retarget/profile.rs):
// the forward sweeps, which also write their timings.
#include "retarget_dp.cuh"

extern "C" __global__ void __launch_bounds__(DP_MAX_WARPS_BLOCK * 32, 1)
    seam_dp_block_i32_forward_profile(DP_PARAMS, u64* prof) {
    dp_sweep<int, true, false, true, 4>(DP_ARGS(int), prof);
}

#if __CUDA_ARCH__ >= 900
DP_CLUSTER_PROFILE(cluster_i32_forward, int, 4)
DP_CLUSTER_PROFILE(cluster_i64_forward, i64, 4)
DP_CLUSTER_PROFILE(cluster2_i32_forward, int, 2)
DP_CLUSTER_PROFILE(cluster2_i64_forward, i64, 2)
#endif
