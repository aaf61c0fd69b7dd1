// reduce.cpp — sum / mean / max / min / argmax / argmin along dims.
//
// One recipe for all: move the reduced dims to the end (a permute, i.e. a view), make
// that contiguous, and see it as an (outer, inner) matrix; the kernel reduces each row.
#include <algorithm>
#include <cmath>

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

Tensor sum(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
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

Tensor mean(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    DType out_t = dtype ? *dtype : t->dtype;
    MT_CHECK_TYPE(is_floating(out_t), "mean: could not infer output dtype; input dtype must be floating point, got ",
                  t->dtype, " (use .float() first or pass dtype=)");
    Tensor s = sum(t, dims, keepdim, out_t);
    if (s->numel() == 0) return s;
    // Mean of nothing is NaN (0 / 0), as in PyTorch and NumPy.
    int64_t count = t->numel() / s->numel();
    return binary(BinaryOp::Div, s, scalar_tensor(Scalar(double(count)), t->device()));
}

Tensor max_all(const Tensor& t)
{
    MT_CHECK(t->numel() > 0, "max: expected a non-empty tensor (shape ", t->shape, "); specify dim= for empty inputs");
    return std::get<0>(best(ReduceOp::Max, t, {}, false, true, false, "max"));
}

Tensor min_all(const Tensor& t)
{
    MT_CHECK(t->numel() > 0, "min: expected a non-empty tensor (shape ", t->shape, "); specify dim= for empty inputs");
    return std::get<0>(best(ReduceOp::Min, t, {}, false, true, false, "min"));
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& t, int64_t dim, bool keepdim)
{
    return best(ReduceOp::Max, t, {dim}, keepdim, true, true, "max");
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& t, int64_t dim, bool keepdim)
{
    return best(ReduceOp::Min, t, {dim}, keepdim, true, true, "min");
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim)
{
    if (!dim) {
        MT_CHECK(t->numel() > 0, "argmax: expected a non-empty tensor (shape ", t->shape, ")");
        // Over the flattened tensor; keepdim keeps every dim as size 1.
        Tensor i = std::get<1>(best(ReduceOp::ArgMax, reshape(t, {t->numel()}), {}, false, false, true, "argmax"));
        return keepdim ? reshape(i, Shape(t->dim(), 1)) : i;
    }
    return std::get<1>(best(ReduceOp::ArgMax, t, {*dim}, keepdim, false, true, "argmax"));
}

Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim)
{
    if (!dim) {
        MT_CHECK(t->numel() > 0, "argmin: expected a non-empty tensor (shape ", t->shape, ")");
        Tensor i = std::get<1>(best(ReduceOp::ArgMin, reshape(t, {t->numel()}), {}, false, false, true, "argmin"));
        return keepdim ? reshape(i, Shape(t->dim(), 1)) : i;
    }
    return std::get<1>(best(ReduceOp::ArgMin, t, {*dim}, keepdim, false, true, "argmin"));
}

}  // namespace minitorch
