// tensor.h — a Tensor is a shared handle to a TensorImpl: storage + how to read it.
//
// Element (i0, i1, ..., ik) of a tensor lives at
//     storage.data + itemsize * (offset + i0*strides[0] + ... + ik*strides[k])
// so views (transpose, slices, expand, ...) are new TensorImpls over the same Storage
// with other shape / strides / offset. Strides and offset count elements, not bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "minitorch/device.h"
#include "minitorch/dtype.h"
#include "minitorch/storage.h"

namespace minitorch {

using Shape = std::vector<int64_t>;

// Tensors have at most this many dims (kernels keep per-dim state in fixed arrays).
constexpr int kMaxDims = 25;
using Strides = std::vector<int64_t>;

struct TensorImpl;
using Tensor = std::shared_ptr<TensorImpl>;
namespace autograd {
struct Node;
struct LeafHooks;
}

struct TensorImpl {
    std::shared_ptr<Storage> storage;
    DType dtype = DType::Float32;
    Shape shape;
    Strides strides;
    int64_t offset = 0;

    // A Python number turned into a 0-dim tensor for an op: it takes part in dtype
    // promotion with the lowest priority (PyTorch's "wrapped number").
    bool wrapped_number = false;

    // Made by a view op (make_view): it shares another tensor's memory. Counted in
    // storage->views while alive; `base` is the tensor it views (the first non-view one
    // up the chain), which may be gone (an op's temporary buffer).
    bool is_view = false;
    std::weak_ptr<TensorImpl> base;

    // Autograd (see autograd.h). A leaf has no grad_fn; a tensor made by a recorded op
    // has the node that computes its inputs' gradients, and is output `output_nr` of it.
    bool requires_grad = false;  // for leaves: set by the user; for results: set by recording
    Tensor grad;
    std::shared_ptr<autograd::Node> grad_fn;
    int output_nr = 0;
    bool retains_grad = false;
    std::weak_ptr<autograd::Node> grad_accumulator;  // a leaf's AccumulateGrad, while a graph uses it
    std::shared_ptr<autograd::LeafHooks> hooks;       // a leaf's backward hooks (Tensor.register_hook)
    // A node's own output saved for its backward (autograd::save): it names the node
    // weakly (a strong grad_fn would be a cycle node -> saved tensor -> node), so that a
    // backward run with create_graph=True can differentiate the formulas that read it.
    std::weak_ptr<autograd::Node> saved_output_of;

    bool is_leaf() const { return grad_fn == nullptr; }

    TensorImpl();
    ~TensorImpl();
    TensorImpl(const TensorImpl&) = delete;
    TensorImpl& operator=(const TensorImpl&) = delete;

    int64_t dim() const { return static_cast<int64_t>(shape.size()); }
    int64_t numel() const;
    int64_t size(int64_t d) const;    // negative d counts from the end
    int64_t stride(int64_t d) const;
    Device device() const { return storage->device; }
    bool is_contiguous() const;
    // Address of element (0, ..., 0).
    char* data() const { return static_cast<char*>(storage->data) + offset * (int64_t)itemsize(dtype); }
    template <class T> T* data_as() const { return reinterpret_cast<T*>(data()); }
};

// Number of TensorImpl objects alive (for leak tests).
int64_t live_tensor_count();

// Row-major strides of a dense tensor of this shape.
Strides contiguous_strides(const Shape& shape);
// Product of sizes, checking each size >= 0 and the product for overflow ("op" names the caller).
int64_t checked_numel(const Shape& shape, const char* op);
// Wraps a possibly negative dim into [0, ndim); IndexError when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// New tensors.
Tensor empty(const Shape& shape, DType dtype = default_float(), Device device = {});
Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset);
// The same memory under a tensor that is not a view in autograd's sense (detach(), a
// tensor saved for backward): it does not count in storage->views.
Tensor make_alias(const Tensor& base);

}  // namespace minitorch
