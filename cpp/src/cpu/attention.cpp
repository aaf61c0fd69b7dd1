// attention.cpp — CPU kernels of the fused attention (kernels.h: attention, attention_backward):
// the readable version of cuda/attention.cu's algorithm, one query row at a time.
//
// Forward, for query row i: walk the keys once keeping the running max m of the scores and
// the running sum l of exp(score - m); when a larger score arrives, the sum and the output
// accumulated so far are rescaled by exp(m_old - m_new) (the online softmax). The output is
// the accumulated sum of exp(score - m) * v_j divided by l at the end, and m + log(l) (the
// row's logsumexp) is kept for the backward. No (L, S) matrix of scores is ever stored.
// Backward: P[i, j] = exp(score - lse[i]) is recomputed from q, k and the saved logsumexp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/attention_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

// The scaled, masked score of query row qi against key row kj (-inf where masked out).
template <class T>
T score(const T* qi, const T* kj, int64_t E, T scale, const T* mask_ij)
{
    T dot = 0;
    for (int64_t d = 0; d < E; ++d) dot += qi[d] * kj[d];
    return dot * scale + (mask_ij ? *mask_ij : T(0));
}

// Keys query row i sees: all S, or 0..i when causal.
int64_t keys_seen(int64_t i, int64_t S, bool causal) { return causal ? std::min(S, i + 1) : S; }

}  // namespace

void attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v,
               const Tensor& mask, const Attention& spec)
{
    const AttentionSizes n = attention_sizes(q, v);
    dispatch_floating(q->dtype, "scaled_dot_product_attention", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *qd = q->data_as<T>(), *kd = k->data_as<T>(), *vd = v->data_as<T>();
        T *od = out->data_as<T>(), *ld = lse->data_as<T>();
        const AttentionMask<T> m = attention_mask<T>(mask);
        const AttentionLayout lay = attention_layout(q, k, v, out);
        const T scale = T(spec.scale), neg_inf = -std::numeric_limits<T>::infinity();
        const AttentionDropout drop = attention_dropout(spec.dropout_p, spec.seed, spec.offset, n.L, n.S);
        const T keep_scale = T(1) / (T(1) - T(spec.dropout_p));
        const int64_t per_row = std::max<int64_t>(1, n.S * (n.E + n.Ev));
        parallel_for(n.B * n.L, std::max<int64_t>(1, kGrainSize / per_row), [&](int64_t r0, int64_t r1) {
            std::vector<T> acc(size_t(n.Ev));
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t b = r / n.L, i = r % n.L;
                const T* qi = qd + lay.q.row(b, i);
                const T* mrow = m.data ? m.matrix(b) + i * m.stride_l : nullptr;
                T mx = neg_inf, l = 0;
                std::fill(acc.begin(), acc.end(), T(0));
                for (int64_t j = 0; j < keys_seen(i, n.S, spec.causal); ++j) {
                    const T s = score(qi, kd + lay.k.row(b, j), n.E, scale, mrow ? mrow + j * m.stride_s : nullptr);
                    if (s == neg_inf) continue;  // masked out: adds nothing (and keeps mx = -inf rows NaN-free)
                    const T mx_new = std::max(mx, s);
                    const T alpha = std::exp(mx - mx_new), p = std::exp(s - mx_new);
                    l = l * alpha + p;  // the un-dropped weights: lse is that of the softmax
                    const T w = !drop.on ? p : drop.keep(b, i, j) ? p * keep_scale : T(0);
                    const T* vj = vd + lay.v.row(b, j);
                    for (int64_t d = 0; d < n.Ev; ++d) acc[size_t(d)] = acc[size_t(d)] * alpha + w * vj[d];
                    mx = mx_new;
                }
                // l = 0 (every key masked): NaN, as the composed formula
                T* oi = od + lay.out.row(b, i);
                for (int64_t d = 0; d < n.Ev; ++d) oi[d] = acc[size_t(d)] / l;
                ld[r] = mx + std::log(l);
            }
        });
    });
}

// One (batch, head) pair per task: its rows of grad_k and grad_v collect every query's share,
// so two threads never add into one row.
void attention_backward(const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v, const Tensor& grad_out,
                        const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                        const Tensor& mask, const Attention& spec)
{
    const AttentionSizes n = attention_sizes(q, v);
    dispatch_floating(q->dtype, "scaled_dot_product_attention_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *qd = q->data_as<T>(), *kd = k->data_as<T>(), *vd = v->data_as<T>();
        const T *od = out->data_as<T>(), *gd = grad_out->data_as<T>(), *ld = lse->data_as<T>();
        T *gq = grad_q->data_as<T>(), *gk = grad_k->data_as<T>(), *gv = grad_v->data_as<T>();
        const AttentionMask<T> m = attention_mask<T>(mask);
        const AttentionLayout lay = attention_layout(q, k, v, out, grad_out, grad_q, grad_k, grad_v);
        const T scale = T(spec.scale);
        const AttentionDropout drop = attention_dropout(spec.dropout_p, spec.seed, spec.offset, n.L, n.S);
        const T keep_scale = T(1) / (T(1) - T(spec.dropout_p));
        const int64_t per_pair = std::max<int64_t>(1, n.L * n.S * (n.E + n.Ev));
        parallel_for(n.B, std::max<int64_t>(1, kGrainSize / per_pair), [&](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1; ++b) {
                for (int64_t i = 0; i < n.L; ++i) std::fill_n(gq + lay.grad_q.row(b, i), n.E, T(0));
                for (int64_t j = 0; j < n.S; ++j) {
                    std::fill_n(gk + lay.grad_k.row(b, j), n.E, T(0));
                    std::fill_n(gv + lay.grad_v.row(b, j), n.Ev, T(0));
                }
                for (int64_t i = 0; i < n.L; ++i) {
                    const int64_t r = b * n.L + i;  // lse's row
                    const T *qi = qd + lay.q.row(b, i), *gi = gd + lay.grad_out.row(b, i), *oi = od + lay.out.row(b, i);
                    T* gqi = gq + lay.grad_q.row(b, i);
                    const T* mrow = m.data ? m.matrix(b) + i * m.stride_l : nullptr;
                    T D = 0;  // rowsum(dO * O): the softmax backward's sum(dP * P) without P
                    for (int64_t d = 0; d < n.Ev; ++d) D += gi[d] * oi[d];
                    for (int64_t j = 0; j < keys_seen(i, n.S, spec.causal); ++j) {
                        const T *kj = kd + lay.k.row(b, j), *vj = vd + lay.v.row(b, j);
                        const T p = std::exp(score(qi, kj, n.E, scale, mrow ? mrow + j * m.stride_s : nullptr) - ld[r]);
                        T dp = 0;
                        for (int64_t d = 0; d < n.Ev; ++d) dp += gi[d] * vj[d];
                        // dropout: the weight that met v was p * z, so dV takes p * z and dP gets z
                        const T z = !drop.on ? T(1) : drop.keep(b, i, j) ? keep_scale : T(0);
                        const T ds = p * (dp * z - D);
                        T* gvj = gv + lay.grad_v.row(b, j);
                        T* gkj = gk + lay.grad_k.row(b, j);
                        for (int64_t d = 0; d < n.Ev; ++d) gvj[d] += p * z * gi[d];
                        for (int64_t d = 0; d < n.E; ++d) {
                            gkj[d] += ds * scale * qi[d];
                            gqi[d] += ds * scale * kj[d];
                        }
                    }
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
