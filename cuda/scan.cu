// scan.cu — CUDA kernels for running sums and products (cumsum, cumprod), and running
// max / min with their places (cummax, cummin), along
// the middle dim of a contiguous (outer, R, inner) tensor; layout as in kernels.h.
#include <algorithm>
#include <type_traits>

#include "common.cuh"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per line (o, :, i), walking its R values in order. Adjacent
// threads take adjacent i, so each step's reads are coalesced when inner is large. This
// is the plain sequential scan; a long single line (inner = outer = 1) runs on one thread
// (a work-efficient parallel scan, as in the lectures' prefix-sum, is the next step).
template <class T>
__global__ void scan_kernel(const T* in, T* out, int64_t outer, int64_t len, int64_t inner, bool prod, bool reverse)
{
    using Acc = std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;
    MT_GRID_STRIDE(line, outer * inner) {
        const int64_t o = line / inner, i = line % inner;
        Acc acc = prod ? Acc(1) : Acc(0);
        for (int64_t k = 0; k < len; ++k) {
            const int64_t r = reverse ? len - 1 - k : k;
            const int64_t at = (o * len + r) * inner + i;
            acc = prod ? acc * Acc(in[at]) : acc + Acc(in[at]);
            out[at] = static_cast<T>(acc);
        }
    }
}

// The same for contiguous lines (inner == 1), where a thread per line would read with a
// stride of a whole line. Thread mapping: one warp per line (8 lines per block of 256
// threads, grid-striding over lines). The warp walks its line 32 values at a time: lane l
// takes value k0 + l, the warp's inclusive scan of the 32 (five shuffle steps: after the
// step with distance d, each lane holds the total of the 2d values ending at it, as in the
// lectures' prefix sum) gives each lane its running total within the chunk, and the carry
// of the chunks before (the previous chunk's last lane, broadcast) completes it. A single
// long line still runs on one warp: a scan split across blocks (decoupled look-back, or
// CUB's) is the step beyond.
template <class T>
__global__ void warp_scan_kernel(const T* in, T* out, int64_t lines, int64_t len, bool prod, bool reverse)
{
    using Acc = std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;
    const int lane = threadIdx.x % kWarp;
    const int64_t warps_per_block = blockDim.x / kWarp;
    for (int64_t line = blockIdx.x * warps_per_block + threadIdx.x / kWarp; line < lines;
         line += int64_t(gridDim.x) * warps_per_block) {
        const T* src = in + line * len;
        T* dst = out + line * len;
        Acc carry = prod ? Acc(1) : Acc(0);
        for (int64_t k0 = 0; k0 < len; k0 += kWarp) {
            const int64_t k = k0 + lane, r = reverse ? len - 1 - k : k;
            Acc x = k < len ? Acc(src[r]) : (prod ? Acc(1) : Acc(0));
            for (int d = 1; d < kWarp; d <<= 1) {
                const Acc y = __shfl_up_sync(kFullMask, x, d);
                if (lane >= d) x = prod ? y * x : y + x;
            }
            x = prod ? carry * x : carry + x;
            if (k < len) dst[r] = static_cast<T>(x);
            carry = __shfl_sync(kFullMask, x, kWarp - 1);
        }
    }
}

// cummax / cummin. Thread mapping as scan_kernel: one thread per line (o, :, i), adjacent
// threads on adjacent i. The best so far is replaced by a NaN, or (the best not a NaN) by a
// value >= it (cummax; <= cummin), so ties move the index to the later place, as PyTorch's.
template <class T>
__global__ void scan_extreme_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t len,
                                    int64_t inner, bool is_max)
{
    MT_GRID_STRIDE(line, outer * inner) {
        const int64_t o = line / inner, i = line % inner;
        T best = T(0);
        int64_t best_at = 0;
        for (int64_t r = 0; r < len; ++r) {
            const int64_t at = (o * len + r) * inner + i;
            const T v = in[at];
            if (r == 0 || is_nan(v) || (!is_nan(best) && (is_max ? v >= best : v <= best))) {
                best = v;
                best_at = r;
            }
            values[at] = best;
            indices[at] = best_at;
        }
    }
}

}  // namespace

void scan_extreme(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(outer * inner), kThreads, 0, 0, scan_extreme_kernel<T>)(
            in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer, len, inner, is_max);
    });
    MT_CUDA_CHECK_LAUNCH("scan_extreme");
}

void scan(ScanOp op, const Tensor& out, const Tensor& in, bool reverse)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (inner == 1 && len > 1) {
            const int64_t warps_per_block = kThreads / kWarp;
            const unsigned grid = unsigned(std::min<int64_t>((outer + warps_per_block - 1) / warps_per_block, 4096));
            MT_LAUNCH(std::max(grid, 1u), kThreads, 0, 0, warp_scan_kernel<T>)(in->data_as<T>(), out->data_as<T>(),
                                                                               outer, len, op == ScanOp::Prod, reverse);
            return;
        }
        MT_LAUNCH(blocks_for(outer * inner), kThreads, 0, 0, scan_kernel<T>)(
            in->data_as<T>(), out->data_as<T>(), outer, len, inner, op == ScanOp::Prod, reverse);
    });
    MT_CUDA_CHECK_LAUNCH("scan");
}

}  // namespace minitorch::cuda
