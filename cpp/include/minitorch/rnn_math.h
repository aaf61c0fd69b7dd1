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
#pragma once
#include <math.h>

#include <cstdint>

#include "minitorch/elementwise_math.h"

namespace minitorch {

template <class T>
MT_HOST_DEVICE inline T lstm_sigmoid(T x)  // the stable form of the sigmoid op (elementwise_math.h)
{
    return x >= T(0) ? T(1) / (T(1) + math_exp(-x)) : math_exp(x) / (T(1) + math_exp(x));
}

// One position j of sample n: gates and act rows are (4H,), the rest (H,).
template <class T>
MT_HOST_DEVICE inline void lstm_cell_forward(const T* gates, const T* c_prev, T* act, T* c, T* h, int64_t H,
                                             int64_t j)
{
    const T i = lstm_sigmoid(gates[j]), f = lstm_sigmoid(gates[H + j]);
    const T g = math_tanh(gates[2 * H + j]), o = lstm_sigmoid(gates[3 * H + j]);
    act[j] = i, act[H + j] = f, act[2 * H + j] = g, act[3 * H + j] = o;
    c[j] = f * c_prev[j] + i * g;
    h[j] = o * math_tanh(c[j]);
}

// The backward at position j, given tc = tanh(c[j]) (the CPU computes a row's tanh(c) at once).
template <class T>
MT_HOST_DEVICE inline void lstm_cell_backward_tc(const T* act, const T* c_prev, T tc, const T* dh, const T* dc,
                                                 T* dgates, T* dc_prev, int64_t H, int64_t j)
{
    const T i = act[j], f = act[H + j], g = act[2 * H + j], o = act[3 * H + j];
    const T dct = dc[j] + dh[j] * o * (T(1) - tc * tc);
    dgates[j] = dct * g * i * (T(1) - i);
    dgates[H + j] = dct * c_prev[j] * f * (T(1) - f);
    dgates[2 * H + j] = dct * i * (T(1) - g * g);
    dgates[3 * H + j] = dh[j] * tc * o * (T(1) - o);
    if (dc_prev) dc_prev[j] = dct * f;
}

template <class T>
MT_HOST_DEVICE inline void lstm_cell_backward_at(const T* act, const T* c_prev, const T* c, const T* dh, const T* dc,
                                                 T* dgates, T* dc_prev, int64_t H, int64_t j)
{
    lstm_cell_backward_tc(act, c_prev, math_tanh(c[j]), dh, dc, dgates, dc_prev, H, j);
}

}  // namespace minitorch
