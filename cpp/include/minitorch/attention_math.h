// attention_math.h — what the fused attention kernels of both devices share (cpu/attention.cpp,
// cuda/attention.cu): how an attention mask is read in place, without materializing it.
//
// The kernels see the problem flattened to B independent (batch, head) pairs: query (B, L, E),
// key (B, S, E), value (B, S, Ev), all contiguous. The additive mask arrives as a (batch...,
// L, S) view expanded from the user's smaller mask (stride 0 along broadcast dims), so a
// (L, S) or (N, 1, 1, S) mask is never copied out to B * L * S values: AttentionMask turns the
// flat pair index b back into the view's batch coordinates and strides.
#pragma once
#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE
#include "minitorch/tensor.h"

namespace minitorch {

// Element (b, i, j) of the additive mask (scores[b, i, j] += mask(b, i, j)), of type A.
template <class A>
struct AttentionMask {
    const A* data = nullptr;  // null: no mask
    int nb = 0;               // batch dims of the view
    int64_t shape[kMaxDims] = {};
    int64_t stride[kMaxDims] = {};  // elements
    int64_t stride_l = 0, stride_s = 0;

    // The start of pair b's (L, S) matrix.
    MT_HOST_DEVICE const A* matrix(int64_t b) const
    {
        int64_t off = 0;
        for (int d = nb - 1; d >= 0; --d) {
            off += (b % shape[d]) * stride[d];
            b /= shape[d];
        }
        return data + off;
    }
};

// The view of `mask` ((batch..., L, S), any strides, or null) that the kernels read.
template <class A>
AttentionMask<A> attention_mask(const Tensor& mask)
{
    AttentionMask<A> m;
    if (!mask) return m;
    m.data = mask->data_as<A>();
    m.nb = int(mask->dim()) - 2;
    for (int d = 0; d < m.nb; ++d) m.shape[d] = mask->shape[d], m.stride[d] = mask->strides[d];
    m.stride_l = mask->strides[m.nb];
    m.stride_s = mask->strides[m.nb + 1];
    return m;
}

}  // namespace minitorch
