// vector_math_avx2.cpp — the loops of vector_loops.h with 32-byte (AVX2) vectors.
// CMakeLists.txt compiles this file alone with -mavx2 -mfma; vector_math.cpp calls it only
// after checking that the CPU has both.
#include <cstdlib>  // defines __GLIBC__ where it applies

#if defined(__x86_64__) && defined(__GLIBC__)
#include "vector_loops.h"

namespace minitorch::cpu {

void vector_map_avx2_f32(bool is_sigmoid, void* fn, float* out, const float* in, int64_t n)
{
    vector_loop<float, 8>(is_sigmoid, fn, out, in, n);
}

void vector_map_avx2_f64(bool is_sigmoid, void* fn, double* out, const double* in, int64_t n)
{
    vector_loop<double, 4>(is_sigmoid, fn, out, in, n);
}

}  // namespace minitorch::cpu
#endif
