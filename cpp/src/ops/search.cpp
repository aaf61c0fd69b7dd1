// search.cpp — searchsorted: where each value would go in a sorted last dim (bucketize is
// searchsorted with a 1-D boundaries tensor). One binary search per value (the
// `searchsorted` kernel): O(M log N), not the O(M N) of comparing every pair. No gradient
// (the result is an index).
#include "minitorch/ops.h"

namespace minitorch {

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right)
{
    MT_PROFILE_OP("searchsorted", sorted, values);
    MT_CHECK(sorted->dim() > 0, "searchsorted: boundaries tensor should have positive dimension, but got 0 dimension");
    MT_CHECK(sorted->device() == values->device(), "searchsorted: expected boundaries and input value tensors on one "
             "device, got ", sorted->device(), " and ", values->device());
    const int64_t nd = sorted->dim();
    bool leading_match = values->dim() == nd;
    for (int64_t d = 0; leading_match && d + 1 < nd; ++d) leading_match = sorted->shape[d] == values->shape[d];
    MT_CHECK(nd == 1 || leading_match, "searchsorted: boundaries tensor should be 1 dimension or the first N-1 "
             "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor ",
             sorted->shape, " and input value tensor ", values->shape);
    MT_CHECK_TYPE(sorted->dtype != DType::Bool && values->dtype != DType::Bool,
                  "searchsorted: not implemented for bool tensors");
    // Mixed dtypes are compared in their promoted dtype, as PyTorch does.
    const DType dt = promote(sorted->dtype, values->dtype);
    Tensor out = empty(values->shape, DType::Int64, values->device());
    if (out->numel() == 0) return out;
    const int64_t N = sorted->shape[nd - 1];
    int64_t B = 1;  // the rows of sorted: its leading dims (one row when 1-D)
    for (int64_t d = 0; d + 1 < nd; ++d) B *= sorted->shape[d];
    const int64_t M = values->numel() / B;
    Tensor seq = view(contiguous(to_dtype(sorted, dt)), {B, N});
    Tensor v = view(contiguous(to_dtype(values, dt)), {B, M});
    kernels(values->device()).searchsorted(view(out, {B, M}), seq, v, right);
    return out;
}

}  // namespace minitorch
