// matmul.cpp — matmul / @ with NumPy's rules: 1-D operands get a dim added (and
// removed again), batch dims broadcast, the last two dims multiply.
//
// matmul is composed from views (unsqueeze, expand, squeeze — each records its own
// backward) around one core op, batched_matmul, whose backward is the lectures'
//     dA = dC @ B^T,    dB = A^T @ dC.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// derivative of matmul, input a: g @ b^T
// derivative of matmul, input b: a^T @ g
struct MatmulBackward : autograd::Node {
    Tensor a, b;
    std::string name() const override { return "MmBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        return {needs_input_grad(0) ? matmul(g[0], transpose(b, -2, -1)) : nullptr,
                needs_input_grad(1) ? matmul(transpose(a, -2, -1), g[0]) : nullptr};
    }
    void release() override { a.reset(), b.reset(); }
};

// a (batch..., M, K) @ b (batch..., K, N), one batch shape and dtype.
Tensor batched_matmul(const Tensor& a, const Tensor& b)
{
    auto forward = [&] {
        Shape out_shape(a->shape.begin(), a->shape.end() - 1);
        out_shape.push_back(b->shape.back());
        Tensor out = empty(out_shape, a->dtype, a->device());
        if (out->numel() && a->shape.back() == 0)
            kernels(a->device()).fill(out, Scalar(0.0));  // a sum over K = 0 terms
        else if (out->numel())
            kernels(a->device()).matmul(out, a, b, false);
        return out;
    };
    return autograd::record_op<MatmulBackward>({&a, &b}, forward, [&](MatmulBackward& n, const Tensor&) {
        // dA = G B^T reads only b, dB = A^T G only a: save what will be read.
        if (b->requires_grad) n.a = autograd::save(n, a);
        if (a->requires_grad) n.b = autograd::save(n, b);
    });
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in)
{
    MT_PROFILE_OP("matmul", a_in, b_in);
    check_same_device("matmul", a_in, b_in);
    MT_CHECK(a_in->dim() >= 1 && b_in->dim() >= 1, "matmul: both arguments need to be at least 1-D, got shapes ",
             a_in->shape, " and ", b_in->shape);
    // No promotion here (PyTorch refuses too): a float64 NumPy array mixed into a float32
    // model would otherwise silently run every layer after it in float64, at twice the cost.
    MT_CHECK_TYPE(a_in->dtype == b_in->dtype, "matmul: expected both arguments to have the same dtype, got ",
                  a_in->dtype, " (shape ", a_in->shape, ") and ", b_in->dtype, " (shape ", b_in->shape,
                  "); convert one with .to(dtype), e.g. .float()");
    const DType dt = a_in->dtype;
    MT_CHECK_TYPE(dt != DType::Bool, "matmul: not implemented for bool tensors");

    // A vector is a (1, K) row on the left and a (K, 1) column on the right.
    const bool a_vec = a_in->dim() == 1, b_vec = b_in->dim() == 1;
    const int64_t K = a_in->size(-1), K2 = b_in->dim() == 1 ? b_in->size(0) : b_in->size(-2);
    MT_CHECK(K == K2, "matmul: shapes ", a_in->shape, " and ", b_in->shape, " cannot be multiplied (", K, " != ", K2,
             ")");
    Tensor a = a_vec ? unsqueeze(a_in, 0) : a_in;
    Tensor b = b_vec ? unsqueeze(b_in, 1) : b_in;
    const int64_t M = a->size(-2), N = b->size(-1);

    Shape a_batch(a->shape.begin(), a->shape.end() - 2), b_batch(b->shape.begin(), b->shape.end() - 2);
    for (size_t i = 1; i <= std::min(a_batch.size(), b_batch.size()); ++i) {
        int64_t x = a_batch[a_batch.size() - i], y = b_batch[b_batch.size() - i];
        MT_CHECK(x == y || x == 1 || y == 1, "matmul: shapes ", a_in->shape, " and ", b_in->shape,
                 " have batch dims ", a_batch, " and ", b_batch, " that cannot be broadcast together");
    }
    Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
    Shape a_shape = batch, b_shape = batch;
    a_shape.insert(a_shape.end(), {M, K});
    b_shape.insert(b_shape.end(), {K, N});

    Tensor out = batched_matmul(expand(a, a_shape), expand(b, b_shape));
    if (a_vec && b_vec) return reshape(out, {});
    if (a_vec) return squeeze(out, std::vector<int64_t>{-2});
    if (b_vec) return squeeze(out, std::vector<int64_t>{-1});
    return out;
}

}  // namespace minitorch
