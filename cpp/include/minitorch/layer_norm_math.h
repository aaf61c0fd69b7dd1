// layer_norm_math.h — what the layer norm kernels of both devices share (cpu/layer_norm.cpp,
// cuda/layer_norm.cu): the precision a row's sums are taken in. Every dtype sums in double,
// on the CPU and on a GPU alike, so the two devices give the same statistics: a float32 row of
// a few thousand values far from zero keeps its mean and variance exact to float32, and the
// kernels stay bound by memory, not by the few double additions per element.
#pragma once

namespace minitorch {

using LayerNormAcc = double;

}  // namespace minitorch
