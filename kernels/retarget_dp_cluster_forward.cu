// The cluster DP sweeps of forward energy in the wide shape
// (retarget_dp.cuh), Hopper on.
#include "retarget_dp.cuh"

#if __CUDA_ARCH__ >= 900
DP_CLUSTER_KERNEL(cluster_i32_forward, int, true, 4)
DP_CLUSTER_KERNEL(cluster_i64_forward, i64, true, 4)
#endif
