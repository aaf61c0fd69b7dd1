// attention_math.h — what the fused attention kernels of both devices share (cpu/attention.cpp,
// cuda/attention.cu): how an attention mask is read in place, without materializing it.
//
// The kernels see the problem as B independent (batch, head) pairs: query (B, L, E), key
// (B, S, E), value (B, S, Ev), where each operand is a (B0, B1, rows, width) view, B = B0 * B1,
// with any strides but a contiguous last dim (AttentionRows): so the head split of a packed
// projection, q = x.reshape(N, T, H, D).transpose(1, 2), is read where it lies, and the output
// and gradients are written in the layout the caller's next op reads without a copy. The
// additive mask arrives as a (batch...,
// L, S) view expanded from the user's smaller mask (stride 0 along broadcast dims), so a
// (L, S) or (N, 1, 1, S) mask is never copied out to B * L * S values: AttentionMask turns the
// flat pair index b back into the view's batch coordinates and strides.
//
// Dropout on the attention weights (AttentionDropout) is not stored either: whether weight
// (b, i, j) is kept is a pure function of (seed, offset, b, i, j), so the backward kernels draw
// the forward's mask again (FlashAttention's way), and _C._attention_dropout_mask rebuilds it on
// the host for the tests and the double backward.
#pragma once
#include <cstdint>

#include "minitorch/counter_rng.h"
#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE
#include "minitorch/tensor.h"

namespace minitorch {

// Where row i of pair b of one operand starts (elements from its data pointer): the operand is a
// (B0, B1, rows, width) view, pair b is (b / B1, b % B1), and a row's width values are contiguous.
struct AttentionRows {
    int64_t inner = 1;  // B1
    int64_t outer_stride = 0, inner_stride = 0, row_stride = 0;

    MT_HOST_DEVICE int64_t pair(int64_t b) const { return b / inner * outer_stride + b % inner * inner_stride; }
    MT_HOST_DEVICE int64_t row(int64_t b, int64_t i) const { return pair(b) + i * row_stride; }
};

// The rows of a (B0, B1, rows, width) operand (the op checks the shape and the last stride).
inline AttentionRows attention_rows(const Tensor& t)
{
    return {t->shape[1], t->strides[0], t->strides[1], t->strides[2]};
}

// The operands' rows of one call: forward q, k, v, out; the backward adds dO and the gradients.
struct AttentionLayout {
    AttentionRows q, k, v, out, grad_out, grad_q, grad_k, grad_v;
};

inline AttentionLayout attention_layout(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                        const Tensor& grad_out = {}, const Tensor& grad_q = {},
                                        const Tensor& grad_k = {}, const Tensor& grad_v = {})
{
    AttentionLayout lay{attention_rows(q), attention_rows(k), attention_rows(v), attention_rows(out), {}, {}, {}, {}};
    if (grad_out) lay.grad_out = attention_rows(grad_out);
    if (grad_q) {
        lay.grad_q = attention_rows(grad_q), lay.grad_k = attention_rows(grad_k);
        lay.grad_v = attention_rows(grad_v);
    }
    return lay;
}

// The sizes of a call: B = B0 * B1 pairs, L queries, S keys, head dims E and Ev.
struct AttentionSizes {
    int64_t B, L, S, E, Ev;
};

inline AttentionSizes attention_sizes(const Tensor& q, const Tensor& v)
{
    return {q->shape[0] * q->shape[1], q->shape[2], v->shape[2], q->shape[3], v->shape[3]};
}

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

// The dropout of one attention call: weight (b, i, j) of the (B, L, S) weights draws counter
// offset + (b * L + i) * S + j of the generator's stream (so one call uses B * L * S counters,
// as a dropout of that matrix would) and is kept when the top 32 of its random bits are at
// least p * 2^32: with probability 1 - p (up to 2^-32). Kept weights are scaled by 1 / (1 - p).
struct AttentionDropout {
    bool on = false;  // p > 0
    uint64_t seed = 0, offset = 0;
    uint32_t threshold = 0;
    int64_t L = 0, S = 0;
    float scale = 1.f;  // 1 / (1 - p)

    MT_HOST_DEVICE bool keep(int64_t b, int64_t i, int64_t j) const
    {
        const uint64_t counter = offset + uint64_t((b * L + i) * S + j);
        return uint32_t(counter_bits(seed, counter) >> 32) >= threshold;
    }
    // What weight (b, i, j) is multiplied by: 1 without dropout, else 0 or 1 / (1 - p).
    MT_HOST_DEVICE float factor(int64_t b, int64_t i, int64_t j) const
    {
        return !on ? 1.f : keep(b, i, j) ? scale : 0.f;
    }
};

// The dropout with probability p (0 <= p < 1) of a call on (B, L, S) weights.
inline AttentionDropout attention_dropout(double p, uint64_t seed, uint64_t offset, int64_t L, int64_t S)
{
    AttentionDropout d;
    d.on = p > 0;
    d.seed = seed, d.offset = offset, d.L = L, d.S = S;
    d.threshold = uint32_t(p * 4294967296.0);  // p < 1: below 2^32
    d.scale = float(1.0 / (1.0 - p));
    return d;
}

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
