// attention.cpp — the fused scaled_dot_product_attention op, one graph node:
//   out = softmax(q k^T * scale + mask) v    over the last two dims of q (..., L, E),
//                                            k (..., S, E), v (..., S, Ev)
// computed by the kernels attention / attention_backward (kernels.h; cpu/attention.cpp,
// cuda/attention.cu) with an online softmax: the (L, S) scores are never stored, only one
// logsumexp per query row. F.scaled_dot_product_attention takes this path on CUDA (and the
// composed formula, attention_ops below and nn/_attention_functional.py, everywhere else).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "minitorch/attention_math.h"
#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

// The lse and mask dtype: float32, or float64 for float64 inputs.
DType attention_acc(DType t) { return t == DType::Float64 ? DType::Float64 : DType::Float32; }

// The kernels' view of an operand (batch..., rows, width): (B0, B1, rows, width), B1 the last batch
// dim, with the last dim contiguous (AttentionRows, attention_math.h). A view wherever the batch
// dims fold into two (always, for up to two of them): the head-split q, k, v of a packed
// projection are read where they lie. A copy only for a strided last dim or unfoldable batch dims.
Tensor as_pairs(const Tensor& t, const Shape& batch)
{
    const int64_t B1 = batch.empty() ? 1 : batch.back(), rows = t->size(-2), width = t->size(-1);
    int64_t B = 1;
    for (int64_t s : batch) B *= s;
    const Tensor u = width == 1 || t->strides.back() == 1 ? t : contiguous(t);
    return reshape(u, {B1 ? B / B1 : 1, B1, rows, width});
}

// An uninitialized (B0, B1, rows, width) tensor laid out in the order of `like`'s strides (as
// PyTorch's empty_like keeps a dense layout), its last dim innermost. So the output of a call
// on the head-split views (N, H, T, D) of an (N, T, H * D) projection is (N, T, H, D) in memory,
// and the y.transpose(1, 2).reshape(N, T, H * D) after it is a view, as is that reshape's
// backward on the gradients of q, k and v.
Tensor empty_like_order(const Shape& shape, const Tensor& like)
{
    std::vector<int64_t> order = {0, 1, 2};
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return like->strides[size_t(a)] > like->strides[size_t(b)]; });
    Tensor dense = empty({shape[size_t(order[0])], shape[size_t(order[1])], shape[size_t(order[2])], shape[3]},
                         like->dtype, like->device());
    std::vector<int64_t> back = {0, 0, 0, 3};  // dim d of the result is dim back[d] of dense
    for (int64_t d = 0; d < 3; ++d) back[size_t(order[size_t(d)])] = d;
    return permute(dense, back);
}

// The composed formula in ordinary ops, on tensors of the op's shapes (q (..., L, E), ...):
// the readable reference and, differentiated by the engine, the double backward.
Tensor attention_ops(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Attention& spec)
{
    const int64_t nd = q->dim(), L = q->size(-2), S = k->size(-2);
    const Device dev = q->device();
    Tensor scores = binary(BinaryOp::Mul, matmul(q, transpose(k, nd - 2, nd - 1)),
                           scalar_tensor(Scalar(spec.scale), dev, q->dtype));
    if (spec.causal) {
        Tensor keep = binary(BinaryOp::Ge, reshape(arange(0, double(L), 1, DType::Int64, dev), {L, 1}),
                             reshape(arange(0, double(S), 1, DType::Int64, dev), {1, S}));
        scores = where(keep, scores, scalar_tensor(Scalar(-std::numeric_limits<double>::infinity()), dev, q->dtype));
    }
    if (mask) scores = binary(BinaryOp::Add, scores, to_dtype(mask, q->dtype));
    Tensor weights = softmax(scores, nd - 1);
    if (spec.dropout_p > 0) {  // the kernels' mask, built on the host: an (L, S) matrix, as dropout's
        Shape shape(q->shape.begin(), q->shape.end() - 2);
        int64_t B = 1;
        for (int64_t s : shape) B *= s;
        shape.push_back(L), shape.push_back(S);
        Tensor keep = to_device(reshape(attention_dropout_mask(spec.seed, spec.offset, B, L, S, spec.dropout_p), shape),
                                dev);
        weights = binary(BinaryOp::Mul, binary(BinaryOp::Mul, weights, to_dtype(keep, q->dtype)),
                         scalar_tensor(Scalar(1.0 / (1.0 - spec.dropout_p)), dev, q->dtype));
    }
    return matmul(weights, v);
}

// derivative of scaled_dot_product_attention, input query: dS k * scale, dS = P * (dO v^T - rowsum(dO * out)), P = exp(q k^T * scale + mask - lse) recomputed tile by tile
// derivative of scaled_dot_product_attention, input key: dS^T q * scale
// derivative of scaled_dot_product_attention, input value: P^T dO (with dropout, P * Z in place of P: Z = keep / (1 - p) drawn again from the saved seed and offset, and dP = (dO v^T) * Z)
struct AttentionBackward : Node {
    Tensor q, k, v, out, lse, mask;  // q, k, v, out: (B0, B1, L or S, E or Ev) (as_pairs); lse (B, L)
    Attention spec;
    std::string name() const override { return "ScaledDotProductFlashAttentionBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        auto as_input = [&](const Tensor& t, size_t i) { return reshape(t, input_meta[i].shape); };
        if (autograd::is_grad_enabled()) {
            // create_graph: the composed formula, differentiated by the engine.
            const Tensor m = mask;
            const Attention s = spec;
            return autograd::differentiate_composite(
                *this, {as_input(q, 0), as_input(k, 1), as_input(v, 2)}, grads,
                [m, s](const std::vector<Tensor>& p) {
                    return std::vector<Tensor>{attention_ops(p[0], p[1], p[2], m, s)};
                });
        }
        const Device dev = q->device();
        Tensor gq = empty_like_order(q->shape, q), gk = empty_like_order(k->shape, k);
        Tensor gv = empty_like_order(v->shape, v);
        if (q->numel() && k->shape[2]) {
            Tensor g = to_dtype(reshape(grads[0], out->shape), out->dtype);
            if (g->shape[3] > 1 && g->strides[3] != 1) g = contiguous(g);
            kernels(dev).attention_backward(gq, gk, gv, g, q, k, v, out, lse, mask, spec);
        } else {
            for (const Tensor* t : {&gq, &gk, &gv}) fill_(*t, 0.0);
        }
        return {needs_input_grad(0) ? as_input(gq, 0) : nullptr, needs_input_grad(1) ? as_input(gk, 1) : nullptr,
                needs_input_grad(2) ? as_input(gv, 2) : nullptr};
    }
    void release() override { q.reset(), k.reset(), v.reset(), out.reset(), lse.reset(), mask.reset(); }
};

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, bool is_causal, double scale, double dropout_p,
                                    uint64_t seed, uint64_t offset)
{
    MT_PROFILE_OP("scaled_dot_product_attention", query, key, value, attn_mask);
    const char* op = "scaled_dot_product_attention";
    MT_CHECK(dropout_p >= 0 && dropout_p < 1, op, ": the fused op takes 0 <= dropout_p < 1, got ", dropout_p);
    MT_CHECK(query->dim() >= 2 && query->dim() == key->dim() && key->dim() == value->dim(), op,
             ": expected query, key and value of one rank >= 2, got shapes ", query->shape, ", ", key->shape, " and ",
             value->shape);
    const int64_t nd = query->dim();
    const Shape batch(query->shape.begin(), query->shape.end() - 2);
    MT_CHECK(Shape(key->shape.begin(), key->shape.end() - 2) == batch &&
                 Shape(value->shape.begin(), value->shape.end() - 2) == batch && query->size(-1) == key->size(-1) &&
                 key->size(-2) == value->size(-2),
             op, ": expected query (..., L, E), key (..., S, E) and value (..., S, Ev) of one batch shape, got ",
             query->shape, ", ", key->shape, " and ", value->shape);
    MT_CHECK_TYPE(is_floating(query->dtype) && key->dtype == query->dtype && value->dtype == query->dtype, op,
                  ": expected query, key and value of one floating dtype, got ", query->dtype, ", ", key->dtype,
                  " and ", value->dtype);
    check_same_device(op, query, key);
    check_same_device(op, query, value);
    MT_CHECK(!(attn_mask && is_causal), op, ": Explicit attn_mask should not be set when is_causal=True");
    const int64_t L = query->size(-2), S = key->size(-2), Ev = value->size(-1);
    int64_t B = 1;
    for (int64_t s : batch) B *= s;
    const Device dev = query->device();
    const DType acc = attention_acc(query->dtype);
    const Attention spec{scale, is_causal, dropout_p, seed, offset};
    // The mask, additive in the compute type, then expanded (a view, no copy) to (batch..., L, S).
    Tensor mask;
    if (attn_mask) {
        check_same_device(op, query, attn_mask);
        MT_CHECK_TYPE(attn_mask->dtype == DType::Bool || is_floating(attn_mask->dtype), op,
                      ": Expected attn_mask dtype to be bool or float, but got ", attn_mask->dtype);
        mask = attn_mask->dtype == DType::Bool
                   ? where(attn_mask, scalar_tensor(Scalar(0.0), Device{}, acc),
                           scalar_tensor(Scalar(-std::numeric_limits<double>::infinity()), Device{}, acc))
                   : attn_mask;
        mask = to_dtype(mask, acc);  // where() of two scalars may pick the default dtype
        Shape full = batch;
        full.push_back(L), full.push_back(S);
        MT_CHECK(mask->dim() <= nd, op, ": attn_mask of shape ", attn_mask->shape,
                 " cannot be broadcast to the attention scores' shape ", full);
        mask = expand(mask, full);
    }
    Tensor qc, kc, vc, out3, lse;  // set by forward, saved by setup; (B0, B1, rows, width)
    auto forward = [&] {
        qc = as_pairs(query, batch);
        kc = as_pairs(key, batch);
        vc = as_pairs(value, batch);
        out3 = empty_like_order({qc->shape[0], qc->shape[1], L, Ev}, qc);
        lse = empty({B, L}, acc, dev);
        if (B * L > 0 && S > 0) kernels(dev).attention(out3, lse, qc, kc, vc, mask, spec);
        else if (B * L > 0)  // no keys: 0, as the composed matmul of nothing
            fill_(out3, 0.0), fill_(lse, -std::numeric_limits<double>::infinity());
        Shape shape = batch;
        shape.push_back(L), shape.push_back(Ev);
        return reshape(out3, shape);
    };
    return autograd::record_op<AttentionBackward>({&query, &key, &value}, forward,
                                                  [&](AttentionBackward& n, const Tensor&) {
                                                      n.q = autograd::save(n, qc);
                                                      n.k = autograd::save(n, kc);
                                                      n.v = autograd::save(n, vc);
                                                      n.out = autograd::save(n, out3);
                                                      n.lse = autograd::save(n, lse);
                                                      n.mask = mask;
                                                      n.spec = spec;
                                                  });
}

Tensor attention_dropout_mask(uint64_t seed, uint64_t offset, int64_t B, int64_t L, int64_t S, double p)
{
    MT_CHECK(B >= 0 && L >= 0 && S >= 0 && p >= 0 && p < 1, "attention_dropout_mask: expected sizes >= 0 and ",
             "0 <= p < 1, got B = ", B, ", L = ", L, ", S = ", S, ", p = ", p);
    Tensor keep = empty({B, L, S}, DType::Bool, Device{});
    const AttentionDropout drop = attention_dropout(p, seed, offset, L, S);
    bool* k = keep->data_as<bool>();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < L; ++i)
            for (int64_t j = 0; j < S; ++j) *k++ = !drop.on || drop.keep(b, i, j);
    return keep;
}

}  // namespace minitorch
