// quantized.cpp — the quantized GEMM op: checks its operands, allocates the output and calls
// the device's qgemm kernel once (cpu/qgemm.cpp, cuda/qgemm.cu), the epilogue fused in.
// minitorch.ops.quantized (Python) builds Linear and Conv2d (im2col) on it.
#include "minitorch/quantized.h"

#include "minitorch/kernels.h"
#include "minitorch/ops.h"
#include "minitorch/profiler.h"

namespace minitorch {

namespace {

void check_vector(const char* op, const char* what, const Tensor& t, DType dtype, int64_t n, const Tensor& like)
{
    MT_CHECK_TYPE(t->dtype == dtype, op, ": ", what, " must be ", dtype_name(dtype), ", got ", dtype_name(t->dtype));
    MT_CHECK(t->dim() == 1 && t->shape[0] == n, op, ": ", what, " must have shape (", n, ",), got ", t->shape);
    check_same_device(op, like, t);
}

}  // namespace

Tensor quantized_gemm(const Tensor& a, int64_t a_zp, const Tensor& b, const Tensor& b_zp, const Tensor& bias,
                      const Tensor& act_times_w, DType out_dtype, double out_scale, int64_t out_zp, bool relu)
{
    const char* op = "quantized_gemm";
    MT_PROFILE_OP("quantized_gemm", a, b);
    MT_CHECK_TYPE(a->dtype == DType::UInt8 && b->dtype == DType::Int8, op,
                  ": expected uint8 activations and int8 weights, got ", dtype_name(a->dtype), " and ",
                  dtype_name(b->dtype));
    MT_CHECK(a->dim() == 2 && b->dim() == 2 && a->shape[1] == b->shape[1], op,
             ": expected a (M, K) and b (N, K), got ", a->shape, " and ", b->shape);
    MT_CHECK(a_zp >= 0 && a_zp <= 255, op, ": the activations' zero point must be in [0, 255], got ", a_zp);
    MT_CHECK_TYPE(out_dtype == DType::Int32 || out_dtype == DType::UInt8 || out_dtype == DType::Float32, op,
                  ": the output is int32, uint8 or float32, got ", dtype_name(out_dtype));
    check_same_device(op, a, b);
    const int64_t N = b->shape[0];
    check_vector(op, "b_zp", b_zp, DType::Int32, N, a);
    QGemm q;
    q.a_zp = int32_t(a_zp);
    q.b_zp = contiguous(b_zp);
    if (out_dtype != DType::Int32) {
        MT_CHECK(act_times_w, op, ": act_times_w is needed for a ", dtype_name(out_dtype), " output");
        check_vector(op, "act_times_w", act_times_w, DType::Float32, N, a);
        q.act_times_w = contiguous(act_times_w);
        if (bias) {
            check_vector(op, "bias", bias, DType::Float32, N, a);
            q.bias = contiguous(bias);
        }
    }
    MT_CHECK(out_scale > 0, op, ": out_scale must be positive, got ", out_scale);
    MT_CHECK(out_zp >= 0 && out_zp <= 255, op, ": out_zero_point must be in [0, 255], got ", out_zp);
    q.out_scale = float(out_scale);
    q.out_zp = int32_t(out_zp);
    q.relu = relu;
    Tensor out = empty({a->shape[0], N}, out_dtype, a->device());
    if (out->numel() == 0) return out;
    if (a->shape[1] == 0) {  // K = 0: every sum is 0; the epilogue still applies (bias)
        Tensor a1 = empty({a->shape[0], 1}, DType::UInt8, a->device()), b1 = empty({N, 1}, DType::Int8, a->device());
        fill_(a1, Scalar(int64_t(a_zp)));
        fill_(b1, Scalar(int64_t(0)));
        q.b_zp = empty({N}, DType::Int32, a->device());
        fill_(q.b_zp, Scalar(int64_t(0)));
        kernels(a->device()).qgemm(out, a1, b1, q);
        return out;
    }
    kernels(a->device()).qgemm(out, contiguous(a), contiguous(b), q);
    return out;
}

}  // namespace minitorch
