// sort.cpp — sorting along a dim (sort; argsort and topk are built on it in Python,
// and so is its gradient: the values are x.gather(dim, indices) when x needs one).
#include "minitorch/ops.h"

namespace minitorch {

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending)
{
    MT_PROFILE_OP("sort", t);
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), "sort");
    Tensor values = empty(t->shape, t->dtype, t->device());
    Tensor indices = empty(t->shape, DType::Int64, t->device());
    if (!t->numel()) return {values, indices};
    SoftmaxRows r = softmax_rows(t->shape, t->dim() ? dim : 0);  // (outer, R, inner) around dim
    Shape lines{r.outer, r.C, r.inner};
    kernels(t->device()).sort(view(values, lines), view(indices, lines), view(contiguous(t), lines), descending);
    return {values, indices};
}

}  // namespace minitorch
