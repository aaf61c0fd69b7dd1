// scan_math.h — one step of a running scan (cumsum, cumprod, logcumsumexp): the value a
// line starts from and how the next value joins the running one, written once for the CPU
// and the CUDA kernels (cpu/scan.cpp, cuda/scan.cu). Every step is associative, which is what
// lets the GPU kernels combine pieces of a line in any grouping (warp shuffles, tiles).
#pragma once
#include <math.h>

#include <type_traits>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE, is_nan
#include "minitorch/kernels.h"           // ScanOp

namespace minitorch {

// Where a line starts: 0 for a sum, 1 for a product, -inf for a log-sum-exp (exp(-inf) = 0).
template <class A>
MT_HOST_DEVICE inline A scan_identity(ScanOp op)
{
    if constexpr (std::is_floating_point_v<A>)
        if (op == ScanOp::LogSumExp) return A(-INFINITY);
    return op == ScanOp::Prod ? A(1) : A(0);
}

// log(1 + exp(d)) for d <= 0. On the GPU a call, not inlined: inlined into the look-back scan
// kernel (cuda/scan.cu), the double exp and log1p made ptxas spill registers there.
template <class A>
#if defined(__CUDACC__)
__host__ __device__ __noinline__
#endif
A scan_log1p_exp(A d)
{
    return math_log1p(math_exp(d));
}

// a op b, in the accumulator type A (double for floats, int64 for integers). LogSumExp is
// log(exp(a) + exp(b)) written as hi + log1p(exp(lo - hi)) with hi the larger: exp of a
// number <= 0 cannot overflow, so [1000, 1000] gives 1000 + log 2, not inf. When hi is
// +inf or lo is -inf the sum is hi itself (lo - hi would be inf - inf = NaN); a NaN
// stays NaN. Integers never take LogSumExp (logcumsumexp refuses them).
template <class A>
MT_HOST_DEVICE inline A scan_combine(ScanOp op, A a, A b)
{
    if (op == ScanOp::Sum) return a + b;
    if (op == ScanOp::Prod) return a * b;
    if constexpr (std::is_floating_point_v<A>) {
        if (is_nan(a) || is_nan(b)) return a + b;
        const A hi = a > b ? a : b, lo = a > b ? b : a;
        if (hi == A(INFINITY) || lo == A(-INFINITY)) return hi;
        return hi + scan_log1p_exp(lo - hi);
    } else {
        return a + b;
    }
}

}  // namespace minitorch
