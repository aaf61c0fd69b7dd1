// scan.cpp — running sums, products and log-sum-exps along a dim (cumsum, cumprod,
// logcumsumexp): the `scan` kernel, and the running max / min with their places (cummax, cummin): `scan_extreme`;
// both on the input seen as (outer, R, inner), as the reductions see it.
#include <math.h>

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

// op (Sum or LogSumExp) along dim from the end of each line, for a backward: one kernel
// call, or under create_graph (grad on) the public op between two flips, so that the result
// has a graph of its own.
Tensor reverse_scan(ScanOp op, const Tensor& t, int64_t dim)
{
    if (!autograd::is_grad_enabled()) return scan_along(op, t, dim, true);
    Tensor flipped = flip(t, {dim});
    return flip(op == ScanOp::Sum ? cumsum(flipped, dim, std::nullopt) : logcumsumexp(flipped, dim), {dim});
}

// derivative of cumsum, input input: the running sum of g taken from the end
struct CumsumBackward : autograd::Node {
    int64_t dim = 0;
    std::string name() const override { return "CumsumBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        return {to_dtype(reverse_scan(ScanOp::Sum, g[0], dim), input_meta[0].dtype)};
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
    DType dt = dtype ? *dtype : (is_floating(t->dtype) ? t->dtype : DType::Int64);
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

// y = logcumsumexp(x): y_j = log sum_{k <= j} exp(x_k), so dx_i = sum_{j >= i} g_j exp(x_i - y_j).
// Written stably, as PyTorch's: g's positive and negative parts separately, each as
// exp(x_i + revlogcumsumexp(log|g_j| - y_j)) (revlogcumsumexp: from the end), where
// log|g| is -inf for the other part's elements. An x_i of -inf gets 0 (its exp(x_i - y_j) is
// 0; the formula would meet -inf + inf there when the whole line before it is -inf).
// derivative of logcumsumexp, input input: exp(x + revlogcumsumexp(log g+ - y)) - exp(x + revlogcumsumexp(log g- - y))
struct LogcumsumexpBackward : autograd::Node {
    int64_t dim = 0;
    Tensor x, y;
    std::string name() const override { return "LogcumsumexpBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        // (under create_graph every step below is an op, reverse_scan's too)
        auto rev_lcse = [&](const Tensor& t) { return reverse_scan(ScanOp::LogSumExp, t, dim); };
        const Device dev = x->device();
        Tensor gd = to_dtype(g[0], x->dtype);
        Tensor zero = scalar_tensor(0.0, dev, x->dtype), minus_inf = scalar_tensor(-INFINITY, dev, x->dtype);
        Tensor log_abs = unary(UnaryOp::Log, unary(UnaryOp::Abs, gd));
        auto part = [&](BinaryOp sign) {  // exp(x + revlogcumsumexp(log|g| - y)) over g > 0 (g < 0)
            Tensor log_g = where(ew(sign, gd, zero), log_abs, minus_inf);
            return unary(UnaryOp::Exp, ew(BinaryOp::Add, x, rev_lcse(ew(BinaryOp::Sub, log_g, y))));
        };
        Tensor dx = ew(BinaryOp::Sub, part(BinaryOp::Gt), part(BinaryOp::Lt));
        return {where(ew(BinaryOp::Eq, x, minus_inf), zero, dx)};
    }
    void release() override { x.reset(); y.reset(); }
};

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype)
{
    return scan_op<CumsumBackward>("cumsum", ScanOp::Sum, t, dim, dtype);
}

Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype)
{
    return scan_op<CumprodBackward>("cumprod", ScanOp::Prod, t, dim, dtype);
}

// log(exp(x_0) + ... + exp(x_i)) along dim, each step hi + log1p(exp(lo - hi)) (scan_math.h):
// no overflow for large values, no -inf for an early value far below a later maximum (a
// composition shifted by the line's maximum would underflow those to -inf). Floating only.
Tensor logcumsumexp(const Tensor& t, int64_t dim)
{
    MT_PROFILE_OP("logcumsumexp", t);
    MT_CHECK_TYPE(is_floating(t->dtype), "logcumsumexp: expected a floating tensor, got ", t->dtype);
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), "logcumsumexp");
    const int64_t line_dim = t->dim() ? dim : 0;
    auto forward = [&] { return scan_along(ScanOp::LogSumExp, t, line_dim, false); };
    return autograd::record_op<LogcumsumexpBackward>({&t}, forward, [&](LogcumsumexpBackward& n, const Tensor& y) {
        n.dim = line_dim;
        n.x = autograd::save(n, t);
        n.y = autograd::save(n, y);
    });
}

// ---- cummax / cummin: the running max / min and where each was found ----

namespace {

// derivative of cummax / cummin, input input: g added at the places in indices along dim (scatter_add)
struct CumExtremeBackward : autograd::Node {
    Tensor indices;
    int64_t dim = 0;
    bool is_max = true;
    std::string name() const override { return is_max ? "CummaxBackward0" : "CumminBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        Tensor gd = to_dtype(g[0], m.dtype);
        if (m.shape.empty()) return {gd};  // a 0-dim cummax is the identity
        return {scatter(zeros(m.shape, m.dtype, m.device), dim, indices, gd, true)};
    }
    void release() override { indices.reset(); }
};

std::tuple<Tensor, Tensor> cum_extreme(const Tensor& t, int64_t dim, bool is_max)
{
    const char* name = is_max ? "cummax" : "cummin";
    MT_PROFILE_OP(name, t);
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), name);
    const int64_t line_dim = t->dim() ? dim : 0;
    auto forward = [&] {
        Tensor values = empty(t->shape, t->dtype, t->device());
        Tensor indices = empty(t->shape, DType::Int64, t->device());
        if (t->numel()) {
            SoftmaxRows r = softmax_rows(t->shape, line_dim);  // (outer, R, inner) around dim
            Shape lines{r.outer, r.C, r.inner};
            kernels(t->device()).scan_extreme(is_max, view(values, lines), view(indices, lines),
                                              view(contiguous(t), lines));
        }
        return std::tuple<Tensor, Tensor>{values, indices};
    };
    return autograd::record_op<CumExtremeBackward>({&t}, forward,
                                                   [&](CumExtremeBackward& n, const std::tuple<Tensor, Tensor>& r) {
                                                       n.dim = line_dim;
                                                       n.is_max = is_max;
                                                       // returned to the caller, who may change it
                                                       n.indices = autograd::save(n, std::get<1>(r));
                                                   });
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) { return cum_extreme(t, dim, true); }
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) { return cum_extreme(t, dim, false); }

}  // namespace minitorch
