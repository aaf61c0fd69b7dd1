// batch_norm_math.h — what the batch norm kernels of both devices share (cpu/batch_norm.cpp,
// cuda/batch_norm.cu): the per-channel statistics and the per-element formulas.
//
// The input is seen as (N, C, S): channel c's M = N * S values are x[n, c, s]. The
// statistics of a channel come from one pass over its values, as sums of d = x - K and of
// d * d in BatchNormAcc (double), where K is the channel's first value: shifting by a
// value of the data keeps var = E[d^2] - E[d]^2 free of cancellation when the mean is far
// from zero (the "shifted data" algorithm). Then
//   forward:  y = (x - mean) * scale + b,  scale = rstd * w  (x - mean first: x * scale
//             + shift would cancel for a mean far from zero)
//   backward: xhat = (x - mean) * rstd,  sg = sum(g),  sgx = sum(g * xhat) (per channel)
//             dx = w * rstd * (g - sg / M - xhat * sgx / M)   (training: batch statistics;
//                  the batch mean and variance depend on x too)
//             dx = w * rstd * g                               (eval: running statistics)
//             dw = sgx,  db = sg
//
// Dtypes: the input x and output y (and g, dx) are of one dtype T; weight, bias and the
// running statistics (and dw, db) of one dtype P, which is T or -- "mixed" batch norm, as
// PyTorch's, for a float16 / bfloat16 x under autocast -- float32. Every value is converted
// to the compute type (float32 for a 16-bit T) as it is read and rounded once when stored;
// the saved mean and rstd are kept in the compute type.
#pragma once
#include <math.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "minitorch/elementwise_math.h"
#include "minitorch/tensor.h"

namespace minitorch {

using BatchNormAcc = double;

// The type a batch norm kernel computes an element of T in: float for float16 / bfloat16
// (read and written as 16 bits), T itself otherwise. Also the dtype of the saved mean, rstd.
template <class T>
using BatchNormCompute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Calls f(Tag<T>{}, Tag<P>{}) for an input of dtype x and parameters of dtype p: p == x, or
// a float16 / bfloat16 x with float32 parameters (mixed).
template <class F>
void dispatch_batch_norm(DType x, DType p, const char* op, F&& f)
{
    if (x == DType::Float16 && p == DType::Float32) return f(Tag<Half>{}, Tag<float>{});
    if (x == DType::BFloat16 && p == DType::Float32) return f(Tag<BFloat16>{}, Tag<float>{});
    if (x == DType::Float16 && p == x) return f(Tag<Half>{}, Tag<Half>{});
    if (x == DType::BFloat16 && p == x) return f(Tag<BFloat16>{}, Tag<BFloat16>{});
    if (x == DType::Float32 && p == x) return f(Tag<float>{}, Tag<float>{});
    if (x == DType::Float64 && p == x) return f(Tag<double>{}, Tag<double>{});
    throw TypeError(detail::str(op, ": unsupported dtypes: input ", x, ", parameters ", p));
}

// The parameters' dtype of a kernel call: that of the first parameter given, else the input's.
inline DType batch_norm_param_dtype(DType x, std::initializer_list<const Tensor*> params)
{
    for (const Tensor* t : params)
        if (*t) return (*t)->dtype;
    return x;
}

// A channel's mean and 1 / sqrt(biased var + eps) from its M values' shifted sums
// (s = sum of x - K, q = sum of (x - K)^2); var_unbiased gets var * M / (M - 1) for the
// running statistics (M > 1: the op checks it).
MT_HOST_DEVICE inline void batch_norm_stats(BatchNormAcc K, BatchNormAcc s, BatchNormAcc q, int64_t M, double eps,
                                            BatchNormAcc& mean, BatchNormAcc& rstd, BatchNormAcc& var_unbiased)
{
    const BatchNormAcc m = s / BatchNormAcc(M);
    BatchNormAcc var = q / BatchNormAcc(M) - m * m;
    if (var < 0) var = 0;  // rounding can leave a tiny negative value for constant data
    mean = K + m;
    rstd = BatchNormAcc(1) / sqrt(var + BatchNormAcc(eps));
    var_unbiased = M > 1 ? var * BatchNormAcc(M) / BatchNormAcc(M - 1) : var;
}

// eval: a channel's rstd from its running variance, 1 / sqrt(var + eps), in the compute type
// C: float for a float32 or 16-bit input, double for a float64 one. The one-pass CUDA eval
// kernel works it out again for each element, where float math costs nothing beside the
// memory traffic (a double division per element of a float32 input would, on GPUs with
// slow float64; a float64 input pays it, as its every other operation does).
template <class C, class P>
MT_HOST_DEVICE inline C batch_norm_eval_rstd(P running_var, double eps)
{
    return C(1) / math_sqrt(C(running_var) + C(eps));
}

// PyTorch's running update: running = (1 - momentum) * running + momentum * stat.
template <class T>
MT_HOST_DEVICE inline T batch_norm_running(T running, BatchNormAcc stat, double momentum)
{
    return T((1.0 - momentum) * BatchNormAcc(running) + momentum * stat);
}

// The input gradient is linear in g and x within a channel:
// dx = kg * g + kx * (x - mean) + kc (x - mean, not x: no cancellation for a mean far from 0).
// From the channel's mean, rstd, weight w (1 without one) and sums sg = sum(g),
// sgx = sum(g * xhat) over its M values; eval mode (running statistics, constants for
// the gradient) has kx = kc = 0.
MT_HOST_DEVICE inline void batch_norm_grad_coeffs(bool training, BatchNormAcc rstd, BatchNormAcc w,
                                                  BatchNormAcc sg, BatchNormAcc sgx, int64_t M, BatchNormAcc& kg,
                                                  BatchNormAcc& kx, BatchNormAcc& kc)
{
    kg = w * rstd;
    kx = kc = 0;
    if (!training) return;
    const BatchNormAcc b1 = sg / BatchNormAcc(M), b2 = sgx / BatchNormAcc(M);
    // w * rstd * (g - b1 - (x - mean) * rstd * b2)
    kx = -kg * rstd * b2;
    kc = -kg * b1;
}

}  // namespace minitorch
