// group_norm.cu — CUDA kernels of the fused group norm, forward and backward, on a
// contiguous (N, C, S) tensor with G groups (kernels.h; formulas in group_norm_math.h); the
// CPU versions are cpu/group_norm.cpp. Forward is one launch; backward is two (the planes'
// sums, then dx) and a third for dw, db when they are needed. Few long rows (a small batch)
// are cut into slices instead, so that the whole GPU works on them (see "few long rows"
// below): forward two launches, backward up to four. float16 / bfloat16 are read in
// place: every value is converted to C = GroupNormCompute<T> (float32) as it is loaded and
// rounded to T once, when stored; the saved mean and rstd are GroupNormAcc (double).
#include <algorithm>

#include "common.cuh"
#include "last_block.cuh"
#include "minitorch/fast_divisor.h"
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

// A row's forward constants in the compute type C: its mean as hi + lo (group_norm_split)
// and its rstd; value() is y of one value x of channel c.
template <class C>
struct RowNorm {
    C hi, lo, rstd;
    __device__ static RowNorm of(A mean, A rstd)
    {
        RowNorm n;
        group_norm_split(mean, n.hi, n.lo);
        n.rstd = C(rstd);
        return n;
    }
    template <class T>
    __device__ T value(C x, const T* w, const T* b, int64_t c) const
    {
        const C scale = w ? rstd * C(w[c]) : rstd;
        return T((x - hi) * scale + ((b ? C(b[c]) : C(0)) - lo * scale));
    }
};

// A row's dx constants in C, from its mean, rstd and its planes' w-weighted sums ws1, ws2
// (group_norm_row_coeffs): dx = rstd w[c] g + cx (x - hi) + cc, the - lo folded into cc.
template <class C>
struct RowGrad {
    C hi, rstd, cx, cc;
    __device__ static RowGrad of(A mean, A rstd, A ws1, A ws2, int64_t D)
    {
        A kx, kc;
        group_norm_row_coeffs(rstd, ws1, ws2, D, kx, kc);
        C lo;
        RowGrad r;
        group_norm_split(mean, r.hi, lo);
        r.rstd = C(rstd), r.cx = C(kx), r.cc = C(kc - kx * A(lo));
        return r;
    }
    template <class T>
    __device__ T dx(C g, C x, const T* w, int64_t c) const
    {
        const C kg = w ? rstd * C(w[c]) : rstd;
        return T(kg * g + cx * (x - hi) + cc);
    }
};

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
        const RowNorm<C> row = RowNorm<C>::of(m, rsd);
        const int64_t c0 = (r % G) * Cg;
        for (int64_t j = threadIdx.x; j < D; j += blockDim.x) y[r * D + j] = row.value(C(xr[j]), w, b, c0 + j / S);
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
        const RowGrad<C> row = RowGrad<C>::of(mean[r], rstd[r], ws1, ws2, D);
        for (int64_t j = threadIdx.x; j < D; j += blockDim.x)
            gx[r * D + j] = row.dx(C(g[r * D + j]), C(x[r * D + j]), w, c0 + j / S);
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

// ---- few long rows: sliced statistics and sums, elementwise writes ----
//
// A block per (n, g) row (or per (n, c) plane) keeps N * G blocks busy: a GroupNorm(32) at
// batch 2 is 64 blocks, half of an H100's SMs with one block each, however long its rows
// (a diffusion UNet's are thousands of values). Then each row is cut into slices of `chunk`
// values, a block each, about kFillBlocks blocks in all (split_to_fill, as batch_norm.cu
// cuts channels): the slices' sums meet in the row's last block to arrive (last_block.cuh),
// and the values are written by an elementwise kernel, one thread per value.

// The sums (a, b) of the slices' partials of reduction `item` (add_slice_partials), in every
// thread of the block. Every thread of the last block calls it.
__device__ void slices_total(A& a, A& b, const A* partial, int64_t item, A* shared)
{
    add_slice_partials(a, b, partial, item);
    a = block_sum(a, shared), b = block_sum(b, shared);
}

// Element i of a contiguous (N, C, S) tensor of n values: its plane p = i / S (n * C + c),
// its row p / Cg (n * G + g) and its channel p % C, by multiply-high divisions (DivideBy).
struct PlaneOf {
    int64_t C;
    DivideBy by_S, by_Cg, by_C;
    PlaneOf(int64_t n, int64_t C_, int64_t Cg, int64_t S) : C(C_), by_S(S, n), by_Cg(Cg, n), by_C(C_, n) {}
    __device__ void operator()(int64_t i, int64_t& row, int64_t& channel) const
    {
        const int64_t p = by_S(i);
        row = by_Cg(p), channel = p - by_C(p) * C;
    }
};

// Thread mapping: block (r, y) takes slice y of row r, values [y chunk, (y + 1) chunk); its
// threads stride over the slice (adjacent threads, adjacent values). The shifted sums (K: the
// row's first value, in every slice) go to partial[r, y]; thread 0 of the row's last block
// writes the row's mean and rstd from all its slices, and the constants the write needs in
// the compute type, rows[r]: no double math per value in the write.
template <class T>
__global__ void group_norm_sliced_stats_kernel(const T* x, A* mean, A* rstd, RowNorm<GroupNormCompute<T>>* rows,
                                               A* partial, unsigned* arrivals, int64_t D, int64_t chunk, double eps)
{
    __shared__ A shared[kBlockWarps];
    using C = GroupNormCompute<T>;
    const int64_t r = blockIdx.x, begin = int64_t(blockIdx.y) * chunk, end = min(D, begin + chunk);
    const T* xr = x + r * D;
    const A K = A(C(xr[0]));
    A s = 0, q = 0;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
        const A dv = A(C(xr[j])) - K;
        s += dv, q += dv * dv;
    }
    s = block_sum(s, shared), q = block_sum(q, shared);
    A* mine = partial + 2 * (r * gridDim.y + blockIdx.y);
    if (threadIdx.x == 0) mine[0] = s, mine[1] = q;
    if (!last_to_arrive(arrivals)) return;
    slices_total(s, q, partial, r, shared);
    if (threadIdx.x != 0) return;
    group_norm_stats(K, s, q, D, eps, mean[r], rstd[r]);
    rows[r] = RowNorm<C>::of(mean[r], rstd[r]);
}

// Thread mapping: one thread per value i of (N, C, S), grid-stride; row and channel from
// PlaneOf; y from the row's constants, as group_norm_kernel writes it.
template <class T>
__global__ void group_norm_apply_kernel(const T* x, const T* w, const T* b, T* y,
                                        const RowNorm<GroupNormCompute<T>>* rows, int64_t n, PlaneOf plane_of)
{
    MT_GRID_STRIDE(i, n) {
        int64_t r, c;
        plane_of(i, r, c);
        y[i] = rows[r].value(GroupNormCompute<T>(x[i]), w, b, c);
    }
}

// Thread mapping: block (p, y) takes slice y of plane p's S values, as
// group_norm_sliced_stats_kernel does a row's; thread 0 of the plane's last block writes
// sg[p] and sgx[p] (group_norm_plane_sums_kernel's formula).
template <class T>
__global__ void group_norm_sliced_plane_sums_kernel(const T* g, const T* x, const A* mean, const A* rstd, A* sg,
                                                    A* sgx, A* partial, unsigned* arrivals, int64_t Cg, int64_t S,
                                                    int64_t chunk)
{
    __shared__ A shared[kBlockWarps];
    using C = GroupNormCompute<T>;
    const int64_t p = blockIdx.x, begin = int64_t(blockIdx.y) * chunk, end = min(S, begin + chunk);
    const T *gp = g + p * S, *xp = x + p * S;
    C hi, lo;
    group_norm_split(mean[p / Cg], hi, lo);
    A s = 0, sd = 0;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
        s += A(C(gp[j]));
        sd += A(C(gp[j])) * A(C(xp[j]) - hi);
    }
    s = block_sum(s, shared), sd = block_sum(sd, shared);
    A* mine = partial + 2 * (p * gridDim.y + blockIdx.y);
    if (threadIdx.x == 0) mine[0] = s, mine[1] = sd;
    if (!last_to_arrive(arrivals)) return;
    slices_total(s, sd, partial, p, shared);
    if (threadIdx.x == 0) sg[p] = s, sgx[p] = (sd - A(lo) * s) * rstd[p / Cg];
}

// Thread mapping: one warp per (n, g) row (8 rows per block, grid-stride); lane l adds the
// w-weighted sums of the row's planes l, l + 32, ... Writes the row's dx constants in the
// compute type, coeffs[r] (RowGrad).
template <class T>
__global__ void group_norm_row_coeffs_kernel(const A* mean, const A* rstd, const T* w, const A* sg, const A* sgx,
                                             RowGrad<GroupNormCompute<T>>* coeffs, int64_t rows, int64_t G,
                                             int64_t Cg, int64_t D)
{
    using C = GroupNormCompute<T>;
    const int lane = threadIdx.x % kWarp;
    for (int64_t r = blockIdx.x * int64_t(kBlockWarps) + threadIdx.x / kWarp; r < rows;
         r += int64_t(gridDim.x) * kBlockWarps) {
        const int64_t c0 = (r % G) * Cg;
        A ws1 = 0, ws2 = 0;
        for (int64_t k = lane; k < Cg; k += kWarp) {
            const A wk = w ? A(C(w[c0 + k])) : A(1);
            ws1 += wk * sg[r * Cg + k], ws2 += wk * sgx[r * Cg + k];
        }
        ws1 = warp_sum(ws1), ws2 = warp_sum(ws2);
        if (lane == 0) coeffs[r] = RowGrad<C>::of(mean[r], rstd[r], ws1, ws2, D);
    }
}

// Thread mapping: one thread per value i of (N, C, S), grid-stride; row and channel from
// PlaneOf. The formula of group_norm_backward_kernel's write, from the row's constants.
template <class T>
__global__ void group_norm_sliced_backward_kernel(const T* g, const T* x, const T* w,
                                                  const RowGrad<GroupNormCompute<T>>* coeffs, T* gx, int64_t n,
                                                  PlaneOf plane_of)
{
    using C = GroupNormCompute<T>;
    MT_GRID_STRIDE(i, n) {
        int64_t r, c;
        plane_of(i, r, c);
        gx[i] = coeffs[r].dx(C(g[i]), C(x[i]), w, c);
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
    const int64_t rows = d.N * d.G, D = d.Cg * d.S;
    if (const Split cut = split_to_fill(rows, D, kMinSlice); cut.slices > 1) {  // few long rows
        Tensor partial = empty({2 * rows * cut.slices}, DType::Float64, in->device());
        Tensor consts = empty({3 * rows}, DType::Float64, in->device());  // a RowNorm<C> per row: 3 C <= 3 doubles
        dispatch_floating16(in->dtype, "group_norm", [&](auto tag) {
            using T = typename decltype(tag)::type;
            using Row = RowNorm<GroupNormCompute<T>>;
            MT_LAUNCH(dim3(unsigned(rows), unsigned(cut.slices)), kThreads, 0, 0, group_norm_sliced_stats_kernel<T>)(
                in->data_as<T>(), mean->data_as<A>(), rstd->data_as<A>(), consts->data_as<Row>(), partial->data_as<A>(),
                arrival_counters(), D, cut.chunk, eps);
            MT_CUDA_CHECK_LAUNCH("group_norm (statistics)");
            MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, group_norm_apply_kernel<T>)(
                in->data_as<T>(), data_or_null<T>(weight), data_or_null<T>(bias), out->data_as<T>(),
                consts->data_as<Row>(), in->numel(), PlaneOf(in->numel(), d.G * d.Cg, d.Cg, d.S));
        });
        MT_CUDA_CHECK_LAUNCH("group_norm");
        return;
    }
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
    const int64_t planes = d.N * d.G * d.Cg, rows = d.N * d.G;
    Tensor ws = empty({2 * planes}, DType::Float64, in->device());  // sg, then sgx, per plane
    A *sg = ws->data_as<A>(), *sgx = sg + planes;
    dispatch_floating16(in->dtype, "group_norm_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *g = grad_out->data_as<T>(), *x = in->data_as<T>();
        const A *mu = mean->data_as<A>(), *rs = rstd->data_as<A>();
        if (const Split cut = split_to_fill(planes, d.S, kMinSlice); cut.slices > 1) {  // few long planes
            Tensor partial = empty({2 * planes * cut.slices}, DType::Float64, in->device());
            MT_LAUNCH(dim3(unsigned(planes), unsigned(cut.slices)), kThreads, 0, 0,
                      group_norm_sliced_plane_sums_kernel<T>)(g, x, mu, rs, sg, sgx, partial->data_as<A>(),
                                                              arrival_counters(), d.Cg, d.S, cut.chunk);
        } else {
            MT_LAUNCH(grid_for((planes + kBlockWarps - 1) / kBlockWarps), kThreads, 0, 0,
                      group_norm_plane_sums_kernel<T>)(g, x, mu, rs, sg, sgx, planes, d.Cg, d.S);
        }
        MT_CUDA_CHECK_LAUNCH("group_norm_backward (plane sums)");
        if (grad_in && split_to_fill(rows, d.Cg * d.S, kMinSlice).slices > 1) {  // few long rows: dx elementwise
            using Row = RowGrad<GroupNormCompute<T>>;
            Tensor coeffs = empty({4 * rows}, DType::Float64, in->device());  // a RowGrad<C> per row: 4 C <= 4 doubles
            MT_LAUNCH(grid_for((rows + kBlockWarps - 1) / kBlockWarps), kThreads, 0, 0,
                      group_norm_row_coeffs_kernel<T>)(mu, rs, data_or_null<T>(weight), sg, sgx,
                                                       coeffs->data_as<Row>(), rows, d.G, d.Cg, d.Cg * d.S);
            MT_CUDA_CHECK_LAUNCH("group_norm_backward (row constants)");
            MT_LAUNCH(blocks_for(in->numel()), kThreads, 0, 0, group_norm_sliced_backward_kernel<T>)(
                g, x, data_or_null<T>(weight), coeffs->data_as<Row>(), grad_in->data_as<T>(), in->numel(),
                PlaneOf(in->numel(), d.G * d.Cg, d.Cg, d.S));
            MT_CUDA_CHECK_LAUNCH("group_norm_backward");
        } else if (grad_in) {
            MT_LAUNCH(grid_for(rows), kThreads, 0, 0, group_norm_backward_kernel<T>)(
                g, x, mu, rs, data_or_null<T>(weight), sg, sgx, grad_in->data_as<T>(), rows, d.G, d.Cg, d.S);
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
