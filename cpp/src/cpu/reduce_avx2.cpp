// reduce_avx2.cpp — the float sums of reduce_loops.h with 32-byte (AVX2) vectors.
// CMakeLists.txt compiles this file alone with -mavx2; reduce.cpp calls it only when the CPU
// capability (vector_math.cpp) is AVX2. The lanes are the same arrays as in the baseline
// build, so the sums have the same bits.
#if defined(__x86_64__)
#include "reduce_loops.h"

namespace minitorch::cpu {

void sum_blocks_avx2_f32(const float* const* x, int streams, int64_t n, double* out)
{
    if (streams == 2) sum_blocks<2>(x, n, out);
    else sum_blocks<1>(x, n, out);
}

void sum_strip_avx2_f32(const float* x, int64_t R, int64_t inner, int64_t n, float* out)
{
    sum_strip(x, R, inner, n, out);
}

}  // namespace minitorch::cpu
#endif
