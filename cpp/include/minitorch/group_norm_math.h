// group_norm_math.h — what the group norm kernels of both devices share (cpu/group_norm.cpp,
// cuda/group_norm.cu): the precision sums are taken in and the per-element formulas.
//
// The input is seen as a contiguous (N, C, S) tensor whose C channels form G groups of
// Cg = C / G adjacent channels. Row (n, g) -- the Cg * S = D values of sample n's group g --
// is contiguous, so the statistics are those of a layer norm over rows of D values, and
// the affine is per channel c = g * Cg + j / S for the row's value j:
//   forward:  mean, rstd = 1 / sqrt(biased var + eps) of each row from one pass of sums of
//             d = x - K and d^2, K the row's first value (the "shifted data" algorithm, as
//             batch_norm_math.h: var = E[d^2] - E[d]^2 does not cancel for a row far from 0),
//             then y = (x - mean) * scale + b[c],  scale = rstd * w[c]
//   backward: per (n, c) plane:  sg = sum_s g,  sgx = sum_s g * xhat,  xhat = (x - mean) * rstd
//             per (n, g) row:    m1 = sum_{c in g} w[c] sg / D,  m2 = sum_{c in g} w[c] sgx / D
//             dx = rstd * (w[c] g - m1 - xhat * m2)          (the layer norm's formula with
//                                                              gw = g * w[c], per row)
//             dw[c] = sum_n sgx[n, c],  db[c] = sum_n sg[n, c]
// Sums are taken in GroupNormAcc (double) on both devices, as the layer norm's; values are
// converted to GroupNormCompute<T> (float32 for float16 / bfloat16, read and written as 16
// bits) as they are read and rounded once when stored. The saved mean and rstd (N, G) are
// GroupNormAcc: a float32 mean of a row far from zero (1000 +- 0.01) rounded to float32 would
// move every xhat by up to half a float32 step times rstd (0.005 there), so the kernels
// subtract the mean in two parts (group_norm_split).
#pragma once
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE
#include "minitorch/half.h"

namespace minitorch {

using GroupNormAcc = double;

template <class T>
using GroupNormCompute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// A row's mean and 1 / sqrt(biased var + eps) from the sums s of d = x - K and q of d^2
// over its D values.
MT_HOST_DEVICE inline void group_norm_stats(GroupNormAcc K, GroupNormAcc s, GroupNormAcc q, int64_t D, double eps,
                                            GroupNormAcc& mean, GroupNormAcc& rstd)
{
    const GroupNormAcc m = s / GroupNormAcc(D);
    GroupNormAcc var = q / GroupNormAcc(D) - m * m;
    if (var < 0) var = 0;  // rounding can leave a tiny negative value for constant data
    mean = K + m;
    rstd = GroupNormAcc(1) / sqrt(var + GroupNormAcc(eps));
}

// The mean as hi + lo, both of the compute type C: x - mean is (x - hi) - lo, and x - hi is
// exact for x near the mean, so the result keeps the double mean's precision; the kernels
// fold the - lo into a per-channel or per-row constant.
template <class C>
MT_HOST_DEVICE inline void group_norm_split(GroupNormAcc mean, C& hi, C& lo)
{
    hi = C(mean);
    lo = C(mean - GroupNormAcc(hi));
}

// dx is linear in g and x within a row: dx = kg * g + kx * (x - mean) + kc, with kg = rstd * w[c]
// per channel and, per row, from the sums ws1 = sum_{c in g} w[c] sg[c] and
// ws2 = sum_{c in g} w[c] sgx[c]:  kx = -rstd^2 * ws2 / D,  kc = -rstd * ws1 / D.
MT_HOST_DEVICE inline void group_norm_row_coeffs(GroupNormAcc rstd, GroupNormAcc ws1, GroupNormAcc ws2, int64_t D,
                                                 GroupNormAcc& kx, GroupNormAcc& kc)
{
    kx = -rstd * rstd * ws2 / GroupNormAcc(D);
    kc = -rstd * ws1 / GroupNormAcc(D);
}

}  // namespace minitorch
