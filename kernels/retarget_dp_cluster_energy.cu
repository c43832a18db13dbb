// The cluster DP sweeps of energy energy in the wide shape
// (retarget_dp.cuh), Hopper on.
#include "retarget_dp.cuh"

#if __CUDA_ARCH__ >= 900
DP_CLUSTER_KERNEL(cluster_i32_energy, int, false, 4)
DP_CLUSTER_KERNEL(cluster_i64_energy, i64, false, 4)
#endif
