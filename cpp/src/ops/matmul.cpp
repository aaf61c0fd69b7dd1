// matmul.cpp — matmul / @ with NumPy's rules: 1-D operands get a dim added (and
// removed again), batch dims broadcast, the last two dims multiply.
#include "minitorch/ops.h"

namespace minitorch {

Tensor matmul(const Tensor& a_in, const Tensor& b_in)
{
    MT_CHECK_RUNTIME(a_in->device() == b_in->device(), "matmul: expected both tensors on one device, got ",
                     a_in->device(), " and ", b_in->device());
    MT_CHECK(a_in->dim() >= 1 && b_in->dim() >= 1, "matmul: both arguments need to be at least 1-D, got shapes ",
             a_in->shape, " and ", b_in->shape);
    DType dt = promote(a_in->dtype, b_in->dtype);
    MT_CHECK_TYPE(dt != DType::Bool, "matmul: not implemented for bool tensors");

    // A vector is a (1, K) row on the left and a (K, 1) column on the right.
    const bool a_vec = a_in->dim() == 1, b_vec = b_in->dim() == 1;
    Tensor a = a_vec ? unsqueeze(a_in, 0) : a_in;
    Tensor b = b_vec ? unsqueeze(b_in, 1) : b_in;
    const int64_t M = a->size(-2), K = a->size(-1), K2 = b->size(-2), N = b->size(-1);
    MT_CHECK(K == K2, "matmul: shapes ", a_in->shape, " and ", b_in->shape, " cannot be multiplied (", K, " != ", K2,
             ")");

    Shape a_batch(a->shape.begin(), a->shape.end() - 2), b_batch(b->shape.begin(), b->shape.end() - 2);
    Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
    Shape a_shape = batch, b_shape = batch, out_shape = batch;
    a_shape.insert(a_shape.end(), {M, K});
    b_shape.insert(b_shape.end(), {K, N});
    out_shape.insert(out_shape.end(), {M, N});

    Tensor out = empty(out_shape, dt, a->device());
    kernels(a->device()).matmul(out, expand(to_dtype(a, dt), a_shape), expand(to_dtype(b, dt), b_shape));

    if (a_vec && b_vec) return view(out, {});
    if (a_vec) return squeeze(out, std::vector<int64_t>{-2});
    if (b_vec) return squeeze(out, std::vector<int64_t>{-1});
    return out;
}

}  // namespace minitorch
