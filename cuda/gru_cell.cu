// gru_cell.cu — CUDA kernels of the fused GRU cell (one step, forward and backward); the
// formulas are in rnn_math.h, shared with cpu/gru_cell.cpp. float16 / bfloat16 are read and
// written directly and computed in float32 registers.
#include "common.cuh"
#include "minitorch/rnn_math.h"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per (sample n, unit j) of the (N, H) state; it reads that
// unit's three gates from xw and hw (H apart in the sample's rows of 3H) and writes h and
// the four values backward reads (r, z, n, hn; H apart in the row of 4H).
template <class T>
__global__ void gru_cell_kernel(const T* xw, const T* hw, const T* bias, const T* h_prev, T* act, T* h, int64_t N,
                                int64_t H)
{
    MT_GRID_STRIDE(k, N * H) {
        const int64_t n = k / H, j = k % H;
        gru_cell_forward(xw + n * 3 * H, hw + n * 3 * H, bias, h_prev + n * H, act + n * 4 * H, h + n * H, H, j);
    }
}

// Thread mapping: as gru_cell_kernel, one thread per (n, j). dh_direct may be dh3 itself:
// each thread reads its dh3 before it writes.
template <class T>
__global__ void gru_cell_backward_kernel(const T* act, const T* h_prev, const T* dh, const T* dh2, const T* dh3,
                                         T* dxw, T* dhw, T* dh_direct, int64_t N, int64_t H)
{
    MT_GRID_STRIDE(k, N * H) {
        const int64_t n = k / H, j = k % H;
        gru_cell_backward_at(act + n * 4 * H, h_prev + n * H, dh + n * H, dh2 ? dh2 + n * H : nullptr,
                             dh3 ? dh3 + n * H : nullptr, dxw + n * 3 * H, dhw + n * 3 * H, dh_direct + n * H, H, j);
    }
}

template <class T>
const T* data_or_null(const Tensor& t)
{
    return t ? t->data_as<T>() : nullptr;
}

}  // namespace

void gru_cell(const Tensor& h, const Tensor& act, const Tensor& xw, const Tensor& hw, const Tensor& bias,
              const Tensor& h_prev)
{
    const int64_t N = h->shape[0], H = h->shape[1];
    dispatch_floating16(xw->dtype, "gru_cell", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(N * H), kThreads, 0, 0, gru_cell_kernel<T>)(
            xw->data_as<T>(), hw->data_as<T>(), data_or_null<T>(bias), h_prev->data_as<T>(), act->data_as<T>(),
            h->data_as<T>(), N, H);
    });
    MT_CUDA_CHECK_LAUNCH("gru_cell");
}

void gru_cell_backward(const Tensor& grad_xw, const Tensor& grad_hw, const Tensor& grad_h_direct, const Tensor& grad_h,
                       const Tensor& grad_h2, const Tensor& grad_h3, const Tensor& act, const Tensor& h_prev)
{
    const int64_t N = grad_h->shape[0], H = grad_h->shape[1];
    dispatch_floating16(act->dtype, "gru_cell_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(N * H), kThreads, 0, 0, gru_cell_backward_kernel<T>)(
            act->data_as<T>(), h_prev->data_as<T>(), grad_h->data_as<T>(), data_or_null<T>(grad_h2),
            data_or_null<T>(grad_h3), grad_xw->data_as<T>(), grad_hw->data_as<T>(), grad_h_direct->data_as<T>(), N, H);
    });
    MT_CUDA_CHECK_LAUNCH("gru_cell_backward");
}

}  // namespace minitorch::cuda
