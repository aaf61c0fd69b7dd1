// scan.cu — CUDA kernel for running sums and products (cumsum, cumprod) along the
// middle dim of a contiguous (outer, R, inner) tensor; layout as in kernels.h.
#include <type_traits>

#include "common.cuh"

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

}  // namespace

void scan(ScanOp op, const Tensor& out, const Tensor& in, bool reverse)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(outer * inner), kThreads, 0, 0, scan_kernel<T>)(
            in->data_as<T>(), out->data_as<T>(), outer, len, inner, op == ScanOp::Prod, reverse);
    });
    MT_CUDA_CHECK_LAUNCH("scan");
}

}  // namespace minitorch::cuda
