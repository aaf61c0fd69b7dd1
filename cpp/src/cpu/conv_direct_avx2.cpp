// conv_direct_avx2.cpp — the loops of conv_direct_loops.h with 32-byte (AVX2) vectors.
// CMakeLists.txt compiles this file alone with -mavx2 -mfma; conv_direct.cpp calls it only
// when the CPU capability (vector_math.cpp) is AVX2.
#if defined(__x86_64__)
#include "conv_direct_loops.h"

namespace minitorch::cpu {

namespace {
DirectShape shape_of(const int64_t* g) { return {g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10]}; }
}  // namespace

void conv_direct_forward_avx2_f32(float* y, const float* xp, const float* w, const int64_t* g)
{
    direct_forward<float, 8>(y, xp, w, shape_of(g));
}
void conv_direct_forward_avx2_f64(double* y, const double* xp, const double* w, const int64_t* g)
{
    direct_forward<double, 4>(y, xp, w, shape_of(g));
}
void conv_direct_weight_grad_avx2_f32(float* acc, const float* gy, int64_t gw, const float* xp, const int64_t* g)
{
    direct_weight_grad<float, 8>(acc, gy, gw, xp, shape_of(g));
}
void conv_direct_weight_grad_avx2_f64(double* acc, const double* gy, int64_t gw, const double* xp, const int64_t* g)
{
    direct_weight_grad<double, 4>(acc, gy, gw, xp, shape_of(g));
}

}  // namespace minitorch::cpu
#endif
