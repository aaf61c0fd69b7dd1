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
    // The same, dequantized to float32 (acc * act_times_w + bias): dynamic quantization's output.
    m.def("_qlinear_dynamic", [](const Tensor& a, int64_t a_zp, const Tensor& b, const Tensor& b_zp, py::handle bias,
                                 const Tensor& act_times_w, bool relu) {
        return quantized_gemm(a, a_zp, b, b_zp, optional_tensor(bias), act_times_w, DType::Float32, 1.0, 0, relu);
    });
}

}  // namespace minitorch::python
