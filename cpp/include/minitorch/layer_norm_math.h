// layer_norm_math.h — what the layer norm kernels of both devices share (cpu/layer_norm.cpp,
// cuda/layer_norm.cu): the precision a row's sums are taken in. Every dtype sums in double,
// on the CPU and on a GPU alike, so the two devices give the same statistics: a float32 row of
// a few thousand values far from zero keeps its mean and variance exact to float32, and the
// kernels stay bound by memory, not by the few double additions per element.
#pragma once

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE

namespace minitorch {

using LayerNormAcc = double;

// One row's term of the weight's gradient: g * xhat with xhat = (x - mean) * rstd (the
// bias's is g itself); summed over the rows in LayerNormAcc.
template <class T>
MT_HOST_DEVICE inline LayerNormAcc layer_norm_weight_term(T g, T x, T mean, T rstd)
{
    return LayerNormAcc(g) * LayerNormAcc((x - mean) * rstd);
}

}  // namespace minitorch
