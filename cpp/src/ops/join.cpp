// join.cpp — joining tensors along a dim (cat, one kernel call for all inputs; stack is cat
// of unsqueezed tensors, with its own node) and
// cutting one into pieces (split_with_sizes; split, chunk and unbind are built on it).
// Each is the other's backward.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// derivative of cat, input tensors: for each tensor, the slice of g where it was written
struct CatBackward : autograd::Node {
    int64_t dim = 0;
    std::vector<int64_t> sizes;  // each input's size along dim (0 for a skipped empty (0,) tensor)
    std::vector<bool> skipped;   // PyTorch's legacy rule: 1-D empty inputs take no part
    std::string name() const override { return "CatBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        std::vector<Tensor> out;
        int64_t offset = 0;
        for (size_t k = 0; k < sizes.size(); ++k) {
            if (skipped[k]) {
                out.push_back(zeros(input_meta[k].shape, g[0]->dtype, input_meta[k].device));
                continue;
            }
            out.push_back(needs_input_grad(k) ? slice(g[0], dim, offset, offset + sizes[k], 1) : nullptr);
            offset += sizes[k];
        }
        return out;
    }
};

// derivative of stack, input tensors: for each tensor, its slice g.select(dim, k)
struct StackBackward : autograd::Node {
    int64_t dim = 0;
    std::string name() const override { return "StackBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        std::vector<Tensor> out;
        for (size_t k = 0; k < next_edges.size(); ++k)
            out.push_back(needs_input_grad(k) ? select(g[0], dim, int64_t(k)) : nullptr);
        return out;
    }
};

// derivative of split_with_sizes, input input: the pieces' gradients joined again (zeros for unused pieces)
struct SplitBackward : autograd::Node {
    int64_t dim = 0;
    std::string name() const override { return "SplitWithSizesBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override { return {cat(g, dim)}; }
};

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim)
{
    MT_PROFILE_OP("cat", tensors);
    MT_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
    // As PyTorch: a 1-D tensor of size 0 is skipped whatever the others' shapes (legacy rule).
    auto skipped = [](const Tensor& t) { return t->dim() == 1 && t->shape[0] == 0; };
    const Tensor* ref = nullptr;
    DType dtype = tensors[0]->dtype;
    for (const Tensor& t : tensors) {
        MT_CHECK(t, "cat: expected a list of tensors, got None");
        check_same_device("cat", tensors[0], t);
        dtype = promote(dtype, t->dtype);
        if (!ref && !skipped(t)) ref = &t;
    }
    if (!ref) {  // all inputs are (0,): the result is too
        return empty({0}, dtype, tensors[0]->device());
    }
    const Tensor& r = *ref;
    MT_CHECK_INDEX(r->dim() > 0, "cat: zero-dimensional tensor cannot be concatenated (got shape ", r->shape, ")");
    dim = wrap_dim(dim, r->dim(), "cat");
    Shape shape = r->shape;
    shape[dim] = 0;
    for (size_t k = 0; k < tensors.size(); ++k) {
        const Tensor& t = tensors[k];
        if (skipped(t)) continue;
        MT_CHECK(t->dim() == r->dim(), "cat: tensors must have the same number of dimensions: got ", r->dim(),
                 " and ", t->dim(), " (tensor ", k, " has shape ", t->shape, ")");
        for (int64_t d = 0; d < r->dim(); ++d)
            MT_CHECK(d == dim || t->shape[d] == r->shape[d], "cat: sizes of tensors must match except in dimension ",
                     dim, ": expected size ", r->shape[d], " but got size ", t->shape[d], " for tensor number ", k,
                     " (shapes ", r->shape, " and ", t->shape, ")");
        shape[dim] += t->shape[dim];
    }
    auto forward = [&] {
        // One kernel call for all inputs (one launch on a GPU); inputs of another dtype are cast first.
        Tensor out = empty(shape, dtype, r->device());
        std::vector<Tensor> inputs;
        for (const Tensor& t : tensors)
            if (!skipped(t) && t->numel()) inputs.push_back(to_dtype(t, dtype));
        if (out->numel()) kernels(out->device()).cat(out, inputs, dim);
        return out;
    };
    bool grad = false;
    for (const Tensor& t : tensors) grad = grad || autograd::needs_grad(t);
    if (!grad) return forward();
    Tensor out;
    {
        autograd::NoGradGuard guard;
        out = forward();
    }
    auto node = std::make_shared<CatBackward>();
    node->dim = dim;
    for (const Tensor& t : tensors) {
        node->skipped.push_back(skipped(t));
        node->sizes.push_back(skipped(t) ? 0 : t->shape[dim]);
    }
    autograd::record(node, tensors, {out});
    return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim)
{
    MT_PROFILE_OP("stack", tensors);
    MT_CHECK(!tensors.empty(), "stack: expects a non-empty TensorList");
    for (size_t k = 0; k < tensors.size(); ++k) {
        MT_CHECK(tensors[k], "stack: expected a list of tensors, got None");
        MT_CHECK(tensors[k]->shape == tensors[0]->shape, "stack: expects each tensor to be equal size, but got ",
                 tensors[0]->shape, " at entry 0 and ", tensors[k]->shape, " at entry ", k);
    }
    dim = wrap_dim(dim, tensors[0]->dim() + 1, "stack");
    Tensor out;
    {
        autograd::NoGradGuard guard;  // one node below records the whole stack
        std::vector<Tensor> parts;
        for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, dim));
        out = cat(parts, dim);
    }
    bool grad = false;
    for (const Tensor& t : tensors) grad = grad || autograd::needs_grad(t);
    if (grad) {
        auto node = std::make_shared<StackBackward>();
        node->dim = dim;
        autograd::record(node, tensors, {out});
    }
    return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim)
{
    MT_CHECK_INDEX(t->dim() > 0, "split: cannot split a 0-dim tensor");
    dim = wrap_dim(dim, t->dim(), "split");
    int64_t total = 0;
    for (int64_t s : sizes) {
        MT_CHECK(s >= 0, "split: split sizes must be non-negative, got ", s);
        total += s;
    }
    MT_CHECK(total == t->shape[dim], "split: split sizes (", sizes, ") must sum to the size of dim ", dim, " (",
             t->shape[dim], "), got ", total, " for a tensor of shape ", t->shape);
    std::vector<Tensor> pieces;
    {
        autograd::NoGradGuard guard;  // views; one node below records them all
        int64_t offset = 0;
        for (int64_t s : sizes) {
            pieces.push_back(slice(t, dim, offset, offset + s, 1));
            offset += s;
        }
    }
    if (autograd::needs_grad(t)) {
        auto node = std::make_shared<SplitBackward>();
        node->dim = dim;
        autograd::record(node, std::vector<Tensor>{t}, pieces);
    }
    return pieces;
}

}  // namespace minitorch
