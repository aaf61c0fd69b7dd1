// optim.cu — CUDA kernels for the fused optimizer steps: one launch per parameter reads
// its gradient and state once and writes the parameter and state in place. The formulas
// are in minitorch/optim_math.h (shared with the CPU's cpu/optim.cpp).
#include "common.cuh"
#include "minitorch/optim_math.h"
#include "multi_tensor.cuh"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

// Every kernel here reads and writes the parameter's type T in place and computes in
// C = Compute<T>: float32 registers for float16 / bfloat16 (the states too, which have the
// parameter's dtype as in PyTorch), each stored value rounded once. One launch, as float32.

// An optimizer's step on the elements of one parameter: load(i) reads element i of every list
// as C, update(i, v) runs the step's formula on them and stores the results as T. Both kinds
// of kernel below use these, one element at a time or several at once (multi_tensor_elements).

// SGD: param and its momentum buffer (null without momentum).
template <class T>
struct SgdElements {
    using C = Compute<T>;
    struct Values {
        C param, grad, buf;
    };
    T* param;
    const T* grad;
    T* buf;
    SgdScalars<C> s;
    __device__ Values load(int64_t i) const { return {C(param[i]), C(grad[i]), buf ? C(buf[i]) : C(0)}; }
    __device__ void update(int64_t i, Values v) const
    {
        param[i] = T(sgd_update(s, v.param, v.grad, buf ? &v.buf : nullptr));
        if (buf) buf[i] = T(v.buf);
    }
};

// Adam / AdamW; max_exp_avg_sq null without AMSGrad.
template <class T>
struct AdamElements {
    using C = Compute<T>;
    struct Values {
        C param, grad, m, v, vmax;
    };
    T* param;
    const T* grad;
    T *exp_avg, *exp_avg_sq, *max_exp_avg_sq;
    AdamScalars<C> s;
    __device__ Values load(int64_t i) const
    {
        return {C(param[i]), C(grad[i]), C(exp_avg[i]), C(exp_avg_sq[i]), max_exp_avg_sq ? C(max_exp_avg_sq[i]) : C(0)};
    }
    __device__ void update(int64_t i, Values x) const
    {
        param[i] = T(adam_update(s, x.param, x.grad, x.m, x.v, max_exp_avg_sq ? &x.vmax : nullptr));
        exp_avg[i] = T(x.m);
        exp_avg_sq[i] = T(x.v);
        if (max_exp_avg_sq) max_exp_avg_sq[i] = T(x.vmax);
    }
};

// RMSprop: square_avg, and the momentum buffer and grad_avg where the step uses them (null
// otherwise).
template <class T>
struct RmspropElements {
    using C = Compute<T>;
    struct Values {
        C param, grad, square_avg, buf, grad_avg;
    };
    T* param;
    const T* grad;
    T *square_avg, *buf, *grad_avg;
    RmspropScalars<C> s;
    __device__ Values load(int64_t i) const
    {
        return {C(param[i]), C(grad[i]), C(square_avg[i]), buf ? C(buf[i]) : C(0), grad_avg ? C(grad_avg[i]) : C(0)};
    }
    __device__ void update(int64_t i, Values v) const
    {
        param[i] = T(rmsprop_update(s, v.param, v.grad, v.square_avg, buf ? &v.buf : nullptr,
                                    grad_avg ? &v.grad_avg : nullptr));
        square_avg[i] = T(v.square_avg);
        if (buf) buf[i] = T(v.buf);
        if (grad_avg) grad_avg[i] = T(v.grad_avg);
    }
};

// One step of one parameter (SgdElements or AdamElements). Thread mapping: one thread per
// element, grid-stride loop; thread i reads element i of every list and writes element i of
// param and the states, so no two threads touch the same element. Every list contiguous, n
// elements.
template <class Elements>
__global__ void step_kernel(Elements e, int64_t n)
{
    MT_GRID_STRIDE(i, n) e.update(i, e.load(i));
}

// GradScaler's unscale on the elements of one gradient: grad *= inv in place, and the
// thread's own flag set when it meets inf or NaN.
template <class T>
struct UnscaleElements {
    using C = Compute<T>;
    T* grad;
    float inv;
    bool* non_finite;  // the thread's local flag
    __device__ C load(int64_t i) const { return C(grad[i]); }
    __device__ void update(int64_t i, C g) const { grad[i] = T(amp_unscale_value(g, inv, *non_finite)); }
};


// The multi-tensor ("foreach") steps: one launch updates many parameters (multi_tensor.cuh).
// Thread mapping: block b (kMultiThreads threads) works on one chunk of one tensor (the table
// in meta says which); its threads stride through the chunk kMultiIlp elements at a time
// (multi_tensor_elements: thread i takes begin + i, begin + i + blockDim.x, ..., all of their
// values loaded before any is updated and stored). Each element is read and written by one
// thread only. Lists: 0 param, 1 grad, 2 momentum buffer (SGD with momentum) or exp_avg,
// 3 exp_avg_sq, 4 max_exp_avg_sq (Adam with amsgrad: Depth 5).
template <class T, int Depth>
__global__ void __launch_bounds__(kMultiThreads)
    sgd_multi_step_kernel(TensorListMeta<T, Depth> meta, SgdScalars<Compute<T>> s)
{
    int t;
    int64_t begin, end;
    multi_tensor_chunk(meta, t, begin, end);
    T* buf = Depth > 2 ? meta.ptr[Depth - 1][t] : nullptr;
    multi_tensor_elements(begin, end, SgdElements<T>{meta.ptr[0][t], meta.ptr[1][t], buf, s});
}

// RMSprop: lists 0 param, 1 grad, 2 square_avg, then the momentum buffer (Momentum) and
// grad_avg (Centered), in that order, where the step uses them.
template <class T, bool Momentum, bool Centered>
__global__ void __launch_bounds__(kMultiThreads)
    rmsprop_multi_step_kernel(TensorListMeta<T, 3 + Momentum + Centered> meta, RmspropScalars<Compute<T>> s)
{
    int t;
    int64_t begin, end;
    multi_tensor_chunk(meta, t, begin, end);
    T* buf = nullptr;
    T* grad_avg = nullptr;
    if constexpr (Momentum) buf = meta.ptr[3][t];
    if constexpr (Centered) grad_avg = meta.ptr[3 + Momentum][t];
    multi_tensor_elements(begin, end,
                          RmspropElements<T>{meta.ptr[0][t], meta.ptr[1][t], meta.ptr[2][t], buf, grad_avg, s});
}

// GradScaler's check and unscale of every gradient (list 0). Thread mapping as the steps
// above. A thread that met inf or NaN writes 1 into found_inf[0]: many threads may write it,
// always the same value, and nobody reads it during the launch, so no atomics are needed.
// inv_scale is read from device memory, so the host needs no copy of the scale.
template <class T>
__global__ void __launch_bounds__(kMultiThreads)
    amp_unscale_kernel(TensorListMeta<T, 1> meta, float* found_inf, const float* inv_scale)
{
    int t;
    int64_t begin, end;
    multi_tensor_chunk(meta, t, begin, end);
    bool non_finite = false;
    multi_tensor_elements(begin, end, UnscaleElements<T>{meta.ptr[0][t], *inv_scale, &non_finite});
    if (non_finite) *found_inf = 1.0f;
}

template <class T, int Depth>
__global__ void __launch_bounds__(kMultiThreads)
    adam_multi_step_kernel(TensorListMeta<T, Depth> meta, AdamScalars<Compute<T>> s)
{
    int t;
    int64_t begin, end;
    multi_tensor_chunk(meta, t, begin, end);
    T* max_exp_avg_sq = Depth > 4 ? meta.ptr[Depth - 1][t] : nullptr;
    multi_tensor_elements(
        begin, end, AdamElements<T>{meta.ptr[0][t], meta.ptr[1][t], meta.ptr[2][t], meta.ptr[3][t], max_exp_avg_sq, s});
}

// clip_grad_norm_ over many gradients (clip_grad_multi): one launch measures, one finishes
// the norm and the scale, one scales, for any number of gradients (more only when the lists
// fill more than one table). The scale stays in device memory: the host never waits.

// The block's combination (sum or NaN-propagating max, clip_grad_combine) of every thread's
// a, complete in thread 0: each warp combines its lanes, then thread 0 the warps' results.
template <class A>
__device__ A block_clip_combine(A a, bool inf_norm, A* warp_part)
{
    a = warp_reduce(
        a, [](A x, int offset) { return __shfl_down_sync(kFullMask, x, offset); },
        [inf_norm](A x, A y) { return clip_grad_combine(x, y, inf_norm); });
    if (threadIdx.x % kWarp == 0) warp_part[threadIdx.x / kWarp] = a;
    __syncthreads();  // every warp's result is in warp_part before thread 0 reads them
    if (threadIdx.x == 0)
        for (int w = 1; w < int(blockDim.x) / kWarp; ++w) a = clip_grad_combine(a, warp_part[w], inf_norm);
    return a;
}

// 1. Measure. Thread mapping as the steps above: block b works on one chunk of one gradient,
// its threads striding through the chunk; the block's sum of squares (max |g|: inf_norm) of
// the chunk goes to partial[first + b], first being the blocks of the earlier launches.
template <class T, class A>
__global__ void clip_grad_measure_kernel(TensorListMeta<T, 1> meta, A* partial, int64_t first, bool inf_norm)
{
    __shared__ A warp_part[kThreads / kWarp];
    int t;
    int64_t begin, end;
    multi_tensor_chunk(meta, t, begin, end);
    const T* g = meta.ptr[0][t];
    A a = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) a = clip_grad_accumulate(a, A(g[i]), inf_norm);
    a = block_clip_combine(a, inf_norm, warp_part);
    if (threadIdx.x == 0) partial[first + blockIdx.x] = a;
}

// 2. Finish. One block: thread i combines partial[i], partial[i + blockDim.x], ..., then the
// block combines the threads'; thread 0 writes the total norm (in T) and the scale (in A).
template <class T, class A>
__global__ void clip_grad_finish_kernel(const A* partial, int64_t count, T* total, A* scale, double max_norm,
                                        bool inf_norm)
{
    __shared__ A warp_part[kThreads / kWarp];
    A a = 0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) a = clip_grad_combine(a, partial[i], inf_norm);
    a = block_clip_combine(a, inf_norm, warp_part);
    if (threadIdx.x == 0) {
        const A norm = inf_norm ? a : math_sqrt(a);
        *total = T(norm);
        *scale = clip_grad_scale(norm, max_norm);
    }
}

// 3. Scale. Thread mapping as in 1; each element is read and written by one thread only.
template <class T, class A>
__global__ void clip_grad_scale_kernel(TensorListMeta<T, 1> meta, const A* scale)
{
    int t;
    int64_t begin, end;
    multi_tensor_chunk(meta, t, begin, end);
    T* g = meta.ptr[0][t];
    const A s = *scale;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) g[i] = T(A(g[i]) * s);
}

}  // namespace

void clip_grad_multi(const std::vector<Tensor>& grads, const Tensor& total, double max_norm, bool inf_norm)
{
    dispatch_floating16(grads[0]->dtype, "clip_grad_multi", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using A = Compute<T>;
        const DType acc_dtype = std::is_same_v<A, double> ? DType::Float64 : DType::Float32;
        const int64_t chunk = multi_tensor_chunk_size();
        int64_t blocks = 0;  // one partial per block of the measuring launches
        for (const Tensor& g : grads) blocks += (g->numel() + chunk - 1) / chunk;
        const Tensor partial = empty({blocks}, acc_dtype, total->device());
        const Tensor scale = empty({1}, acc_dtype, total->device());
        const std::vector<Tensor> lists[1] = {grads};
        int64_t first = 0;
        multi_tensor_apply<T>(lists, [&](const TensorListMeta<T, 1>& meta, int n) {
            MT_LAUNCH(n, kThreads, 0, 0, clip_grad_measure_kernel<T, A>)(meta, partial->data_as<A>(), first, inf_norm);
            first += n;
        });
        MT_LAUNCH(1, kThreads, 0, 0, clip_grad_finish_kernel<T, A>)(partial->data_as<A>(), blocks,
                                                                     total->data_as<T>(), scale->data_as<A>(),
                                                                     max_norm, inf_norm);
        multi_tensor_apply<T>(lists, [&](const TensorListMeta<T, 1>& meta, int n) {
            MT_LAUNCH(n, kThreads, 0, 0, clip_grad_scale_kernel<T, A>)(meta, scale->data_as<A>());
        });
    });
    MT_CUDA_CHECK_LAUNCH("clip_grad_multi");
}

void amp_unscale(const std::vector<Tensor>& grads, const Tensor& found_inf, const Tensor& inv_scale)
{
    dispatch_floating16(grads[0]->dtype, "amp_unscale", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const std::vector<Tensor> lists[1] = {grads};
        multi_tensor_apply<T>(lists, [&](const TensorListMeta<T, 1>& meta, int blocks) {
            MT_LAUNCH(blocks, kMultiThreads, 0, 0, amp_unscale_kernel<T>)(meta, found_inf->data_as<float>(),
                                                                          inv_scale->data_as<float>());
        });
    });
    MT_CUDA_CHECK_LAUNCH("amp_unscale");
}

void sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& opt)
{
    const int64_t n = param->numel();
    dispatch_floating16(param->dtype, "sgd_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* buf = momentum_buffer ? momentum_buffer->data_as<T>() : nullptr;
        const SgdElements<T> e{param->data_as<T>(), grad->data_as<T>(), buf, sgd_scalars<Compute<T>>(opt)};
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, step_kernel<SgdElements<T>>)(e, n);
    });
    MT_CUDA_CHECK_LAUNCH("sgd_step");
}

void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const AdamStep& opt)
{
    const int64_t n = param->numel();
    dispatch_floating16(param->dtype, "adam_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const AdamElements<T> e{param->data_as<T>(), grad->data_as<T>(), exp_avg->data_as<T>(),
                                exp_avg_sq->data_as<T>(), nullptr, adam_scalars<Compute<T>>(opt)};
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, step_kernel<AdamElements<T>>)(e, n);
    });
    MT_CUDA_CHECK_LAUNCH("adam_step");
}

void sgd_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffers, const SgdStep& opt)
{
    dispatch_floating16(params[0]->dtype, "sgd_multi_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const SgdScalars<Compute<T>> s = sgd_scalars<Compute<T>>(opt);
        auto run = [&](const auto& lists) {
            multi_tensor_apply<T>(lists, [&](const auto& meta, int blocks) {
                constexpr int depth = sizeof(lists) / sizeof(lists[0]);
                MT_LAUNCH(blocks, kMultiThreads, 0, 0, sgd_multi_step_kernel<T, depth>)(meta, s);
            });
        };
        if (momentum_buffers.empty()) {
            const std::vector<Tensor> lists[2] = {params, grads};
            run(lists);
        } else {
            const std::vector<Tensor> lists[3] = {params, grads, momentum_buffers};
            run(lists);
        }
    });
    MT_CUDA_CHECK_LAUNCH("sgd_multi_step");
}

void adam_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& opt)
{
    dispatch_floating16(params[0]->dtype, "adam_multi_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const AdamScalars<Compute<T>> s = adam_scalars<Compute<T>>(opt);
        auto run = [&](const auto& lists) {
            multi_tensor_apply<T>(lists, [&](const auto& meta, int blocks) {
                constexpr int depth = sizeof(lists) / sizeof(lists[0]);
                MT_LAUNCH(blocks, kMultiThreads, 0, 0, adam_multi_step_kernel<T, depth>)(meta, s);
            });
        };
        if (max_exp_avg_sqs.empty()) {
            const std::vector<Tensor> lists[4] = {params, grads, exp_avgs, exp_avg_sqs};
            run(lists);
        } else {
            const std::vector<Tensor> lists[5] = {params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs};
            run(lists);
        }
    });
    MT_CUDA_CHECK_LAUNCH("adam_multi_step");
}

void rmsprop_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& momentum_buffers,
                        const std::vector<Tensor>& grad_avgs, const RmspropStep& opt)
{
    dispatch_floating16(params[0]->dtype, "rmsprop_multi_step", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const RmspropScalars<Compute<T>> s = rmsprop_scalars<Compute<T>>(opt);
        // The lists the step uses, in the kernel's order; one instantiation per combination.
        auto run = [&](auto momentum, auto centered, const auto& lists) {
            constexpr bool M = decltype(momentum)::value, Cen = decltype(centered)::value;
            multi_tensor_apply<T>(lists, [&](const TensorListMeta<T, 3 + M + Cen>& meta, int blocks) {
                MT_LAUNCH(blocks, kMultiThreads, 0, 0, rmsprop_multi_step_kernel<T, M, Cen>)(meta, s);
            });
        };
        using Yes = std::true_type;
        using No = std::false_type;
        const bool momentum = !momentum_buffers.empty(), centered = !grad_avgs.empty();
        if (momentum && centered) {
            const std::vector<Tensor> lists[5] = {params, grads, square_avgs, momentum_buffers, grad_avgs};
            run(Yes{}, Yes{}, lists);
        } else if (momentum) {
            const std::vector<Tensor> lists[4] = {params, grads, square_avgs, momentum_buffers};
            run(Yes{}, No{}, lists);
        } else if (centered) {
            const std::vector<Tensor> lists[4] = {params, grads, square_avgs, grad_avgs};
            run(No{}, Yes{}, lists);
        } else {
            const std::vector<Tensor> lists[3] = {params, grads, square_avgs};
            run(No{}, No{}, lists);
        }
    });
    MT_CUDA_CHECK_LAUNCH("rmsprop_multi_step");
}

}  // namespace minitorch::cuda
