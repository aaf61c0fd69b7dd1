// index_select.cpp — slices picked by a tensor of indices (x[idx], DataLoader batches),
// and the ops that write them: index_add (its backward, scatter-add), index_copy and
// index_fill, each one scatter kernel (cpu/indexing.cpp, cuda/indexing.cu) with the
// index expanded over the slices. gather / scatter / masks are ops/indexing.cpp.
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
    MT_CHECK_TYPE(is_integral(index->dtype), op, ": index must be an int64 or int32 tensor, got ", index->dtype);
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
        if (autograd::is_grad_enabled())  // create_graph: the scatter-add as an op (its gradient is index_select)
            return {index_add(zeros(m.shape, g[0]->dtype, m.device), dim, index, g[0], 1.0)};
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
// index_fill is index_copy of its value expanded over the slices: the same formulas.
// derivative of index_fill, input self: g with the slices at index set to zero
// derivative of index_fill, input value: the sum of g over the slices at index
struct IndexCopyBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    bool fill = false;
    std::string name() const override { return fill ? "IndexFillBackward0" : "IndexCopyBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx, gs, g0 = g[0]->dim() ? g[0] : reshape(g[0], {1});
        if (needs_input_grad(0)) gx = index_copy(g[0], dim, index, zeros(input_meta[1].shape, g[0]->dtype, g[0]->device()));
        if (needs_input_grad(1)) gs = reshape(index_select(g0, dim, index), input_meta[1].shape);
        return {gx, gs};
    }
    void release() override { index.reset(); }
};

// The checks shared by index_add, index_copy and index_fill.
void check_index_write(const char* op, const Tensor& t, int64_t& dim, const Tensor& index, const Tensor& source)
{
    check_same_device(op, t, index);
    check_same_device(op, t, source);
    MT_CHECK_TYPE(index->dtype == DType::Int64, op, ": index must be an int64 tensor, got ", index->dtype);
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
}

// A copy of t with source's slices written or added at the positions index names along dim:
// one scatter, whose index is `index` expanded over source's shape (stride 0 off dim). The
// kernel checks the indices (negatives wrap, as in PyTorch's index_add / index_copy).
Tensor write_slices(const char* op, WriteOp wop, const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source)
{
    Tensor out = clone(t->dim() ? t : reshape(t, {1}));  // contiguous
    Shape s = out->shape, ones(out->shape.size(), 1);
    s[dim] = ones[dim] = index->numel();
    Tensor src = source->shape == s ? source : reshape(source, s);
    Tensor idx = expand(reshape(index, ones), s);
    IndexCheck check{op, out->shape[dim], true};
    check.dim = dim;
    if (src->numel()) kernels(t->device()).scatter(wop, out, src, idx, dim, check);
    return reshape(out, t->shape);
}

}  // namespace

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, double alpha)
{
    MT_PROFILE_OP("index_add", t, index, source);
    check_index_write("index_add", t, dim, index, source);
    auto forward = [&] {
        Tensor src = alpha == 1 ? source : binary(BinaryOp::Mul, source, scalar_tensor(alpha, source->device(), source->dtype));
        return write_slices("index_add", WriteOp::Add, t, dim, index, src);
    };
    return autograd::record_op<IndexAddBackward>({&t, &source}, forward, [&](IndexAddBackward& n, const Tensor&) {
        n.index = autograd::save(n, reshape(index, {index->numel()}));
        n.dim = t->dim() ? dim : 0;
        n.alpha = alpha;
    });
}

Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source)
{
    MT_PROFILE_OP("index_copy", t, index, source);
    check_index_write("index_copy", t, dim, index, source);
    auto forward = [&] { return write_slices("index_copy", WriteOp::Put, t, dim, index, source); };
    return autograd::record_op<IndexCopyBackward>({&t, &source}, forward, [&](IndexCopyBackward& n, const Tensor&) {
        n.index = autograd::save(n, reshape(index, {index->numel()}));
        n.dim = t->dim() ? dim : 0;
    });
}

Tensor index_fill(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& value)
{
    MT_PROFILE_OP("index_fill", t, index, value);
    MT_CHECK(value->dim() == 0, "index_fill: only supports a 0-dimensional value tensor, but got one with ",
             value->dim(), " dimension(s)");
    Tensor v = to_dtype(value->device() == t->device() ? value : to_device(value, t->device()), t->dtype);
    int64_t d = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), "index_fill");
    Shape s = t->dim() ? t->shape : Shape{1};
    s[d] = index->dim() <= 1 ? index->numel() : 0;
    if (!t->dim()) s = index->numel() == 1 ? Shape{} : s;
    // index_copy of the value expanded over the slices (the expand is recorded: value's
    // gradient is the sum of g over the filled slices).
    Tensor source = expand(v, s);
    check_index_write("index_fill", t, d, index, source);
    auto forward = [&] { return write_slices("index_fill", WriteOp::Put, t, d, index, source); };
    return autograd::record_op<IndexCopyBackward>({&t, &source}, forward, [&](IndexCopyBackward& n, const Tensor&) {
        n.index = autograd::save(n, reshape(index, {index->numel()}));
        n.dim = t->dim() ? d : 0;
        n.fill = true;
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
