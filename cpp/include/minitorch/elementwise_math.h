// elementwise_math.h — what each unary / binary op computes on one element, written
// once for the CPU kernels and the CUDA kernels (marked __host__ __device__ under nvcc),
// so both devices give the same answers: NaN propagation, integer powers, bool rules.
#pragma once
#include <math.h>

#include <cstdint>
#include <type_traits>

#include "minitorch/kernels.h"
#include "minitorch/op_list.h"

#if defined(__CUDACC__)
#define MT_HOST_DEVICE __host__ __device__
#else
#define MT_HOST_DEVICE
#endif

// unary_op and binary_op are big switches; the CPU loops call them with the op as a
// compile-time constant so that the switch folds away and the loop vectorizes. That needs
// them inlined, which GCC declines for a function this size: without this, relu, neg,
// abs and every other fixed-op loop made an out-of-line call per element (3 ns instead of
// 0.3 ns per float).
#if defined(__CUDACC__)
#define MT_ALWAYS_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define MT_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MT_ALWAYS_INLINE inline
#endif

namespace minitorch {

// C math by element type: float calls the f-suffixed function (also on the GPU).
#define MT_MATH_1(fn)                                                                   \
    template <class T> MT_HOST_DEVICE inline T math_##fn(T x)                          \
    {                                                                                   \
        if constexpr (std::is_same_v<T, float>) return fn##f(x); else return fn(x);     \
    }
#define MT_MATH_2(fn)                                                                   \
    template <class T> MT_HOST_DEVICE inline T math_##fn(T x, T y)                     \
    {                                                                                   \
        if constexpr (std::is_same_v<T, float>) return fn##f(x, y); else return fn(x, y); \
    }
MT_MATH_1(exp) MT_MATH_1(expm1) MT_MATH_1(log) MT_MATH_1(log1p) MT_MATH_1(log2) MT_MATH_1(sqrt) MT_MATH_1(tanh)
MT_MATH_1(sin) MT_MATH_1(cos) MT_MATH_1(tan) MT_MATH_1(sinh) MT_MATH_1(erf) MT_MATH_1(fabs)
MT_MATH_1(cosh) MT_MATH_1(asin) MT_MATH_1(acos) MT_MATH_1(atan) MT_MATH_1(asinh) MT_MATH_1(acosh) MT_MATH_1(atanh)
MT_MATH_1(log10) MT_MATH_1(exp2) MT_MATH_1(erfc) MT_MATH_1(lgamma)
MT_MATH_1(floor) MT_MATH_1(ceil) MT_MATH_1(trunc) MT_MATH_1(rint)
MT_MATH_2(pow) MT_MATH_2(fmod) MT_MATH_2(atan2)
#undef MT_MATH_1
#undef MT_MATH_2

template <class T>
MT_HOST_DEVICE inline bool is_nan(T x)
{
    if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
}

template <class T>
MT_HOST_DEVICE inline bool is_inf(T x)
{
    if constexpr (std::is_floating_point_v<T>) return x == T(INFINITY) || x == T(-INFINITY);
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

// Python's %: the result takes the divisor's sign (fmod takes the dividend's). For
// integers, x % 0 (and INT64_MIN % -1, which traps on x86) give 0 instead of a crash;
// the CPU op raises for a zero divisor before it gets here.
template <class T>
MT_HOST_DEVICE inline T remainder_of(T a, T b)
{
    if constexpr (std::is_floating_point_v<T>) {
        T r = math_fmod(a, b);
        return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
    } else if constexpr (std::is_same_v<T, bool>) {
        return false;  // bool % bool promotes in the op; never reached
    } else {
        if (b == 0 || b == -1) return 0;
        T r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
}

// Python's //: the quotient rounded down (toward -inf), as a // b and floor_divide give.
// Integers: x // 0 gives 0 (the CPU op raises first), and x // -1 is -x, computed without
// the division that traps for INT64_MIN on x86.
template <class T>
MT_HOST_DEVICE inline T floor_divide_of(T a, T b)
{
    if constexpr (std::is_floating_point_v<T>) {
        // Python's algorithm (so 1.0 // 0.1 is 9.0, as in NumPy and PyTorch, where
        // floor(1.0 / 0.1) would give 10): divide what is left after the remainder.
        if (b == T(0)) return a / b;
        T mod = math_fmod(a, b);
        T div = (a - mod) / b;
        if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
        if (div == T(0)) return copysign(T(0), a / b);
        T q = math_floor(div);
        return div - q > T(0.5) ? q + T(1) : q;
    } else if constexpr (std::is_same_v<T, bool>) {
        return false;  // bool // bool is refused by the op (NoBool); never reached
    } else {
        if (b == 0) return 0;
        if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
        T q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
}

template <class T>
MT_HOST_DEVICE inline T fmod_of(T a, T b)
{
    if constexpr (std::is_floating_point_v<T>) return math_fmod(a, b);
    else if constexpr (std::is_same_v<T, bool>) return false;
    else return (b == 0 || b == -1) ? T(0) : T(a % b);
}

// ---- special functions the C library lacks (computed in double, for every T) ----

// The x with erf(x) = y and erfc(|x|) = tail, both given exactly by the caller (erfinv,
// erfcinv). Start from Giles' polynomial fit of erfinv (M. Giles, "Approximating the
// erfinv function", GPU Computing Gems, 2010: about 7 correct digits), then polish with
// Newton steps, each doubling the digits. Near the middle (tail > 1/2) the steps solve
// erf(x) = y; in the tails they solve log erfc(|x|) = log(tail) instead, which stays well
// conditioned where erf(x) has rounded to +-1 and erfc(x) is tiny.
MT_HOST_DEVICE inline double inverse_erf(double y, double tail)
{
    double w = -log(tail * (2.0 - tail)), p;  // -log((1 - y)(1 + y)), from the exact tail
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    const double two_over_sqrt_pi = 1.1283791670955126;
    if (tail > 0.5) {  // the middle: Newton on erf(x) - y, derivative 2/sqrt(pi) e^(-x^2)
        double x = p * y;
        for (int step = 0; step < 2; ++step) x -= (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
        return x;
    }
    // a tail: a = |x| solves g(a) = log erfc(a) - log(tail), g'(a) = -2/sqrt(pi) e^(-a^2) / erfc(a).
    // Far out (tail < e^-20, beyond the fit's range) start from erfc(a) ~ e^(-a^2) / (a sqrt(pi)),
    // i.e. a^2 ~ L - log(L) / 2 - log(pi) / 2 with L = -log(tail).
    const double target = log(tail), L = -target;
    double a = L > 20.0 ? sqrt(L - 0.5 * log(L) - 0.5723649429247001) : fabs(p * y);
    for (int step = 0; step < 4; ++step) {
        const double c = erfc(a), e = exp(-a * a);
        if (c == 0.0 || e == 0.0) break;  // past double's range (tail near the smallest subnormal)
        a += (log(c) - target) * c / (two_over_sqrt_pi * e);
    }
    return y > 0.0 ? a : -a;
}

// erfinv(y): +-inf at +-1, NaN outside [-1, 1]. 1 - |y| is exact where the tail branch
// runs (|y| >= 1/2: Sterbenz), and y itself is used in the middle.
MT_HOST_DEVICE inline double erfinv_double(double y)
{
    if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? INFINITY : (y == -1.0 ? -INFINITY : NAN);
    return inverse_erf(y, 1.0 - fabs(y));
}

// erfcinv(q) = erfinv(1 - q), for q in (0, 2), from q itself: the tail is q (or 2 - q),
// exact, so tiny q keeps every digit (1 - q would round to 1); +inf at 0, -inf at 2.
MT_HOST_DEVICE inline double erfcinv_double(double q)
{
    if (!(q > 0.0 && q < 2.0)) return q == 0.0 ? INFINITY : (q == 2.0 ? -INFINITY : NAN);
    return inverse_erf(1.0 - q, q < 1.0 ? q : 2.0 - q);
}

// ndtri(p): the x with Phi(x) = p (the standard normal's quantile), -sqrt(2) erfcinv(2p):
// 2p is exact, so the left tail keeps every digit of p (sqrt(2) erfinv(2p - 1) would not).
MT_HOST_DEVICE inline double ndtri_double(double p) { return -1.4142135623730951 * erfcinv_double(2.0 * p); }

// digamma(x) = d/dx log Gamma(x). Shift x up to 10 with psi(x) = psi(x + 1) - 1/x, then
// the asymptotic series ln x - 1/(2x) - sum B_2k / (2k x^2k) (error ~1e-14 there).
// Negative x by reflection, psi(x) = psi(1 - x) - pi / tan(pi x): NaN at the poles
// (negative integers), -inf at +0 and +inf at -0, as PyTorch's.
MT_HOST_DEVICE inline double digamma_double(double x)
{
    const double pi = 3.141592653589793;
    if (x != x) return x;
    if (x == 0.0) return signbit(x) ? INFINITY : -INFINITY;
    double shift = 0.0;
    if (x < 0.0) {
        if (x == floor(x)) return NAN;
        shift = -pi / tan(pi * x);
        x = 1.0 - x;
    }
    for (; x < 10.0; x += 1.0) shift -= 1.0 / x;
    const double r = 1.0 / (x * x);
    const double series =
        r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))));
    return shift + log(x) - 0.5 / x - series;
}

// trigamma(x) = d/dx digamma(x) (digamma's gradient): psi1(x) = psi1(x + 1) + 1/x^2 up to
// 10, then 1/x + 1/(2x^2) + sum B_2k / x^(2k+1) (to 5/(66 x^11)); negative x by psi1(x) + psi1(1 - x) =
// pi^2 / sin^2(pi x); +inf at the poles (0 and the negative integers).
MT_HOST_DEVICE inline double trigamma_double(double x)
{
    const double pi = 3.141592653589793;
    if (x != x) return x;
    if (x <= 0.0 && x == floor(x)) return INFINITY;
    double sign = 1.0, shift = 0.0;
    if (x < 0.0) {
        const double s = sin(pi * x);
        shift = pi * pi / (s * s);
        sign = -1.0;
        x = 1.0 - x;
    }
    double sum = 0.0;
    for (; x < 10.0; x += 1.0) sum += 1.0 / (x * x);
    const double r = 1.0 / (x * x);
    const double series =
        (1.0 + 0.5 / x + r * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66)))))) / x;
    return shift + sign * (sum + series);
}

// ---- the fused activations of op_list.h: value and derivative on one element ----
// (op_list.h lists the formulas; what T is: float or double, 16-bit floats compute in float)

// Stable for large |x|: exp never overflows into inf/inf.
template <class T>
MT_HOST_DEVICE inline T sigmoid_of(T x)
{
    return x >= T(0) ? T(1) / (T(1) + math_exp(-x)) : math_exp(x) / (T(1) + math_exp(x));
}

// GELU, exact: x Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2.
template <class T>
MT_HOST_DEVICE inline T gelu_of(T x)
{
    return T(0.5) * x * (T(1) + math_erf(x * T(0.70710678118654752440)));
}
// Phi(x) + x phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi).
template <class T>
MT_HOST_DEVICE inline T gelu_derivative(T x)
{
    const T cdf = T(0.5) * (T(1) + math_erf(x * T(0.70710678118654752440)));
    const T pdf = math_exp(T(-0.5) * x * x) * T(0.39894228040143267794);
    return cdf + x * pdf;
}

// GELU, tanh approximation: x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
constexpr double kSqrt2OverPi = 0.79788456080286535588, kGeluTanhCubic = 0.044715;
template <class T>
MT_HOST_DEVICE inline T gelu_tanh_of(T x)
{
    const T u = T(kSqrt2OverPi) * (x + T(kGeluTanhCubic) * x * x * x);
    return T(0.5) * x * (T(1) + math_tanh(u));
}
template <class T>
MT_HOST_DEVICE inline T gelu_tanh_derivative(T x)
{
    const T u = T(kSqrt2OverPi) * (x + T(kGeluTanhCubic) * x * x * x);
    const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluTanhCubic) * x * x);
    const T t = math_tanh(u);
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du;
}

// SiLU (swish): x sigmoid(x).
template <class T>
MT_HOST_DEVICE inline T silu_of(T x) { return x * sigmoid_of(x); }
template <class T>
MT_HOST_DEVICE inline T silu_derivative(T x)
{
    const T s = sigmoid_of(x);
    return s * (T(1) + x * (T(1) - s));
}

// Mish: x tanh(softplus(x)); softplus as max(x, 0) + log1p(exp(-|x|)), which never overflows.
template <class T>
MT_HOST_DEVICE inline T tanh_softplus(T x)
{
    return math_tanh((x > T(0) ? x : T(0)) + math_log1p(math_exp(-math_fabs(x))));
}
template <class T>
MT_HOST_DEVICE inline T mish_of(T x) { return x * tanh_softplus(x); }
template <class T>
MT_HOST_DEVICE inline T mish_derivative(T x)
{
    const T t = tanh_softplus(x);
    return t + x * sigmoid_of(x) * (T(1) - t * t);
}

// Hardswish and hardsigmoid: piecewise, with PyTorch's choices at the kinks x = -3 and 3.
template <class T>
MT_HOST_DEVICE inline T hardswish_of(T x)
{
    return x <= T(-3) ? T(0) : (x >= T(3) ? x : x * (x + T(3)) / T(6));
}
template <class T>
MT_HOST_DEVICE inline T hardswish_derivative(T x)
{
    return x < T(-3) ? T(0) : (x <= T(3) ? x / T(3) + T(0.5) : T(1));
}
template <class T>
MT_HOST_DEVICE inline T hardsigmoid_of(T x)
{
    return x <= T(-3) ? T(0) : (x >= T(3) ? T(1) : x / T(6) + T(0.5));
}
template <class T>
MT_HOST_DEVICE inline T hardsigmoid_derivative(T x)
{
    return (x > T(-3) && x < T(3)) ? T(1) / T(6) : T(0);
}

// Softplus with PyTorch's defaults (beta 1, threshold 20): x itself above 20, where
// log1p(exp(x)) equals x in float32 anyway; its derivative there is 1, else sigmoid(x),
// written z / (z + 1) with z = exp(x) as PyTorch's softplus_backward does.
template <class T>
MT_HOST_DEVICE inline T softplus_of(T x)
{
    return x > T(20) ? x : math_log1p(math_exp(x));
}
template <class T>
MT_HOST_DEVICE inline T softplus_derivative(T x)
{
    const T z = math_exp(x);
    return x > T(20) ? T(1) : z / (z + T(1));
}

// Leaky ReLU and ELU, whose parameter (slope, alpha) is the op's second input b: a number
// or, for PReLU, a learned tensor. A NaN x stays NaN (x > 0 is false: b * NaN).
template <class T>
MT_HOST_DEVICE inline T leaky_relu_of(T x, T slope) { return x > T(0) ? x : x * slope; }
template <class T>
MT_HOST_DEVICE inline T leaky_relu_derivative(T x, T slope) { return x > T(0) ? T(1) : slope; }
template <class T>
MT_HOST_DEVICE inline T elu_of(T x, T alpha) { return x > T(0) ? x : alpha * math_expm1(x); }
template <class T>
MT_HOST_DEVICE inline T elu_derivative(T x, T alpha) { return x > T(0) ? T(1) : alpha * math_exp(x); }

// The per-element losses (op_list.h). Binary cross-entropy of a probability p, each log
// clamped at -100 as PyTorch's (p = 0 or 1 costs 100, not inf), and its derivative in p,
// (p - y) / max(p (1 - p), 1e-12) (PyTorch's EPSILON); of a logit x, the stable form and
// sigmoid(x) - y; Huber's d^2 / 2 inside [-delta, delta], linear outside, and d clamped.
template <class T>
MT_HOST_DEVICE inline T clamped_log_of(T v)
{
    const T l = math_log(v);
    return l < T(-100) ? T(-100) : l;  // NaN stays NaN
}
template <class T>
MT_HOST_DEVICE inline T bce_of(T p, T y)
{
    T l1m = math_log1p(-p);
    l1m = l1m < T(-100) ? T(-100) : l1m;
    return (y - T(1)) * l1m - y * clamped_log_of(p);
}
template <class T>
MT_HOST_DEVICE inline T bce_derivative_of(T p, T y)
{
    const T q = (T(1) - p) * p;
    return (p - y) / (q > T(1e-12) ? q : T(1e-12));
}
template <class T>
MT_HOST_DEVICE inline T bce_with_logits_of(T x, T y)
{
    return (x > T(0) ? x : T(0)) - x * y + math_log1p(math_exp(-math_fabs(x)));
}
template <class T>
MT_HOST_DEVICE inline T bce_with_logits_derivative_of(T x, T y) { return sigmoid_of(x) - y; }
template <class T>
MT_HOST_DEVICE inline T huber_of(T d, T delta)
{
    const T m = math_fabs(d);
    return m <= delta ? T(0.5) * d * d : delta * (m - T(0.5) * delta);
}
template <class T>
MT_HOST_DEVICE inline T huber_derivative_of(T d, T delta) { return d < -delta ? -delta : (d > delta ? delta : d); }

// What each unary op computes on one element. The op has already promoted the input
// (exp of an int64 runs in float32) and refused the dtypes the op does not take, so the
// `if constexpr` branches for other types are never reached; they exist to compile.
// Bool-result ops (isnan, logical_not) return 0 or 1 in T; the kernel stores a bool.
template <class T>
MT_HOST_DEVICE MT_ALWAYS_INLINE T unary_op(UnaryOp op, T x)
{
    constexpr bool kFloat = std::is_floating_point_v<T>;
    switch (op) {
        case UnaryOp::Neg: return static_cast<T>(-x);
        case UnaryOp::Abs:  // fabs: |-0.0| is +0.0, and one instruction (no branch) per element
            if constexpr (kFloat) return math_fabs(x); else return x < T(0) ? static_cast<T>(-x) : x;
        case UnaryOp::Sign: return static_cast<T>((T(0) < x) - (x < T(0)));
        case UnaryOp::Relu: return x < T(0) ? T(0) : x;  // NaN stays NaN
        case UnaryOp::Exp: if constexpr (kFloat) return math_exp(x); else return x;
        case UnaryOp::Expm1: if constexpr (kFloat) return math_expm1(x); else return x;
        case UnaryOp::Log: if constexpr (kFloat) return math_log(x); else return x;
        case UnaryOp::Log1p: if constexpr (kFloat) return math_log1p(x); else return x;
        case UnaryOp::Log2: if constexpr (kFloat) return math_log2(x); else return x;
        case UnaryOp::Sqrt: if constexpr (kFloat) return math_sqrt(x); else return x;
        case UnaryOp::Rsqrt: if constexpr (kFloat) return T(1) / math_sqrt(x); else return x;
        case UnaryOp::Sigmoid: if constexpr (kFloat) return sigmoid_of(x); else return x;
        case UnaryOp::Tanh: if constexpr (kFloat) return math_tanh(x); else return x;
        case UnaryOp::Sin: if constexpr (kFloat) return math_sin(x); else return x;
        case UnaryOp::Cos: if constexpr (kFloat) return math_cos(x); else return x;
        case UnaryOp::Tan: if constexpr (kFloat) return math_tan(x); else return x;
        case UnaryOp::Sinh: if constexpr (kFloat) return math_sinh(x); else return x;
        case UnaryOp::Cosh: if constexpr (kFloat) return math_cosh(x); else return x;
        case UnaryOp::Asin: if constexpr (kFloat) return math_asin(x); else return x;
        case UnaryOp::Acos: if constexpr (kFloat) return math_acos(x); else return x;
        case UnaryOp::Atan: if constexpr (kFloat) return math_atan(x); else return x;
        case UnaryOp::Asinh: if constexpr (kFloat) return math_asinh(x); else return x;
        case UnaryOp::Acosh: if constexpr (kFloat) return math_acosh(x); else return x;
        case UnaryOp::Atanh: if constexpr (kFloat) return math_atanh(x); else return x;
        case UnaryOp::Erf: if constexpr (kFloat) return math_erf(x); else return x;
        case UnaryOp::Erfc: if constexpr (kFloat) return math_erfc(x); else return x;
        case UnaryOp::Erfinv: if constexpr (kFloat) return static_cast<T>(erfinv_double(x)); else return x;
        case UnaryOp::Log10: if constexpr (kFloat) return math_log10(x); else return x;
        case UnaryOp::Exp2: if constexpr (kFloat) return math_exp2(x); else return x;
        case UnaryOp::Lgamma: if constexpr (kFloat) return math_lgamma(x); else return x;
        case UnaryOp::Digamma: if constexpr (kFloat) return static_cast<T>(digamma_double(x)); else return x;
        case UnaryOp::Trigamma: if constexpr (kFloat) return static_cast<T>(trigamma_double(x)); else return x;
        case UnaryOp::Ndtri: if constexpr (kFloat) return static_cast<T>(ndtri_double(x)); else return x;
        case UnaryOp::Gelu: if constexpr (kFloat) return gelu_of(x); else return x;
        case UnaryOp::GeluTanh: if constexpr (kFloat) return gelu_tanh_of(x); else return x;
        case UnaryOp::Silu: if constexpr (kFloat) return silu_of(x); else return x;
        case UnaryOp::Mish: if constexpr (kFloat) return mish_of(x); else return x;
        case UnaryOp::Hardswish: if constexpr (kFloat) return hardswish_of(x); else return x;
        case UnaryOp::Hardsigmoid: if constexpr (kFloat) return hardsigmoid_of(x); else return x;
        case UnaryOp::Softplus: if constexpr (kFloat) return softplus_of(x); else return x;
        // Integers are already whole: floor/ceil/round/trunc of an int64 is itself.
        case UnaryOp::Floor: if constexpr (kFloat) return math_floor(x); else return x;
        case UnaryOp::Ceil: if constexpr (kFloat) return math_ceil(x); else return x;
        case UnaryOp::Round: if constexpr (kFloat) return math_rint(x); else return x;  // half to even
        case UnaryOp::Trunc: if constexpr (kFloat) return math_trunc(x); else return x;
        case UnaryOp::Frac: if constexpr (kFloat) return x - math_trunc(x); else return T(0);
        case UnaryOp::IsNan: return static_cast<T>(is_nan(x));
        case UnaryOp::IsInf: return static_cast<T>(is_inf(x));
        case UnaryOp::IsFinite: return static_cast<T>(!is_nan(x) && !is_inf(x));
        case UnaryOp::IsPosInf: return static_cast<T>(is_inf(x) && x > T(0));
        case UnaryOp::IsNegInf: return static_cast<T>(is_inf(x) && x < T(0));
        case UnaryOp::Signbit:  // the sign bit: true for -0.0 and for a NaN with it set
            if constexpr (kFloat) return static_cast<T>(signbit(x) != 0);
            else if constexpr (std::is_signed_v<T>) return static_cast<T>(x < T(0));
            else return T(0);
        case UnaryOp::LogicalNot: return static_cast<T>(x == T(0));
        case UnaryOp::BitwiseNot:
            if constexpr (std::is_same_v<T, bool>) return !x;
            else if constexpr (std::is_integral_v<T>) return static_cast<T>(~x);
            else return x;
    }
    return x;  // not reached: the switch covers every op (-Wswitch checks)
}

// What each binary op computes on one element (a and b already promoted to one dtype;
// comparisons and logical ops return 0 or 1 in T, and the kernel stores a bool).
template <class T>
MT_HOST_DEVICE MT_ALWAYS_INLINE T binary_op(BinaryOp op, T a, T b)
{
    constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
    constexpr bool kFloat = std::is_floating_point_v<T>;
    switch (op) {
        case BinaryOp::Add: return static_cast<T>(a + b);
        case BinaryOp::Sub: return static_cast<T>(a - b);
        case BinaryOp::Mul: return static_cast<T>(a * b);
        case BinaryOp::Div: if constexpr (kInt) return b == 0 ? T(0) : T(a / b); else return static_cast<T>(a / b);
        case BinaryOp::Pow:
            if constexpr (std::is_floating_point_v<T>) return math_pow(a, b);
            else if constexpr (std::is_same_v<T, bool>) return a || !b;
            else return int_pow(a, b);
        case BinaryOp::Maximum: return is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b));
        case BinaryOp::Minimum: return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b));
        case BinaryOp::Remainder: return remainder_of(a, b);
        case BinaryOp::Fmod: return fmod_of(a, b);
        case BinaryOp::FloorDivide: return floor_divide_of(a, b);
        case BinaryOp::Atan2: if constexpr (std::is_floating_point_v<T>) return math_atan2(a, b); else return a;
        case BinaryOp::ThresholdBackward: return b > T(0) ? a : T(0);
        // tanh's and sigmoid's backward from the output b = tanh(x) or sigmoid(x).
        case BinaryOp::TanhBackward: return static_cast<T>(a * (T(1) - b * b));
        case BinaryOp::SigmoidBackward: return static_cast<T>(a * b * (T(1) - b));
        // The fused activations' backward: a is the output's gradient, b the input.
        case BinaryOp::GeluBackward: if constexpr (kFloat) return a * gelu_derivative(b); else return a;
        case BinaryOp::GeluTanhBackward: if constexpr (kFloat) return a * gelu_tanh_derivative(b); else return a;
        case BinaryOp::SiluBackward: if constexpr (kFloat) return a * silu_derivative(b); else return a;
        case BinaryOp::MishBackward: if constexpr (kFloat) return a * mish_derivative(b); else return a;
        case BinaryOp::HardswishBackward: if constexpr (kFloat) return a * hardswish_derivative(b); else return a;
        case BinaryOp::HardsigmoidBackward: if constexpr (kFloat) return a * hardsigmoid_derivative(b); else return a;
        case BinaryOp::SoftplusBackward: if constexpr (kFloat) return a * softplus_derivative(b); else return a;
        case BinaryOp::LeakyRelu: if constexpr (kFloat) return leaky_relu_of(a, b); else return a;
        case BinaryOp::LeakyReluDerivative: if constexpr (kFloat) return leaky_relu_derivative(a, b); else return a;
        case BinaryOp::Elu: if constexpr (kFloat) return elu_of(a, b); else return a;
        case BinaryOp::EluDerivative: if constexpr (kFloat) return elu_derivative(a, b); else return a;
        // The losses: a is the input (probability, logit, difference), b the target or delta.
        case BinaryOp::BinaryCrossEntropy: if constexpr (kFloat) return bce_of(a, b); else return a;
        case BinaryOp::BceDerivative: if constexpr (kFloat) return bce_derivative_of(a, b); else return a;
        case BinaryOp::BinaryCrossEntropyWithLogits: if constexpr (kFloat) return bce_with_logits_of(a, b); else return a;
        case BinaryOp::BceWithLogitsDerivative: if constexpr (kFloat) return bce_with_logits_derivative_of(a, b); else return a;
        case BinaryOp::HuberLoss: if constexpr (kFloat) return huber_of(a, b); else return a;
        case BinaryOp::HuberDerivative: if constexpr (kFloat) return huber_derivative_of(a, b); else return a;
        case BinaryOp::MseLoss: if constexpr (kFloat) return (a - b) * (a - b); else return a;
        case BinaryOp::L1Loss: if constexpr (kFloat) return a > b ? a - b : b - a; else return a;
        case BinaryOp::Eq: return static_cast<T>(a == b);
        case BinaryOp::Ne: return static_cast<T>(a != b);
        case BinaryOp::Lt: return static_cast<T>(a < b);
        case BinaryOp::Le: return static_cast<T>(a <= b);
        case BinaryOp::Gt: return static_cast<T>(a > b);
        case BinaryOp::Ge: return static_cast<T>(a >= b);
        case BinaryOp::LogicalAnd: return static_cast<T>(a != T(0) && b != T(0));
        case BinaryOp::LogicalOr: return static_cast<T>(a != T(0) || b != T(0));
        case BinaryOp::LogicalXor: return static_cast<T>((a != T(0)) != (b != T(0)));
        case BinaryOp::BitwiseAnd: if constexpr (std::is_integral_v<T>) return static_cast<T>(a & b); else return a;
        case BinaryOp::BitwiseOr: if constexpr (std::is_integral_v<T>) return static_cast<T>(a | b); else return a;
        case BinaryOp::BitwiseXor: if constexpr (std::is_integral_v<T>) return static_cast<T>(a ^ b); else return a;
    }
    return a;  // not reached: the switch covers every op (-Wswitch checks)
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

// The windows that cover input pixel (ih, iw) -- the other side of for_each_in_window,
// for the kernels that gather one input pixel's gradient (pooling backward, col2im):
// calls f(o, t) with o = oh * OW + ow the output pixel and t = kh * KW + kw the tap of its
// window that lands on (ih, iw). Only the output rows whose window spans ih are visited
// (oh * stride in [ih + pad - (KH - 1) * dil, ih + pad]), so a big window with a big
// stride (a global average pool) costs one visit, not KH * KW.
// a / b for a >= 0 and b > 0: in 32 bits when both fit. A GPU has no divide instruction:
// a 64-bit `/` is a long software sequence, the 32-bit one a fraction of it, and these
// divisions run per thread (per covering window) in the gathering kernels below.
MT_HOST_DEVICE inline int64_t div_nonneg(int64_t a, int64_t b)
{
    return ((a | b) >> 31) == 0 ? int64_t(uint32_t(a) / uint32_t(b)) : a / b;
}
MT_HOST_DEVICE inline void window_rows_over(int64_t i, int64_t pad, int64_t k, int64_t stride, int64_t dil,
                                            int64_t out, int64_t& o0, int64_t& o1)
{
    const int64_t s = i + pad, span = (k - 1) * dil;  // s = o * stride + tap * dil
    const int64_t last = div_nonneg(s, stride);
    o0 = s < span ? 0 : div_nonneg(s - span + stride - 1, stride);
    o1 = last + 1 < out ? last + 1 : out;
}
// The tap k with d = k * dil, or -1 when d is not a multiple of dil (d >= 0); no division
// for the usual dil = 1.
MT_HOST_DEVICE inline int64_t tap_at(int64_t d, int64_t dil)
{
    if (dil == 1) return d;
    const int64_t k = div_nonneg(d, dil);
    return k * dil == d ? k : -1;
}
template <class F>
MT_HOST_DEVICE inline void for_each_window_over(const Window2d& w, int64_t ih, int64_t iw, F&& f)
{
    int64_t oh0, oh1, ow0, ow1;
    window_rows_over(ih, w.pad_h, w.KH, w.stride_h, w.dil_h, w.OH, oh0, oh1);
    window_rows_over(iw, w.pad_w, w.KW, w.stride_w, w.dil_w, w.OW, ow0, ow1);
    for (int64_t oh = oh0; oh < oh1; ++oh) {
        const int64_t kh = tap_at(ih + w.pad_h - oh * w.stride_h, w.dil_h);  // the row's tap on ih
        if (kh < 0) continue;
        for (int64_t ow = ow0; ow < ow1; ++ow) {
            const int64_t kw = tap_at(iw + w.pad_w - ow * w.stride_w, w.dil_w);
            if (kw >= 0) f(oh * w.OW + ow, kh * w.KW + kw);
        }
    }
}

// Max pooling of one output pixel: the position of the window's largest value (the
// first NaN wins, as in PyTorch; padding never does), with the value in `best`; -1
// (and `best` untouched) when the window lies wholly in the padding. V: the type values
// are compared in (float32 for float16 / bfloat16 planes).
template <class T, class V>
MT_HOST_DEVICE inline int64_t max_in_window(const T* plane, const Window2d& w, int64_t oh, int64_t ow, V& best)
{
    int64_t best_i = -1;
    for_each_in_window(w, oh, ow, [&](int64_t i) {
        const V v = static_cast<V>(plane[i]);
        if (best_i < 0 || v > best || is_nan(v)) best = v, best_i = i;
        return !is_nan(v);
    });
    return best_i;
}

// The sum of one output pixel's window, added up in Acc (float32 for a 16-bit plane).
template <class T, class Acc = T>
MT_HOST_DEVICE inline Acc sum_in_window(const T* plane, const Window2d& w, int64_t oh, int64_t ow)
{
    Acc acc = 0;
    for_each_in_window(w, oh, ow, [&](int64_t i) { acc += static_cast<Acc>(plane[i]); return true; });
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

// The ternary ops (kernel `ternary`): out = f(a, b, c) with the number `value`, computed in
// T (float32 for float16 / bfloat16, as the callers load them). lerp is PyTorch's formula,
// from the nearer end (weight c), so weight 1 gives `end` (b) exactly; addcmul / addcdiv
// multiply by value first, as PyTorch's CPU kernels do. value is unused by lerp.
template <class T>
MT_HOST_DEVICE MT_ALWAYS_INLINE T ternary_op(TernaryOp op, T a, T b, T c, T value)
{
    switch (op) {
        case TernaryOp::Lerp: {
            // a + c * diff where |c| < 0.5, else b - diff * (1 - c), written as base + t * diff
            // (b + (c - 1) * diff is the same bits): the only choices are between a and b
            // and between 0 and 1, so a CPU compiler turns them into vector selects. (Chosen
            // results would stay branches: it will not compute an unused side, which may trap.)
            const T diff = b - a;
            const int near_a = (c < T(0.5)) & (c > T(-0.5));
            const T base = near_a ? a : b;
            return base + (c - T(1 - near_a)) * diff;
        }
        case TernaryOp::Addcmul: return a + value * b * c;
        case TernaryOp::Addcdiv: return a + value * b / c;
        // clamp(x, min, max) as maximum then minimum, NaN in any operand giving NaN
        case TernaryOp::Clamp: return binary_op(BinaryOp::Minimum, binary_op(BinaryOp::Maximum, a, b), c);
        // g where x == y (y = clamp(x)): x inside the bounds, a bound included
        case TernaryOp::ClampBackward: return b == c ? a : T(0);
        case TernaryOp::LeakyReluBackward: return a * leaky_relu_derivative(b, c);
        // div's gradient for its divisor: -g * x / y^2 (a = g, b = x, c = y)
        case TernaryOp::DivBackwardDivisor: return (-a * b) / (c * c);
        // the 2-norm's: x * (g / y), 0 where the norm y is 0 (a = g, b = x, c = y)
        case TernaryOp::NormBackward: return c == T(0) ? T(0) : b * (a / c);
        // var's: g * value * (x - mean), value = 2 / (N - correction) (a = g, b = x, c = mean)
        case TernaryOp::VarBackward: return a * value * (b - c);
        // hardtanh's (PyTorch's rule, 0 at the bounds): g where lo < y < hi, read from the
        // result y (a = g, b = y, c = lo, value = hi); a NaN y passes g, as in PyTorch
        case TernaryOp::HardtanhBackward: return b <= c || b >= value ? T(0) : a;
        // g * f'(x, p) of ELU and of the per-element losses, for floating types only
        case TernaryOp::EluBackward:
        case TernaryOp::BceBackward:
        case TernaryOp::BceWithLogitsBackward:
        case TernaryOp::HuberBackward:
        case TernaryOp::MseLossBackward:
        case TernaryOp::L1LossBackward:
            if constexpr (std::is_floating_point_v<T>) {
                if (op == TernaryOp::EluBackward) return a * elu_derivative(b, c);
                if (op == TernaryOp::BceBackward) return a * bce_derivative_of(b, c);
                if (op == TernaryOp::BceWithLogitsBackward) return a * bce_with_logits_derivative_of(b, c);
                if (op == TernaryOp::MseLossBackward) return a * (T(2) * (b - c));
                if (op == TernaryOp::L1LossBackward) return a * T((c < b) - (b < c));  // sign(b - c)
                return a * huber_derivative_of(b, c);
            } else {
                return a;
            }
    }
    return a;
}

}  // namespace minitorch
