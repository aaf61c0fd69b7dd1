// group_norm.cu — CUDA kernels of the fused group norm, forward and backward, on a
// contiguous (N, C, S) tensor with G groups (kernels.h; formulas in group_norm_math.h); the
// CPU versions are cpu/group_norm.cpp. Forward is one launch; backward is two (the planes'
// sums, then dx) and a third for dw, db when they are needed. float16 / bfloat16 are read in
// place: every value is converted to C = GroupNormCompute<T> (float32) as it is loaded and
// rounded to T once, when stored; the saved mean and rstd are GroupNormAcc (double).
#include <algorithm>

#include "common.cuh"
#include "minitorch/group_norm_math.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

using A = GroupNormAcc;
constexpr int kBlockWarps = kThreads / kWarp;

// The sum of v over the block's threads, in every thread: each warp's sum meets the others'
// in partial (one slot per warp). All threads of the block must call it.
__device__ A block_sum(A v, A* partial)
{
    v = warp_sum(v);
    if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
    __syncthreads();  // every warp's sum is in partial before any thread adds them up
    A s = 0;
    for (int k = 0; k < kBlockWarps; ++k) s += partial[k];
    __syncthreads();  // every thread has read partial before the next call writes it
    return s;
}

// Grid size for one block (or warp) per item, grid-stride beyond it.
unsigned grid_for(int64_t items) { return unsigned(std::clamp<int64_t>(items, 1, 65535)); }

// Thread mapping: one block of kThreads per (n, g) row of D = Cg * S contiguous values
// (grid-stride over the rows); thread t takes the row's values t, t + kThreads, ... so a
// warp reads 32 adjacent values at a time. Two passes over the row (cached after the
// first): the shifted sums of the statistics (block reductions in GroupNormAcc), then the
// write.
template <class T>
__global__ void group_norm_kernel(const T* x, const T* w, const T* b, T* y, A* mean, A* rstd, int64_t rows,
                                  int64_t G, int64_t Cg, int64_t S, double eps)
{
    __shared__ A partial[kBlockWarps];
    using C = GroupNormCompute<T>;
    const int64_t D = Cg * S;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * D;
        const A K = A(C(xr[0]));
        A s = 0, q = 0;
        for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
            const A dv = A(C(xr[j])) - K;
            s += dv, q += dv * dv;
        }
        s = block_sum(s, partial), q = block_sum(q, partial);
        A m, rsd;
        group_norm_stats(K, s, q, D, eps, m, rsd);
        if (threadIdx.x == 0) mean[r] = m, rstd[r] = rsd;
        C hi, lo;
        group_norm_split(m, hi, lo);
        const C rc = C(rsd);
        const int64_t c0 = (r % G) * Cg;
        for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
            const int64_t c = c0 + j / S;
            const C scale = w ? rc * C(w[c]) : rc;
            y[r * D + j] = T((C(xr[j]) - hi) * scale + ((b ? C(b[c]) : C(0)) - lo * scale));
        }
    }
}

// Thread mapping: one warp per (n, c) plane p = n * C + c of S contiguous values (8 planes
// per block, grid-stride over the planes); lane l takes the plane's values l, l + 32, ...
// Writes the plane's sums sg[p] = sum(g) and sgx[p] = sum(g * xhat) (its row: p / Cg).
template <class T>
__global__ void group_norm_plane_sums_kernel(const T* g, const T* x, const A* mean, const A* rstd, A* sg, A* sgx,
                                             int64_t planes, int64_t Cg, int64_t S)
{
    using C = GroupNormCompute<T>;
    const int lane = threadIdx.x % kWarp;
    for (int64_t p = blockIdx.x * int64_t(kBlockWarps) + threadIdx.x / kWarp; p < planes;
         p += int64_t(gridDim.x) * kBlockWarps) {
        const T *gp = g + p * S, *xp = x + p * S;
        C hi, lo;
        group_norm_split(mean[p / Cg], hi, lo);
        A s = 0, sd = 0;
        for (int64_t j = lane; j < S; j += kWarp) {
            s += A(C(gp[j]));
            sd += A(C(gp[j])) * A(C(xp[j]) - hi);
        }
        s = warp_sum(s), sd = warp_sum(sd);
        if (lane == 0) sg[p] = s, sgx[p] = (sd - A(lo) * s) * rstd[p / Cg];
    }
}

// Thread mapping: one block of kThreads per (n, g) row (grid-stride over the rows). The
// threads first add up the row's Cg channels' w-weighted plane sums (planes r * Cg + k,
// thread t taking k = t, t + kThreads, ...: a block reduction), then, as in group_norm_kernel,
// thread t writes the row's dx values t, t + kThreads, ...
template <class T>
__global__ void group_norm_backward_kernel(const T* g, const T* x, const A* mean, const A* rstd, const T* w,
                                           const A* sg, const A* sgx, T* gx, int64_t rows, int64_t G, int64_t Cg,
                                           int64_t S)
{
    __shared__ A partial[kBlockWarps];
    using C = GroupNormCompute<T>;
    const int64_t D = Cg * S;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t c0 = (r % G) * Cg;
        A ws1 = 0, ws2 = 0;
        for (int64_t k = threadIdx.x; k < Cg; k += blockDim.x) {
            const A wk = w ? A(C(w[c0 + k])) : A(1);
            ws1 += wk * sg[r * Cg + k], ws2 += wk * sgx[r * Cg + k];
        }
        ws1 = block_sum(ws1, partial), ws2 = block_sum(ws2, partial);
        A kx, kc;
        group_norm_row_coeffs(rstd[r], ws1, ws2, D, kx, kc);
        C hi, lo;
        group_norm_split(mean[r], hi, lo);
        const C rs = C(rstd[r]), cx = C(kx), cc = C(kc - kx * A(lo));
        for (int64_t j = threadIdx.x; j < D; j += blockDim.x) {
            const C kg = w ? rs * C(w[c0 + j / S]) : rs;
            gx[r * D + j] = T(kg * C(g[r * D + j]) + cx * (C(x[r * D + j]) - hi) + cc);
        }
    }
}

// Thread mapping: one thread per channel c (grid-stride), adding its planes' sums over the N
// samples: dw[c] = sum_n sgx[n * C + c], db[c] = sum_n sg[n * C + c]; adjacent threads read
// adjacent planes.
template <class T>
__global__ void group_norm_params_kernel(const A* sg, const A* sgx, T* gw, T* gb, int64_t N, int64_t C)
{
    MT_GRID_STRIDE(c, C) {
        A sw = 0, sb = 0;
        for (int64_t n = 0; n < N; ++n) sw += sgx[n * C + c], sb += sg[n * C + c];
        if (gw) gw[c] = T(sw);
        if (gb) gb[c] = T(sb);
    }
}

template <class T>
T* data_or_null(const Tensor& t)
{
    return t ? t->data_as<T>() : nullptr;
}

struct Dims {
    int64_t N, G, Cg, S;
};
Dims dims_of(const Tensor& in, const Tensor& mean)
{
    const int64_t N = in->shape[0], C = in->shape[1], G = mean->shape[1];
    return {N, G, C / G, N * C != 0 ? in->numel() / (N * C) : 0};
}

}  // namespace

void group_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, double eps)
{
    const Dims d = dims_of(in, mean);
    dispatch_floating16(in->dtype, "group_norm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(grid_for(d.N * d.G), kThreads, 0, 0, group_norm_kernel<T>)(
            in->data_as<T>(), data_or_null<T>(weight), data_or_null<T>(bias), out->data_as<T>(), mean->data_as<A>(),
            rstd->data_as<A>(), d.N * d.G, d.G, d.Cg, d.S, eps);
    });
    MT_CUDA_CHECK_LAUNCH("group_norm");
}

void group_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight)
{
    const Dims d = dims_of(in, mean);
    const int64_t planes = d.N * d.G * d.Cg;
    Tensor ws = empty({2 * planes}, DType::Float64, in->device());  // sg, then sgx, per plane
    A *sg = ws->data_as<A>(), *sgx = sg + planes;
    dispatch_floating16(in->dtype, "group_norm_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *g = grad_out->data_as<T>(), *x = in->data_as<T>();
        const A *mu = mean->data_as<A>(), *rs = rstd->data_as<A>();
        MT_LAUNCH(grid_for((planes + kBlockWarps - 1) / kBlockWarps), kThreads, 0, 0, group_norm_plane_sums_kernel<T>)(
            g, x, mu, rs, sg, sgx, planes, d.Cg, d.S);
        MT_CUDA_CHECK_LAUNCH("group_norm_backward (plane sums)");
        if (grad_in) {
            MT_LAUNCH(grid_for(d.N * d.G), kThreads, 0, 0, group_norm_backward_kernel<T>)(
                g, x, mu, rs, data_or_null<T>(weight), sg, sgx, grad_in->data_as<T>(), d.N * d.G, d.G, d.Cg, d.S);
            MT_CUDA_CHECK_LAUNCH("group_norm_backward");
        }
        if (grad_weight || grad_bias) {
            MT_LAUNCH(blocks_for(d.G * d.Cg), kThreads, 0, 0, group_norm_params_kernel<T>)(
                sg, sgx, data_or_null<T>(grad_weight), data_or_null<T>(grad_bias), d.N, d.G * d.Cg);
            MT_CUDA_CHECK_LAUNCH("group_norm_backward (weight, bias)");
        }
    });
}

}  // namespace minitorch::cuda
