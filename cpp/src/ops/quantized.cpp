// quantized.cpp — the quantized GEMM op: checks its operands, allocates the output and calls
// the device's qgemm kernel once (cpu/qgemm.cpp, cuda/qgemm.cu), the epilogue fused in.
// minitorch.ops.quantized (Python) builds Linear and Conv2d (im2col) on it.
#include "minitorch/quantized.h"

#include "../cpu/quantized_cpu.h"
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

namespace {

QGemm epilogue_args(const char* op, const Tensor& a, int64_t a_zp, const Tensor& b_zp, const Tensor& bias,
                    const Tensor& act_times_w, DType out_dtype, int64_t N, double out_scale, int64_t out_zp, bool relu)
{
    MT_CHECK(a_zp >= 0 && a_zp <= 255, op, ": the activations' zero point must be in [0, 255], got ", a_zp);
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
    return q;
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
    MT_CHECK_TYPE(out_dtype == DType::Int32 || out_dtype == DType::UInt8 || out_dtype == DType::Float32, op,
                  ": the output is int32, uint8 or float32, got ", dtype_name(out_dtype));
    check_same_device(op, a, b);
    const int64_t N = b->shape[0];
    QGemm q = epilogue_args(op, a, a_zp, b_zp, bias, act_times_w, out_dtype, N, out_scale, out_zp, relu);
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

Tensor quantized_conv2d(const Tensor& x, int64_t x_zp, const Tensor& w, const Tensor& w_zp, const Tensor& bias,
                        const Tensor& act_times_w, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                        std::array<int64_t, 2> dil, int64_t groups, double out_scale, int64_t out_zp, bool relu)
{
    const char* op = "quantized_conv2d";
    MT_PROFILE_OP("quantized_conv2d", x, w);
    MT_CHECK_TYPE(x->dtype == DType::UInt8 && w->dtype == DType::Int8, op,
                  ": expected uint8 activations and int8 weights, got ", dtype_name(x->dtype), " and ",
                  dtype_name(w->dtype));
    MT_CHECK(x->dim() == 4 && w->dim() == 4, op, ": expected x (N, C, H, W) and w (O, C/groups, KH, KW), got ",
             x->shape, " and ", w->shape);
    MT_CHECK(x->device().is_cpu() && w->device().is_cpu(), op, ": CPU tensors only");
    MT_CHECK(groups > 0 && w->shape[0] % groups == 0 && w->shape[1] * groups == x->shape[1], op, ": x ", x->shape,
             ", w ", w->shape, " and groups ", groups, " do not agree");
    MT_CHECK(stride[0] > 0 && stride[1] > 0 && dil[0] > 0 && dil[1] > 0 && pad[0] >= 0 && pad[1] >= 0, op,
             ": stride and dilation must be positive and padding non-negative");
    const int64_t O = w->shape[0];
    QGemm q = epilogue_args(op, x, x_zp, w_zp, bias, act_times_w, DType::UInt8, O, out_scale, out_zp, relu);
    Window2d win;
    win.N = x->shape[0], win.C = x->shape[1], win.H = x->shape[2], win.W = x->shape[3];
    win.KH = w->shape[2], win.KW = w->shape[3], win.stride_h = stride[0], win.stride_w = stride[1];
    win.pad_h = pad[0], win.pad_w = pad[1], win.dil_h = dil[0], win.dil_w = dil[1], win.groups = groups;
    win.OH = (win.H + 2 * pad[0] - dil[0] * (win.KH - 1) - 1) / stride[0] + 1;
    win.OW = (win.W + 2 * pad[1] - dil[1] * (win.KW - 1) - 1) / stride[1] + 1;
    MT_CHECK(win.OH > 0 && win.OW > 0, op, ": the kernel ", w->shape, " is larger than the padded input ", x->shape);
    Tensor out = empty({win.N, O, win.OH, win.OW}, DType::UInt8, x->device());
    if (out->numel()) cpu::qconv2d(out, contiguous(x), contiguous(w), q, win);
    return out;
}

Tensor quantized_max_pool2d(const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                            std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode)
{
    const char* op = "quantized_max_pool2d";
    MT_PROFILE_OP("quantized_max_pool2d", x);
    MT_CHECK_TYPE(x->dtype == DType::UInt8, op, ": expected uint8 values, got ", dtype_name(x->dtype));
    MT_CHECK(x->device().is_cpu(), op, ": CPU tensors only");
    const Window2d w = pool_geometry(op, x, k, stride, pad, dil, ceil_mode);
    Tensor out = empty({w.N, w.C, w.OH, w.OW}, DType::UInt8, x->device());
    if (out->numel()) cpu::qmax_pool2d(out, contiguous(x), w);
    return out;
}

namespace {

int64_t packed_size(int64_t N, int64_t K) { return (N + 7) / 8 * ((K + 1) / 2) * 16; }

}  // namespace

Tensor quantized_pack_weight(const Tensor& b, const Tensor& b_zp)
{
    const char* op = "quantized_pack_weight";
    MT_CHECK_TYPE(b->dtype == DType::Int8, op, ": expected an int8 weight, got ", dtype_name(b->dtype));
    MT_CHECK(b->dim() == 2, op, ": expected a 2-D weight (N, K), got shape ", b->shape);
    MT_CHECK(b->device().is_cpu(), op, ": CPU tensors only");
    const int64_t N = b->shape[0], K = b->shape[1];
    check_vector(op, "b_zp", b_zp, DType::Int32, N, b);
    Tensor packed = empty({packed_size(N, K)}, DType::Int16, b->device());
    Tensor bc = contiguous(b), zc = contiguous(b_zp);
    cpu::pack_cols(bc->data_as<int8_t>(), zc->data_as<int32_t>(), N, K, packed->data_as<int16_t>());
    return packed;
}

Tensor quantized_gemm_packed(const Tensor& a, int64_t a_zp, const Tensor& packed, int64_t N, const Tensor& b_zp,
                             const Tensor& bias, const Tensor& act_times_w, DType out_dtype, double out_scale,
                             int64_t out_zp, bool relu)
{
    const char* op = "quantized_gemm_packed";
    MT_PROFILE_OP("quantized_gemm", a, packed);
    MT_CHECK_TYPE(a->dtype == DType::UInt8 && packed->dtype == DType::Int16, op,
                  ": expected uint8 activations and a packed int16 weight, got ", dtype_name(a->dtype), " and ",
                  dtype_name(packed->dtype));
    MT_CHECK(a->dim() == 2 && N >= 0 && packed->dim() == 1 && packed->shape[0] == packed_size(N, a->shape[1]), op,
             ": a ", a->shape, " does not match a packed weight of ", packed->shape, " for ", N, " outputs");
    MT_CHECK(a->device().is_cpu() && packed->device().is_cpu(), op, ": CPU tensors only");
    MT_CHECK_TYPE(out_dtype == DType::Int32 || out_dtype == DType::UInt8 || out_dtype == DType::Float32, op,
                  ": the output is int32, uint8 or float32, got ", dtype_name(out_dtype));
    QGemm q = epilogue_args(op, a, a_zp, b_zp, bias, act_times_w, out_dtype, N, out_scale, out_zp, relu);
    Tensor out = empty({a->shape[0], N}, out_dtype, a->device());
    if (out->numel() == 0) return out;
    cpu::qgemm_packed(out, contiguous(a), contiguous(packed), N, q);
    return out;
}

std::pair<Tensor, bool> quantize_per_tensor_8bit(const Tensor& x, double inv_scale, int64_t zero_point,
                                                 DType out_dtype)
{
    const char* op = "quantize_per_tensor_8bit";
    MT_PROFILE_OP("quantize_per_tensor", x);
    MT_CHECK_TYPE(x->dtype == DType::Float32, op, ": expected a float32 input, got ", dtype_name(x->dtype));
    MT_CHECK_TYPE(out_dtype == DType::UInt8 || out_dtype == DType::Int8, op, ": the output is uint8 or int8, got ",
                  dtype_name(out_dtype));
    MT_CHECK(x->device().is_cpu(), op, ": CPU tensors only");
    Tensor out = empty(x->shape, out_dtype, x->device());
    const int64_t nans = out->numel() ? cpu::quantize_per_tensor_8bit(out, contiguous(x), float(inv_scale),
                                                                      int32_t(zero_point))
                                      : 0;
    return {out, nans == 0};
}

}  // namespace minitorch
