// map.cpp — CPU kernel for the unary "map" family: out[i] = f(in[i]).
#include <cmath>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "strided_loop.h"

namespace minitorch::cpu {

namespace {

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
            // The hot ones get their own loops: with the op a compile-time constant, the
            // switch in unary_op folds away; memory-bound ones get a bigger grain.
            switch (op) {
                case UnaryOp::Exp: return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Exp, x); });
                case UnaryOp::Log: return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Log, x); });
                case UnaryOp::Sqrt: return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Sqrt, x); });
                case UnaryOp::Tanh: return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Tanh, x); });
                case UnaryOp::Sigmoid: return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Sigmoid, x); });
                case UnaryOp::Relu:
                    return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Relu, x); }, kMemoryBoundGrain);
                case UnaryOp::Neg:
                    return run_map<T>(plan, [](T x) { return unary_op(UnaryOp::Neg, x); }, kMemoryBoundGrain);
                default: break;
            }
        }
        run_map<T>(plan, [op](T x) { return unary_op(op, x); });
    });
}

}  // namespace minitorch::cpu
