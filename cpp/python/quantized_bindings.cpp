// quantized_bindings.cpp — the quantized GEMM op (minitorch/quantized.h) as _C._qgemm,
// _C._qlinear and _C._qlinear_dynamic; python/minitorch/ops/quantized.py builds on them.
#include "bindings.h"
#include "minitorch/quantized.h"

namespace minitorch::python {

namespace {

Tensor optional_tensor(py::handle h) { return h.is_none() ? Tensor() : h.cast<Tensor>(); }

}  // namespace

void bind_quantized(py::module_& m)
{
    // int32 (M, N) = (a - a_zp) @ (b - b_zp[:, None]).T; a uint8 (M, K), b int8 (N, K), b_zp int32 (N,).
    m.def("_qgemm", [](const Tensor& a, int64_t a_zp, const Tensor& b, const Tensor& b_zp) {
        return quantized_gemm(a, a_zp, b, b_zp, Tensor(), Tensor(), DType::Int32, 1.0, 0, false);
    });
    // The same, requantized to uint8 (out_scale, out_zp; ReLU fused when relu).
    m.def("_qlinear", [](const Tensor& a, int64_t a_zp, const Tensor& b, const Tensor& b_zp, py::handle bias,
                         const Tensor& act_times_w, double out_scale, int64_t out_zp, bool relu) {
        return quantized_gemm(a, a_zp, b, b_zp, optional_tensor(bias), act_times_w, DType::UInt8, out_scale, out_zp,
                              relu);
    });
    // uint8 (N, O, OH, OW): the quantized conv2d, im2col fused into the GEMM (CPU tensors).
    m.def("_qconv2d", [](const Tensor& x, int64_t x_zp, const Tensor& w, const Tensor& w_zp, py::handle bias,
                         const Tensor& act_times_w, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                         std::array<int64_t, 2> dil, int64_t groups, double out_scale, int64_t out_zp, bool relu) {
        return quantized_conv2d(x, x_zp, w, w_zp, optional_tensor(bias), act_times_w, stride, pad, dil, groups,
                                out_scale, out_zp, relu);
    });
    // A weight packed once for _qgemm_packed (int16 column panels; CPU tensors).
    m.def("_qpack_weight", [](const Tensor& b, const Tensor& b_zp) { return quantized_pack_weight(b, b_zp); });
    // _qgemm / _qlinear / _qlinear_dynamic (out_dtype int32 / uint8 / float32) on a packed weight.
    m.def("_qgemm_packed", [](const Tensor& a, int64_t a_zp, const Tensor& packed, int64_t n, const Tensor& b_zp,
                              py::handle bias, py::handle act_times_w, DType out_dtype, double out_scale,
                              int64_t out_zp, bool relu) {
        return quantized_gemm_packed(a, a_zp, packed, n, b_zp, optional_tensor(bias), optional_tensor(act_times_w),
                                     out_dtype, out_scale, out_zp, relu);
    });
    // (uint8 / int8 values, no NaN met) of quantize_per_tensor in one pass (float32 CPU tensors).
    m.def("_quantize_per_tensor_8bit", [](const Tensor& x, double inv_scale, int64_t zero_point, DType out_dtype) {
        auto [out, ok] = quantize_per_tensor_8bit(x, inv_scale, zero_point, out_dtype);
        return py::make_tuple(out, ok);
    });
    // uint8 max pooling on the integers (CPU tensors).
    m.def("_qmax_pool2d", [](const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                             std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode) {
        return quantized_max_pool2d(x, k, stride, pad, dil, ceil_mode);
    });
    // The same, dequantized to float32 (acc * act_times_w + bias): dynamic quantization's output.
    m.def("_qlinear_dynamic", [](const Tensor& a, int64_t a_zp, const Tensor& b, const Tensor& b_zp, py::handle bias,
                                 const Tensor& act_times_w, bool relu) {
        return quantized_gemm(a, a_zp, b, b_zp, optional_tensor(bias), act_times_w, DType::Float32, 1.0, 0, relu);
    });
}

}  // namespace minitorch::python
