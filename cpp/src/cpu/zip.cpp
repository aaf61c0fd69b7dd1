// zip.cpp — CPU kernels for the binary "zip" family (out[i] = f(a[i], b[i])) and where.
// Broadcasting happened before: a and b arrive expanded (stride 0 on broadcast dims).
#include <cmath>

#include "kernels_cpu.h"
#include "strided_loop.h"

namespace minitorch::cpu {

namespace {

// x ** e for integers by repeated squaring (exact, no trip through double).
inline int64_t int_pow(int64_t x, int64_t e)
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
inline bool is_nan(T x)
{
    if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
    else return false;
}

template <class T>
struct Arith {
    BinaryOp op;
    T operator()(T a, T b) const
    {
        switch (op) {
            case BinaryOp::Add: return static_cast<T>(a + b);
            case BinaryOp::Sub: return static_cast<T>(a - b);
            case BinaryOp::Mul: return static_cast<T>(a * b);
            case BinaryOp::Div: return static_cast<T>(a / b);  // floating only (ops cast first)
            case BinaryOp::Pow:
                if constexpr (std::is_floating_point_v<T>) return std::pow(a, b);
                else if constexpr (std::is_same_v<T, bool>) return a || !b;
                else return int_pow(a, b);
            case BinaryOp::Maximum: return is_nan(a) ? a : (is_nan(b) ? b : (a > b ? a : b));
            case BinaryOp::Minimum: return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? a : b));
            default: return T(0);
        }
    }
};

template <class T>
struct Compare {
    BinaryOp op;
    bool operator()(T a, T b) const
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
};

// The loop: contiguous operands get a plain indexed loop (vectorizable), a broadcast
// scalar on the right its own loop, anything else the general strided form.
template <class O, class T, class F>
void run_zip(const StridedPlan<3>& plan, F f, int64_t grain = kGrainSize)
{
    plan.run([f](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        O* out = reinterpret_cast<O*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        if (s[0] == sizeof(O) && s[1] == sizeof(T) && s[2] == sizeof(T)) {
            for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
        } else if (s[0] == sizeof(O) && s[1] == sizeof(T) && s[2] == 0) {
            const T bv = *b;
            for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
        } else {
            for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<O*>(p[0] + i * s[0]) =
                    f(*reinterpret_cast<const T*>(p[1] + i * s[1]), *reinterpret_cast<const T*>(p[2] + i * s[2]));
        }
    }, grain);
}

}  // namespace

void zip(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b)
{
    StridedPlan<3> plan({out.get(), a.get(), b.get()});
    dispatch(a->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (is_comparison(op)) return run_zip<bool, T>(plan, Compare<T>{op}, kMemoryBoundGrain);
        if constexpr (!std::is_same_v<T, bool>) {
            switch (op) {  // the hot ones get switch-free loops
                case BinaryOp::Add: return run_zip<T, T>(plan, [](T x, T y) { return static_cast<T>(x + y); }, kMemoryBoundGrain);
                case BinaryOp::Sub: return run_zip<T, T>(plan, [](T x, T y) { return static_cast<T>(x - y); }, kMemoryBoundGrain);
                case BinaryOp::Mul: return run_zip<T, T>(plan, [](T x, T y) { return static_cast<T>(x * y); }, kMemoryBoundGrain);
                case BinaryOp::Div: return run_zip<T, T>(plan, [](T x, T y) { return static_cast<T>(x / y); }, kMemoryBoundGrain);
                default: break;
            }
        }
        run_zip<T, T>(plan, Arith<T>{op});
    });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b)
{
    StridedPlan<4> plan({out.get(), cond.get(), a.get(), b.get()});
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        plan.run([](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
                bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
                *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
            }
        });
    });
}

}  // namespace minitorch::cpu
