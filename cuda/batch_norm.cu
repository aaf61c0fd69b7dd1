// batch_norm.cu — CUDA kernels of the fused batch norm (kernels.h), forward and backward,
// on a contiguous (N, C, S) tensor; the CPU versions are cpu/batch_norm.cpp and the
// formulas are batch_norm_math.h. Training forward and backward are two launches each: a
// per-channel reduction (a block per channel, or per slice of a channel when there are few
// channels: the last block of a channel adds the slices up, last_block.cuh) and an
// elementwise pass (one thread per element). The eval forward is one elementwise pass.
// float16 / bfloat16 inputs are read and written in place (the table's entries call these
// functions directly, not through Widen), computed in float32 registers, with parameters
// of their own dtype or float32 (mixed, as under autocast).
#include <algorithm>

#include "common.cuh"
#include "minitorch/fast_divisor.h"
#include "last_block.cuh"
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

// A channel's M = N * S values, value i at x[((i / S) * C + c) * S + i % S], are cut into
// gridDim.y slices of `chunk` values (one slice when there are channels enough to fill the
// GPU). Per channel, each slice's block writes its partial sums to partial[c, slice, 0..1]
// and the channel's last block to arrive adds them up (last_block.cuh). The offset of value
// i divides by S without a divide instruction when M fits in 31 bits (DivideBy).
struct ChannelValues {
    int64_t C = 0, S = 1, M = 0, chunk = 1;
    DivideBy by_S;
    __device__ int64_t offset(int64_t c, int64_t i) const
    {
        const int64_t n = by_S(i);
        return (n * C + c) * S + (i - n * S);
    }
};

// The channel of element i of a contiguous (N, C, S) tensor of n elements, (i / S) % C,
// with two multiply-high divisions (DivideBy) when n fits in 31 bits: 64-bit division is a
// long instruction sequence on a GPU, which would cost more than the element's loads.
struct ChannelOf {
    int64_t C;
    DivideBy by_S, by_C;
    ChannelOf(int64_t n, int64_t C_, int64_t S) : C(C_), by_S(S, n), by_C(C_, n) {}
    __device__ int64_t operator()(int64_t i) const
    {
        const int64_t row = by_S(i);
        return row - by_C(row) * C;
    }
};

// The sums (a, b) of channel c over all its slices, in thread 0: the partials, read in
// slice order by the block's threads (thread t takes slices t, t + kThreads, ...) and added
// up as one block sum. Every thread of the channel's last block calls it.
__device__ void channel_total(A& a, A& b, const A* partial, int64_t c, A* shared)
{
    add_slice_partials(a, b, partial, c);
    block_sum2(a, b, shared);
}

// Channel c's statistics from its shifted sums: mean and rstd, and the running statistics
// moved toward them (thread 0 of the channel's last block).
template <class P, class Cm>
__device__ void finish_stats(int64_t c, A K, A s, A q, int64_t M, Cm* mean, Cm* rstd, P* rm, P* rv, double momentum,
                             double eps)
{
    A m, r, var_unbiased;
    batch_norm_stats(K, s, q, M, eps, m, r, var_unbiased);
    mean[c] = Cm(m), rstd[c] = Cm(r);
    if (rm) rm[c] = batch_norm_running(rm[c], m, momentum);
    if (rv) rv[c] = batch_norm_running(rv[c], var_unbiased, momentum);
}

// Thread mapping: block (bx, by) takes slice by of channels bx, bx + gridDim.x, ...; its
// kThreads threads stride over the slice's values (adjacent threads read adjacent values of
// a row). Shifted sums in double (batch_norm_math.h; the shift K is the channel's first
// value in every slice), reduced over the block. Thread 0 of the channel's last block (its
// only one when not split) writes its mean and rstd and updates the running statistics;
// thread 0 of block (0, 0) also counts the batch (num_batches_tracked, when given): no
// launch of its own for that. T: the input's type, P: the parameters' (running
// statistics), Cm: the compute type.
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_stats_kernel(const T* x, Cm* mean, Cm* rstd, P* rm, P* rv, int64_t* batches, A* partial,
                                        unsigned* arrivals, ChannelValues cv, double momentum, double eps)
{
    __shared__ A shared[2 * kWarpsPerBlock];
    const int64_t begin = int64_t(blockIdx.y) * cv.chunk, end = min(cv.M, begin + cv.chunk);
    if (batches && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) *batches += 1;
    for (int64_t c = blockIdx.x; c < cv.C; c += gridDim.x) {
        const A K = A(Cm(x[c * cv.S]));
        A s = 0, q = 0;
        for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
            const A v = A(Cm(x[cv.offset(c, i)])) - K;
            s += v, q += v * v;
        }
        block_sum2(s, q, shared);
        if (threadIdx.x != 0) continue;
        if (gridDim.y == 1) finish_stats(c, K, s, q, cv.M, mean, rstd, rm, rv, momentum, eps);
        else partial[2 * (c * gridDim.y + blockIdx.y)] = s, partial[2 * (c * gridDim.y + blockIdx.y) + 1] = q;
    }
    if (gridDim.y == 1 || !last_to_arrive(arrivals)) return;
    for (int64_t c = blockIdx.x; c < cv.C; c += gridDim.x) {
        A s, q;
        channel_total(s, q, partial, c, shared);
        if (threadIdx.x == 0) finish_stats(c, A(Cm(x[c * cv.S])), s, q, cv.M, mean, rstd, rm, rv, momentum, eps);
    }
}

// y of one value x of channel c from the channel's mean and rstd, for both kernels that write y.
template <class T, class P, class Cm>
__device__ T normalized(Cm x, Cm mean, Cm rstd, const P* w, const P* b, int64_t c)
{
    const Cm scale = w ? rstd * Cm(w[c]) : rstd;
    return T((x - mean) * scale + (b ? Cm(b[c]) : Cm(0)));
}

// Eval mode, in one launch. Thread mapping: one thread per element i of (N, C, S),
// grid-stride, c = channel_of(i); the statistics are the running ones, and each thread
// works out its channel's rstd again (cheaper than a launch that would do it once per
// channel). Thread c < C also saves channel c's mean and rstd for the backward.
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_eval_kernel(const T* x, const P* rm, const P* rv, const P* w, const P* b, T* y, Cm* mean,
                                       Cm* rstd, int64_t n, int64_t C, double eps, ChannelOf channel_of)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = channel_of(i);
        y[i] = normalized<T>(Cm(x[i]), Cm(rm[c]), batch_norm_eval_rstd<Cm>(rv[c], eps), w, b, c);
    }
    MT_GRID_STRIDE(c, C) {
        mean[c] = Cm(rm[c]);
        rstd[c] = batch_norm_eval_rstd<Cm>(rv[c], eps);
    }
}

// Thread mapping: one thread per element i of (N, C, S), grid-stride; c = channel_of(i).
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_apply_kernel(const T* x, const Cm* mean, const Cm* rstd, const P* w, const P* b, T* y,
                                        int64_t n, ChannelOf channel_of)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = channel_of(i);
        y[i] = normalized<T>(Cm(x[i]), mean[c], rstd[c], w, b, c);
    }
}

// Channel c's gradient sums from sg = sum(g) and sgd = sum(g * (x - mean)): sums[2c] = sg,
// sums[2c + 1] = sgx = sum(g * xhat), and the parameter gradients (thread 0 of the channel's
// last block).
template <class P, class Cm>
__device__ void finish_grad_sums(int64_t c, A sg, A sgd, const Cm* rstd, A* sums, P* gw, P* gb)
{
    const A sgx = sgd * A(rstd[c]);
    sums[2 * c] = sg, sums[2 * c + 1] = sgx;
    if (gw) gw[c] = P(sgx);
    if (gb) gb[c] = P(sg);
}

// Thread mapping: as batch_norm_stats_kernel, block (bx, by) takes slice by of channels
// bx, bx + gridDim.x, ...; the channel's last block writes its sums and parameter gradients.
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_grad_sums_kernel(const T* g, const T* x, const Cm* mean, const Cm* rstd, A* sums, P* gw,
                                            P* gb, A* partial, unsigned* arrivals, ChannelValues cv)
{
    __shared__ A shared[2 * kWarpsPerBlock];
    const int64_t begin = int64_t(blockIdx.y) * cv.chunk, end = min(cv.M, begin + cv.chunk);
    for (int64_t c = blockIdx.x; c < cv.C; c += gridDim.x) {
        const A m = A(mean[c]);
        A sg = 0, sgd = 0;
        for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
            const int64_t o = cv.offset(c, i);
            const A gv = A(Cm(g[o]));
            sg += gv, sgd += gv * (A(Cm(x[o])) - m);
        }
        block_sum2(sg, sgd, shared);
        if (threadIdx.x != 0) continue;
        if (gridDim.y == 1) finish_grad_sums(c, sg, sgd, rstd, sums, gw, gb);
        else partial[2 * (c * gridDim.y + blockIdx.y)] = sg, partial[2 * (c * gridDim.y + blockIdx.y) + 1] = sgd;
    }
    if (gridDim.y == 1 || !last_to_arrive(arrivals)) return;
    for (int64_t c = blockIdx.x; c < cv.C; c += gridDim.x) {
        A sg, sgd;
        channel_total(sg, sgd, partial, c, shared);
        if (threadIdx.x == 0) finish_grad_sums(c, sg, sgd, rstd, sums, gw, gb);
    }
}

// Thread mapping: one thread per element, grid-stride; each computes its channel's
// coefficients from the sums (a few flops, cheaper than another launch).
template <class T, class P, class Cm = BatchNormCompute<T>>
__global__ void batch_norm_grad_input_kernel(const T* g, const T* x, const Cm* mean, const Cm* rstd, const P* w,
                                             const A* sums, T* gx, int64_t n, ChannelOf channel_of, int64_t M,
                                             bool training)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t c = channel_of(i);
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

// The grid of a per-channel reduction: a block per channel (up to 65535, then they take
// several), and, when that is too few blocks to fill the GPU, each channel's M values cut
// into slices (gridDim.y) of `chunk` values, about kFillBlocks blocks in all. `partial`
// holds the slices' sums; `arrivals` counts the blocks of a channel (last_block.cuh).
struct ChannelGrid {
    dim3 grid;
    ChannelValues cv;
    Tensor partial;
    unsigned* arrivals = nullptr;
};

ChannelGrid channel_grid(int64_t N, int64_t C, int64_t S, Device device)
{
    const int64_t M = N * S, blocks = std::clamp<int64_t>(C, 1, 65535);
    const Split cut = split_to_fill(blocks, M, kMinSlice);
    ChannelGrid g;
    g.grid = dim3(unsigned(blocks), unsigned(cut.slices));
    g.cv = ChannelValues{C, S, M, cut.chunk, DivideBy(S, M)};
    if (cut.slices > 1) {
        g.partial = empty({2 * C * cut.slices}, DType::Float64, device);
        g.arrivals = arrival_counters();
    }
    return g;
}

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
        if (!training) {
            MT_LAUNCH(blocks_for(std::max(in->numel(), C)), kThreads, 0, 0, batch_norm_eval_kernel<T, P>)(
                in->data_as<T>(), running_mean->data_as<P>(), running_var->data_as<P>(), data_or_null<P>(weight),
                data_or_null<P>(bias), out->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), in->numel(), C,
                eps, ChannelOf(in->numel(), C, S));
            MT_CUDA_CHECK_LAUNCH("batch_norm (eval)");
            return;
        }
        ChannelGrid cg = channel_grid(N, C, S, in->device());
        MT_LAUNCH(cg.grid, kThreads, 0, 0, batch_norm_stats_kernel<T, P>)(
            in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), data_or_null<P>(running_mean),
            data_or_null<P>(running_var), data_or_null<int64_t>(batches), data_or_null<A>(cg.partial), cg.arrivals,
            cg.cv, momentum, eps);
        MT_CUDA_CHECK_LAUNCH("batch_norm (statistics)");
        MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, batch_norm_apply_kernel<T, P>)(
            in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), data_or_null<P>(weight),
            data_or_null<P>(bias), out->data_as<T>(), in->numel(), ChannelOf(in->numel(), C, S));
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
        ChannelGrid cg = channel_grid(N, C, S, in->device());
        MT_LAUNCH(cg.grid, kThreads, 0, 0, batch_norm_grad_sums_kernel<T, P>)(
            grad_out->data_as<T>(), in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(), sums->data_as<A>(),
            data_or_null<P>(grad_weight), data_or_null<P>(grad_bias), data_or_null<A>(cg.partial), cg.arrivals, cg.cv);
        MT_CUDA_CHECK_LAUNCH("batch_norm_backward (sums)");
        if (grad_in) {
            MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, batch_norm_grad_input_kernel<T, P>)(
                grad_out->data_as<T>(), in->data_as<T>(), mean->data_as<Cm>(), rstd->data_as<Cm>(),
                data_or_null<P>(weight), sums->data_as<A>(), grad_in->data_as<T>(), in->numel(),
                ChannelOf(in->numel(), C, S), N * S,
                training);
            MT_CUDA_CHECK_LAUNCH("batch_norm_backward");
        }
    });
}

}  // namespace minitorch::cuda
