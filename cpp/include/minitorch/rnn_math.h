// rnn_math.h — what the fused LSTM cell computes on one (sample, unit) position, written
// once for the CPU kernels (cpu/lstm_cell.cpp) and the CUDA kernels (cuda/lstm_cell.cu).
//
// Forward, from the gate pre-activations (PyTorch's order i, f, g, o):
//   i = sigmoid(.), f = sigmoid(.), g = tanh(.), o = sigmoid(.)
//   c = f * c_prev + i * g,   h = o * tanh(c)
// Backward, with dh, dc the gradients arriving at h and c (c feeds h and the next step):
//   dc_total = dc + dh * o * (1 - tanh(c)^2)
//   di = dc_total * g * i (1 - i)        df = dc_total * c_prev * f (1 - f)
//   dg = dc_total * i * (1 - g^2)        do = dh * tanh(c) * o (1 - o)
//   dc_prev = dc_total * f
// Inside a whole LSTM layer (ops/rnn.cpp) the pre-activations come in two parts, the input
// projection x W_ih^T + b and the recurrent h W_hh^T, and dh in two parts, from the layer's
// output and from the next step: each pair is added here, in registers, instead of by a
// separate elementwise kernel per step. A null second part counts as zero.
#pragma once
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "minitorch/elementwise_math.h"
#include "minitorch/half.h"

namespace minitorch {

// The type an element of T is computed in: float for float16 / bfloat16 (read and written as
// 16 bits: the CUDA kernels take them directly), T itself otherwise.
template <class T>
using RnnCompute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class A>
MT_HOST_DEVICE inline A lstm_sigmoid(A x)  // the stable form of the sigmoid op (elementwise_math.h)
{
    return x >= A(0) ? A(1) / (A(1) + math_exp(-x)) : math_exp(x) / (A(1) + math_exp(x));
}

// a[k] + b[k] in the compute type; b may be null.
template <class T>
MT_HOST_DEVICE inline RnnCompute<T> lstm_sum(const T* a, const T* b, int64_t k)
{
    using A = RnnCompute<T>;
    return b ? A(a[k]) + A(b[k]) : A(a[k]);
}

// One position j of sample n: gates, gates2 and act rows are (4H,), the rest (H,).
template <class T>
MT_HOST_DEVICE inline void lstm_cell_forward(const T* gates, const T* gates2, const T* c_prev, T* act, T* c, T* h,
                                             int64_t H, int64_t j)
{
    using A = RnnCompute<T>;
    const A i = lstm_sigmoid(lstm_sum(gates, gates2, j)), f = lstm_sigmoid(lstm_sum(gates, gates2, H + j));
    const A g = math_tanh(lstm_sum(gates, gates2, 2 * H + j)), o = lstm_sigmoid(lstm_sum(gates, gates2, 3 * H + j));
    act[j] = T(i), act[H + j] = T(f), act[2 * H + j] = T(g), act[3 * H + j] = T(o);
    const A cj = f * A(c_prev[j]) + i * g;
    c[j] = T(cj);
    h[j] = T(o * math_tanh(cj));
}

// The backward at position j, given tc = tanh(c[j]) (the CPU computes a row's tanh(c) at once).
// dh2 may be null; dc_prev may be dc itself (each position reads its dc before writing).
template <class T>
MT_HOST_DEVICE inline void lstm_cell_backward_tc(const T* act, const T* c_prev, RnnCompute<T> tc, const T* dh,
                                                 const T* dh2, const T* dc, T* dgates, T* dc_prev, int64_t H,
                                                 int64_t j)
{
    using A = RnnCompute<T>;
    const A i = A(act[j]), f = A(act[H + j]), g = A(act[2 * H + j]), o = A(act[3 * H + j]);
    const A dhj = lstm_sum(dh, dh2, j);
    const A dct = A(dc[j]) + dhj * o * (A(1) - tc * tc);
    dgates[j] = T(dct * g * i * (A(1) - i));
    dgates[H + j] = T(dct * A(c_prev[j]) * f * (A(1) - f));
    dgates[2 * H + j] = T(dct * i * (A(1) - g * g));
    dgates[3 * H + j] = T(dhj * tc * o * (A(1) - o));
    if (dc_prev) dc_prev[j] = T(dct * f);
}

template <class T>
MT_HOST_DEVICE inline void lstm_cell_backward_at(const T* act, const T* c_prev, const T* c, const T* dh, const T* dh2,
                                                 const T* dc, T* dgates, T* dc_prev, int64_t H, int64_t j)
{
    lstm_cell_backward_tc(act, c_prev, math_tanh(RnnCompute<T>(c[j])), dh, dh2, dc, dgates, dc_prev, H, j);
}

}  // namespace minitorch
