// sort.cpp — sorting along a dim (sort; argsort is its indices) and topk (the first k of
// a sort). Backward of both: the gradient of each output value goes back to the place the
// value came from (a scatter through the indices), 0 where topk dropped the value.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// The first k (all: k < 0) of each line along dim, sorted: one kernel call, which writes
// only those (topk makes no copies of a slice).
std::tuple<Tensor, Tensor> sort_forward(const Tensor& t, int64_t dim, bool descending, int64_t k = -1)
{
    Shape shape = t->shape;
    if (k >= 0 && t->dim()) shape[size_t(dim)] = k;
    Tensor values = empty(shape, t->dtype, t->device());
    Tensor indices = empty(shape, DType::Int64, t->device());
    if (!values->numel()) return {values, indices};
    SoftmaxRows r = softmax_rows(t->shape, t->dim() ? dim : 0);  // (outer, R, inner) around dim
    const Shape lines{r.outer, r.C, r.inner}, out_lines{r.outer, k >= 0 && t->dim() ? k : r.C, r.inner};
    kernels(t->device()).sort(view(values, out_lines), view(indices, out_lines), view(contiguous(t), lines),
                              descending);
    return {values, indices};
}

// A tensor of `like`'s shape holding g[..., k, ...] at position indices[..., k, ...] along dim,
// 0 elsewhere: one scatter (put) into zeros -- the indices of one line of a sort or a topk are
// distinct, so no two values land on one place. The scatter op is differentiable (its
// backward gathers), which create_graph needs.
Tensor scatter_along(const Tensor& g, const Tensor& indices, int64_t dim, const autograd::TensorMeta& like)
{
    if (like.shape.empty()) return to_dtype(g, like.dtype);  // a 0-dim sort is the identity
    return scatter(zeros(like.shape, like.dtype, like.device), dim, indices, to_dtype(g, like.dtype), false);
}

// derivative of sort / topk, input input: g scattered back along dim to the positions in indices (0 where topk dropped a value)
struct SortBackward : autograd::Node {
    Tensor indices;
    int64_t dim = 0;
    bool is_topk = false;
    std::string name() const override { return is_topk ? "TopkBackward0" : "SortBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        return {scatter_along(g[0], indices, dim, input_meta[0])};
    }
    void release() override { indices.reset(); }
};

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending)
{
    MT_PROFILE_OP("sort", t);
    dim = wrap_dim(dim, t->dim(), "sort");
    return autograd::record_op<SortBackward>({&t}, [&] { return sort_forward(t, dim, descending); },
                                             [&](SortBackward& n, const std::tuple<Tensor, Tensor>& r) {
                                                 n.dim = dim;
                                                 n.indices = autograd::save(n, std::get<1>(r));
                                             });
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest)
{
    MT_PROFILE_OP("topk", t);
    dim = wrap_dim(dim, t->dim(), "topk");
    const int64_t n = t->dim() ? t->shape[dim] : 1;
    MT_CHECK(k >= 0 && k <= n, "topk: selected index k (", k, ") out of range for dimension ", dim, " of size ", n);
    auto forward = [&] { return sort_forward(t, dim, largest, k); };
    return autograd::record_op<SortBackward>({&t}, forward, [&](SortBackward& n, const std::tuple<Tensor, Tensor>& r) {
        n.dim = dim;
        n.is_topk = true;
        n.indices = autograd::save(n, std::get<1>(r));
    });
}

}  // namespace minitorch
