// scan.cpp — running sums and products along a dim (cumsum, cumprod): the `scan`
// kernel on the input seen as (outer, R, inner), as the reductions see it.
#include <type_traits>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// op along dim of t (contiguous copy if needed), in t's dtype; no autograd.
Tensor scan_along(ScanOp op, const Tensor& t, int64_t dim, bool reverse)
{
    Tensor c = contiguous(t);
    Tensor out = empty(t->shape, t->dtype, t->device());
    if (!t->numel()) return out;
    SoftmaxRows r = softmax_rows(t->shape, dim);  // (outer, R, inner) around dim
    kernels(t->device()).scan(op, view(out, {r.outer, r.C, r.inner}), view(c, {r.outer, r.C, r.inner}), reverse);
    return out;
}

Tensor ew(BinaryOp op, const Tensor& a, const Tensor& b) { return binary(op, a, b); }

// derivative of cumsum, input input: the running sum of g taken from the end
struct CumsumBackward : autograd::Node {
    int64_t dim = 0;
    std::string name() const override { return "CumsumBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        if (autograd::is_grad_enabled())  // create_graph: the reversed running sum as ops
            return {to_dtype(flip(cumsum(flip(g[0], {dim}), dim, std::nullopt), {dim}), input_meta[0].dtype)};
        return {to_dtype(scan_along(ScanOp::Sum, g[0], dim, true), input_meta[0].dtype)};
    }
};

// y = cumprod(x). Before a line's first zero, dx_i = sum_{j >= i} g_j y_j / x_i; at the
// first zero z, dx_z = sum_{j >= z} g_j prod_{k <= j, k != z} x_k (a second scan with x_z
// taken as 1); after it, 0 (every product there holds x_z = 0). revcumsum = cumsum from the end.
// derivative of cumprod, input input: revcumsum(g * y) / x before the first zero; revcumsum(g * cumprod(x with x_z = 1)) at it; 0 after
struct CumprodBackward : autograd::Node {
    int64_t dim = 0;
    Tensor x, y;
    std::string name() const override { return "CumprodBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const Device dev = x->device();
        Tensor zero = scalar_tensor(0.0, dev, x->dtype), one = scalar_tensor(1.0, dev, x->dtype);
        Tensor is_zero = ew(BinaryOp::Eq, x, zero);
        Tensor zeros_so_far = scan_along(ScanOp::Sum, to_dtype(is_zero, DType::Int64), dim, false);
        Tensor none_yet = ew(BinaryOp::Eq, zeros_so_far, scalar_tensor(int64_t(0), dev));
        Tensor first = ew(BinaryOp::LogicalAnd, is_zero,
                          ew(BinaryOp::Eq, zeros_so_far, scalar_tensor(int64_t(1), dev)));
        Tensor before = ew(BinaryOp::Div, scan_along(ScanOp::Sum, ew(BinaryOp::Mul, g[0], y), dim, true),
                           where(none_yet, x, one));
        Tensor y_skip = scan_along(ScanOp::Prod, where(first, one, x), dim, false);
        Tensor at_first = scan_along(ScanOp::Sum, ew(BinaryOp::Mul, g[0], y_skip), dim, true);
        return {where(none_yet, before, where(first, at_first, zero))};
    }
    void release() override { x.reset(); y.reset(); }
};

template <class N>
Tensor scan_op(const char* name, ScanOp op, const Tensor& t, int64_t dim, std::optional<DType> dtype)
{
    MT_PROFILE_OP(name, t);
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), name);
    // PyTorch: integers and bools run (and return) in int64 unless a dtype is given.
    DType dt = dtype ? *dtype : (t->dtype == DType::Bool ? DType::Int64 : t->dtype);
    Tensor in = to_dtype(t, dt);  // differentiable: the cast's node sits below this op's
    auto forward = [&] { return scan_along(op, in, t->dim() ? dim : 0, false); };
    return autograd::record_op<N>({&in}, forward, [&](N& n, const Tensor& y) {
        n.dim = t->dim() ? dim : 0;
        if constexpr (std::is_same_v<N, CumprodBackward>) {
            n.x = autograd::save(n, in);
            n.y = autograd::save(n, y);
        }
    });
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype)
{
    return scan_op<CumsumBackward>("cumsum", ScanOp::Sum, t, dim, dtype);
}

Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype)
{
    return scan_op<CumprodBackward>("cumprod", ScanOp::Prod, t, dim, dtype);
}

}  // namespace minitorch
