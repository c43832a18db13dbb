// The one-block DP sweeps of energy energy (retarget_dp.cuh), where
// clusters are missing.
#include "retarget_dp.cuh"

DP_BLOCK(i32_energy, int, false)
DP_BLOCK(i64_energy, i64, false)
