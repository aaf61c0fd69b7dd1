// tensor.cpp — TensorImpl basics: sizes, strides, contiguity, new tensors and views.
#include "minitorch/tensor.h"

#include <atomic>
#include <limits>

#include "minitorch/error.h"

namespace minitorch {

namespace {
std::atomic<int64_t> g_live_tensors{0};
}

TensorImpl::TensorImpl() { ++g_live_tensors; }
TensorImpl::~TensorImpl()
{
    --g_live_tensors;
    if (is_view && storage) --storage->views;
}
int64_t live_tensor_count() { return g_live_tensors.load(); }

int64_t TensorImpl::numel() const
{
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

namespace {
std::atomic<DType> g_default_float{DType::Float32};
}  // namespace

DType default_float() { return g_default_float.load(std::memory_order_relaxed); }
void set_default_float(DType t) { g_default_float.store(t, std::memory_order_relaxed); }

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op)
{
    int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dim 0 and -1, like PyTorch
    MT_CHECK_INDEX(dim >= -n && dim < n, op, ": dimension out of range (expected to be in range of [", -n, ", ",
                   n - 1, "], but got ", dim, ")");
    return dim < 0 ? dim + n : dim;
}

int64_t TensorImpl::size(int64_t d) const { return shape.empty() ? 1 : shape[wrap_dim(d, dim(), "size")]; }
int64_t TensorImpl::stride(int64_t d) const { return strides.empty() ? 1 : strides[wrap_dim(d, dim(), "stride")]; }

bool TensorImpl::is_contiguous() const
{
    int64_t expected = 1;
    for (int64_t d = dim() - 1; d >= 0; --d) {
        if (shape[d] == 0) return true;
        if (shape[d] != 1 && strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

Strides contiguous_strides(const Shape& shape)
{
    Strides s(shape.size());
    int64_t acc = 1;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        s[d] = acc;
        acc *= std::max<int64_t>(shape[d], 1);
    }
    return s;
}

int64_t checked_numel(const Shape& shape, const char* op)
{
    MT_CHECK(shape.size() <= size_t(kMaxDims), op, ": tensors can have at most ", kMaxDims, " dims, got ",
             shape.size());
    int64_t n = 1;
    for (int64_t s : shape) {
        MT_CHECK(s >= 0, op, ": negative dimension ", s, " in size ", shape);
        if (s != 0 && n > std::numeric_limits<int64_t>::max() / s)
            throw OutOfMemoryError(detail::str(op, ": size ", shape, " has too many elements"));
        n *= s;
    }
    return n;
}

Tensor empty(const Shape& shape, DType dtype, Device device)
{
    int64_t n = checked_numel(shape, "empty");
    size_t item = itemsize(dtype);
    if (n > 0 && uint64_t(n) > std::numeric_limits<uint64_t>::max() / 2 / item)
        throw OutOfMemoryError(detail::str("empty: size ", shape, " is too large to allocate"));
    auto t = std::make_shared<TensorImpl>();
    t->storage = Storage::allocate(size_t(n) * item, device);
    t->dtype = dtype;
    t->shape = shape;
    t->strides = contiguous_strides(shape);
    return t;
}

Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset)
{
    MT_CHECK(shape.size() <= size_t(kMaxDims), "view: tensors can have at most ", kMaxDims, " dims, got ",
             shape.size());
    auto t = std::make_shared<TensorImpl>();
    t->storage = base->storage;
    t->dtype = base->dtype;
    t->shape = std::move(shape);
    t->strides = std::move(strides);
    t->offset = offset;
    t->is_view = true;
    ++t->storage->views;
    Tensor root = base->is_view ? base->base.lock() : nullptr;
    t->base = root ? root : base;
    return t;
}

Tensor make_alias(const Tensor& base)
{
    auto t = std::make_shared<TensorImpl>();
    t->storage = base->storage;
    t->dtype = base->dtype;
    t->shape = base->shape;
    t->strides = base->strides;
    t->offset = base->offset;
    return t;
}

}  // namespace minitorch
