// optim.cu — CUDA kernels for the fused optimizer steps: one launch per parameter reads
// its gradient and state once and writes the parameter and state in place. The formulas
// are in minitorch/optim_math.h (shared with the CPU's cpu/optim.cpp).
#include "common.cuh"
#include "minitorch/optim_math.h"

namespace minitorch::cuda {

namespace {

// One SGD step. Thread mapping: one thread per element, grid-stride loop; thread i reads
// param[i], grad[i] (and buf[i]) and writes param[i] (and buf[i]), so no two threads
// touch the same element. param, grad, buf: contiguous, n elements; buf null without momentum.
template <class T>
__global__ void sgd_step_kernel(T* param, const T* grad, T* buf, int64_t n, SgdScalars<T> s)
{
    MT_GRID_STRIDE(i, n)
        param[i] = sgd_update(s, param[i], grad[i], buf ? buf + i : nullptr);
}

// One Adam / AdamW step. Thread mapping: one thread per element, grid-stride loop; thread
// i reads param[i], grad[i], exp_avg[i], exp_avg_sq[i] and writes param[i], exp_avg[i],
// exp_avg_sq[i]. All contiguous, n elements.
template <class T>
__global__ void adam_step_kernel(T* param, const T* grad, T* exp_avg, T* exp_avg_sq, int64_t n, AdamScalars<T> s)
{
    MT_GRID_STRIDE(i, n) {
        T m = exp_avg[i], v = exp_avg_sq[i];
        param[i] = adam_update(s, param[i], grad[i], m, v);
        exp_avg[i] = m;
        exp_avg_sq[i] = v;
    }
}

}  // namespace

void sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& opt)
{
    const int64_t n = param->numel();
    dispatch_floating(param->dtype, "sgd_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* buf = momentum_buffer ? momentum_buffer->data_as<T>() : nullptr;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, sgd_step_kernel<T>)(param->data_as<T>(), grad->data_as<T>(), buf,
                                                                        n, sgd_scalars<T>(opt));
    });
    MT_CUDA_CHECK_LAUNCH("sgd_step");
}

void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const AdamStep& opt)
{
    const int64_t n = param->numel();
    dispatch_floating(param->dtype, "adam_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, adam_step_kernel<T>)(
            param->data_as<T>(), grad->data_as<T>(), exp_avg->data_as<T>(), exp_avg_sq->data_as<T>(), n,
            adam_scalars<T>(opt));
    });
    MT_CUDA_CHECK_LAUNCH("adam_step");
}

}  // namespace minitorch::cuda
