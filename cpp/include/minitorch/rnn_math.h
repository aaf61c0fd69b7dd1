// rnn_math.h — what the fused LSTM and GRU cells compute on one (sample, unit) position,
// written once for the CPU kernels (cpu/lstm_cell.cpp, cpu/gru_cell.cpp) and the CUDA
// kernels (cuda/lstm_cell.cu, cuda/gru_cell.cu).
//
// LSTM forward, from the gate pre-activations (PyTorch's order i, f, g, o):
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
//
// GRU (PyTorch's gate order r, z, n; xw = x W_ih^T + b_ih, hw = h W_hh^T, b = b_hh):
//   r = sigmoid(xw_r + hw_r + b_r),  z = sigmoid(xw_z + hw_z + b_z)
//   hn = hw_n + b_n,  n = tanh(xw_n + r * hn),  h' = (1 - z) * n + z * h
// Backward, with dh' the gradient at h' (the sum of up to three parts, as above):
//   dn = dh' (1 - z) (1 - n^2)      dz = dh' (h - n) z (1 - z)      dr = dn hn r (1 - r)
//   d xw = (dr, dz, dn)             d hw = (dr, dz, dn r)           dh (direct) = dh' z
// (d hw then reaches h through W_hh: one GEMM.)
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

// a[k] + b[k] + c[k] in the compute type; b and c may be null.
template <class T>
MT_HOST_DEVICE inline RnnCompute<T> rnn_sum3(const T* a, const T* b, const T* c, int64_t k)
{
    return c ? lstm_sum(a, b, k) + RnnCompute<T>(c[k]) : lstm_sum(a, b, k);
}

// One GRU position j: xw, hw rows (3H,), bias (3H,) or null, act row (4H,) = r, z, n, hn.
template <class T>
MT_HOST_DEVICE inline void gru_cell_forward(const T* xw, const T* hw, const T* bias, const T* h_prev, T* act, T* h,
                                            int64_t H, int64_t j)
{
    using A = RnnCompute<T>;
    const A r = lstm_sigmoid(rnn_sum3(xw, hw, bias, j)), z = lstm_sigmoid(rnn_sum3(xw, hw, bias, H + j));
    const A hn = lstm_sum(hw, bias, 2 * H + j);
    const A n = math_tanh(A(xw[2 * H + j]) + r * hn);
    act[j] = T(r), act[H + j] = T(z), act[2 * H + j] = T(n), act[3 * H + j] = T(hn);
    h[j] = T((A(1) - z) * n + z * A(h_prev[j]));
}

// Its backward at j: dh' = dh + dh2 + dh3 (dh2, dh3 may be null; dh_direct may be dh3 itself:
// each position reads before it writes).
template <class T>
MT_HOST_DEVICE inline void gru_cell_backward_at(const T* act, const T* h_prev, const T* dh, const T* dh2,
                                                const T* dh3, T* dxw, T* dhw, T* dh_direct, int64_t H, int64_t j)
{
    using A = RnnCompute<T>;
    const A r = A(act[j]), z = A(act[H + j]), n = A(act[2 * H + j]), hn = A(act[3 * H + j]);
    const A d = rnn_sum3(dh, dh2, dh3, j);
    const A dn = d * (A(1) - z) * (A(1) - n * n);
    const A dz = d * (A(h_prev[j]) - n) * z * (A(1) - z);
    const A dr = dn * hn * r * (A(1) - r);
    dxw[j] = T(dr), dxw[H + j] = T(dz), dxw[2 * H + j] = T(dn);
    dhw[j] = T(dr), dhw[H + j] = T(dz), dhw[2 * H + j] = T(dn * r);
    dh_direct[j] = T(d * z);
}

}  // namespace minitorch
