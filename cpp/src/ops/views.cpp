// views.cpp — ops that only change shape / strides / offset and share storage.
// (The lecture on strides: a view never moves data, it changes how we index it.)
#include <optional>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

Tensor as_strided(const Tensor& t, Shape shape, Strides strides, int64_t offset)
{
    MT_CHECK_RUNTIME(!autograd::needs_grad(t), "as_strided: not differentiable here; call it on a detached tensor");
    MT_CHECK(shape.size() == strides.size(), "as_strided: got ", shape.size(), " sizes but ", strides.size(),
             " strides");
    int64_t n = checked_numel(shape, "as_strided");
    // The furthest element must lie inside the storage.
    int64_t last = offset;
    for (size_t d = 0; d < shape.size(); ++d) {
        MT_CHECK(strides[d] >= 0, "as_strided: negative strides are not supported, got ", strides);
        if (shape[d] > 0) last += (shape[d] - 1) * strides[d];
    }
    int64_t capacity = int64_t(t->storage->nbytes / itemsize(t->dtype));
    MT_CHECK(offset >= 0 && (n == 0 || last < capacity), "as_strided: size ", shape, " with strides ", strides,
             " and offset ", offset, " reaches outside a storage of ", capacity, " elements");
    return make_view(t, std::move(shape), std::move(strides), offset);
}

namespace {

// Replaces a single -1 with the size that keeps numel the same.
Shape infer_size(Shape shape, int64_t numel, const char* op)
{
    int64_t known = 1, infer_at = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == -1) {
            MT_CHECK(infer_at < 0, op, ": only one dimension can be inferred (-1), got ", shape);
            infer_at = int64_t(d);
        } else {
            MT_CHECK(shape[d] >= 0, op, ": invalid shape dimension ", shape[d], " in ", shape);
            known *= shape[d];
        }
    }
    if (infer_at >= 0) {
        MT_CHECK(known != 0, op, ": cannot infer the -1 in shape ", shape, " for a tensor of ", numel,
                 " elements (the other sizes multiply to 0)");
        MT_CHECK(numel % known == 0, op, ": shape ", shape, " is invalid for input of size ", numel);
        shape[infer_at] = numel / known;
    } else {
        MT_CHECK(known == numel, op, ": shape ", shape, " is invalid for input of size ", numel);
    }
    return shape;
}

// Strides for viewing (old_shape, old_strides) as new_shape without copying, or
// nothing when some new dim would have to span two non-contiguous pieces.
// We walk both shapes from the innermost dim, in "chunks" of old dims that are
// contiguous with each other; every new dim must fall inside one chunk.
std::optional<Strides> view_strides(Shape old_shape, Strides old_strides, const Shape& new_shape)
{
    Strides out(new_shape.size());
    if (old_shape.empty()) {
        old_shape = {1};
        old_strides = {1};
    }
    int64_t view_d = int64_t(new_shape.size()) - 1;
    int64_t chunk_stride = old_strides.back();
    int64_t tensor_numel = 1, view_numel = 1;
    for (int64_t d = int64_t(old_shape.size()) - 1; d >= 0; --d) {
        tensor_numel *= old_shape[d];
        bool chunk_ends = d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_stride);
        if (!chunk_ends) continue;
        while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
            out[view_d] = view_numel * chunk_stride;
            view_numel *= new_shape[view_d];
            --view_d;
        }
        if (view_numel != tensor_numel) return std::nullopt;
        if (d > 0) {
            chunk_stride = old_strides[d - 1];
            tensor_numel = view_numel = 1;
        }
    }
    if (view_d != -1) return std::nullopt;
    return out;
}

}  // namespace

static Tensor view_impl(const Tensor& t, Shape shape)
{
    shape = infer_size(std::move(shape), t->numel(), "view");
    if (t->numel() == 0) return make_view(t, shape, contiguous_strides(shape), t->offset);
    auto strides = view_strides(t->shape, t->strides, shape);
    MT_CHECK(strides.has_value(), "view: size ", shape, " is not compatible with input of size ", t->shape,
             " and stride ", t->strides,
             " (at least one dimension spans across two contiguous subspaces); use .reshape(...) instead");
    return make_view(t, shape, *strides, t->offset);
}

static Tensor reshape_impl(const Tensor& t, Shape shape)
{
    shape = infer_size(std::move(shape), t->numel(), "reshape");
    if (t->numel() == 0) return make_view(t, shape, contiguous_strides(shape), t->offset);
    if (auto strides = view_strides(t->shape, t->strides, shape)) return make_view(t, shape, *strides, t->offset);
    Tensor c = clone(t);  // only when no view is possible
    return make_view(c, shape, contiguous_strides(shape), 0);
}

static Tensor permute_impl(const Tensor& t, std::vector<int64_t> dims)
{
    const int64_t n = t->dim();
    MT_CHECK(int64_t(dims.size()) == n, "permute: number of dims ", dims, " doesn't match the tensor's ", n,
             " dims (shape ", t->shape, ")");
    std::vector<bool> seen(n, false);
    Shape shape(n);
    Strides strides(n);
    for (int64_t i = 0; i < n; ++i) {
        int64_t d = wrap_dim(dims[i], n, "permute");
        MT_CHECK(!seen[d], "permute: dim ", d, " appears more than once in ", dims);
        seen[d] = true;
        shape[i] = t->shape[d];
        strides[i] = t->strides[d];
    }
    return make_view(t, shape, strides, t->offset);
}

static Tensor transpose_impl(const Tensor& t, int64_t d0, int64_t d1)
{
    if (t->dim() == 0) {
        wrap_dim(d0, 0, "transpose");
        wrap_dim(d1, 0, "transpose");
        return make_view(t, t->shape, t->strides, t->offset);
    }
    d0 = wrap_dim(d0, t->dim(), "transpose");
    d1 = wrap_dim(d1, t->dim(), "transpose");
    Shape shape = t->shape;
    Strides strides = t->strides;
    std::swap(shape[d0], shape[d1]);
    std::swap(strides[d0], strides[d1]);
    return make_view(t, shape, strides, t->offset);
}

Tensor t_(const Tensor& t)
{
    MT_CHECK(t->dim() <= 2, "t: expects a tensor with <= 2 dimensions, but got shape ", t->shape,
             " (use .mT or transpose(-2, -1) for batches)");
    return t->dim() < 2 ? view(t, t->shape) : transpose(t, 0, 1);
}

static Tensor expand_impl(const Tensor& t, const Shape& shape)
{
    const int64_t n = int64_t(shape.size()), lead = n - t->dim();
    MT_CHECK(lead >= 0, "expand: the number of sizes provided (", n,
             ") must be greater or equal to the number of dimensions in the tensor (", t->dim(), ")");
    if (lead == 0 && shape == t->shape) return t;  // nothing to do (the common case in zip)
    Shape out_shape(n);
    Strides out_strides(n);
    for (int64_t d = n - 1; d >= 0; --d) {
        int64_t want = shape[d];
        if (d < lead) {
            MT_CHECK(want >= 0, "expand: the expanded size ", want, " is not allowed in a leading, non-existing dimension (target ",
                     shape, ")");
            out_shape[d] = want;
            out_strides[d] = 0;
            continue;
        }
        int64_t have = t->shape[d - lead];
        if (want == -1) want = have;
        MT_CHECK(have == want || have == 1, "expand: the expanded size of the tensor (", want,
                 ") must match the existing size (", have, ") at non-singleton dimension ", d, ". Target sizes: ",
                 shape, ". Tensor sizes: ", t->shape);
        MT_CHECK(want >= 0, "expand: invalid size ", want, " in ", shape);
        out_shape[d] = want;
        out_strides[d] = (have == want) ? t->strides[d - lead] : 0;
    }
    return make_view(t, out_shape, out_strides, t->offset);
}

static Tensor unsqueeze_impl(const Tensor& t, int64_t dim)
{
    dim = wrap_dim(dim, t->dim() + 1, "unsqueeze");
    Shape shape = t->shape;
    Strides strides = t->strides;
    // The new dim has size 1; any stride works, this one keeps contiguity obvious.
    int64_t s = dim < t->dim() ? t->strides[dim] * t->shape[dim] : 1;
    shape.insert(shape.begin() + dim, 1);
    strides.insert(strides.begin() + dim, s);
    return make_view(t, shape, strides, t->offset);
}

static Tensor squeeze_impl(const Tensor& t, std::optional<std::vector<int64_t>> dims)
{
    std::vector<bool> drop(t->dim(), false);
    if (!dims) {
        for (int64_t d = 0; d < t->dim(); ++d) drop[d] = t->shape[d] == 1;
    } else {
        for (int64_t d : *dims) {
            int64_t w = wrap_dim(d, t->dim(), "squeeze");
            if (t->dim() > 0) drop[w] = t->shape[w] == 1;  // PyTorch: a non-1 dim is left alone
        }
    }
    Shape shape;
    Strides strides;
    for (int64_t d = 0; d < t->dim(); ++d)
        if (!drop[d]) {
            shape.push_back(t->shape[d]);
            strides.push_back(t->strides[d]);
        }
    return make_view(t, shape, strides, t->offset);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim)
{
    if (t->dim() == 0) {
        wrap_dim(start_dim, 0, "flatten");
        wrap_dim(end_dim, 0, "flatten");
        return reshape(t, {1});
    }
    start_dim = wrap_dim(start_dim, t->dim(), "flatten");
    end_dim = wrap_dim(end_dim, t->dim(), "flatten");
    MT_CHECK(start_dim <= end_dim, "flatten: start_dim (", start_dim, ") cannot come after end_dim (", end_dim, ")");
    Shape shape(t->shape.begin(), t->shape.begin() + start_dim);
    int64_t merged = 1;
    for (int64_t d = start_dim; d <= end_dim; ++d) merged *= t->shape[d];
    shape.push_back(merged);
    shape.insert(shape.end(), t->shape.begin() + end_dim + 1, t->shape.end());
    return reshape(t, shape);
}

static Tensor select_impl(const Tensor& t, int64_t dim, int64_t index)
{
    MT_CHECK_INDEX(t->dim() > 0, "select: invalid index of a 0-dim tensor");
    dim = wrap_dim(dim, t->dim(), "select");
    const int64_t size = t->shape[dim];
    MT_CHECK_INDEX(index >= -size && index < size, "index ", index, " is out of bounds for dimension ", dim,
                   " with size ", size);
    if (index < 0) index += size;
    Shape shape = t->shape;
    Strides strides = t->strides;
    int64_t offset = t->offset + index * strides[dim];
    shape.erase(shape.begin() + dim);
    strides.erase(strides.begin() + dim);
    return make_view(t, shape, strides, offset);
}

static Tensor slice_impl(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step)
{
    MT_CHECK_INDEX(t->dim() > 0, "slice: cannot slice a 0-dim tensor");
    dim = wrap_dim(dim, t->dim(), "slice");
    MT_CHECK(step > 0, "slice: step must be greater than zero, got ", step,
             " (negative steps are not supported; use flip)");
    const int64_t size = t->shape[dim];
    // Python's clamping: negative counts from the end, out of range clamps to [0, size].
    auto clampi = [size](int64_t i) {
        if (i < 0) i += size;
        return std::min(std::max<int64_t>(i, 0), size);
    };
    int64_t b = start ? clampi(*start) : 0;
    int64_t e = stop ? clampi(*stop) : size;
    int64_t len = e > b ? (e - b + step - 1) / step : 0;
    Shape shape = t->shape;
    Strides strides = t->strides;
    int64_t offset = t->offset + (len ? b * strides[dim] : 0);
    shape[dim] = len;
    strides[dim] *= step;
    return make_view(t, shape, strides, offset);
}

// ---------------------------------------------------------------------------
// unfold: every window of `size` elements, `step` apart, along dim, as a new last dim of
// that size; dim keeps the window count. Windows overlap when step < size: one element is
// then seen from several places (a view, as PyTorch's; writing through it is not refused).
// dim is wrapped already (unfold below).
static Tensor unfold_impl(const Tensor& t, int64_t dim, int64_t size, int64_t step)
{
    const int64_t length = t->dim() ? t->shape[dim] : 1;
    MT_CHECK(size >= 0, "unfold: size is ", size, " but must be >= 0");
    MT_CHECK(size <= length, "unfold: maximum size for tensor at dimension ", dim, " is ", length, " but size is ",
             size);
    MT_CHECK(step > 0, "unfold: step is ", step, " but must be > 0");
    if (!t->dim()) return make_view(t, {size}, {1}, t->offset);
    Shape shape = t->shape;
    Strides strides = t->strides;
    shape[dim] = (length - size) / step + 1;
    strides[dim] = t->strides[dim] * step;
    shape.push_back(size);
    strides.push_back(t->strides[dim]);
    return make_view(t, shape, strides, t->offset);
}

// Backward of views: put the gradient back into the input's layout.
// ---------------------------------------------------------------------------
namespace {

using autograd::Node;

// view / reshape / unsqueeze / squeeze: the gradient is reshaped back.
// derivative of view / reshape / flatten / squeeze / unsqueeze, input input: g reshaped back to the input shape
struct ReshapeBackward : Node {
    std::string op;
    std::string name() const override { return op; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override { return {reshape(g[0], input_meta[0].shape)}; }
};

// derivative of permute, input input: g permuted by the inverse permutation
struct PermuteBackward : Node {
    std::vector<int64_t> dims;
    std::string name() const override { return "PermuteBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        std::vector<int64_t> inverse(dims.size());
        for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = int64_t(i);
        return {permute(g[0], inverse)};
    }
};

// derivative of transpose / t, input input: g transposed back
struct TransposeBackward : Node {
    int64_t d0 = 0, d1 = 0;
    std::string name() const override { return "TransposeBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override { return {transpose(g[0], d0, d1)}; }
};

// derivative of expand, input input: g summed over the expanded dims
struct ExpandBackward : Node {
    std::string name() const override { return "ExpandBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override { return {autograd::sum_to(g[0], input_meta[0].shape)}; }
};

// select / slice: zeros of the input's shape with the gradient written into the
// same view the forward took.
// derivative of x[i] / x[a:b:s] (select, slice), input input: zeros with g written into the selected positions
struct IndexBackward : Node {
    bool is_select = true;
    int64_t dim = 0, index = 0, step = 1;
    std::optional<int64_t> start, stop;
    std::string name() const override { return is_select ? "SelectBackward0" : "SliceBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        if (autograd::is_grad_enabled()) {
            // create_graph: write g with index_copy (an op, whose gradient is index_select);
            // the positions are those the same select / slice takes from arange(size).
            Tensor pos = arange(0, double(m.shape[dim]), 1, DType::Int64, m.device);
            pos = is_select ? reshape(select(pos, 0, index), {1}) : contiguous(slice(pos, 0, start, stop, step));
            return {index_copy(zeros(m.shape, g[0]->dtype, m.device), dim, pos,
                               is_select ? unsqueeze(g[0], dim) : g[0])};
        }
        Tensor grad = zeros(m.shape, g[0]->dtype, m.device);
        copy_(is_select ? select(grad, dim, index) : slice(grad, dim, start, stop, step), g[0]);
        return {grad};
    }
};

// unfold: windows of `size` elements, `step` apart, along dim (a view)
// derivative of unfold, input input: zeros with each window's g added back where the window lies (overlapping windows add up)
struct UnfoldBackward : Node {
    int64_t dim = 0, size = 0, step = 1;
    std::string name() const override { return "UnfoldBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        if (m.shape.empty()) return {reshape(sum(g[0], {}, false, std::nullopt), {})};  // 0 or 1 window of 0-dim
        // g (..., windows at dim, ..., size) as (..., windows * size at dim, ...): the window's
        // elements next to its number; element (w, k) came from position w * step + k.
        const int64_t windows = g[0]->shape[dim];
        std::vector<int64_t> order;
        for (int64_t d = 0; d < g[0]->dim() - 1; ++d) {
            order.push_back(d);
            if (d == dim) order.push_back(g[0]->dim() - 1);
        }
        Shape flat = m.shape;
        flat[dim] = windows * size;
        const Tensor gw = reshape(permute(g[0], order), flat);
        Tensor pos = empty({windows * size}, DType::Int64, Device{});  // built on the host, copied once
        int64_t* p = pos->data_as<int64_t>();
        for (int64_t w = 0; w < windows; ++w)
            for (int64_t k = 0; k < size; ++k) p[w * size + k] = w * step + k;
        pos = to_device(pos, m.device);
        return {index_add(zeros(m.shape, g[0]->dtype, m.device), dim, pos, gw, 1.0)};
    }
};

}  // namespace

// Each public view runs the layout change above and, when a gradient is needed, records
// how to undo it (record_op's no-grad guard keeps helper ops inside, the clone in
// reshape, from recording).
namespace {

template <class F>
Tensor reshape_like(const char* name, const Tensor& t, F&& impl)
{
    return autograd::record_op<ReshapeBackward>({&t}, impl, [&](ReshapeBackward& n, const Tensor&) { n.op = name; });
}

}  // namespace

Tensor view(const Tensor& t, Shape shape)
{
    return reshape_like("ViewBackward0", t, [&] { return view_impl(t, shape); });
}
Tensor reshape(const Tensor& t, Shape shape)
{
    return reshape_like("ReshapeAliasBackward0", t, [&] { return reshape_impl(t, shape); });
}
Tensor unsqueeze(const Tensor& t, int64_t dim)
{
    return reshape_like("UnsqueezeBackward0", t, [&] { return unsqueeze_impl(t, dim); });
}
Tensor squeeze(const Tensor& t, std::optional<std::vector<int64_t>> dims)
{
    return reshape_like("SqueezeBackward0", t, [&] { return squeeze_impl(t, dims); });
}

Tensor expand(const Tensor& t, const Shape& shape)
{
    if (t->shape == shape) return t;  // nothing to record (the common case inside zip)
    return autograd::record_op<ExpandBackward>({&t}, [&] { return expand_impl(t, shape); },
                                               [](ExpandBackward&, const Tensor&) {});
}

Tensor permute(const Tensor& t, std::vector<int64_t> dims)
{
    return autograd::record_op<PermuteBackward>({&t}, [&] { return permute_impl(t, dims); },
                                                [&](PermuteBackward& n, const Tensor&) {
                                                    for (int64_t d : dims) n.dims.push_back(wrap_dim(d, t->dim(), "permute"));
                                                });
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1)
{
    return autograd::record_op<TransposeBackward>({&t}, [&] { return transpose_impl(t, d0, d1); },
                                                  [&](TransposeBackward& n, const Tensor&) {
                                                      n.d0 = d0;
                                                      n.d1 = d1;
                                                  });
}

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step)
{
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), "unfold");
    return autograd::record_op<UnfoldBackward>({&t}, [&] { return unfold_impl(t, dim, size, step); },
                                               [&](UnfoldBackward& n, const Tensor&) {
                                                   n.dim = dim;
                                                   n.size = size;
                                                   n.step = step;
                                               });
}

Tensor select(const Tensor& t, int64_t dim, int64_t index)
{
    return autograd::record_op<IndexBackward>({&t}, [&] { return select_impl(t, dim, index); },
                                              [&](IndexBackward& n, const Tensor&) {
                                                  n.dim = dim;
                                                  n.index = index;
                                              });
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step)
{
    return autograd::record_op<IndexBackward>({&t}, [&] { return slice_impl(t, dim, start, stop, step); },
                                              [&](IndexBackward& n, const Tensor&) {
                                                  n.is_select = false;
                                                  n.dim = dim;
                                                  n.start = start;
                                                  n.stop = stop;
                                                  n.step = step;
                                              });
}

}  // namespace minitorch
