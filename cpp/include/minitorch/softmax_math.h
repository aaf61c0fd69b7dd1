// softmax_math.h — what the softmax and class-loss kernels compute on one row, written
// once for the CPU kernels (cpu/softmax.cpp) and the CUDA kernels (cuda/softmax.cu).
//
// The online softmax: one pass over a row keeps its running max m and the sum s of
// exp(x - m) over the values seen so far. A new, larger max rescales the sum
// (s * exp(m_old - m_new)), so the row is read once to get its logsumexp, m + log(s).
// Two partial rows (two threads' shares) combine the same way, so any split of a row
// among threads gives the same result up to rounding.
#pragma once
#include <math.h>

#include <cstdint>

#include "minitorch/elementwise_math.h"
#include "minitorch/kernels.h"

namespace minitorch {

// Adds the summary (m2, s2) of some values into (m, s). An element x is (x, 1); an empty
// row is (-inf, 0). -inf values add nothing (an all -inf row stays (-inf, 0): its
// softmax is 0 / 0 = NaN, as in PyTorch). A NaN makes s NaN, and a NaN s is never
// skipped, even beside a max of -inf; two +inf make NaN too. The max is only replaced
// by a larger value, so m is never NaN.
template <class A>
MT_HOST_DEVICE inline void softmax_merge(A& m, A& s, A m2, A s2)
{
    if (m2 > m) {
        s = s * math_exp(m - m2) + s2;  // the new max: rescale what was summed so far
        m = m2;
    } else if (m2 != A(-INFINITY) || s2 != s2) {
        s = s + s2 * math_exp(m2 - m);
    }
}

// One output element from its row's (m, s): softmax exp(x - m) / s, or log_softmax
// (x - m) - log s. Not x - (m + log s): m + log s would round to m's precision (for
// x around 1000 in float32, an error of 3e-5 in every output).
template <class A>
MT_HOST_DEVICE inline A softmax_value(bool log, A x, A m, A s)
{
    return log ? (x - m) - math_log(s) : math_exp(x - m) / s;
}

// One element of the softmax backward, from the row's sum: softmax y * (g - sum(g * y)),
// log_softmax g - exp(y) * sum(g). (What each sums: softmax_backward_term.)
template <class A>
MT_HOST_DEVICE inline A softmax_backward_term(bool log, A g, A y) { return log ? g : g * y; }
template <class A>
MT_HOST_DEVICE inline A softmax_backward_value(bool log, A g, A y, A row_sum)
{
    return log ? g - math_exp(y) * row_sum : y * (g - row_sum);
}

// The class a row's target picks, or -1 when the row does not count in the loss: its
// target is ignore_index, or out of range (already reported as an IndexError).
MT_HOST_DEVICE inline int64_t target_class(int64_t t, const IndexCheck& c)
{
    return (t != c.ignore && t >= 0 && t < c.size) ? t : -1;
}

// A row's loss from its (m, s): logsumexp(row) - row[cls] = (m - row[cls]) + log s from
// logits (rounded like log_softmax, see softmax_value), -row[cls] from log-probabilities;
// 0 for a row that does not count. The row is stored as T and computed in A (float32 for
// float16 / bfloat16 rows, which a GPU reads in place).
template <class T, class A>
MT_HOST_DEVICE inline A class_row_loss(const T* row, int64_t cls, bool from_logits, A m, A s)
{
    if (cls < 0) return A(0);
    const A x = A(row[cls]);
    return from_logits ? (m - x) + math_log(s) : -x;
}

// The logsumexp a cross_entropy saves for its backward, one per row: m + log s, kept in
// double whatever the input's dtype. A float32 one would round to m's precision, and
// x - lse (the gradient's exponent) with it: 5e-4 off for logits around 1e4.
template <class T>
MT_HOST_DEVICE inline double row_logsumexp(T m, T s)
{
    return double(m) + double(math_log(s));
}

// A row's loss with class weights w (all 1 without them) and label smoothing e (cross_entropy's
// general form, PyTorch's): (1 - e) w[cls] nll + e / C sum_c w[c] (lse - x[c]), where nll is
// class_row_loss's and the smoothing's sum is wsum lse - wx with wsum = sum_c w[c] and wx =
// sum_c w[c] x[c], both taken in double in the row's pass; 0 for a row that does not count.
MT_HOST_DEVICE inline double weighted_row_loss(double nll, int64_t cls, double w_cls, double e, int64_t C, double lse,
                                               double wsum, double wx)
{
    if (cls < 0) return 0.0;
    const double picked = w_cls * nll;
    return e > 0 ? (1 - e) * picked + e / double(C) * (wsum * lse - wx) : picked;
}

// The weight of row n in the loss's gradient: g[n] (reduction none, g (N,) with stride
// g_stride), g (sum) or g / count (mean), where g is the loss's gradient; 0 for a row
// that does not count (so a mean over no rows has gradient 0, as in PyTorch). g and count
// are stored as T, the weight computed in A (float32 for float16 / bfloat16).
template <class T, class A = T>
MT_HOST_DEVICE inline A class_row_weight(const ClassLoss& spec, const T* g, int64_t g_stride, const T* count,
                                         int64_t n, int64_t cls)
{
    if (cls < 0) return A(0);
    if (spec.reduction == ClassLoss::None) return A(g[n * g_stride]);
    return spec.reduction == ClassLoss::Sum ? A(g[0]) : A(g[0]) / A(count[0]);
}

// One element (class c) of the loss's gradient for a row whose target picks cls with
// weight w: (softmax - onehot) * w from logits, softmax = exp(x - lse) (lse: the row's
// row_logsumexp), -onehot * w from log-probabilities; exactly 0 for a row that does not
// count. lse is split into T's high part and the rest, so (x - hi) - lo keeps the
// exponent's precision in float32 arithmetic.
//
// With class weights (w_cls = w[cls], w_c = w[c]) and label smoothing e (from logits), the
// derivative of weighted_row_loss: (softmax * ((1 - e) w_cls + e wsum / C) - (1 - e) w_cls
// onehot - e w_c / C) * w, wsum = sum_c w[c]; -onehot * w_cls * w from log-probabilities.
template <class T>
MT_HOST_DEVICE inline T class_loss_grad(bool from_logits, T x, double lse, int64_t c, int64_t cls, T w, T w_cls = T(1),
                                        T w_c = T(1), double e = 0, int64_t C = 1, double wsum = 0)
{
    if (cls < 0) return T(0);
    T p = T(0);
    if (from_logits) {
        const T hi = static_cast<T>(lse), lo = static_cast<T>(lse - double(hi));
        p = math_exp((x - hi) - lo);
    }
    const T hit = T(c == cls ? 1 : 0);
    if (e == 0) return (p - hit) * w_cls * w;
    const T keep = T(1 - e), spread = T(e / double(C));
    return (p * (keep * w_cls + spread * T(wsum)) - keep * w_cls * hit - spread * w_c) * w;
}

}  // namespace minitorch
