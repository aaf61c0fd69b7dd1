// quantized.h — the integer GEMM op behind minitorch.ops.quantized (ops/quantized.cpp).
#pragma once
#include "minitorch/tensor.h"

namespace minitorch {

// out (M, N) of out_dtype from uint8 a (M, K) and int8 b (N, K) (Linear's weight layout):
// acc = sum_k (a - a_zp) * (b - b_zp[n]), then by out_dtype
//   int32:   acc
//   uint8:   requantized: clamp(rint((acc + bias / s) * (s / out_scale)) + out_zp, relu ? out_zp : 0, 255)
//   float32: acc * s + bias (relu: max(., 0))
// with s = act_times_w[n] (a_scale * b_scale[n], float32 (N,)); bias float32 (N,) or null.
// No autograd: quantized tensors carry no gradients.
Tensor quantized_gemm(const Tensor& a, int64_t a_zp, const Tensor& b, const Tensor& b_zp, const Tensor& bias,
                      const Tensor& act_times_w, DType out_dtype, double out_scale, int64_t out_zp, bool relu);

}  // namespace minitorch
