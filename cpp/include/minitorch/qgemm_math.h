// qgemm_math.h — the epilogue of a quantized GEMM, one definition for every device
// (cpu/qgemm.cpp, cuda/qgemm.cu). See docs/quantization.md.
//
// A quantized Linear computes the int32 sums acc[m][n] = sum_k (a[m][k] - a_zp) * (b[n][k] - b_zp[n])
// and maps them to its output. With s_n = a_scale * b_scale[n] ("act_times_w"):
//   float output (dynamic quantization):  y = acc * s_n + bias[n]
//   uint8 output (static quantization):   q = clamp(rint((acc + bias[n] / s_n) * (s_n / out_scale)) + out_zp,
//                                                 relu ? out_zp : 0, 255)
// The uint8 formula is fbgemm's (PyTorch's x86 engine) for a float bias, in float32, so our
// results match PyTorch's bit for bit; rint rounds half to even.
#pragma once
#include <cmath>
#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE

namespace minitorch {

// rintf without a libm call on the CPU (x86-64 has no SSE2 instruction for it): for |v| <= 2^22,
// adding 1.5 * 2^23 leaves no fraction bits in the mantissa, so the addition itself rounds
// v half to even (the FPU's default mode), and subtracting it back is exact.
MT_HOST_DEVICE inline float round_half_even(float v)
{
#if defined(__CUDA_ARCH__)
    return rintf(v);
#else
    if (!(v > -4194304.f && v < 4194304.f)) return v;  // huge (or NaN): already an integer
    const float magic = 12582912.f;
    return (v + magic) - magic;
#endif
}

MT_HOST_DEVICE inline uint8_t requantize_u8(int32_t acc, float bias_over_scale, float multiplier, int32_t out_zp,
                                            bool relu)
{
    const float raw = float(acc) + bias_over_scale;
    const float r = round_half_even(raw * multiplier);
    const float lo = relu ? float(out_zp) : 0.f;
    float q = r + float(out_zp);  // |r| < 2^24 for any sensible scale; the clamp handles the rest
    q = q < lo ? lo : (q > 255.f ? 255.f : q);  // (a NaN ends as lo)
    if (!(q >= lo)) q = lo;
    return uint8_t(q);
}

MT_HOST_DEVICE inline float dequantize_acc(int32_t acc, float act_times_w, float bias, bool relu)
{
    const float y = float(acc) * act_times_w + bias;
    return relu && !(y >= 0.f) ? 0.f : y;
}

}  // namespace minitorch
