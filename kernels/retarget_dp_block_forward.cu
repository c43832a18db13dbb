// The one-block DP sweeps of forward energy (retarget_dp.cuh), where
// clusters are missing.
#include "retarget_dp.cuh"

DP_BLOCK(i32_forward, int, true)
DP_BLOCK(i64_forward, i64, true)
