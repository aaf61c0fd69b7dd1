// elementwise_math.h — what each unary / binary op computes on one element, written
// once for the CPU kernels and the CUDA kernels (marked __host__ __device__ under nvcc),
// so both devices give the same answers: NaN propagation, integer powers, bool rules.
#pragma once
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "minitorch/kernels.h"

#if defined(__CUDACC__)
#define MT_HOST_DEVICE __host__ __device__
#else
#define MT_HOST_DEVICE
#endif

namespace minitorch {

// C math by element type: float calls the f-suffixed function (also on the GPU).
template <class T> MT_HOST_DEVICE inline T math_exp(T x) { if constexpr (std::is_same_v<T, float>) return expf(x); else return exp(x); }
template <class T> MT_HOST_DEVICE inline T math_log(T x) { if constexpr (std::is_same_v<T, float>) return logf(x); else return log(x); }
template <class T> MT_HOST_DEVICE inline T math_sqrt(T x) { if constexpr (std::is_same_v<T, float>) return sqrtf(x); else return sqrt(x); }
template <class T> MT_HOST_DEVICE inline T math_tanh(T x) { if constexpr (std::is_same_v<T, float>) return tanhf(x); else return tanh(x); }
template <class T> MT_HOST_DEVICE inline T math_pow(T x, T y) { if constexpr (std::is_same_v<T, float>) return powf(x, y); else return pow(x, y); }

template <class T>
MT_HOST_DEVICE inline bool is_nan(T x)
{
    if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
}

// Element i of linspace(start, end, n), n >= 2: counted from the nearer end, so the
// first and last values are start and end exactly.
MT_HOST_DEVICE inline double linspace_value(double start, double end, int64_t n, int64_t i)
{
    const double step = (end - start) / double(n - 1);
    return i < n / 2 ? start + double(i) * step : end - double(n - 1 - i) * step;
}

// x ** e for integers by repeated squaring (exact, no trip through double).
MT_HOST_DEVICE inline int64_t int_pow(int64_t x, int64_t e)
{
    if (e < 0) return x == 1 ? 1 : (x == -1 ? (e % 2 ? -1 : 1) : 0);
    int64_t r = 1;
    while (e) {
        if (e & 1) r *= x;
        x *= x;
        e >>= 1;
    }
    return r;
}

template <class T>
MT_HOST_DEVICE inline T unary_op(UnaryOp op, T x)
{
    if constexpr (std::is_same_v<T, bool>) {
        return op == UnaryOp::LogicalNot ? !x : x;  // only the ops that make sense on bool reach here
    } else {
        switch (op) {
            case UnaryOp::Neg: return -x;
            case UnaryOp::Abs: return x < T(0) ? -x : x;
            case UnaryOp::Relu: return x < T(0) ? T(0) : x;  // NaN stays NaN
            case UnaryOp::LogicalNot: return static_cast<T>(x == T(0));
            case UnaryOp::Sign: return static_cast<T>((T(0) < x) - (x < T(0)));
            default: break;
        }
        if constexpr (std::is_floating_point_v<T>) {
            switch (op) {
                case UnaryOp::Exp: return math_exp(x);
                case UnaryOp::Log: return math_log(x);
                case UnaryOp::Sqrt: return math_sqrt(x);
                case UnaryOp::Tanh: return math_tanh(x);
                // Stable for large |x|: exp never overflows into inf/inf.
                case UnaryOp::Sigmoid:
                    return x >= T(0) ? T(1) / (T(1) + math_exp(-x)) : math_exp(x) / (T(1) + math_exp(x));
                default: break;
            }
        }
        return x;
    }
}

template <class T>
MT_HOST_DEVICE inline T binary_op(BinaryOp op, T a, T b)
{
    switch (op) {
        case BinaryOp::Add: return static_cast<T>(a + b);
        case BinaryOp::Sub: return static_cast<T>(a - b);
        case BinaryOp::Mul: return static_cast<T>(a * b);
        case BinaryOp::Div: return static_cast<T>(a / b);  // floating only (ops cast first)
        case BinaryOp::Pow:
            if constexpr (std::is_floating_point_v<T>) return math_pow(a, b);
            else if constexpr (std::is_same_v<T, bool>) return a || !b;
            else return int_pow(a, b);
        case BinaryOp::Maximum: return is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b));
        case BinaryOp::Minimum: return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b));
        default: return T(0);
    }
}

template <class T>
MT_HOST_DEVICE inline bool compare_op(BinaryOp op, T a, T b)
{
    switch (op) {
        case BinaryOp::Eq: return a == b;
        case BinaryOp::Ne: return a != b;
        case BinaryOp::Lt: return a < b;
        case BinaryOp::Le: return a <= b;
        case BinaryOp::Gt: return a > b;
        case BinaryOp::Ge: return a >= b;
        default: return false;
    }
}

// check_index's rule for one value v (see kernels.h), for the CPU and CUDA kernels:
// an ignored class target passes through, negatives wrap (+size) where allowed.
// Returns false for a value out of range.
MT_HOST_DEVICE inline bool resolve_index(int64_t v, const IndexCheck& c, int64_t& out)
{
    if (c.is_target && v == c.ignore) {
        out = v;
        return true;
    }
    if (v < (c.wrap_negative ? -c.size : 0) || v >= c.size) return false;
    out = v < 0 ? v + c.size : v;
    return true;
}

// The input pixels under output pixel (oh, ow)'s pooling window, skipping padding:
// calls f(ih * W + iw), the pixel's flat position in its plane, in row-major order,
// until f returns false. One walk of the window for the CPU and CUDA pooling kernels.
template <class F>
MT_HOST_DEVICE inline void for_each_in_window(const Window2d& w, int64_t oh, int64_t ow, F&& f)
{
    for (int64_t kh = 0; kh < w.KH; ++kh) {
        const int64_t ih = oh * w.stride_h - w.pad_h + kh * w.dil_h;
        if (ih < 0 || ih >= w.H) continue;
        for (int64_t kw = 0; kw < w.KW; ++kw) {
            const int64_t iw = ow * w.stride_w - w.pad_w + kw * w.dil_w;
            if (iw >= 0 && iw < w.W && !f(ih * w.W + iw)) return;
        }
    }
}

// Max pooling of one output pixel: the position of the window's largest value (the
// first NaN wins, as in PyTorch; padding never does), with the value in `best`; -1
// (and `best` untouched) when the window lies wholly in the padding.
template <class T>
MT_HOST_DEVICE inline int64_t max_in_window(const T* plane, const Window2d& w, int64_t oh, int64_t ow, T& best)
{
    int64_t best_i = -1;
    for_each_in_window(w, oh, ow, [&](int64_t i) {
        const T v = plane[i];
        if (best_i < 0 || v > best || is_nan(v)) best = v, best_i = i;
        return !is_nan(v);
    });
    return best_i;
}

template <class T>
MT_HOST_DEVICE inline T sum_in_window(const T* plane, const Window2d& w, int64_t oh, int64_t ow)
{
    T acc = 0;
    for_each_in_window(w, oh, ow, [&](int64_t i) { acc += plane[i]; return true; });
    return acc;
}

// Average pooling divides by the part of the window inside the *padded* input (padding
// counts, as in PyTorch's count_include_pad=True); with ceil_mode the last window can
// hang past even the padding, and that part does not count.
MT_HOST_DEVICE inline int64_t pool_window_size(const Window2d& w, int64_t oh, int64_t ow)
{
    const int64_t h0 = oh * w.stride_h - w.pad_h, w0 = ow * w.stride_w - w.pad_w;
    const int64_t h1 = h0 + w.KH < w.H + w.pad_h ? h0 + w.KH : w.H + w.pad_h;
    const int64_t w1 = w0 + w.KW < w.W + w.pad_w ? w0 + w.KW : w.W + w.pad_w;
    const int64_t n = (h1 - h0) * (w1 - w0);
    return n < 1 ? 1 : n;
}

}  // namespace minitorch
