// quantize.cpp — float32 -> uint8 / int8 quantization per tensor in one pass (see quantized_cpu.h).
// The arithmetic is the composed path's, step by step (_quantize_values in _quantized.py):
// the product x * (1 / scale) in float32, rounded half to even (rint), plus the zero point in
// float32, clamped to [qmin, qmax] (exact in float32 for 8-bit ranges), then stored.
#include "minitorch/qgemm_math.h"
#include "quantized_cpu.h"

namespace minitorch::cpu {

template <class Q>
int64_t quantize_loop(const float* x, Q* q, int64_t lo, int64_t hi, float inv_scale, float zp, float qmin, float qmax)
{
    // rint as round_half_even (qgemm_math.h) does it, adding and subtracting 1.5 * 2^23, but on
    // every value, without its |v| < 2^22 test, so the loop has no branch and the compiler
    // vectorizes it: a larger |v| comes back within 2 of itself (or unchanged when huge or
    // infinite) and clamps to the same end, and a NaN stays NaN.
    const float magic = 12582912.f;
    int64_t nans = 0;
    for (int64_t i = lo; i < hi; ++i) {
        const float r = ((x[i] * inv_scale + magic) - magic) + zp;
        nans += r != r;
        q[i] = Q(r < qmin ? qmin : (r > qmax ? qmax : r));  // (a NaN is counted; the caller redoes it)
    }
    return nans;
}

int64_t quantize_per_tensor_8bit(const Tensor& out, const Tensor& x_t, float inv_scale, int32_t zero_point)
{
    const float* x = x_t->data_as<float>();
    const int64_t n = x_t->numel();
    const float zp = float(zero_point);
    int64_t nans = 0;
    // Serial: one streaming pass; the caller's tensors are small next to a GEMM.
    if (out->dtype == DType::UInt8)
        nans = quantize_loop(x, out->data_as<uint8_t>(), 0, n, inv_scale, zp, 0.f, 255.f);
    else
        nans = quantize_loop(x, out->data_as<int8_t>(), 0, n, inv_scale, zp, -128.f, 127.f);
    return nans;
}

}  // namespace minitorch::cpu
