// stats_math.h — what reduce_stats computes on one line (var, std, logsumexp, norm),
// written once for the CPU kernel (cpu/reduce.cpp) and the CUDA kernels (cuda/reduce.cu).
//
// Each line is summarized by a StatState of three doubles. A value joins it with
// stat_take; two summaries of parts of a line (two threads' shares, two slices of a long
// row) join with stat_merge, so any split of a line gives the same result up to rounding.
//   Var, Std    (n, mean, m2): Welford's running count, mean and sum of squared deviations;
//               merged with Chan's formula. var = m2 / max(n - correction, 0) (PyTorch's
//               divisor: 0 / 0 = NaN for one value with Bessel's correction).
//   LogSumExp   (m, s, -): the running max and the sum of exp(x - m), rescaled when the max
//               grows. Unlike softmax_merge, equal maxima add their counts without exp(m - m),
//               so a line of +inf gives +inf (as PyTorch's logsumexp), not NaN; a NaN makes
//               s NaN for good.
//   Norm        (acc, -, -): sum |x| (p = 1), sum x^2 (p = 2, then sqrt), max / min |x|
//               (p = +-inf, a NaN wins), the count of non-zeros (p = 0), sum |x|^p (then
//               ^(1/p)) for other p.
#pragma once
#include <math.h>

#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE
#include "minitorch/kernels.h"

namespace minitorch {

struct StatState {
    double a, b, c;
};

MT_HOST_DEVICE inline StatState stat_none(const StatReduce& spec)
{
    if (spec.kind == StatReduce::LogSumExp) return {-INFINITY, 0.0, 0.0};
    if (spec.kind == StatReduce::Norm && spec.param == -INFINITY) return {INFINITY, 0.0, 0.0};
    return {0.0, 0.0, 0.0};
}

// The larger (is_max) or smaller of a and b; a NaN wins and stays.
MT_HOST_DEVICE inline double nan_extreme(bool is_max, double a, double b)
{
    if (a != a || b != b) return a != a ? a : b;
    return (is_max ? b > a : b < a) ? b : a;
}

MT_HOST_DEVICE inline void stat_merge(const StatReduce& spec, StatState& s, const StatState& o)
{
    switch (spec.kind) {
        case StatReduce::Var:
        case StatReduce::Std: {
            if (o.a == 0) return;
            if (s.a == 0) {
                s = o;
                return;
            }
            const double n = s.a + o.a, d = o.b - s.b;
            s.c += o.c + d * d * (s.a * o.a / n);
            s.b += d * (o.a / n);
            s.a = n;
            return;
        }
        case StatReduce::LogSumExp:
            if (o.a > s.a) {
                s.b = s.b * exp(s.a - o.a) + o.b;
                s.a = o.a;
            } else if (o.a == s.a) {
                s.b += o.b;
            } else {
                s.b += o.b * exp(o.a - s.a);
            }
            return;
        case StatReduce::Norm:
            if (spec.param == INFINITY || spec.param == -INFINITY) s.a = nan_extreme(spec.param > 0, s.a, o.a);
            else s.a += o.a;
            return;
    }
}

MT_HOST_DEVICE inline void stat_take(const StatReduce& spec, StatState& s, double x)
{
    switch (spec.kind) {
        case StatReduce::Var:
        case StatReduce::Std: {
            s.a += 1;
            const double d = x - s.b;
            s.b += d / s.a;
            s.c += d * (x - s.b);
            return;
        }
        case StatReduce::LogSumExp:
            if (x != x) s.b = x;
            else stat_merge(spec, s, {x, 1.0, 0.0});
            return;
        case StatReduce::Norm: {
            const double p = spec.param, ax = fabs(x);
            if (p == INFINITY || p == -INFINITY) s.a = nan_extreme(p > 0, s.a, ax);
            else if (p == 0) s.a += x != 0;
            else if (p == 1) s.a += ax;
            else if (p == 2) s.a += ax * ax;
            else s.a += pow(ax, p);
            return;
        }
    }
}

// The line's statistic from its summary.
MT_HOST_DEVICE inline double stat_result(const StatReduce& spec, const StatState& s)
{
    switch (spec.kind) {
        case StatReduce::Var:
        case StatReduce::Std: {
            const double dof = s.a - spec.param;
            const double var = s.c / (dof > 0 ? dof : 0.0);
            return spec.kind == StatReduce::Std ? sqrt(var) : var;
        }
        case StatReduce::LogSumExp: return s.a + log(s.b);
        case StatReduce::Norm: {
            const double p = spec.param;
            if (p == 2) return sqrt(s.a);
            if (p == 0 || p == 1 || p == INFINITY || p == -INFINITY) return s.a;
            return pow(s.a, 1.0 / p);
        }
    }
    return 0;
}

// The line's mean (Var and Std): NaN for an empty line, as mean() of nothing.
MT_HOST_DEVICE inline double stat_mean(const StatState& s) { return s.a > 0 ? s.b : NAN; }

}  // namespace minitorch
