// lstm_cell.cpp — CPU kernels of the fused LSTM cell (one step, forward and backward);
// the formulas are in rnn_math.h, shared with cuda/lstm_cell.cu.
#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/rnn_math.h"

namespace minitorch::cpu {

void lstm_cell(const Tensor& h, const Tensor& c, const Tensor& act, const Tensor& gates, const Tensor& c_prev)
{
    const int64_t N = h->shape[0], H = h->shape[1];
    dispatch_floating(gates->dtype, "lstm_cell", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *g = gates->data_as<T>(), *cp = c_prev->data_as<T>();
        T *a = act->data_as<T>(), *cn = c->data_as<T>(), *hn = h->data_as<T>();
        parallel_for(N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(8 * H, 1)), [&](int64_t b, int64_t e) {
            for (int64_t n = b; n < e; ++n)
                for (int64_t j = 0; j < H; ++j)
                    lstm_cell_forward(g + n * 4 * H, cp + n * H, a + n * 4 * H, cn + n * H, hn + n * H, H, j);
        });
    });
}

void lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c_prev, const Tensor& grad_h,
                        const Tensor& grad_c, const Tensor& act, const Tensor& c_prev, const Tensor& c)
{
    const int64_t N = c->shape[0], H = c->shape[1];
    dispatch_floating(act->dtype, "lstm_cell_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *a = act->data_as<T>(), *cp = c_prev->data_as<T>(), *cn = c->data_as<T>();
        const T *dh = grad_h->data_as<T>(), *dc = grad_c->data_as<T>();
        T* dg = grad_gates->data_as<T>();
        T* dcp = grad_c_prev ? grad_c_prev->data_as<T>() : nullptr;
        parallel_for(N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(8 * H, 1)), [&](int64_t b, int64_t e) {
            for (int64_t n = b; n < e; ++n)
                for (int64_t j = 0; j < H; ++j)
                    lstm_cell_backward_at(a + n * 4 * H, cp + n * H, cn + n * H, dh + n * H, dc + n * H,
                                          dg + n * 4 * H, dcp ? dcp + n * H : nullptr, H, j);
        });
    });
}

}  // namespace minitorch::cpu
