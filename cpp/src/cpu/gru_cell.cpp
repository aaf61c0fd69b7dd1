// gru_cell.cpp — CPU kernels of the fused GRU cell (one step, forward and backward); the
// formulas are in rnn_math.h, shared with cuda/gru_cell.cu. Samples are split over the
// threads; each position takes rnn_math.h's scalar formulas (the compiler vectorizes the
// arithmetic; the LSTM cell's SIMD sigmoid/tanh spans are the step beyond).
#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/rnn_math.h"

namespace minitorch::cpu {

namespace {

int64_t grain(int64_t H) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(8 * H, 1)); }

template <class T>
const T* row(const Tensor& t, int64_t n, int64_t width)
{
    return t ? t->data_as<T>() + n * width : nullptr;
}

}  // namespace

void gru_cell(const Tensor& h, const Tensor& act, const Tensor& xw, const Tensor& hw, const Tensor& bias,
              const Tensor& h_prev)
{
    const int64_t N = h->shape[0], H = h->shape[1];
    dispatch_floating(xw->dtype, "gru_cell", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* b = bias ? bias->data_as<T>() : nullptr;
        parallel_for(N, grain(H), [&](int64_t s, int64_t e) {
            for (int64_t n = s; n < e; ++n) {
                const T *x = row<T>(xw, n, 3 * H), *w = row<T>(hw, n, 3 * H), *hp = row<T>(h_prev, n, H);
                T *a = act->data_as<T>() + n * 4 * H, *hn = h->data_as<T>() + n * H;
                for (int64_t j = 0; j < H; ++j) gru_cell_forward(x, w, b, hp, a, hn, H, j);
            }
        });
    });
}

void gru_cell_backward(const Tensor& grad_xw, const Tensor& grad_hw, const Tensor& grad_h_direct, const Tensor& grad_h,
                       const Tensor& grad_h2, const Tensor& grad_h3, const Tensor& act, const Tensor& h_prev)
{
    const int64_t N = grad_h->shape[0], H = grad_h->shape[1];
    dispatch_floating(act->dtype, "gru_cell_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        parallel_for(N, grain(H), [&](int64_t s, int64_t e) {
            for (int64_t n = s; n < e; ++n) {
                const T *a = row<T>(act, n, 4 * H), *hp = row<T>(h_prev, n, H);
                const T *dh = row<T>(grad_h, n, H), *dh2 = row<T>(grad_h2, n, H), *dh3 = row<T>(grad_h3, n, H);
                T* dx = grad_xw->data_as<T>() + n * 3 * H;
                T* dw = grad_hw->data_as<T>() + n * 3 * H;
                T* dd = grad_h_direct->data_as<T>() + n * H;
                for (int64_t j = 0; j < H; ++j) gru_cell_backward_at(a, hp, dh, dh2, dh3, dx, dw, dd, H, j);
            }
        });
    });
}

}  // namespace minitorch::cpu
