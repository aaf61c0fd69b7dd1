// reduce.cpp — sum / mean / max / min / argmax / argmin along dims.
//
// One recipe for all: move the reduced dims to the end (a permute, i.e. a view), make
// that contiguous, and see it as an (outer, inner) matrix; the kernel reduces each row.
#include <algorithm>
#include <cmath>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

struct Plan {
    Tensor rows;        // contiguous (outer, inner)
    Shape out_shape;    // with or without the reduced dims, as keepdim says
};

// dims empty = reduce every dim.
Plan plan_reduce(const Tensor& t, std::vector<int64_t> dims, bool keepdim, const char* op)
{
    const int64_t n = t->dim();
    std::vector<bool> reduced(n, dims.empty());
    for (int64_t d : dims) {
        int64_t w = wrap_dim(d, n, op);
        if (n == 0) continue;
        MT_CHECK(!reduced[w], op, ": dim ", w, " appears multiple times in the list of dims");
        reduced[w] = true;
    }
    std::vector<int64_t> order;
    Shape out_shape;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < n; ++d)
        if (!reduced[d]) {
            order.push_back(d);
            out_shape.push_back(t->shape[d]);
            outer *= t->shape[d];
        } else if (keepdim) {
            out_shape.push_back(1);
        }
    if (keepdim) {  // keepdim: every dim stays, reduced ones as 1
        out_shape.clear();
        for (int64_t d = 0; d < n; ++d) out_shape.push_back(reduced[d] ? 1 : t->shape[d]);
    }
    for (int64_t d = 0; d < n; ++d)
        if (reduced[d]) {
            order.push_back(d);
            inner *= t->shape[d];
        }
    Tensor rows = contiguous(permute(t, order));
    return {view(rows, {outer, inner}), out_shape};
}

// The max / min / arg* family: values and/or indices of the best element per row.
std::tuple<Tensor, Tensor> best(ReduceOp op, const Tensor& t, std::vector<int64_t> dims, bool keepdim,
                                bool want_values, bool want_indices, const char* name)
{
    Plan p = plan_reduce(t, std::move(dims), keepdim, name);
    const int64_t outer = p.rows->shape[0], inner = p.rows->shape[1];
    MT_CHECK_INDEX(inner > 0, name, ": expected the reduced dims to have non-zero size (input shape ", t->shape, ")");
    Tensor values = want_values ? empty(p.out_shape, t->dtype, t->device()) : nullptr;
    Tensor indices = want_indices ? empty(p.out_shape, DType::Int64, t->device()) : nullptr;
    if (outer && inner) kernels(t->device()).reduce(op, values, indices, p.rows);
    return {values, indices};
}

}  // namespace

namespace {

Tensor sum_forward(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    // Integer and bool sums are int64, like PyTorch.
    DType out_t = dtype ? *dtype : (is_floating(t->dtype) ? t->dtype : DType::Int64);
    Plan p = plan_reduce(to_dtype(t, out_t), std::move(dims), keepdim, "sum");
    Tensor out = empty(p.out_shape, out_t, t->device());
    if (out->numel() == 0) return out;
    if (p.rows->shape[1] == 0) {
        fill_(out, Scalar(0.0));
        return out;
    }
    kernels(t->device()).reduce(ReduceOp::Sum, out, nullptr, p.rows);
    return out;
}

// ---- backward ----
using autograd::Node;

// The reduced dims (sorted, non-negative) for a dims argument; empty = all.
std::vector<int64_t> reduced_dims(const std::vector<int64_t>& dims, int64_t ndim)
{
    std::vector<int64_t> out;
    if (dims.empty())
        for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, "sum"));
    std::sort(out.begin(), out.end());
    return out;
}

// A reduced gradient back at the input's rank: size-1 dims where the reduction was.
Tensor unreduce(const Tensor& g, const std::vector<int64_t>& dims, bool keepdim)
{
    Tensor r = g;
    if (!keepdim)
        for (int64_t d : dims) r = unsqueeze(r, d);
    return r;
}

// d sum / dx = 1 everywhere: the gradient is broadcast back over the reduced dims.
// derivative of sum, input input: g expanded back to the input shape (mean: and divided by the count)
struct SumBackward : Node {
    std::vector<int64_t> dims;
    bool keepdim = false;
    bool all = true;  // sum() (SumBackward0) or sum(dim) (SumBackward1), as PyTorch names them
    std::string name() const override { return all ? "SumBackward0" : "SumBackward1"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        return {to_dtype(contiguous(expand(unreduce(g[0], dims, keepdim), m.shape)), m.dtype)};
    }
};

// max()/min() of everything: the gradient is shared evenly by the elements equal to
// the result (PyTorch's rule for ties).
// derivative of max() / min(), input input: g shared evenly among the elements equal to the result
struct MaxAllBackward : Node {
    Tensor x, out;
    bool is_max = true;
    std::string name() const override { return is_max ? "MaxBackward1" : "MinBackward1"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor hit = to_dtype(binary(BinaryOp::Eq, x, out), x->dtype);
        return {binary(BinaryOp::Mul, hit, binary(BinaryOp::Div, g[0], sum(hit, {}, false, std::nullopt)))};
    }
    void release() override { x.reset(), out.reset(); }
};

// max(dim)/min(dim): the gradient goes to the chosen index of each row.
// derivative of max(dim) / min(dim), input input: g at the index each row picked, 0 elsewhere
struct MaxDimBackward : Node {
    Tensor indices;  // keepdim form
    int64_t dim = 0;
    bool is_max = true;
    bool keepdim = false;
    std::string name() const override { return is_max ? "MaxBackward0" : "MinBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        if (m.shape.empty()) return {g[0]};  // max of a 0-dim tensor is itself
        Tensor gk = unreduce(g[0], {dim}, keepdim);
        // positions along `dim`, shaped (1, ..., size, ..., 1), compared with the indices
        Shape pos_shape(m.shape.size(), 1);
        pos_shape[dim] = m.shape[dim];
        Tensor pos = reshape(arange(0, double(m.shape[dim]), 1, DType::Int64, m.device), pos_shape);
        Tensor hit = binary(BinaryOp::Eq, pos, indices);
        return {binary(BinaryOp::Mul, gk, hit)};
    }
    void release() override { indices.reset(); }
};

}  // namespace

Tensor sum(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    MT_PROFILE_OP("sum", t);
    return autograd::record_op<SumBackward>({&t}, [&] { return sum_forward(t, dims, keepdim, dtype); },
                                            [&](SumBackward& n, const Tensor&) {
                                                n.dims = t->dim() ? reduced_dims(dims, t->dim()) : std::vector<int64_t>{};
                                                n.keepdim = keepdim;
                                                n.all = dims.empty();
                                            });
}

Tensor mean(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    MT_PROFILE_OP("mean", t);
    // Check dims here so errors name mean, not the sum it is built from.
    std::vector<bool> seen(std::max<int64_t>(t->dim(), 1), false);
    for (int64_t d : dims) {
        int64_t w = wrap_dim(d, t->dim(), "mean");
        MT_CHECK(!seen[w], "mean: dim ", w, " appears multiple times in the list of dims");
        seen[w] = true;
    }
    DType out_t = dtype ? *dtype : t->dtype;
    MT_CHECK_TYPE(is_floating(out_t), "mean: could not infer output dtype; input dtype must be floating point, got ",
                  t->dtype, " (use .float() first or pass dtype=)");
    Tensor s = sum(t, dims, keepdim, out_t);
    if (s->numel() == 0) return s;
    // Mean of nothing is NaN (0 / 0), as in PyTorch and NumPy.
    int64_t count = t->numel() / s->numel();
    return binary(BinaryOp::Div, s, scalar_tensor(Scalar(double(count)), t->device()));
}

namespace {

Tensor extreme_all(const Tensor& t, bool is_max)
{
    const char* name = is_max ? "max" : "min";
    MT_PROFILE_OP(name, t);
    MT_CHECK(t->numel() > 0, name, ": expected a non-empty tensor (shape ", t->shape, "); specify dim= for empty inputs");
    ReduceOp op = is_max ? ReduceOp::Max : ReduceOp::Min;
    return autograd::record_op<MaxAllBackward>({&t}, [&] { return std::get<0>(best(op, t, {}, false, true, false, name)); },
                                               [&](MaxAllBackward& n, const Tensor& out) {
                                                   n.is_max = is_max;
                                                   n.x = autograd::save(n, t);
                                                   n.out = autograd::save(n, out);
                                               });
}

std::tuple<Tensor, Tensor> extreme_dim(const Tensor& t, int64_t dim, bool keepdim, bool is_max)
{
    const char* name = is_max ? "max" : "min";
    MT_PROFILE_OP(name, t);
    ReduceOp op = is_max ? ReduceOp::Max : ReduceOp::Min;
    return autograd::record_op<MaxDimBackward>(
        {&t}, [&] { return best(op, t, {dim}, keepdim, true, true, name); },
        [&](MaxDimBackward& n, const std::tuple<Tensor, Tensor>& result) {
            n.is_max = is_max;
            n.dim = t->dim() ? wrap_dim(dim, t->dim(), name) : 0;
            n.keepdim = keepdim || t->dim() == 0;
            Tensor saved = autograd::save(n, std::get<1>(result));  // returned to the caller, who may change it
            n.indices = t->dim() && !keepdim ? unsqueeze(saved, n.dim) : saved;
        });
}

}  // namespace

Tensor max_all(const Tensor& t) { return extreme_all(t, true); }
Tensor min_all(const Tensor& t) { return extreme_all(t, false); }
std::tuple<Tensor, Tensor> max_dim(const Tensor& t, int64_t dim, bool keepdim) { return extreme_dim(t, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min_dim(const Tensor& t, int64_t dim, bool keepdim) { return extreme_dim(t, dim, keepdim, false); }

namespace {

// argmax / argmin: over one dim, or (dim=None) over the flattened tensor, where
// keepdim keeps every dim as size 1.
Tensor arg_extreme(ReduceOp op, const Tensor& t, std::optional<int64_t> dim, bool keepdim, const char* name)
{
    MT_PROFILE_OP(name, t);
    if (dim) return std::get<1>(best(op, t, {*dim}, keepdim, false, true, name));
    MT_CHECK(t->numel() > 0, name, ": expected a non-empty tensor (shape ", t->shape, ")");
    Tensor i = std::get<1>(best(op, reshape(t, {t->numel()}), {}, false, false, true, name));
    return keepdim ? reshape(i, Shape(t->dim(), 1)) : i;
}

}  // namespace

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim)
{
    return arg_extreme(ReduceOp::ArgMax, t, dim, keepdim, "argmax");
}

Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim)
{
    return arg_extreme(ReduceOp::ArgMin, t, dim, keepdim, "argmin");
}

}  // namespace minitorch
