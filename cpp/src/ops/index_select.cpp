// index_select.cpp — slices picked by a tensor of indices (x[idx], DataLoader batches,
// embeddings): one kernel launch, which also checks the indices; its backward is one zero
// fill and one scatter-add launch. Then the ops that write slices: index_add (its
// backward, scatter-add), index_copy and index_fill, each one scatter kernel
// (cpu/indexing.cpp, cuda/indexing.cu) with the index expanded over the slices.
// gather / scatter / masks are ops/indexing.cpp.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// True when t, seen as (size(dim), rest), is contiguous rows: t contiguous and every dim
// before `dim` of size 1 (dim 0 of a contiguous tensor: x[idx], DataLoader batches,
// embeddings). Those take the row kernels (a memcpy per row on the CPU).
bool is_rows(const Tensor& t, int64_t dim)
{
    if (!t->is_contiguous()) return false;
    for (int64_t d = 0; d < dim; ++d)
        if (t->shape[d] != 1) return false;
    return true;
}

// t seen as (size(dim), rest); is_rows(t, dim) must hold.
Tensor as_rows(const Tensor& t, int64_t dim)
{
    const int64_t rows = t->shape[dim];
    return view(t, {rows, rows ? t->numel() / rows : 0});
}

// The 1-D index (n,) seen in a tensor of `shape` (whose size along dim is n): stride 0
// elsewhere, so the one-dim gather / scatter kernels take it as an element-wise index.
Tensor spread_index(const Tensor& index, const Shape& shape, int64_t dim)
{
    Shape ones(shape.size(), 1);
    ones[dim] = index->numel();
    return expand(reshape(index, ones), shape);
}

// The index as contiguous int64 (n,) (int32/16/8 cast: one more launch). The kernels
// check each value where they read it (negatives wrap, as NumPy's take): the CPU raises
// IndexError at once, a GPU at the next synchronization.
Tensor int64_index(const Tensor& index, int64_t size, const char* op)
{
    MT_CHECK_TYPE(is_integral(index->dtype), op, ": index must be an int64 or int32 tensor, got ", index->dtype);
    MT_CHECK(index->dim() <= 1, op, ": index must be 0-D or 1-D, got shape ", index->shape);
    // Every index into an empty dim is out of range, and a GPU kernel could not even
    // fall back to row 0: say so now, from the shapes alone.
    MT_CHECK_INDEX(size > 0 || index->numel() == 0, op, ": index is out of bounds for dimension with size 0 (",
                   index->numel(), " indices given)");
    return contiguous(reshape(to_dtype(index, DType::Int64), {index->numel()}));
}

// out = in with rows picked along dim by index (n,) (out: in's shape with n along dim),
// one kernel launch either way.
void select_rows(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index, const IndexCheck& check)
{
    auto& k = kernels(in->device());
    if (is_rows(in, dim)) k.gather_rows(as_rows(out, dim), as_rows(in, dim), index, check);
    else k.gather(out, in, spread_index(index, out->shape, dim), dim, check);
}

// out[index[i] along dim] += src[i along dim], out contiguous; atomics on a GPU.
void add_rows(const Tensor& out, const Tensor& src, int64_t dim, const Tensor& index, const IndexCheck& check)
{
    auto& k = kernels(out->device());
    if (is_rows(src, dim)) k.scatter_add_rows(as_rows(out, dim), as_rows(src, dim), index, check);
    else k.scatter(WriteOp::Add, out, src, spread_index(index, src->shape, dim), dim, check);
}

// derivative of index_select / x[index], input input: g rows scatter-added into zeros at the indices
// derivative of embedding, input weight: the same, less the rows picked at padding_idx
struct IndexSelectBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    bool embedding = false;
    int64_t padding = INT64_MIN;  // embedding's padding_idx (>= 0): that row gets no gradient
    std::string name() const override { return embedding ? "EmbeddingBackward0" : "IndexSelectBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        // embedding's g has the indices' shape, then the rows' width: one row per index,
        // contiguous, so the rows kernel (the one that skips padding_idx) takes it
        const Tensor g0 = embedding ? contiguous(reshape(g[0], {index->numel(), m.shape[1]})) : g[0];
        if (autograd::is_grad_enabled()) {  // create_graph: the scatter-add as an op (its gradient is index_select)
            Tensor grad = index_add(zeros(m.shape, g0->dtype, m.device), dim, index, g0, 1.0);
            if (padding < 0) return {grad};
            return {index_fill(grad, dim, scalar_tensor(padding, m.device, DType::Int64),
                               scalar_tensor(0.0, m.device, g0->dtype))};
        }
        // Two launches: the zero fill and one scatter-add kernel (g in any layout); rows
        // picked at padding_idx add nothing (the kernel skips `ignore`).
        Tensor grad = zeros(m.shape, g0->dtype, m.device);
        IndexCheck check{"index_select", m.shape[dim], true};
        check.ignore = padding;
        if (g0->numel()) add_rows(grad, g0, dim, index, check);
        return {grad};
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

namespace {

// index_select with the check `op` names: whether negatives wrap (index_select) or are
// errors (embedding). One launch; the node's backward one zero fill and one scatter-add.
Tensor select_along(const Tensor& t, int64_t dim, const Tensor& index, const char* op, bool wrap)
{
    check_same_device(op, t, index);
    MT_CHECK_INDEX(t->dim() > 0, op, ": cannot index a 0-dim tensor");
    dim = wrap_dim(dim, t->dim(), op);
    Tensor idx = int64_index(index, t->shape[dim], op);
    auto forward = [&] {
        Shape shape = t->shape;
        shape[dim] = idx->numel();
        Tensor out = empty(shape, t->dtype, t->device());
        if (out->numel()) select_rows(out, t, dim, idx, IndexCheck{op, t->shape[dim], wrap});
        return out;
    };
    return autograd::record_op<IndexSelectBackward>({&t}, forward, [&](IndexSelectBackward& n, const Tensor&) {
        n.index = autograd::save(n, idx);
        n.dim = dim;
    });
}

}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index)
{
    MT_PROFILE_OP("index_select", t, index);
    return select_along(t, dim, index, "index_select", true);
}

Tensor embedding_rows(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx)
{
    MT_PROFILE_OP("embedding", weight, indices);
    check_same_device("embedding", weight, indices);
    MT_CHECK(weight->dim() == 2, "embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape ",
             weight->shape);
    const int64_t num = weight->shape[0], width = weight->shape[1];
    int64_t padding = INT64_MIN;
    if (padding_idx) {
        MT_CHECK(-num <= *padding_idx && *padding_idx < num, "embedding: padding_idx must be within num_embeddings (",
                 num, "), got ", *padding_idx);
        padding = *padding_idx < 0 ? *padding_idx + num : *padding_idx;
    }
    Tensor flat = int64_index(reshape(indices, {indices->numel()}), num, "embedding");
    Shape shape = indices->shape;  // the result: indices' shape, then the rows' width
    shape.push_back(width);
    auto forward = [&] {
        Tensor out = empty(shape, weight->dtype, weight->device());
        if (out->numel())
            select_rows(view(out, {flat->numel(), width}), weight, 0, flat, IndexCheck{"embedding", num, false});
        return out;
    };
    return autograd::record_op<IndexSelectBackward>({&weight}, forward, [&](IndexSelectBackward& n, const Tensor&) {
        n.index = autograd::save(n, flat);
        n.embedding = true;
        n.padding = padding;
    });
}

}  // namespace minitorch
