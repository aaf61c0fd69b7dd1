// index_select.cpp — picking slices by a tensor of indices (x[idx], DataLoader
// batches), and its backward, scatter-add into zeros.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// t with `dim` moved to the front, contiguous, seen as (size(dim), rest).
Tensor rows_view(const Tensor& t, int64_t dim)
{
    std::vector<int64_t> order{dim};
    for (int64_t d = 0; d < t->dim(); ++d)
        if (d != dim) order.push_back(d);
    Tensor c = contiguous(permute(t, order));
    int64_t rows = t->shape[dim];
    return view(c, {rows, rows ? t->numel() / rows : 0});
}

// Shape of t with dim moved to the front and resized to n.
Shape front_shape(const Shape& s, int64_t dim, int64_t n)
{
    Shape out{n};
    for (int64_t d = 0; d < int64_t(s.size()); ++d)
        if (d != dim) out.push_back(s[d]);
    return out;
}

// Moves the front dim back to `dim`.
Tensor unfront(const Tensor& t, int64_t dim)
{
    // perm[i] = which dim of the front layout lands at position i
    std::vector<int64_t> perm(t->dim());
    for (int64_t i = 0; i < t->dim(); ++i) perm[i] = i == dim ? 0 : (i < dim ? i + 1 : i);
    return permute(t, perm);
}

// The index as contiguous int64 (n,) on its own device, negatives wrapped; the
// device's check_index kernel raises IndexError for values out of range.
Tensor checked_index(const Tensor& index, int64_t size, const char* op)
{
    MT_CHECK_TYPE(index->dtype == DType::Int64, op, ": index must be an int64 tensor, got ", index->dtype);
    MT_CHECK(index->dim() <= 1, op, ": index must be 0-D or 1-D, got shape ", index->shape);
    // Every index into an empty dim is out of range, and a GPU kernel could not even
    // fall back to row 0: say so now, from the shapes alone.
    MT_CHECK_INDEX(size > 0 || index->numel() == 0, op, ": index is out of bounds for dimension with size 0 (",
                   index->numel(), " indices given)");
    Tensor idx = contiguous(reshape(index, {index->numel()}));
    Tensor out = empty({index->numel()}, DType::Int64, index->device());
    if (out->numel()) kernels(index->device()).check_index(out, idx, IndexCheck{op, size, true});
    return out;
}

// derivative of index_select / x[index], input input: g rows scatter-added into zeros at the indices
struct IndexSelectBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    std::string name() const override { return "IndexSelectBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        Tensor grad = zeros(front_shape(m.shape, dim, m.shape[dim]), g[0]->dtype, m.device);
        Tensor src = rows_view(g[0], dim);
        Tensor out = view(grad, {m.shape[dim], m.shape[dim] ? grad->numel() / m.shape[dim] : 0});
        if (src->numel()) kernels(m.device).scatter_add_rows(out, src, index);
        return {contiguous(unfront(grad, dim))};
    }
    void release() override { index.reset(); }
};

}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index)
{
    MT_PROFILE_OP("index_select", t, index);
    check_same_device("index_select", t, index);
    MT_CHECK_INDEX(t->dim() > 0, "index_select: cannot index a 0-dim tensor");
    dim = wrap_dim(dim, t->dim(), "index_select");
    Tensor idx = checked_index(index, t->shape[dim], "index_select");
    auto forward = [&] {
        Tensor rows = rows_view(t, dim);
        Tensor out = empty(front_shape(t->shape, dim, idx->numel()), t->dtype, t->device());
        if (out->numel())
            kernels(t->device()).gather_rows(view(out, {idx->numel(), out->numel() / idx->numel()}), rows, idx);
        return unfront(out, dim);
    };
    return autograd::record_op<IndexSelectBackward>({&t}, forward, [&](IndexSelectBackward& n, const Tensor&) {
        n.index = idx;  // made by checked_index for this call: nobody else can change it
        n.dim = dim;
        n.has_saved = true;
    });
}

}  // namespace minitorch
