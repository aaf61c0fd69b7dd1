// index_math.h — where the indexing kernels (gather, scatter, index_put, cat) read and
// write, built once on the host and walked per element by the CPU and CUDA kernels alike
// (cpu/indexing.cpp, cuda/indexing.cu). Strides and offsets are in elements.
#pragma once
#include <cstdint>
#include <vector>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE, resolve_index
#include "minitorch/fast_divisor.h"
#include "minitorch/kernels.h"

namespace minitorch {

// gather / scatter: the walk over index's shape. Element i of index (row-major) is at
// index_offset in index, at other_offset in the tensor of index's shape (gather's out,
// scatter's src), and at self_offset + index[i] * self_dim_stride in the indexed tensor.
struct DimIndexing {
    int ndim = 0;
    int64_t dim = 0, numel = 0, self_dim_stride = 0;
    int64_t shape[kMaxDims] = {};         // index's shape
    int64_t self_stride[kMaxDims] = {};   // the indexed tensor (0 along dim: added from the index)
    int64_t other_stride[kMaxDims] = {};
    int64_t index_stride[kMaxDims] = {};
    DivideBy by[kMaxDims];  // by each dim's size (fast_divisor.h: no 64-bit division per element)

    // Element i's coordinates, innermost first; the outermost is what is left of i.
    MT_HOST_DEVICE void offsets(int64_t i, int64_t& self, int64_t& other, int64_t& index) const
    {
        self = other = index = 0;
        for (int d = ndim - 1; d >= 0; --d) {
            const int64_t q = d > 0 ? by[d](i) : 0, c = i - q * shape[d];
            i = q;
            self += c * self_stride[d];
            other += c * other_stride[d];
            index += c * index_stride[d];
        }
    }
};

// What scatter leaves at a place that holds `place` when src's element v lands there
// (scatter_reduce's sum, prod, amax, amin; Put is a plain store). Max and min keep a NaN
// from either side, as max() and amax do; on bool, + is "or" and * is "and".
template <class T>
MT_HOST_DEVICE inline T scatter_combine(WriteOp op, T place, T v)
{
    switch (op) {
        case WriteOp::Put: return v;
        case WriteOp::Add: return static_cast<T>(place + v);
        case WriteOp::Mul: return static_cast<T>(place * v);
        case WriteOp::Max: return is_nan(place) ? place : (is_nan(v) || v > place ? v : place);
        case WriteOp::Min: return is_nan(place) ? place : (is_nan(v) || v < place ? v : place);
    }
    return v;
}

// self is indexed along dim; other and index have index's shape (all at least 1-D).
inline DimIndexing dim_indexing(const Tensor& self, const Tensor& other, const Tensor& index, int64_t dim)
{
    DimIndexing g;
    g.ndim = int(index->dim());
    g.dim = dim;
    g.numel = index->numel();
    g.self_dim_stride = self->strides[size_t(dim)];
    for (int d = 0; d < g.ndim; ++d) {
        g.shape[d] = index->shape[size_t(d)];
        g.self_stride[d] = d == dim ? 0 : self->strides[size_t(d)];
        g.other_stride[d] = other->strides[size_t(d)];
        g.index_stride[d] = index->strides[size_t(d)];
        g.by[d] = DivideBy(g.shape[d], g.numel);
    }
    return g;
}

// index_put: k index tensors on self's first k dims (sizes and strides), the rest of self's
// dims walked row-major. Element (b, r) of values -- index position b, element r of the
// rest -- is at b * value_stride + value_offset(r): values may be any view of shape
// (nb, rest...), an expanded number too (every stride 0).
//
// Index j of position b is row[j][b * step[j]]: each index tensor is a 1-D view of nb
// positions (contiguous; every k-th value of nonzero()'s (n, k) result; or one index
// broadcast to all nb with step 0), so no index tensor is copied to be stacked.
struct AdvancedIndexing {
    int k = 0, rest_ndim = 0;
    int64_t nb = 0, rest_numel = 1, value_stride = 0;
    int64_t size[kMaxDims] = {}, stride[kMaxDims] = {};  // the indexed dims
    const int64_t* row[kMaxDims] = {};
    int64_t step[kMaxDims] = {};
    int64_t rest_shape[kMaxDims] = {}, rest_stride[kMaxDims] = {}, value_rest_stride[kMaxDims] = {};
    DivideBy by_rest[kMaxDims];  // by each rest dim's size
    DivideBy by_rest_numel;      // a flat element (b, r) of values -> b

    MT_HOST_DEVICE int64_t index(int j, int64_t b) const { return row[j][b * step[j]]; }

    // Element r of the rest (row-major): its offset in self and in values' row.
    MT_HOST_DEVICE void rest_offsets(int64_t r, int64_t& self_off, int64_t& value_off) const
    {
        self_off = value_off = 0;
        for (int d = rest_ndim - 1; d >= 0; --d) {
            const int64_t q = d > 0 ? by_rest[d](r) : 0, i = r - q * rest_shape[d];
            self_off += i * rest_stride[d];
            value_off += i * value_rest_stride[d];
            r = q;
        }
    }
};

// indices: k 1-D int64 tensors of nb positions each (any stride); values (nb, rest...).
inline AdvancedIndexing advanced_indexing(const Tensor& self, const Tensor& values, const std::vector<Tensor>& indices)
{
    AdvancedIndexing g;
    g.k = int(indices.size());
    g.nb = values->shape[0];
    g.value_stride = values->strides[0];
    g.rest_ndim = int(self->dim()) - g.k;
    for (int j = 0; j < g.k; ++j) {
        g.size[j] = self->shape[size_t(j)];
        g.stride[j] = self->strides[size_t(j)];
        g.row[j] = indices[size_t(j)]->data_as<int64_t>();
        g.step[j] = indices[size_t(j)]->strides[0];
    }
    for (int d = 0; d < g.rest_ndim; ++d) {
        g.rest_shape[d] = self->shape[size_t(g.k + d)];
        g.rest_stride[d] = self->strides[size_t(g.k + d)];
        g.value_rest_stride[d] = values->strides[size_t(1 + d)];
        g.rest_numel *= g.rest_shape[d];
    }
    for (int d = 0; d < g.rest_ndim; ++d) g.by_rest[d] = DivideBy(g.rest_shape[d], g.rest_numel);
    g.by_rest_numel = DivideBy(g.rest_numel, g.nb * g.rest_numel);
    return g;
}

// The check for index tensor j of index_put (negatives wrapped; the message names its dim).
MT_HOST_DEVICE inline IndexCheck advanced_check(const AdvancedIndexing& g, int j, const char* op)
{
    IndexCheck c{op, g.size[j], true};
    c.dim = j;
    return c;
}

}  // namespace minitorch
