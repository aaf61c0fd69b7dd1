// optim.cpp — CPU kernels for the fused optimizer steps: one loop over a parameter reads
// its gradient and state and writes the parameter and state in place. The formulas are
// in minitorch/optim_math.h (shared with cuda/optim.cu).
//
// The loops vectorize: each works on a local copy of the step's scalars (a store into
// the parameter then cannot change them, so their tests leave the loop), the momentum
// and no-momentum SGD loops are written apart, and CMake compiles this file with
// -fno-math-errno (sqrt that need not set errno is one vector instruction).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/optim_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

// param, grad, momentum_buffer (or null): contiguous, one shape and float dtype.
void sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& opt)
{
    dispatch_floating(param->dtype, "sgd_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const SgdScalars<T> s = sgd_scalars<T>(opt);
        T* p = param->data_as<T>();
        const T* g = grad->data_as<T>();
        T* buf = momentum_buffer ? momentum_buffer->data_as<T>() : nullptr;
        parallel_for(param->numel(), kGrainSize, [=](int64_t begin, int64_t end) {
            const SgdScalars<T> local = s;
            if (buf) {
                for (int64_t i = begin; i < end; ++i) p[i] = sgd_update(local, p[i], g[i], buf + i);
            } else {
                for (int64_t i = begin; i < end; ++i) p[i] = sgd_update(local, p[i], g[i], static_cast<T*>(nullptr));
            }
        });
    });
}

namespace {

// param, grad, exp_avg, exp_avg_sq (and max_exp_avg_sq, null without amsgrad): contiguous,
// one shape and float dtype.
void adam_loop(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const Tensor& max_exp_avg_sq, const AdamStep& opt)
{
    dispatch_floating(param->dtype, "adam_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const AdamScalars<T> s = adam_scalars<T>(opt);
        T* p = param->data_as<T>();
        const T* g = grad->data_as<T>();
        T* m = exp_avg->data_as<T>();
        T* v = exp_avg_sq->data_as<T>();
        T* vmax = max_exp_avg_sq ? max_exp_avg_sq->data_as<T>() : nullptr;
        parallel_for(param->numel(), kGrainSize, [=](int64_t begin, int64_t end) {
            const AdamScalars<T> local = s;
            if (vmax) {
                for (int64_t i = begin; i < end; ++i) p[i] = adam_update(local, p[i], g[i], m[i], v[i], vmax + i);
            } else {
                for (int64_t i = begin; i < end; ++i) p[i] = adam_update(local, p[i], g[i], m[i], v[i]);
            }
        });
    });
}

}  // namespace

void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const AdamStep& opt)
{
    adam_loop(param, grad, exp_avg, exp_avg_sq, nullptr, opt);
}

// The foreach steps: on the CPU a kernel call costs no launch, so the lists are simply
// walked, one parameter after another, with the loops above.
void sgd_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffers, const SgdStep& opt)
{
    for (size_t k = 0; k < params.size(); ++k)
        sgd_step(params[k], grads[k], momentum_buffers.empty() ? nullptr : momentum_buffers[k], opt);
}

void adam_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& opt)
{
    for (size_t k = 0; k < params.size(); ++k)
        adam_loop(params[k], grads[k], exp_avgs[k], exp_avg_sqs[k],
                  max_exp_avg_sqs.empty() ? nullptr : max_exp_avg_sqs[k], opt);
}

// RMSprop has no single-parameter kernel: its loop is here, one parameter after another.
// momentum_buffers / grad_avgs are empty when the step does not use them.
void rmsprop_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& momentum_buffers,
                        const std::vector<Tensor>& grad_avgs, const RmspropStep& opt)
{
    dispatch_floating(params[0]->dtype, "rmsprop_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const RmspropScalars<T> s = rmsprop_scalars<T>(opt);
        for (size_t k = 0; k < params.size(); ++k) {
            T* p = params[k]->data_as<T>();
            const T* g = grads[k]->data_as<T>();
            T* v = square_avgs[k]->data_as<T>();
            T* buf = momentum_buffers.empty() ? nullptr : momentum_buffers[k]->data_as<T>();
            T* m = grad_avgs.empty() ? nullptr : grad_avgs[k]->data_as<T>();
            parallel_for(params[k]->numel(), kGrainSize, [=](int64_t begin, int64_t end) {
                const RmspropScalars<T> local = s;
                for (int64_t i = begin; i < end; ++i)
                    p[i] = rmsprop_update(local, p[i], g[i], v[i], buf ? buf + i : nullptr, m ? m + i : nullptr);
            });
        }
    });
}

// clip_grad_norm_ over every gradient: the norm of all their elements, accumulated in T
// (float64 for a float64 grad), then one scale for all (clip_grad_scale, optim_math.h).
// Each tensor's part is measured in parallel chunks; the chunks' partials are combined in
// their order, so the total does not depend on the thread count.
void clip_grad_multi(const std::vector<Tensor>& grads, const Tensor& total, double max_norm, bool inf_norm)
{
    dispatch_floating(grads[0]->dtype, "clip_grad_multi", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T acc = 0;
        for (const Tensor& grad : grads) {
            const T* g = grad->data_as<T>();
            const int64_t n = grad->numel(), chunks = (n + kGrainSize - 1) / kGrainSize;
            std::vector<T> partial(size_t(chunks), T(0));
            parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c) {
                    T a = 0;
                    for (int64_t i = c * kGrainSize; i < std::min(n, (c + 1) * kGrainSize); ++i)
                        a = clip_grad_accumulate(a, g[i], inf_norm);
                    partial[size_t(c)] = a;
                }
            });
            for (T a : partial) acc = clip_grad_combine(acc, a, inf_norm);
        }
        const T norm = inf_norm ? acc : std::sqrt(acc);
        *total->data_as<T>() = norm;
        const T scale = clip_grad_scale(norm, max_norm);
        for (const Tensor& grad : grads) {
            T* g = grad->data_as<T>();
            parallel_for(grad->numel(), kGrainSize, [=](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) g[i] *= scale;
            });
        }
    });
}

// grads: contiguous, one float dtype; found_inf, inv_scale: one float32 each.
void amp_unscale(const std::vector<Tensor>& grads, const Tensor& found_inf, const Tensor& inv_scale)
{
    const float inv = *inv_scale->data_as<float>();
    dispatch_floating(grads[0]->dtype, "amp_unscale", [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::atomic<bool> any{false};
        for (const Tensor& grad : grads) {
            T* g = grad->data_as<T>();
            parallel_for(grad->numel(), kGrainSize, [&, g, inv](int64_t begin, int64_t end) {
                bool non_finite = false;
                for (int64_t i = begin; i < end; ++i) g[i] = amp_unscale_value(g[i], inv, non_finite);
                if (non_finite) any.store(true, std::memory_order_relaxed);
            });
        }
        if (any.load()) *found_inf->data_as<float>() = 1.0f;
    });
}

}  // namespace minitorch::cpu
