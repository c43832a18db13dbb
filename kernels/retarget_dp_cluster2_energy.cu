// The cluster DP sweeps of energy energy in the narrow shape
// (retarget_dp.cuh), Hopper on.
#include "retarget_dp.cuh"

#if __CUDA_ARCH__ >= 900
DP_CLUSTER_KERNEL(cluster2_i32_energy, int, false, 2)
DP_CLUSTER_KERNEL(cluster2_i64_energy, i64, false, 2)
#endif
