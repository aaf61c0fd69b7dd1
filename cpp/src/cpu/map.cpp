// map.cpp — CPU kernel for the unary "map" family: out[i] = f(in[i]).
#include <cmath>

#include "kernels_cpu.h"
#include "strided_loop.h"

namespace minitorch::cpu {

namespace {

template <class T>
struct Unary {
    UnaryOp op;
    T operator()(T x) const
    {
        if constexpr (std::is_same_v<T, bool>) {
            // Only the ops that make sense on bool reach here.
            return op == UnaryOp::LogicalNot ? !x : x;
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
                    case UnaryOp::Exp: return std::exp(x);
                    case UnaryOp::Log: return std::log(x);
                    case UnaryOp::Sqrt: return std::sqrt(x);
                    case UnaryOp::Tanh: return std::tanh(x);
                    // Stable for large |x|: exp never overflows into inf/inf.
                    case UnaryOp::Sigmoid:
                        return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
                    default: break;
                }
            }
            return x;
        }
    }
};

// One instantiation per (op, type) so the inner loop has no switch in it.
template <class T, class F>
void run_map(const StridedPlan<2>& plan, F f, int64_t grain = kGrainSize)
{
    plan.run([f](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
            T* out = reinterpret_cast<T*>(p[0]);
            const T* in = reinterpret_cast<const T*>(p[1]);
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
        } else {
            for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<T*>(p[0] + i * s[0]) = f(*reinterpret_cast<const T*>(p[1] + i * s[1]));
        }
    }, grain);
}

}  // namespace

void map(UnaryOp op, const Tensor& out, const Tensor& in)
{
    StridedPlan<2> plan({out.get(), in.get()});
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T>) {
            // The hot ones get their own switch-free loops; memory-bound ones a bigger grain.
            switch (op) {
                case UnaryOp::Exp: return run_map<T>(plan, [](T x) { return std::exp(x); });
                case UnaryOp::Log: return run_map<T>(plan, [](T x) { return std::log(x); });
                case UnaryOp::Sqrt: return run_map<T>(plan, [](T x) { return std::sqrt(x); });
                case UnaryOp::Tanh: return run_map<T>(plan, [](T x) { return std::tanh(x); });
                // 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving 0, as it should.
                case UnaryOp::Sigmoid: return run_map<T>(plan, [](T x) { return T(1) / (T(1) + std::exp(-x)); });
                case UnaryOp::Relu: return run_map<T>(plan, [](T x) { return x < T(0) ? T(0) : x; }, kMemoryBoundGrain);
                case UnaryOp::Neg: return run_map<T>(plan, [](T x) { return -x; }, kMemoryBoundGrain);
                default: break;
            }
        }
        run_map<T>(plan, Unary<T>{op});
    });
}

}  // namespace minitorch::cpu
