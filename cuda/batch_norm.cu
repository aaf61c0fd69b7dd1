// batch_norm.cu — CUDA kernels of the fused batch norm (kernels.h), forward and backward,
// on a contiguous (N, C, S) tensor; the CPU versions are cpu/batch_norm.cpp and the
// formulas are batch_norm_math.h. Each direction is two launches: a per-channel reduction
// (one block per channel) and an elementwise pass (one thread per element).
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
template <class T>
__global__ void batch_norm_stats_kernel(const T* x, T* mean, T* rstd, T* rm, T* rv, int64_t N, int64_t C, int64_t S,
                                        double momentum, double eps)
{
    __shared__ A shared[2 * kWarpsPerBlock];
    const int64_t M = N * S;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        const A K = A(x[c * S]);
        A s = 0, q = 0;
        for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
            const A v = A(x[((i / S) * C + c) * S + i % S]) - K;
            s += v, q += v * v;
        }
        block_sum2(s, q, shared);
        if (threadIdx.x == 0) {
            A m, r, var_unbiased;
            batch_norm_stats(K, s, q, M, eps, m, r, var_unbiased);
            mean[c] = T(m), rstd[c] = T(r);
            if (rm) rm[c] = batch_norm_running(rm[c], m, momentum);
            if (rv) rv[c] = batch_norm_running(rv[c], var_unbiased, momentum);
        }
    }
}

// Thread mapping: one thread per channel (eval mode: the running statistics are the stats).
template <class T>
__global__ void batch_norm_eval_stats_kernel(const T* rm, const T* rv, T* mean, T* rstd, int64_t C, double eps)
{
    MT_GRID_STRIDE(c, C) {
        mean[c] = rm[c];
        rstd[c] = T(A(1) / sqrt(A(rv[c]) + A(eps)));
    }
}

// Thread mapping: one thread per element i of (N, C, S), grid-stride; c = (i / S) % C.
template <class T>
__global__ void batch_norm_apply_kernel(const T* x, const T* mean, const T* rstd, const T* w, const T* b, T* y,
                                        int64_t n, int64_t C, int64_t S)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = (i / S) % C;
        const T scale = w ? rstd[c] * w[c] : rstd[c];
        y[i] = (x[i] - mean[c]) * scale + (b ? b[c] : T(0));
    }
}

// Thread mapping: as batch_norm_stats_kernel, a block per channel. Thread 0 writes the
// channel's sums sg = sum(g), sgx = sum(g * xhat) to sums[2c], sums[2c + 1] and the
// parameter gradients.
template <class T>
__global__ void batch_norm_grad_sums_kernel(const T* g, const T* x, const T* mean, const T* rstd, A* sums, T* gw,
                                            T* gb, int64_t N, int64_t C, int64_t S)
{
    __shared__ A shared[2 * kWarpsPerBlock];
    const int64_t M = N * S;
    for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
        const A m = A(mean[c]);
        A sg = 0, sgd = 0;
        for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
            const int64_t o = ((i / S) * C + c) * S + i % S;
            sg += A(g[o]), sgd += A(g[o]) * (A(x[o]) - m);
        }
        block_sum2(sg, sgd, shared);
        if (threadIdx.x == 0) {
            const A sgx = sgd * A(rstd[c]);
            sums[2 * c] = sg, sums[2 * c + 1] = sgx;
            if (gw) gw[c] = T(sgx);
            if (gb) gb[c] = T(sg);
        }
    }
}

// Thread mapping: one thread per element, grid-stride; each computes its channel's
// coefficients from the sums (a few flops, cheaper than another launch).
template <class T>
__global__ void batch_norm_grad_input_kernel(const T* g, const T* x, const T* mean, const T* rstd, const T* w,
                                             const A* sums, T* gx, int64_t n, int64_t C, int64_t S, int64_t M,
                                             bool training)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = (i / S) % C;
        A kg, kx, kc;
        batch_norm_grad_coeffs(training, A(rstd[c]), w ? A(w[c]) : A(1), sums[2 * c], sums[2 * c + 1], M, kg, kx, kc);
        gx[i] = T(kg) * g[i] + T(kx) * (x[i] - mean[c]) + T(kc);
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
                const Tensor& bias, const Tensor& running_mean, const Tensor& running_var, bool training,
                double momentum, double eps)
{
    const int64_t C = mean->numel(), N = in->shape[0], S = N * C != 0 ? in->numel() / (N * C) : 0;
    dispatch_floating(in->dtype, "batch_norm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (training) {
            MT_LAUNCH(channel_blocks(C), kThreads, 0, 0, batch_norm_stats_kernel<T>)(
                in->data_as<T>(), mean->data_as<T>(), rstd->data_as<T>(), data_or_null<T>(running_mean),
                data_or_null<T>(running_var), N, C, S, momentum, eps);
            MT_CUDA_CHECK_LAUNCH("batch_norm (statistics)");
        } else {
            MT_LAUNCH(blocks_for(C), kThreads, 0, 0, batch_norm_eval_stats_kernel<T>)(
                running_mean->data_as<T>(), running_var->data_as<T>(), mean->data_as<T>(), rstd->data_as<T>(), C, eps);
            MT_CUDA_CHECK_LAUNCH("batch_norm (running statistics)");
        }
        MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, batch_norm_apply_kernel<T>)(
            in->data_as<T>(), mean->data_as<T>(), rstd->data_as<T>(), data_or_null<T>(weight), data_or_null<T>(bias),
            out->data_as<T>(), in->numel(), C, S);
        MT_CUDA_CHECK_LAUNCH("batch_norm");
    });
}

void batch_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight, bool training)
{
    const int64_t C = mean->numel(), N = in->shape[0], S = N * C != 0 ? in->numel() / (N * C) : 0;
    Tensor sums = empty({std::max<int64_t>(2 * C, 1)}, DType::Float64, in->device());  // (sg, sgx) per channel
    dispatch_floating(in->dtype, "batch_norm_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(channel_blocks(C), kThreads, 0, 0, batch_norm_grad_sums_kernel<T>)(
            grad_out->data_as<T>(), in->data_as<T>(), mean->data_as<T>(), rstd->data_as<T>(), sums->data_as<A>(),
            data_or_null<T>(grad_weight), data_or_null<T>(grad_bias), N, C, S);
        MT_CUDA_CHECK_LAUNCH("batch_norm_backward (sums)");
        if (grad_in) {
            MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, batch_norm_grad_input_kernel<T>)(
                grad_out->data_as<T>(), in->data_as<T>(), mean->data_as<T>(), rstd->data_as<T>(),
                data_or_null<T>(weight), sums->data_as<A>(), grad_in->data_as<T>(), in->numel(), C, S, N * S,
                training);
            MT_CUDA_CHECK_LAUNCH("batch_norm_backward");
        }
    });
}

}  // namespace minitorch::cuda
