// quantized_cpu.h — CPU-only quantized kernels that are not in the device kernel table
// (ops/quantized.cpp calls them for CPU tensors; on other devices minitorch.ops.quantized
// composes the same results from ordinary ops).
#pragma once
#include "minitorch/kernels.h"

namespace minitorch::cpu {

// The quantized convolution with im2col fused in: out uint8 (N, O, OH, OW) contiguous; x uint8
// (N, C, H, W) contiguous with zero point q.a_zp (also its padding); wt int8 (O, C/groups, KH, KW)
// contiguous; q's epilogue is the uint8 one of qgemm (bias, act_times_w, out_scale, out_zp, relu).
void qconv2d(const Tensor& out, const Tensor& x, const Tensor& wt, const QGemm& q, const Window2d& w);

// The direct form of qconv2d for narrow layers (cpu/qconv_direct.cpp): output pixels on the
// vector lanes, the same integers. avx2: use the AVX2 loops (the caller checked the CPU).
void qconv2d_direct(uint8_t* out, const uint8_t* x, const int8_t* wt, const QGemm& q, const Window2d& w, bool avx2);

// The uint8 epilogue's per-channel constants (fbgemm's) for channels [n0, n0 + N) of q:
// bias_over_scale[n] = bias / act_times_w (0 without a bias), multiplier[n] = act_times_w / out_scale,
// the arguments of requantize_u8 (minitorch/qgemm_math.h).
void requant_constants(const QGemm& q, int64_t n0, int64_t N, float* bias_over_scale, float* multiplier);

// A weight prepacked for qgemm_packed (once per layer, not per call): int8 b (N, K) centred by
// b_zp[n] into int16 column panels of 8 outputs x pairs of k, zero padded,
// bp[(nb * Kh + kk) * 16 + 2 j + t] = b[8 nb + j][2 kk + t] - b_zp[8 nb + j], Kh = ceil(K / 2);
// bp holds ceil(N / 8) * Kh * 16 values.
void pack_cols(const int8_t* b, const int32_t* b_zp, int64_t N, int64_t K, int16_t* bp);

// qgemm's result (any of its epilogues) from a's uint8 (M, K) and a weight packed by pack_cols
// for N outputs: the column-panel dot products, no widening of b per call.
void qgemm_packed(const Tensor& out, const Tensor& a, const Tensor& packed, int64_t N, const QGemm& q);

// out (uint8 or int8, contiguous, x's size) = clamp(rint(x * inv_scale) + zero_point) for float32
// x (contiguous), in float32 as the composed quantize_per_tensor does (cpu/quantize.cpp). Returns
// how many results came from a NaN (their bytes are unspecified: the caller recomputes those).
int64_t quantize_per_tensor_8bit(const Tensor& out, const Tensor& x, float inv_scale, int32_t zero_point);

// Max pooling of uint8 (N, C, H, W) into out (N, C, OH, OW), both contiguous, on the integers
// themselves (cpu/qpool.cpp): max commutes with the increasing map q -> (q - zp) * scale, so
// this is the pooled real tensor quantized again, without the two float passes.
void qmax_pool2d(const Tensor& out, const Tensor& x, const Window2d& w);

}  // namespace minitorch::cpu
