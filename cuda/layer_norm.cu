// layer_norm.cu — CUDA kernels of the fused layer norm, forward and backward, on rows of
// a contiguous (rows, D) tensor (kernels.h); the CPU versions are cpu/layer_norm.cpp.
// float16 / bfloat16 are read in place (the table's layer_norm16 entries): every value is
// converted to C = Compute<T> (float32) as it is loaded, the row's statistics and outputs are
// computed in C and rounded to T once, when stored -- the bits staging through float32 gave.
// Without a mean tensor the same kernels are the RMS norm: no centring (the mean is 0), so
// rstd = 1 / sqrt(mean(x^2) + eps), and the backward loses its mean(gw) term.
#include <algorithm>
#include <type_traits>

#include "common.cuh"
#include "last_block.cuh"
#include "minitorch/layer_norm_math.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

// Thread mapping: one warp per row (8 rows per block of 256 threads, grid-stride over rows);
// lane l takes the row's elements l, l + 32, ... so a warp reads 32 adjacent values at a
// time. Three passes over the row (cached after the first): the mean, the variance of the
// deviations from it (two passes: no cancellation), then the write. Sums in LayerNormAcc
// (double), as on the CPU (layer_norm_math.h).
template <class T>
__global__ void layer_norm_kernel(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t rows,
                                  int64_t D, double eps)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    using C = Compute<T>;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps) {
        const T* xr = x + r * D;
        using A = LayerNormAcc;
        A ma = 0;  // the RMS norm (no mean tensor) does not centre
        if (mean) {
            A s = 0;
            for (int64_t j = lane; j < D; j += kWarp) s += A(C(xr[j]));
            ma = warp_sum(s) / A(D);
        }
        A v = 0;
        for (int64_t j = lane; j < D; j += kWarp) v += (A(C(xr[j])) - ma) * (A(C(xr[j])) - ma);
        const C m = C(ma), rs = C(A(1) / sqrt(warp_sum(v) / A(D) + A(eps)));
        if (lane == 0) {
            if (mean) mean[r] = T(m);
            rstd[r] = T(rs);
        }
        for (int64_t j = lane; j < D; j += kWarp) {
            C out = (C(xr[j]) - m) * rs;
            if (w) out = out * C(w[j]);
            if (b) out = out + C(b[j]);
            y[r * D + j] = T(out);
        }
    }
}

// Thread mapping: as layer_norm_kernel, one warp per row. The row's sums of gw = g * w and
// of gw * xhat are warp reductions; then each lane writes its elements of grad_in.
template <class T>
__global__ void layer_norm_backward_kernel(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx,
                                           int64_t rows, int64_t D)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    using C = Compute<T>;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps) {
        const T *gr = g + r * D, *xr = x + r * D;
        const C m = mean ? C(mean[r]) : C(0), rs = C(rstd[r]);
        LayerNormAcc s1 = 0, s2 = 0;
        for (int64_t j = lane; j < D; j += kWarp) {
            const C gw = w ? C(gr[j]) * C(w[j]) : C(gr[j]);
            s1 += gw;
            s2 += gw * (C(xr[j]) - m) * rs;
        }
        // the RMS norm's xhat does not move with the row's mean: no mean(gw) term
        const C m1 = mean ? C(warp_sum(s1) / LayerNormAcc(D)) : C(0), m2 = C(warp_sum(s2) / LayerNormAcc(D));
        for (int64_t j = lane; j < D; j += kWarp) {
            const C gw = w ? C(gr[j]) * C(w[j]) : C(gr[j]);
            gx[r * D + j] = T(rs * (gw - m1 - (C(xr[j]) - m) * rs * m2));
        }
    }
}

// Rows of up to 32 * kPerLane values (D <= 1024), float32 and 16-bit: the same two kernels
// with the row in registers. Thread mapping: as above, one warp per row (4 rows per block of
// kRowsThreads), lane l holding the row's elements l, l + 32, ... . Each lane issues all its
// loads first (predicated: `j < D ? x[j] : 0`, no branch), then the sums and the writes work on
// the registers: one read of the row from memory, where the kernels above read it three times
// (forward) or twice (backward), each pass a few loads in flight at a time. The sums are added
// in the same order as above, and the emulator gives the same bits (nvcc may fuse a product and
// a sum into one FMA in one kernel and not in the other: a rounding apart). As
// softmax_rows_kernel; tools/sass.py checks the batches in tests/tools/test_sass.py. float64
// keeps the kernels above (twice the registers a value). MINITORCH_CUDA_LAYER_NORM=passes
// selects the kernels above.
constexpr int kRowsThreads = 128;
// Longer rows, up to kBlockRowsThreads * 32 values (D <= 8192): the same work with a block of
// kBlockRowsThreads threads a row, thread t holding elements t, t + kBlockRowsThreads, ...;
// the sums go through the block (BlockRow, warp.cuh), so they add in another order than the
// kernels above (a few roundings apart).
constexpr int kBlockRowsThreads = 256;

// One row's forward in registers: the row's `threads` threads (a warp or a block; `row` reduces
// over them) hold its elements first, first + threads, ... (kPer of them each).
template <class T, int kPer, class Reduce>
__device__ __forceinline__ void layer_norm_row(const T* __restrict__ xr, const T* __restrict__ w,
                                               const T* __restrict__ b, T* __restrict__ yr, T* mean, T* rstd,
                                               int64_t r, int D, double eps, int first, int threads, const Reduce& row)
{
    using C = Compute<T>;
    using A = LayerNormAcc;
    C v[kPer];
MT_UNROLL
    for (int k = 0; k < kPer; ++k) v[k] = first + k * threads < D ? C(xr[first + k * threads]) : C(0);
    A ma = 0;
    if (mean) {
        A s = 0;
MT_UNROLL
        for (int k = 0; k < kPer; ++k)
            if (first + k * threads < D) s += A(v[k]);
        ma = row.row_sum(s) / A(D);
    }
    A var = 0;
MT_UNROLL
    for (int k = 0; k < kPer; ++k)
        if (first + k * threads < D) var += (A(v[k]) - ma) * (A(v[k]) - ma);
    const C m = C(ma), rs = C(A(1) / sqrt(row.row_sum(var) / A(D) + A(eps)));
    if (first == 0) {
        if (mean) mean[r] = T(m);
        rstd[r] = T(rs);
    }
    // The write. Rows of more than 4 values a thread go 8 values at a time: their weights and
    // biases (the same for every row: L1 hits) loaded together first, rather than one load
    // to wait for before each value. (Shorter ones value by value: chunked, ptxas spilled
    // 16-bit rows of 4 values a lane at sm_80 and sm_90.)
    constexpr int kChunk = kPer < 8 ? 1 : 8;
MT_UNROLL
    for (int k0 = 0; k0 < kPer; k0 += kChunk) {
        C wk[kChunk], bk[kChunk];
        if constexpr (kChunk > 1) {
MT_UNROLL
            for (int k = 0; k < kChunk; ++k) {
                const int j = first + (k0 + k) * threads;
                wk[k] = w && j < D ? C(w[j]) : C(1);
                bk[k] = b && j < D ? C(b[j]) : C(0);
            }
        }
MT_UNROLL
        for (int k = 0; k < kChunk; ++k) {
            const int j = first + (k0 + k) * threads;
            if (j >= D) continue;
            C out = (v[k0 + k] - m) * rs;
            if (w) out = out * (kChunk > 1 ? wk[k] : C(w[j]));
            if (b) out = out + (kChunk > 1 ? bk[k] : C(b[j]));
            yr[j] = T(out);
        }
    }
}

// One row's backward in registers: gw = g * w and x, their loads issued together.
template <class T, int kPer, class Reduce>
__device__ __forceinline__ void layer_norm_backward_row(const T* __restrict__ gr, const T* __restrict__ xr,
                                                        const T* __restrict__ mean, const T* __restrict__ rstd,
                                                        const T* __restrict__ w, T* __restrict__ gxr, int64_t r, int D,
                                                        int first, int threads, const Reduce& row)
{
    using C = Compute<T>;
    C gw[kPer], xv[kPer];
MT_UNROLL
    for (int k = 0; k < kPer; ++k) {
        const int j = first + k * threads;
        gw[k] = j < D ? (w ? C(gr[j]) * C(w[j]) : C(gr[j])) : C(0);
        xv[k] = j < D ? C(xr[j]) : C(0);
    }
    const C m = mean ? C(mean[r]) : C(0), rs = C(rstd[r]);
    LayerNormAcc s1 = 0, s2 = 0;
MT_UNROLL
    for (int k = 0; k < kPer; ++k)
        if (first + k * threads < D) {
            s1 += gw[k];
            s2 += gw[k] * (xv[k] - m) * rs;
        }
    // the RMS norm's xhat does not move with the row's mean: no mean(gw) term
    const C m1 = mean ? C(row.row_sum(s1) / LayerNormAcc(D)) : C(0), m2 = C(row.row_sum(s2) / LayerNormAcc(D));
MT_UNROLL
    for (int k = 0; k < kPer; ++k) {
        const int j = first + k * threads;
        if (j < D) gxr[j] = T(rs * (gw[k] - m1 - (xv[k] - m) * rs * m2));
    }
}

template <class T, int kPerLane>
__global__ void __launch_bounds__(kRowsThreads)
    layer_norm_rows_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
                           T* __restrict__ mean, T* __restrict__ rstd, int64_t rows, int D, double eps)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps)
        layer_norm_row<T, kPerLane>(x + r * D, w, b, y + r * D, mean, rstd, r, D, eps, lane, kWarp, WarpRow{});
}

template <class T, int kPerLane>
__global__ void __launch_bounds__(kRowsThreads)
    layer_norm_backward_rows_kernel(const T* __restrict__ g, const T* __restrict__ x, const T* __restrict__ mean,
                                    const T* __restrict__ rstd, const T* __restrict__ w, T* __restrict__ gx,
                                    int64_t rows, int D)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps)
        layer_norm_backward_row<T, kPerLane>(g + r * D, x + r * D, mean, rstd, w, gx + r * D, r, D, lane, kWarp,
                                             WarpRow{});
}

// Thread mapping: block b takes rows b, b + gridDim.x, ...; thread t holds elements t, t +
// kBlockRowsThreads, ... of the row.
template <class T, int kPerThread>
__global__ void __launch_bounds__(kBlockRowsThreads)
    layer_norm_block_rows_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                 T* __restrict__ y, T* __restrict__ mean, T* __restrict__ rstd, int64_t rows, int D,
                                 double eps)
{
    constexpr int kWarps = kBlockRowsThreads / kWarp;
    __shared__ LayerNormAcc part[kWarps];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
        layer_norm_row<T, kPerThread>(x + r * D, w, b, y + r * D, mean, rstd, r, D, eps, int(threadIdx.x),
                                      kBlockRowsThreads, BlockRow<LayerNormAcc, kWarps>{part});
}

template <class T, int kPerThread>
__global__ void __launch_bounds__(kBlockRowsThreads)
    layer_norm_backward_block_rows_kernel(const T* __restrict__ g, const T* __restrict__ x,
                                          const T* __restrict__ mean, const T* __restrict__ rstd,
                                          const T* __restrict__ w, T* __restrict__ gx, int64_t rows, int D)
{
    constexpr int kWarps = kBlockRowsThreads / kWarp;
    __shared__ LayerNormAcc part[kWarps];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
        layer_norm_backward_row<T, kPerThread>(g + r * D, x + r * D, mean, rstd, w, gx + r * D, r, D,
                                               int(threadIdx.x), kBlockRowsThreads,
                                               BlockRow<LayerNormAcc, kWarps>{part});
}

// The longest row the register kernels take, and whether a float32 or 16-bit call goes to them.
constexpr int64_t kRowsMaxD = 32 * kWarp, kBlockRowsMaxD = 32 * kBlockRowsThreads;

bool rows_in_registers(int64_t D)
{
    return D >= 1 && D <= kBlockRowsMaxD && !env_is("MINITORCH_CUDA_LAYER_NORM", "passes");
}

// Launches `Kernel<kPerLane>` (a macro's kernel template) with the fewest registers a lane that
// hold a row of D values: kPerLane = 1, 2, 4, 8, 16 or 32.
#define MT_LAYER_NORM_ROWS(kernel, D, rows, ...)                                                                    \
    do {                                                                                                            \
        const unsigned grid_ = unsigned(std::clamp<int64_t>((rows + kRowsThreads / kWarp - 1) / (kRowsThreads / kWarp), \
                                                            1, 65535));                                             \
        const int64_t per_lane_ = (D + kWarp - 1) / kWarp;                                                          \
        if (per_lane_ <= 1) MT_LAUNCH(grid_, kRowsThreads, 0, 0, kernel<T, 1>)(__VA_ARGS__);                        \
        else if (per_lane_ <= 2) MT_LAUNCH(grid_, kRowsThreads, 0, 0, kernel<T, 2>)(__VA_ARGS__);                   \
        else if (per_lane_ <= 4) MT_LAUNCH(grid_, kRowsThreads, 0, 0, kernel<T, 4>)(__VA_ARGS__);                   \
        else if (per_lane_ <= 8) MT_LAUNCH(grid_, kRowsThreads, 0, 0, kernel<T, 8>)(__VA_ARGS__);                   \
        else if (per_lane_ <= 16) MT_LAUNCH(grid_, kRowsThreads, 0, 0, kernel<T, 16>)(__VA_ARGS__);                 \
        else MT_LAUNCH(grid_, kRowsThreads, 0, 0, kernel<T, 32>)(__VA_ARGS__);                                      \
    } while (0)

// The same for rows of kRowsMaxD < D <= kBlockRowsMaxD, a block a row: kPerThread = 8, 16 or 32.
#define MT_LAYER_NORM_BLOCK_ROWS(kernel, D, rows, ...)                                                              \
    do {                                                                                                            \
        const unsigned grid_ = unsigned(std::clamp<int64_t>(rows, 1, 65535));                                       \
        const int64_t per_thread_ = (D + kBlockRowsThreads - 1) / kBlockRowsThreads;                                \
        if (per_thread_ <= 8) MT_LAUNCH(grid_, kBlockRowsThreads, 0, 0, kernel<T, 8>)(__VA_ARGS__);                 \
        else if (per_thread_ <= 16) MT_LAUNCH(grid_, kBlockRowsThreads, 0, 0, kernel<T, 16>)(__VA_ARGS__);          \
        else MT_LAUNCH(grid_, kBlockRowsThreads, 0, 0, kernel<T, 32>)(__VA_ARGS__);                                 \
    } while (0)

// The parameter gradients sum over every row: gw[j] = sum_r g[r, j] xhat[r, j] and
// gb[j] = sum_r g[r, j]. With few rows (or as the readable version) one thread per column
// does it all; with many rows that leaves most of the GPU idle (D = 768 columns are 3
// blocks), so the rows are cut into chunks: each block writes its chunk's partial sums to
// a small workspace, and the last block of a column tile to finish adds the chunks up, in
// the same launch (last_block.cuh).

// Thread mapping: one thread per column j, summing down the rows: adjacent threads read
// adjacent columns of a row, so every step's loads coalesce.
template <class T>
__global__ void layer_norm_params_kernel(const T* g, const T* x, const T* mean, const T* rstd, T* gw, T* gb,
                                         int64_t rows, int64_t D)
{
    MT_GRID_STRIDE(j, D) {
        using C = Compute<T>;
        LayerNormAcc sw = 0, sb = 0;
        for (int64_t r = 0; r < rows; ++r) {
            sw += layer_norm_weight_term(C(g[r * D + j]), C(x[r * D + j]), mean ? C(mean[r]) : C(0), C(rstd[r]));
            sb += C(g[r * D + j]);
        }
        if (gw) gw[j] = T(sw);
        if (gb) gb[j] = T(sb);
    }
}

// Column j's gradients from its chunks' partial sums (ws as the partial kernel writes it),
// added in chunk order.
template <class T>
__device__ void column_total(const LayerNormAcc* ws, T* gw, T* gb, int64_t chunks, int64_t D, int64_t j)
{
    LayerNormAcc sw = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) sw += ws[c * D + j], sb += ws[(chunks + c) * D + j];
    if (gw) gw[j] = T(sw);
    if (gb) gb[j] = T(sb);
}

constexpr int kColTile = kWarp;                    // columns per block: a row's 32 adjacent values
constexpr int kRowLanes = kThreads / kColTile;     // threads per column, striding down the rows
constexpr int64_t kMinRowsPerChunk = 8 * kRowLanes;  // below this, layer_norm_params_kernel alone
constexpr int64_t kTargetBlocks = 1024;            // enough blocks to fill a large GPU a few times

// Thread mapping: block (bx, by) owns column tiles bx, bx + gridDim.x, ... (tile t: columns
// [32 t, 32 t + 32)) and the rows of chunk by, [by chunk, (by + 1) chunk). Thread i takes
// column 32 t + i % 32 and every 8th row of the chunk from row i / 32 on, so each warp
// reads 32 adjacent values of one row. The 8 row lanes' sums of a column meet in shared
// memory (a tile of 8 x 32); lane 0 writes the chunk's partial sums: ws[by, j] (weight)
// and ws[chunks + by, j] (bias). The last block of column bx to arrive then adds up the
// chunks of its tiles' columns, one thread per column.
template <class T>
__global__ void layer_norm_params_kernel_split(const T* g, const T* x, const T* mean, const T* rstd, LayerNormAcc* ws,
                                               T* gw, T* gb, unsigned* arrivals, int64_t rows, int64_t D,
                                               int64_t chunk)
{
    __shared__ LayerNormAcc tile_w[kRowLanes][kColTile], tile_b[kRowLanes][kColTile];
    const int tx = threadIdx.x % kColTile, ty = threadIdx.x / kColTile;
    const int64_t tiles = (D + kColTile - 1) / kColTile;
    const int64_t r0 = int64_t(blockIdx.y) * chunk, r1 = min(rows, r0 + chunk);
    using C = Compute<T>;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t j = tile * kColTile + tx;
        LayerNormAcc sw = 0, sb = 0;
        if (j < D) {
            for (int64_t r = r0 + ty; r < r1; r += kRowLanes) {
                sw += layer_norm_weight_term(C(g[r * D + j]), C(x[r * D + j]), mean ? C(mean[r]) : C(0), C(rstd[r]));
                sb += C(g[r * D + j]);
            }
        }
        tile_w[ty][tx] = sw, tile_b[ty][tx] = sb;
        __syncthreads();  // every row lane's sums are in the tile before lane 0 adds them up
        if (ty == 0 && j < D) {
            for (int k = 1; k < kRowLanes; ++k) sw += tile_w[k][tx], sb += tile_b[k][tx];
            ws[int64_t(blockIdx.y) * D + j] = sw;
            ws[int64_t(gridDim.y + blockIdx.y) * D + j] = sb;
        }
        __syncthreads();  // lane 0 has read the tile before the next one overwrites it
    }
    if (!last_to_arrive(arrivals) || ty != 0) return;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t j = tile * kColTile + tx;
        if (j < D) column_total(ws, gw, gb, gridDim.y, D, j);
    }
}

template <class T>
T* data_or_null(const Tensor& t)
{
    return t ? t->data_as<T>() : nullptr;
}

}  // namespace

void layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, double eps)
{
    const int64_t rows = rstd->numel(), D = rows ? in->numel() / rows : 0;
    dispatch_floating16(in->dtype, "layer_norm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, double>) {
            if (rows_in_registers(D)) {
                if (D <= kRowsMaxD)
                    MT_LAYER_NORM_ROWS(layer_norm_rows_kernel, D, rows, in->data_as<T>(), data_or_null<T>(weight),
                                       data_or_null<T>(bias), out->data_as<T>(), data_or_null<T>(mean),
                                       rstd->data_as<T>(), rows, int(D), eps);
                else
                    MT_LAYER_NORM_BLOCK_ROWS(layer_norm_block_rows_kernel, D, rows, in->data_as<T>(),
                                             data_or_null<T>(weight), data_or_null<T>(bias), out->data_as<T>(),
                                             data_or_null<T>(mean), rstd->data_as<T>(), rows, int(D), eps);
                return;
            }
        }
        MT_LAUNCH(blocks_for(rows * kWarp), kThreads, 0, 0, layer_norm_kernel<T>)(
            in->data_as<T>(), data_or_null<T>(weight), data_or_null<T>(bias), out->data_as<T>(),
            data_or_null<T>(mean), rstd->data_as<T>(), rows, D, eps);
    });
    MT_CUDA_CHECK_LAUNCH("layer_norm");
}

void layer_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight)
{
    const int64_t rows = rstd->numel(), D = rows ? in->numel() / rows : 0;
    dispatch_floating16(in->dtype, "layer_norm_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        bool in_registers = false;
        if constexpr (!std::is_same_v<T, double>) {
            if (grad_in && rows_in_registers(D)) {
                if (D <= kRowsMaxD)
                    MT_LAYER_NORM_ROWS(layer_norm_backward_rows_kernel, D, rows, grad_out->data_as<T>(),
                                       in->data_as<T>(), data_or_null<T>(mean), rstd->data_as<T>(),
                                       data_or_null<T>(weight), grad_in->data_as<T>(), rows, int(D));
                else
                    MT_LAYER_NORM_BLOCK_ROWS(layer_norm_backward_block_rows_kernel, D, rows, grad_out->data_as<T>(),
                                             in->data_as<T>(), data_or_null<T>(mean), rstd->data_as<T>(),
                                             data_or_null<T>(weight), grad_in->data_as<T>(), rows, int(D));
                MT_CUDA_CHECK_LAUNCH("layer_norm_backward");
                in_registers = true;
            }
        }
        if (grad_in && !in_registers) {
            MT_LAUNCH(blocks_for(rows * kWarp), kThreads, 0, 0, layer_norm_backward_kernel<T>)(
                grad_out->data_as<T>(), in->data_as<T>(), data_or_null<T>(mean), rstd->data_as<T>(),
                data_or_null<T>(weight), grad_in->data_as<T>(), rows, D);
            MT_CUDA_CHECK_LAUNCH("layer_norm_backward");
        }
        if (!grad_weight && !grad_bias) return;
        const T *g = grad_out->data_as<T>(), *x = in->data_as<T>(), *mu = data_or_null<T>(mean), *rs = rstd->data_as<T>();
        T *gw = data_or_null<T>(grad_weight), *gb = data_or_null<T>(grad_bias);
        if (rows < 2 * kMinRowsPerChunk) {
            MT_LAUNCH(blocks_for(D), kThreads, 0, 0, layer_norm_params_kernel<T>)(g, x, mu, rs, gw, gb, rows, D);
            MT_CUDA_CHECK_LAUNCH("layer_norm_backward (weight, bias)");
            return;
        }
        // Chunks of at least kMinRowsPerChunk rows, about kTargetBlocks blocks in all.
        const int64_t tiles = (D + kColTile - 1) / kColTile;
        const int64_t chunks = std::clamp<int64_t>(kTargetBlocks / tiles, 1, std::min<int64_t>(rows / kMinRowsPerChunk, 65535));
        const int64_t chunk = (rows + chunks - 1) / chunks;
        Tensor ws = empty({2 * chunks * D}, DType::Float64, in->device());  // LayerNormAcc partial sums
        const dim3 grid(unsigned(std::min(tiles, kArrivalCounters)), unsigned(chunks));
        MT_LAUNCH(grid, kThreads, 0, 0, layer_norm_params_kernel_split<T>)(
            g, x, mu, rs, ws->data_as<LayerNormAcc>(), gw, gb, arrival_counters(), rows, D, chunk);
        MT_CUDA_CHECK_LAUNCH("layer_norm_backward (weight, bias)");
    });
}

// The table's layer norm entries: tensors all of one 16-bit dtype are read in place;
// anything else goes through Widen.
namespace {
bool all16(DType t, std::initializer_list<const Tensor*> ts)
{
    if (!is_16bit(t)) return false;
    for (const Tensor* x : ts)
        if (*x && (*x)->dtype != t) return false;
    return true;
}
}  // namespace

void layer_norm16(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                  const Tensor& bias, double eps)
{
    if (all16(in->dtype, {&out, &mean, &rstd, &weight, &bias})) return layer_norm(out, mean, rstd, in, weight, bias, eps);
    MT_WIDEN(layer_norm, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
             double)(out, mean, rstd, in, weight, bias, eps);
}

void layer_norm_backward16(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                           const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                           const Tensor& weight)
{
    if (all16(in->dtype, {&grad_in, &grad_weight, &grad_bias, &grad_out, &mean, &rstd, &weight}))
        return layer_norm_backward(grad_in, grad_weight, grad_bias, grad_out, in, mean, rstd, weight);
    MT_WIDEN(layer_norm_backward, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
             const Tensor&, const Tensor&, const Tensor&)(grad_in, grad_weight, grad_bias, grad_out, in, mean, rstd,
                                                          weight);
}

}  // namespace minitorch::cuda
