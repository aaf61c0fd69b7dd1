// elementwise_avx2.cpp — the loops of zip_loops.h with 32-byte (AVX2) vectors.
// CMakeLists.txt compiles this file alone with -mavx2 (no -mfma); elementwise.cpp calls it
// only where cpu_has_avx2(). The op and layout arrive as ints: zip_loops.h's enums are
// local to each file that includes it.
#if defined(__x86_64__)
#include "zip_loops.h"

namespace minitorch::cpu {

void arith_avx2_f32(int op, int layout, float* out, const float* a, const float* b, int64_t n)
{
    arith_contiguous<float, 8>(Arith(op), ZipLayout(layout), out, a, b, n);
}

void arith_avx2_f64(int op, int layout, double* out, const double* a, const double* b, int64_t n)
{
    arith_contiguous<double, 4>(Arith(op), ZipLayout(layout), out, a, b, n);
}

void cheap_map_avx2_f32(int op, float* out, const float* x, int64_t n)
{
    cheap_map_contiguous<float, 8>(CheapMap(op), out, x, n);
}

void cheap_map_avx2_f64(int op, double* out, const double* x, int64_t n)
{
    cheap_map_contiguous<double, 4>(CheapMap(op), out, x, n);
}

void ternary_avx2_f32(int op, float* out, const float* a, const float* b, const float* c, bool b_scalar, bool c_scalar,
                      float value, int64_t n)
{
    ternary_contiguous<float>(TernaryOp(op), out, a, b, c, b_scalar, c_scalar, value, n);
}

void ternary_avx2_f64(int op, double* out, const double* a, const double* b, const double* c, bool b_scalar,
                      bool c_scalar, double value, int64_t n)
{
    ternary_contiguous<double>(TernaryOp(op), out, a, b, c, b_scalar, c_scalar, value, n);
}

}  // namespace minitorch::cpu
#endif
