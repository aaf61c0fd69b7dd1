// lstm_cell.cpp — CPU kernels of the fused LSTM cell (one step, forward and backward);
// the formulas are in rnn_math.h, shared with cuda/lstm_cell.cu.
//
// The transcendental parts run on whole spans of a sample's row through the SIMD math
// (vector_math.h): the gate row (4H) is i | f | g | o, so sigmoid covers i and f in one
// span and o in another, tanh covers g, and tanh(c) is one more span. The rest is plain
// loops the compiler vectorizes. Without SIMD math (has_vector_map false: another CPU, or
// MINITORCH_CPU_CAPABILITY=default) each position takes rnn_math.h's scalar formulas.
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/rnn_math.h"
#include "minitorch/vector_math.h"

namespace minitorch::cpu {

namespace {

template <class T>
bool simd_ok()
{
    return has_vector_map<T>(UnaryOp::Sigmoid) && has_vector_map<T>(UnaryOp::Tanh);
}

int64_t grain(int64_t H) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(8 * H, 1)); }

}  // namespace

void lstm_cell(const Tensor& h, const Tensor& c, const Tensor& act, const Tensor& gates, const Tensor& gates2,
               const Tensor& c_prev)
{
    const int64_t N = h->shape[0], H = h->shape[1];
    dispatch_floating(gates->dtype, "lstm_cell", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *g = gates->data_as<T>(), *g2 = gates2 ? gates2->data_as<T>() : nullptr, *cp = c_prev->data_as<T>();
        T *a = act->data_as<T>(), *cn = c->data_as<T>(), *hn = h->data_as<T>();
        const bool simd = simd_ok<T>();
        parallel_for(N, grain(H), [&](int64_t b, int64_t e) {
            std::vector<T> tc(simd ? H : 0);
            for (int64_t n = b; n < e; ++n) {
                const T *gr = g + n * 4 * H, *g2r = g2 ? g2 + n * 4 * H : nullptr, *cpr = cp + n * H;
                T *ar = a + n * 4 * H, *cr = cn + n * H, *hr = hn + n * H;
                if (!simd) {
                    for (int64_t j = 0; j < H; ++j) lstm_cell_forward(gr, g2r, cpr, ar, cr, hr, H, j);
                    continue;
                }
                if (g2r) {  // the two addends summed into act, then the activations in place
                    for (int64_t k = 0; k < 4 * H; ++k) ar[k] = gr[k] + g2r[k];
                    gr = ar;
                }
                vector_map(UnaryOp::Sigmoid, ar, gr, 2 * H);                // i, f
                vector_map(UnaryOp::Tanh, ar + 2 * H, gr + 2 * H, H);       // g
                vector_map(UnaryOp::Sigmoid, ar + 3 * H, gr + 3 * H, H);    // o
                for (int64_t j = 0; j < H; ++j) cr[j] = ar[H + j] * cpr[j] + ar[j] * ar[2 * H + j];
                vector_map(UnaryOp::Tanh, tc.data(), cr, H);
                for (int64_t j = 0; j < H; ++j) hr[j] = ar[3 * H + j] * tc[j];
            }
        });
    });
}

void lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c_prev, const Tensor& grad_h,
                        const Tensor& grad_h2, const Tensor& grad_c, const Tensor& act, const Tensor& c_prev,
                        const Tensor& c)
{
    const int64_t N = c->shape[0], H = c->shape[1];
    dispatch_floating(act->dtype, "lstm_cell_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *a = act->data_as<T>(), *cp = c_prev->data_as<T>(), *cn = c->data_as<T>();
        const T *dh = grad_h->data_as<T>(), *dh2 = grad_h2 ? grad_h2->data_as<T>() : nullptr;
        const T* dc = grad_c->data_as<T>();
        T* dg = grad_gates->data_as<T>();
        T* dcp = grad_c_prev ? grad_c_prev->data_as<T>() : nullptr;
        const bool simd = simd_ok<T>();
        parallel_for(N, grain(H), [&](int64_t b, int64_t e) {
            std::vector<T> tc(simd ? H : 0);
            for (int64_t n = b; n < e; ++n) {
                const T *ar = a + n * 4 * H, *cpr = cp + n * H, *cr = cn + n * H, *dhr = dh + n * H, *dcr = dc + n * H;
                const T* dh2r = dh2 ? dh2 + n * H : nullptr;
                T *dgr = dg + n * 4 * H, *dcpr = dcp ? dcp + n * H : nullptr;
                if (!simd) {
                    for (int64_t j = 0; j < H; ++j)
                        lstm_cell_backward_at(ar, cpr, cr, dhr, dh2r, dcr, dgr, dcpr, H, j);
                    continue;
                }
                vector_map(UnaryOp::Tanh, tc.data(), cr, H);
                for (int64_t j = 0; j < H; ++j) lstm_cell_backward_tc(ar, cpr, tc[j], dhr, dh2r, dcr, dgr, dcpr, H, j);
            }
        });
    });
}

}  // namespace minitorch::cpu
