// optim_math.h — what one optimizer step computes on one element, written once for the
// CPU kernels (cpu/optim.cpp) and the CUDA kernels (cuda/optim.cu), so both devices
// follow the same formulas: PyTorch's torch.optim.SGD / Adam / AdamW / RMSprop update rules, the
// same as the readable tensor-op steps in python/minitorch/optim (fused=False).
//
// The hyper-parameters arrive as doubles (SgdStep, AdamStep, RmspropStep in kernels.h). The
// host turns them into the parameter's float type once per step (sgd_scalars / adam_scalars, which
// also compute Adam's bias corrections), so a kernel reads plain numbers and no scalar
// tensors are made per step; every element is then computed in that float type.
#pragma once
#include <math.h>

#include "minitorch/elementwise_math.h"
#include "minitorch/kernels.h"

namespace minitorch {

// ---- SGD ----------------------------------------------------------------------------
//   d = g + weight_decay * p
//   with momentum:  buf = d on the first step, else momentum * buf + (1 - dampening) * d
//                   d = d + momentum * buf (Nesterov), else d = buf
//   p = p - lr * d

template <class T>
struct SgdScalars {
    T lr, momentum, one_minus_dampening, weight_decay;
    bool nesterov, first_step;
};

// On the host, once per step.
template <class T>
SgdScalars<T> sgd_scalars(const SgdStep& o)
{
    return {T(o.lr), T(o.momentum), T(1.0 - o.dampening), T(o.weight_decay), o.nesterov, o.first_step};
}

// One element: returns the new parameter value. `buf` points at the element's momentum
// buffer, which it updates; null without momentum.
template <class T>
MT_HOST_DEVICE inline T sgd_update(const SgdScalars<T>& s, T p, T g, T* buf)
{
    T d = g;
    if (s.weight_decay != T(0)) d = d + p * s.weight_decay;
    if (buf) {
        const T b = s.first_step ? d : s.momentum * *buf + s.one_minus_dampening * d;
        *buf = b;
        d = s.nesterov ? d + s.momentum * b : b;
    }
    return p - s.lr * d;
}

// ---- Adam and AdamW -------------------------------------------------------------------
//   g = -g (maximize)
//   Adam:  g = g + weight_decay * p             AdamW:  p = p * (1 - lr * weight_decay)
//   m = beta1 * m + (1 - beta1) * g             (exp_avg)
//   v = beta2 * v + (1 - beta2) * g * g         (exp_avg_sq)
//   amsgrad: vmax = max(vmax, v), read below in place of v   (max_exp_avg_sq)
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The two bias corrections (1 - beta^t) depend only on the step t: the host computes them.

template <class T>
struct AdamScalars {
    T beta1, one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay;
    T decay;                  // AdamW's factor 1 - lr * weight_decay
    T step_size;              // lr / (1 - beta1^t)
    T bias_correction2_sqrt;  // sqrt(1 - beta2^t)
    bool decoupled, maximize;
};

// On the host, once per step (the powers in double, as PyTorch computes them in Python).
template <class T>
AdamScalars<T> adam_scalars(const AdamStep& o)
{
    const double t = double(o.step);
    const double bias_correction1 = 1.0 - pow(o.beta1, t), bias_correction2 = 1.0 - pow(o.beta2, t);
    return {T(o.beta1),
            T(1.0 - o.beta1),
            T(o.beta2),
            T(1.0 - o.beta2),
            T(o.eps),
            T(o.weight_decay),
            T(1.0 - o.lr * o.weight_decay),
            T(o.lr / bias_correction1),
            T(sqrt(bias_correction2)),
            o.decoupled,
            o.maximize};
}

// One element: updates the moments m and v (and vmax, AMSGrad's running maximum of v,
// where not null), returns the new parameter value.
template <class T>
MT_HOST_DEVICE inline T adam_update(const AdamScalars<T>& s, T p, T g, T& m, T& v, T* vmax = nullptr)
{
    if (s.maximize) g = -g;
    if (s.weight_decay != T(0)) {
        if (s.decoupled) p = p * s.decay;
        else g = g + p * s.weight_decay;
    }
    m = s.beta1 * m + s.one_minus_beta1 * g;
    v = s.beta2 * v + s.one_minus_beta2 * (g * g);
    T v_used = v;
    if (vmax) v_used = *vmax = binary_op(BinaryOp::Maximum, *vmax, v);  // NaN propagates, as torch.maximum
    const T denom = math_sqrt(v_used) / s.bias_correction2_sqrt + s.eps;
    return p - s.step_size * (m / denom);
}

// ---- RMSprop ------------------------------------------------------------------------
//   g = -g (maximize);  g = g + weight_decay * p
//   v = alpha * v + (1 - alpha) * g * g                 (square_avg)
//   centered:  m = lerp(m, g, 1 - alpha)                (grad_avg, PyTorch's lerp_)
//              avg = sqrt(v - m * m) + eps              else avg = sqrt(v) + eps
//   momentum:  buf = momentum * buf + g / avg;  p = p - lr * buf
//   else       p = p - lr * g / avg
// Each product is taken in PyTorch's order (addcmul / addcdiv multiply by their value first).

template <class T>
struct RmspropScalars {
    T lr, alpha, one_minus_alpha, eps, weight_decay, momentum;
    bool centered, maximize;
};

// On the host, once per step.
template <class T>
RmspropScalars<T> rmsprop_scalars(const RmspropStep& o)
{
    return {T(o.lr), T(o.alpha), T(1.0 - o.alpha), T(o.eps), T(o.weight_decay), T(o.momentum), o.centered, o.maximize};
}

// One element: updates square_avg v (and, where not null, the momentum buffer and
// grad_avg) and returns the new parameter value.
template <class T>
MT_HOST_DEVICE inline T rmsprop_update(const RmspropScalars<T>& s, T p, T g, T& v, T* buf, T* grad_avg)
{
    if (s.maximize) g = -g;
    if (s.weight_decay != T(0)) g = g + s.weight_decay * p;
    v = s.alpha * v + s.one_minus_alpha * g * g;
    T avg;
    if (grad_avg) {
        const T m = ternary_op(TernaryOp::Lerp, *grad_avg, g, s.one_minus_alpha, T(0));
        *grad_avg = m;
        avg = math_sqrt(v - m * m) + s.eps;
    } else {
        avg = math_sqrt(v) + s.eps;
    }
    if (buf) {
        const T b = s.momentum * *buf + g / avg;
        *buf = b;
        return p - s.lr * b;
    }
    return p + (-s.lr * g) / avg;
}

// ---- clip_grad_norm_ (minitorch.nn.utils) ---------------------------------------------
//   total = sqrt(sum of g*g over every gradient) (norm_type 2) or max |g| (norm_type inf)
//   g = g * min(1, max_norm / (total + 1e-6))
// A is the accumulator (float32 for float32 and 16-bit grads, float64 for float64). A NaN
// anywhere gives a NaN total and NaN gradients, as in PyTorch.
template <class A>
MT_HOST_DEVICE inline A clip_grad_combine(A a, A b, bool inf_norm)
{
    if (!inf_norm) return a + b;
    if (is_nan(a)) return a;
    return is_nan(b) || b > a ? b : a;
}
template <class A, class T>
MT_HOST_DEVICE inline A clip_grad_accumulate(A acc, T g, bool inf_norm)
{
    const A x = A(g);
    return inf_norm ? clip_grad_combine(acc, x < A(0) ? -x : x, true) : acc + x * x;
}
template <class A>
MT_HOST_DEVICE inline A clip_grad_scale(A total, double max_norm)
{
    const A scale = A(max_norm) / (total + A(1e-6));
    return scale > A(1) ? A(1) : scale;  // a NaN scale stays NaN, as clamp(max=1) keeps it
}

// ---- GradScaler (minitorch.amp) ------------------------------------------------------
//   found_inf = 1 if g is inf or NaN;  g = g * inv_scale
// The check reads g before scaling, as PyTorch's _amp_foreach_non_finite_check_and_unscale_.
// inv_scale is float32 (the scale's dtype); the product is taken in g's own type.
template <class T>
MT_HOST_DEVICE inline T amp_unscale_value(T g, float inv_scale, bool& non_finite)
{
    non_finite = non_finite || is_nan(g) || is_inf(g);
    return g * T(inv_scale);
}

}  // namespace minitorch
