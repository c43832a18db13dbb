// The cluster DP sweeps of forward energy in the narrow shape
// (retarget_dp.cuh), Hopper on.
#include "retarget_dp.cuh"

#if __CUDA_ARCH__ >= 900
DP_CLUSTER_KERNEL(cluster2_i32_forward, int, true, 2)
DP_CLUSTER_KERNEL(cluster2_i64_forward, i64, true, 2)
#endif
