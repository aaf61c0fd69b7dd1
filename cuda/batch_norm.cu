// batch_norm.cu — CUDA kernels of the fused batch norm (kernels.h), forward and backward,
// on a contiguous (N, C, S) tensor; the CPU versions are cpu/batch_norm.cpp and the
// formulas are batch_norm_math.h. Each direction is two launches: a per-channel reduction
// (one block per channel) and an elementwise pass (one thread per element).
// float16 / bfloat16 inputs are read and written in place (the table's entries call these
// functions directly, not through Widen), computed in float32 registers, with parameters
// of their own dtype or float32 (mixed, as under autocast).
#include "common.cuh"
#include "minitorch/batch_norm_math.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

using A = BatchNormAcc;
constexpr int kWarpsPerBlock = kThreads / kWarp;

// The sums (a, b) over the block's threads, in thread 0. Every thread of the block calls it.
__device__ void block_sum2(A& a, A& b, A* shared)
{
    a = warp_sum(a), b = warp_sum(b);
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    if (lane == 0) shared[2 * warp] = a, shared[2 * warp + 1] = b;
    __syncthreads();  // every warp's sums are in shared memory before warp 0 reads them
    if (warp == 0) {
        a = lane < kWarpsPerBlock ? shared[2 * lane] : A(0);
        b = lane < kWarpsPerBlock ? shared[2 * lane + 1] : A(0);
        a = warp_sum(a), b = warp_sum(b);
    }
    __syncthreads();  // warp 0 has read shared before the next channel's sums overwrite it
}

// Thread mapping: block b takes channels b, b + gridDim.x, ...; its kThreads threads stride
// over the channel's M = N * S values (value i is x[i / S, c, i % S]: adjacent threads read
// adjacent values of a row). Shifted sums in double (batch_norm_math.h), reduced over the
// block; thread 0 writes the channel's mean and rstd and updates the running statistics.
// Thread 0 of block 0 also counts the batch (num_batches_tracked, when given): no launch
// of its own for that. T: the input's type, P: the parameters' (running statistics), Cm:
// the compute type.
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_stats_kernel(const T* x, Cm* mean, Cm* rstd, P* rm, P* rv, int64_t* batches, int64_t N,
                                        int64_t C, int64_t S, double momentum, double eps)
{
    __shared__ A shared[2 * kWarpsPerBlock];
    const int64_t M = N * S;
    if (batches && blockIdx.x == 0 && threadIdx.x == 0) *batches += 1;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        const A K = A(Cm(x[c * S]));
        A s = 0, q = 0;
        for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
            const A v = A(Cm(x[((i / S) * C + c) * S + i % S])) - K;
            s += v, q += v * v;
        }
        block_sum2(s, q, shared);
        if (threadIdx.x == 0) {
            A m, r, var_unbiased;
            batch_norm_stats(K, s, q, M, eps, m, r, var_unbiased);
            mean[c] = Cm(m), rstd[c] = Cm(r);
            if (rm) rm[c] = batch_norm_running(rm[c], m, momentum);
            if (rv) rv[c] = batch_norm_running(rv[c], var_unbiased, momentum);
        }
    }
}

// Thread mapping: one thread per channel (eval mode: the running statistics are the stats).
template <class P, class Cm>
__global__ void batch_norm_eval_stats_kernel(const P* rm, const P* rv, Cm* mean, Cm* rstd, int64_t n, double eps)
{
    MT_GRID_STRIDE(c, n) {
        mean[c] = Cm(rm[c]);
        rstd[c] = Cm(A(1) / sqrt(A(Cm(rv[c])) + A(eps)));
    }
}

// Thread mapping: one thread per element i of (N, C, S), grid-stride; c = (i / S) % C.
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_apply_kernel(const T* x, const Cm* mean, const Cm* rstd, const P* w, const P* b, T* y,
                                        int64_t n, int64_t C, int64_t S)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = (i / S) % C;
        const Cm scale = w ? rstd[c] * Cm(w[c]) : rstd[c];
        y[i] = T((Cm(x[i]) - mean[c]) * scale + (b ? Cm(b[c]) : Cm(0)));
    }
}

// Thread mapping: as batch_norm_stats_kernel, a block per channel. Thread 0 writes the
// channel's sums sg = sum(g), sgx = sum(g * xhat) to sums[2c], sums[2c + 1] and the
// parameter gradients.
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_grad_sums_kernel(const T* g, const T* x, const Cm* mean, const Cm* rstd, A* sums, P* gw,
                                            P* gb, int64_t N, int64_t C, int64_t S)
{
    __shared__ A shared[2 * kWarpsPerBlock];
    const int64_t M = N * S;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        const A m = A(mean[c]);
        A sg = 0, sgd = 0;
        for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
            const int64_t o = ((i / S) * C + c) * S + i % S;
            const A gv = A(Cm(g[o]));
            sg += gv, sgd += gv * (A(Cm(x[o])) - m);
        }
        block_sum2(sg, sgd, shared);
        if (threadIdx.x == 0) {
            const A sgx = sgd * A(rstd[c]);
            sums[2 * c] = sg, sums[2 * c + 1] = sgx;
            if (gw) gw[c] = P(sgx);
            if (gb) gb[c] = P(sg);
        }
    }
}

// Thread mapping: one thread per element, grid-stride; each computes its channel's
// coefficients from the sums (a few flops, cheaper than another launch).
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_grad_input_kernel(const T* g, const T* x, const Cm* mean, const Cm* rstd, const P* w,
                                             const A* sums, T* gx, int64_t n, int64_t C, int64_t S, int64_t M,
                                             bool training)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = (i / S) % C;
        A kg, kx, kc;
        batch_norm_grad_coeffs(training, A(rstd[c]), w ? A(Cm(w[c])) : A(1), sums[2 * c], sums[2 * c + 1], M, kg, kx,
                               kc);
        gx[i] = T(Cm(kg) * Cm(g[i]) + Cm(kx) * (Cm(x[i]) - mean[c]) + Cm(kc));
    }
}

template <class T>
T* data_or_null(const Tensor& t)
{
    return t ? t->data_as<T>() : nullptr;
}

unsigned channel_blocks(int64_t C) { return unsigned(C < 65535 ? (C > 0 ? C : 1) : 65535); }

}  // namespace

void batch_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, const Tensor& running_mean, const Tensor& running_var, const Tensor& batches,
                bool training, double momentum, double eps)
{
    const int64_t C = mean->numel(), N = in->shape[0], S = N * C != 0 ? in->numel() / (N * C) : 0;
    const DType p = batch_norm_param_dtype(in->dtype, {&weight, &bias, &running_mean, &running_var});
    dispatch_batch_norm(in->dtype, p, "batch_norm", [&](auto tag, auto ptag) {
        using T = typename decltype(tag)::type;
        using P = typename decltype(ptag)::type;
        using Cm = BatchNormCompute<T>;
        if (training) {
            MT_LAUNCH(channel_blocks(C), kThreads, 0, 0, batch_norm_stats_kernel<T, P>)(
                in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), data_or_null<P>(running_mean),
                data_or_null<P>(running_var), data_or_null<int64_t>(batches), N, C, S, momentum, eps);
            MT_CUDA_CHECK_LAUNCH("batch_norm (statistics)");
        } else {
            MT_LAUNCH(blocks_for(C), kThreads, 0, 0, batch_norm_eval_stats_kernel<P, Cm>)(
                running_mean->data_as<P>(), running_var->data_as<P>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), C,
                eps);
            MT_CUDA_CHECK_LAUNCH("batch_norm (running statistics)");
        }
        MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, batch_norm_apply_kernel<T, P>)(
            in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), data_or_null<P>(weight),
            data_or_null<P>(bias), out->data_as<T>(), in->numel(), C, S);
        MT_CUDA_CHECK_LAUNCH("batch_norm");
    });
}

void batch_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight, bool training)
{
    const int64_t C = mean->numel(), N = in->shape[0], S = N * C != 0 ? in->numel() / (N * C) : 0;
    Tensor sums = empty({std::max<int64_t>(2 * C, 1)}, DType::Float64, in->device());  // (sg, sgx) per channel
    const DType p = batch_norm_param_dtype(in->dtype, {&weight, &grad_weight, &grad_bias});
    dispatch_batch_norm(in->dtype, p, "batch_norm_backward", [&](auto tag, auto ptag) {
        using T = typename decltype(tag)::type;
        using P = typename decltype(ptag)::type;
        using Cm = BatchNormCompute<T>;
        MT_LAUNCH(channel_blocks(C), kThreads, 0, 0, batch_norm_grad_sums_kernel<T, P>)(
            grad_out->data_as<T>(), in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), sums->data_as<A>(),
            data_or_null<P>(grad_weight), data_or_null<P>(grad_bias), N, C, S);
        MT_CUDA_CHECK_LAUNCH("batch_norm_backward (sums)");
        if (grad_in) {
            MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, batch_norm_grad_input_kernel<T, P>)(
                grad_out->data_as<T>(), in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(),
                data_or_null<P>(weight), sums->data_as<A>(), grad_in->data_as<T>(), in->numel(), C, S, N * S,
                training);
            MT_CUDA_CHECK_LAUNCH("batch_norm_backward");
        }
    });
}

}  // namespace minitorch::cuda
