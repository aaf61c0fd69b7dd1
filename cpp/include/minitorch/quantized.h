// quantized.h — the integer GEMM op behind minitorch.ops.quantized (ops/quantized.cpp).
#pragma once
#include <array>
#include <utility>

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

// uint8 (N, O, OH, OW): the quantized 2-D convolution of uint8 x (N, C, H, W) (zero point x_zp,
// which is also what the zero padding holds) by int8 w (O, C/groups, KH, KW), its sums
// requantized as quantized_gemm's uint8 output (w_zp, bias, act_times_w: (O,)). CPU tensors
// only, the im2col fused into the GEMM (cpu/qgemm.cpp); minitorch.ops.quantized.conv2d calls it.
Tensor quantized_conv2d(const Tensor& x, int64_t x_zp, const Tensor& w, const Tensor& w_zp, const Tensor& bias,
                        const Tensor& act_times_w, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                        std::array<int64_t, 2> dil, int64_t groups, double out_scale, int64_t out_zp, bool relu);

// uint8 (N, C, OH, OW): max pooling of uint8 x (N, C, H, W) on its integers (a quantized tensor
// keeps its qparams through max pooling). The window arguments and output size are max_pool2d's.
// CPU tensors only.
Tensor quantized_max_pool2d(const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                            std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode);

// The int8 weight b (N, K) with zero points b_zp (int32 (N,)) packed once for
// quantized_gemm_packed: int16 column panels (cpu/quantized_cpu.h, pack_cols). CPU tensors only.
Tensor quantized_pack_weight(const Tensor& b, const Tensor& b_zp);

// quantized_gemm with b given packed (quantized_pack_weight of a weight with N rows): the same
// results, without widening b on every call. CPU tensors only.
Tensor quantized_gemm_packed(const Tensor& a, int64_t a_zp, const Tensor& packed, int64_t N, const Tensor& b_zp,
                             const Tensor& bias, const Tensor& act_times_w, DType out_dtype, double out_scale,
                             int64_t out_zp, bool relu);

// uint8 / int8 (out_dtype) of x's shape: quantize_per_tensor of float32 x in one pass,
// clamp(rint(x * inv_scale) + zero_point, 0 | -128, 255 | 127) in float32. The second result is
// false when x holds a NaN (then the caller takes the composed path). CPU tensors only.
std::pair<Tensor, bool> quantize_per_tensor_8bit(const Tensor& x, double inv_scale, int64_t zero_point,
                                                 DType out_dtype);

}  // namespace minitorch
