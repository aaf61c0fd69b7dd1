// lstm_cell.cu — CUDA kernels of the fused LSTM cell (one step, forward and backward);
// the formulas are in rnn_math.h, shared with cpu/lstm_cell.cpp.
#include "common.cuh"
#include "minitorch/rnn_math.h"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per (sample n, unit j) of the (N, H) state; it reads that
// unit's four gates (H apart in the sample's row of 4H; two addends when gates2 is given)
// and writes the four activations, c and h.
template <class T>
__global__ void lstm_cell_kernel(const T* gates, const T* gates2, const T* c_prev, T* act, T* c, T* h, int64_t N,
                                 int64_t H)
{
    MT_GRID_STRIDE(k, N * H) {
        const int64_t n = k / H, j = k % H;
        lstm_cell_forward(gates + n * 4 * H, gates2 ? gates2 + n * 4 * H : nullptr, c_prev + n * H, act + n * 4 * H,
                          c + n * H, h + n * H, H, j);
    }
}

// Thread mapping: as lstm_cell_kernel, one thread per (n, j).
// dc_prev may be dc itself: each thread reads its dc before it writes.
template <class T>
__global__ void lstm_cell_backward_kernel(const T* act, const T* c_prev, const T* c, const T* dh, const T* dh2,
                                          const T* dc, T* dgates, T* dc_prev, int64_t N, int64_t H)
{
    MT_GRID_STRIDE(k, N * H) {
        const int64_t n = k / H, j = k % H;
        lstm_cell_backward_at(act + n * 4 * H, c_prev + n * H, c + n * H, dh + n * H, dh2 ? dh2 + n * H : nullptr,
                              dc + n * H, dgates + n * 4 * H, dc_prev ? dc_prev + n * H : nullptr, H, j);
    }
}

}  // namespace

void lstm_cell(const Tensor& h, const Tensor& c, const Tensor& act, const Tensor& gates, const Tensor& gates2,
               const Tensor& c_prev)
{
    const int64_t N = h->shape[0], H = h->shape[1];
    dispatch_floating16(gates->dtype, "lstm_cell", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(N * H), kThreads, 0, 0, lstm_cell_kernel<T>)(
            gates->data_as<T>(), gates2 ? gates2->data_as<T>() : nullptr, c_prev->data_as<T>(), act->data_as<T>(),
            c->data_as<T>(), h->data_as<T>(), N, H);
    });
    MT_CUDA_CHECK_LAUNCH("lstm_cell");
}

void lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c_prev, const Tensor& grad_h,
                        const Tensor& grad_h2, const Tensor& grad_c, const Tensor& act, const Tensor& c_prev,
                        const Tensor& c)
{
    const int64_t N = c->shape[0], H = c->shape[1];
    dispatch_floating16(act->dtype, "lstm_cell_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(N * H), kThreads, 0, 0, lstm_cell_backward_kernel<T>)(
            act->data_as<T>(), c_prev->data_as<T>(), c->data_as<T>(), grad_h->data_as<T>(),
            grad_h2 ? grad_h2->data_as<T>() : nullptr, grad_c->data_as<T>(), grad_gates->data_as<T>(), grad_c_prev ? grad_c_prev->data_as<T>() : nullptr, N, H);
    });
    MT_CUDA_CHECK_LAUNCH("lstm_cell_backward");
}

}  // namespace minitorch::cuda
