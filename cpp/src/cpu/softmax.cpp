// softmax.cpp — CPU kernels for softmax / log_softmax and the class-target losses
// (cross_entropy, nll_loss), forward and backward, as kernels.h describes them. What
// each computes on one element is in softmax_math.h, shared with cuda/softmax.cu.
//
// A contiguous tensor is seen as (outer, C, inner) (softmax_rows): outer * inner rows
// of C elements, `inner` apart. Each row is read once to reduce it (the online max and
// sum of the forward, the sum of the backward), then written. Neighbouring rows (the
// same outer index, consecutive inner ones) go together, up to kRowBlock of them, so
// that the innermost loop reads adjacent memory; blocks are split across threads when
// there is enough work.
//
// Rows along the last dim (inner == 1, the usual dim=-1, and every loss row) take a SIMD
// path instead: a branch-free max, the exponentials by the vector math (vector_math.h)
// into the output, then one pass that scales them. It needs a finite max; a row holding
// an infinity (or only -inf) keeps the online merge, whose rules PyTorch's answers follow.
#include <cmath>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/softmax_math.h"
#include "minitorch/vector_math.h"

namespace minitorch::cpu {

namespace {

constexpr int64_t kRowBlock = 32;

// Calls f(base, n) for blocks of n <= kRowBlock neighbouring rows of the (outer, C, inner)
// view: element c of the block's row j is at base + c * inner + j.
template <class F>
void for_each_row_block(const SoftmaxRows& g, const F& f)
{
    const int64_t per_outer = (g.inner + kRowBlock - 1) / kRowBlock;  // blocks per outer index
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.C * kRowBlock, 1));
    parallel_for(g.outer * per_outer, grain, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t o = b / per_outer, i = (b % per_outer) * kRowBlock;
            f(o * g.C * g.inner + i, std::min(kRowBlock, g.inner - i));
        }
    });
}

// A contiguous row of C values: its max m and s = the sum of exp(x - m), with the
// exponentials left in e[0, C). False (nothing computed) where the SIMD exp is missing
// or the max is not finite. A NaN never wins the max; it makes s NaN, as the merge does.
template <class T>
bool row_exp_sum(const T* x, int64_t C, T* e, T& m, T& s)
{
    if (!has_vector_map<T>(UnaryOp::Exp)) return false;
    constexpr int L = 8;
    T lanes[L];
    std::fill(lanes, lanes + L, x[0]);
    int64_t c = 0;
    for (; c + L <= C; c += L)
        for (int k = 0; k < L; ++k) lanes[k] = x[c + k] > lanes[k] ? x[c + k] : lanes[k];
    m = lanes[0];
    for (int k = 1; k < L; ++k) m = lanes[k] > m ? lanes[k] : m;
    for (; c < C; ++c) m = x[c] > m ? x[c] : m;
    if (!std::isfinite(m)) return false;
    for (c = 0; c < C; ++c) e[c] = x[c] - m;
    vector_map(UnaryOp::Exp, e, e, C);
    T sums[L] = {};
    for (c = 0; c + L <= C; c += L)
        for (int k = 0; k < L; ++k) sums[k] += e[c + k];
    s = 0;
    for (; c < C; ++c) s += e[c];
    for (int k = 0; k < L; ++k) s += sums[k];
    return true;
}

// Calls f(n) for every row n of an (N, C) loss input, rows split across threads.
template <class F>
void for_each_sample(int64_t N, int64_t C, const F& f)
{
    parallel_for(N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)), [&](int64_t n0, int64_t n1) {
        for (int64_t n = n0; n < n1; ++n) f(n);
    });
}

// The stride of a loss's gradient along N (reduction none), or 0 for a 0-dim one.
int64_t grad_stride(const Tensor& grad_out) { return grad_out->dim() == 1 ? grad_out->strides[0] : 0; }

}  // namespace

void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log)
{
    const SoftmaxRows g = softmax_rows(in->shape, dim);
    dispatch_floating(in->dtype, "softmax", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        T* y = out->data_as<T>();
        if (g.inner == 1 && has_vector_map<T>(UnaryOp::Exp)) {
            for_each_sample(g.outer, g.C, [&](int64_t r) {
                const T* xr = x + r * g.C;
                T* yr = y + r * g.C;
                T m, s;
                if (row_exp_sum(xr, g.C, yr, m, s)) {
                    const T log_s = std::log(s);
                    if (log)
                        for (int64_t c = 0; c < g.C; ++c) yr[c] = (xr[c] - m) - log_s;
                    else
                        for (int64_t c = 0; c < g.C; ++c) yr[c] = yr[c] / s;
                    return;
                }
                m = T(-INFINITY), s = T(0);
                for (int64_t c = 0; c < g.C; ++c) softmax_merge(m, s, xr[c], T(1));
                for (int64_t c = 0; c < g.C; ++c) yr[c] = softmax_value(log, xr[c], m, s);
            });
            return;
        }
        for_each_row_block(g, [&](int64_t base, int64_t n) {
            T m[kRowBlock], s[kRowBlock];
            for (int64_t j = 0; j < n; ++j) m[j] = T(-INFINITY), s[j] = T(0);
            for (int64_t c = 0; c < g.C; ++c) {
                const T* xc = x + base + c * g.inner;
                for (int64_t j = 0; j < n; ++j) softmax_merge(m[j], s[j], xc[j], T(1));
            }
            for (int64_t c = 0; c < g.C; ++c) {
                const int64_t at = base + c * g.inner;
                for (int64_t j = 0; j < n; ++j) y[at + j] = softmax_value(log, x[at + j], m[j], s[j]);
            }
        });
    });
}

void softmax_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out, int64_t dim, bool log)
{
    const SoftmaxRows g = softmax_rows(out->shape, dim);
    dispatch_floating(out->dtype, "softmax_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* go = grad_out->data_as<T>();
        const T* y = out->data_as<T>();
        T* gi = grad_in->data_as<T>();
        if (g.inner == 1) {  // contiguous rows: plain loops the compiler runs in SIMD lanes
            for_each_sample(g.outer, g.C, [&](int64_t r) {
                const T *gr = go + r * g.C, *yr = y + r * g.C;
                T* out_r = gi + r * g.C;
                T sums[8] = {}, row_sum = 0;
                int64_t c = 0;
                for (; c + 8 <= g.C; c += 8)
                    for (int k = 0; k < 8; ++k) sums[k] += softmax_backward_term(log, gr[c + k], yr[c + k]);
                for (; c < g.C; ++c) row_sum += softmax_backward_term(log, gr[c], yr[c]);
                for (int k = 0; k < 8; ++k) row_sum += sums[k];
                if (log && has_vector_map<T>(UnaryOp::Exp)) {  // g - exp(y) * sum, the exp in SIMD
                    vector_map(UnaryOp::Exp, out_r, yr, g.C);
                    for (c = 0; c < g.C; ++c) out_r[c] = gr[c] - out_r[c] * row_sum;
                } else {
                    for (c = 0; c < g.C; ++c) out_r[c] = softmax_backward_value(log, gr[c], yr[c], row_sum);
                }
            });
            return;
        }
        for_each_row_block(g, [&](int64_t base, int64_t n) {
            T row_sum[kRowBlock] = {};
            for (int64_t c = 0; c < g.C; ++c) {
                const int64_t at = base + c * g.inner;
                for (int64_t j = 0; j < n; ++j) row_sum[j] += softmax_backward_term(log, go[at + j], y[at + j]);
            }
            for (int64_t c = 0; c < g.C; ++c) {
                const int64_t at = base + c * g.inner;
                for (int64_t j = 0; j < n; ++j)
                    gi[at + j] = softmax_backward_value(log, go[at + j], y[at + j], row_sum[j]);
            }
        });
    });
}

// sum_c w[c] in double (C without class weights): the smoothing's total, for every row.
template <class T>
double class_weight_sum(const T* w, int64_t C)
{
    if (!w) return double(C);
    double sum = 0;
    for (int64_t c = 0; c < C; ++c) sum += double(w[c]);
    return sum;
}

void class_loss(const Tensor& out, const Tensor& lse, const Tensor& count, const Tensor& input, const Tensor& target,
                const Tensor& weight, const ClassLoss& spec)
{
    const int64_t N = target->numel(), C = spec.check.size;
    const int64_t* t = target->data_as<int64_t>();
    // The targets first, in order, so the IndexError names the first bad one (as check_index).
    for (int64_t n = 0; n < N; ++n) {
        int64_t resolved;
        if (!resolve_index(t[n], spec.check, resolved)) throw IndexError(index_error_message(spec.check, t[n], n));
    }
    const bool total = spec.reduction != ClassLoss::None;
    dispatch_floating(input->dtype, spec.check.op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = input->data_as<T>();
        const T* w = weight ? weight->data_as<T>() : nullptr;
        auto w_of = [&](int64_t cls) { return cls < 0 ? T(0) : w ? w[cls] : T(1); };
        const double wsum = class_weight_sum(w, C);  // the same for every row
        std::vector<T> losses(total ? N : 0);  // the per-row losses, when they are summed
        T* per_row = total ? losses.data() : out->data_as<T>();
        for_each_sample(N, C, [&](int64_t n) {
            const int64_t base = n * C;
            T m = T(-INFINITY), s = T(0);
            if (spec.from_logits) {
                thread_local std::vector<T> e;  // the row's exponentials; only their sum is kept
                e.resize(size_t(C));
                if (!row_exp_sum(x + base, C, e.data(), m, s)) {
                    m = T(-INFINITY), s = T(0);
                    for (int64_t c = 0; c < C; ++c) softmax_merge(m, s, x[base + c], T(1));
                }
            }
            const double row_lse = row_logsumexp(m, s);
            if (lse) lse->data_as<double>()[n] = row_lse;
            const int64_t cls = target_class(t[n], spec.check);
            const T nll = class_row_loss(x + base, cls, spec.from_logits, m, s);
            if (!w && spec.smoothing == 0) {  // the plain loss, in T
                per_row[n] = nll;
                return;
            }
            double wx = 0;  // sum_c w[c] x[c], for the smoothing
            if (spec.smoothing > 0)
                for (int64_t c = 0; c < C; ++c) wx += double(w ? w[c] : T(1)) * double(x[base + c]);
            per_row[n] = T(weighted_row_loss(double(nll), cls, double(w_of(cls)), spec.smoothing, C, row_lse, wsum, wx));
        });
        if (!total) return;
        T sum = 0, counted = 0;  // counted: the rows' weights w[t] (1 each without weights)
        for (int64_t n = 0; n < N; ++n) {
            sum += per_row[n];
            counted += w_of(target_class(t[n], spec.check));
        }
        out->data_as<T>()[0] = spec.reduction == ClassLoss::Mean ? sum / counted : sum;  // 0 / 0: NaN, as PyTorch
        if (count) count->data_as<T>()[0] = counted;
    });
}

void class_loss_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& input, const Tensor& lse,
                         const Tensor& count, const Tensor& target, const Tensor& weight, const ClassLoss& spec)
{
    const int64_t N = target->numel(), C = spec.check.size;
    const int64_t* t = target->data_as<int64_t>();
    dispatch_floating(grad_input->dtype, spec.check.op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* g = grad_out->data_as<T>();
        const T* x = input ? input->data_as<T>() : nullptr;
        const double* l = lse ? lse->data_as<double>() : nullptr;
        const T* k = count ? count->data_as<T>() : nullptr;
        const T* w = weight ? weight->data_as<T>() : nullptr;
        const double wsum = class_weight_sum(w, C);
        T* gx = grad_input->data_as<T>();
        for_each_sample(N, C, [&](int64_t n) {
            const int64_t base = n * C, cls = target_class(t[n], spec.check);
            const T r = class_row_weight(spec, g, grad_stride(grad_out), k, n, cls);
            const T w_cls = cls >= 0 && w ? w[cls] : T(1);
            for (int64_t c = 0; c < C; ++c)
                gx[base + c] = class_loss_grad(spec.from_logits, x ? x[base + c] : T(0), l ? l[n] : 0.0, c, cls, r,
                                               w_cls, w ? w[c] : T(1), spec.smoothing, C, wsum);
        });
    });
}

}  // namespace minitorch::cpu
