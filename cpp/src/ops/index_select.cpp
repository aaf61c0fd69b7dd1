// index_select.cpp — slices picked by a tensor of indices (x[idx], DataLoader batches),
// and the ops that write them: index_add (its backward, scatter-add) and index_copy.
// gather / scatter / x[mask] (python/minitorch/_indexing.py) are these on flat indices.
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

// index_add: out = x; out[index] += alpha * source (rows along dim)
// derivative of index_add, input x: g
// derivative of index_add, input source: alpha * g[index]
struct IndexAddBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    double alpha = 1;
    std::string name() const override { return "IndexAddBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gs, g0 = g[0]->dim() ? g[0] : reshape(g[0], {1});
        if (needs_input_grad(1)) {
            gs = reshape(index_select(g0, dim, index), input_meta[1].shape);
            if (alpha != 1) gs = binary(BinaryOp::Mul, gs, scalar_tensor(alpha, gs->device()));
        }
        return {g[0], gs};
    }
    void release() override { index.reset(); }
};

// index_copy: out = x; out[index] = source (rows along dim)
// derivative of index_copy, input x: g with the rows at index set to zero
// derivative of index_copy, input source: g[index]
struct IndexCopyBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    std::string name() const override { return "IndexCopyBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx, gs, g0 = g[0]->dim() ? g[0] : reshape(g[0], {1});
        if (needs_input_grad(0)) gx = index_copy(g[0], dim, index, zeros(input_meta[1].shape, g[0]->dtype, g[0]->device()));
        if (needs_input_grad(1)) gs = reshape(index_select(g0, dim, index), input_meta[1].shape);
        return {gx, gs};
    }
    void release() override { index.reset(); }
};

// The checks shared by index_add and index_copy; returns the checked index.
Tensor check_index_write(const char* op, const Tensor& t, int64_t& dim, const Tensor& index, const Tensor& source)
{
    check_same_device(op, t, index);
    check_same_device(op, t, source);
    MT_CHECK_TYPE(source->dtype == t->dtype, op, ": self (", t->dtype, ") and source (", source->dtype,
                  ") must have the same dtype");
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), op);
    MT_CHECK(index->dim() <= 1, op, ": index must be 0-D or 1-D, got shape ", index->shape);
    // source has t's shape with index->numel() rows along dim (a 0-dim t takes a 0/1-dim source).
    Shape want = t->dim() ? t->shape : Shape{1};
    want[dim] = index->numel();
    Shape have = source->dim() ? source->shape : Shape{1};
    MT_CHECK(have == want || (t->dim() == 0 && source->numel() == index->numel()), op, ": source of shape ",
             source->shape, " does not fit ", index->numel(), " indices along dim ", dim, " of self with shape ",
             t->shape, " (expected source shape ", want, ")");
    return checked_index(index, t->dim() ? t->shape[dim] : 1, op);
}

// out = copy of t with `write(rows_of_out, rows_of_source, idx)` applied along dim.
template <class Write>
Tensor write_rows(const Tensor& t, int64_t dim, const Tensor& idx, const Tensor& source, Write&& write)
{
    Tensor t2 = t->dim() ? t : reshape(t, {1});
    Tensor src = reshape(source, [&] { Shape s = t2->shape; s[dim] = idx->numel(); return s; }());
    std::vector<int64_t> order{dim};
    for (int64_t d = 0; d < t2->dim(); ++d)
        if (d != dim) order.push_back(d);
    Tensor out = clone(permute(t2, order));  // a fresh contiguous copy with dim in front
    const int64_t rows = t2->shape[dim], row = rows ? out->numel() / rows : 0;
    if (idx->numel() && row) write(view(out, {rows, row}), rows_view(src, dim), idx);
    return reshape(contiguous(unfront(out, dim)), t->shape);
}

}  // namespace

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, double alpha)
{
    MT_PROFILE_OP("index_add", t, index, source);
    Tensor idx = check_index_write("index_add", t, dim, index, source);
    auto forward = [&] {
        Tensor src = alpha == 1 ? source : binary(BinaryOp::Mul, source, scalar_tensor(alpha, source->device(), source->dtype));
        return write_rows(t, dim, idx, src, [&](const Tensor& out, const Tensor& rows, const Tensor& i) {
            kernels(t->device()).scatter_add_rows(out, rows, i);
        });
    };
    return autograd::record_op<IndexAddBackward>({&t, &source}, forward, [&](IndexAddBackward& n, const Tensor&) {
        n.index = idx;
        n.dim = t->dim() ? dim : 0;
        n.alpha = alpha;
        n.has_saved = true;
    });
}

Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source)
{
    MT_PROFILE_OP("index_copy", t, index, source);
    Tensor idx = check_index_write("index_copy", t, dim, index, source);
    auto forward = [&] {
        return write_rows(t, dim, idx, source, [&](const Tensor& out, const Tensor& rows, const Tensor& i) {
            kernels(t->device()).put_rows(out, rows, i);
        });
    };
    return autograd::record_op<IndexCopyBackward>({&t, &source}, forward, [&](IndexCopyBackward& n, const Tensor&) {
        n.index = idx;
        n.dim = t->dim() ? dim : 0;
        n.has_saved = true;
    });
}

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
