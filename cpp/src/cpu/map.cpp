// map.cpp — CPU kernel for the unary "map" family: out[i] = f(in[i]).
#include <cmath>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/strided_loop.h"

namespace minitorch::cpu {

namespace {

// One instantiation per (op, type) so the inner loop has no switch in it. O is the
// output's element type: T itself, or bool for isnan and friends.
template <class O, class T, class F>
void run_map(const StridedPlan<2>& plan, F f, int64_t grain = kGrainSize)
{
    plan.run([f](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
        if (s[0] == sizeof(O) && s[1] == sizeof(T)) {
            O* out = reinterpret_cast<O*>(p[0]);
            const T* in = reinterpret_cast<const T*>(p[1]);
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(f(in[i]));
        } else {
            for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<O*>(p[0] + i * s[0]) = static_cast<O>(f(*reinterpret_cast<const T*>(p[1] + i * s[1])));
        }
    }, grain);
}

// The op as a compile-time constant: the switch in unary_op folds away.
template <UnaryOp Op, class T>
void run_fixed(const StridedPlan<2>& plan, int64_t grain = kGrainSize)
{
    run_map<T, T>(plan, [](T x) { return unary_op(Op, x); }, grain);
}

}  // namespace

void map(UnaryOp op, const Tensor& out, const Tensor& in)
{
    StridedPlan<2> plan({out.get(), in.get()});
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (out->dtype == DType::Bool && in->dtype != DType::Bool)
            return run_map<bool, T>(plan, [op](T x) { return unary_op(op, x); }, kMemoryBoundGrain);
        if constexpr (std::is_floating_point_v<T>) {
            // The hot ones get their own loops; memory-bound ones a bigger grain.
            if (op == UnaryOp::Exp) return run_fixed<UnaryOp::Exp, T>(plan);
            if (op == UnaryOp::Log) return run_fixed<UnaryOp::Log, T>(plan);
            if (op == UnaryOp::Sqrt) return run_fixed<UnaryOp::Sqrt, T>(plan);
            if (op == UnaryOp::Tanh) return run_fixed<UnaryOp::Tanh, T>(plan);
            if (op == UnaryOp::Sigmoid) return run_fixed<UnaryOp::Sigmoid, T>(plan);
            if (op == UnaryOp::Relu) return run_fixed<UnaryOp::Relu, T>(plan, kMemoryBoundGrain);
            if (op == UnaryOp::Neg) return run_fixed<UnaryOp::Neg, T>(plan, kMemoryBoundGrain);
        }
        run_map<T, T>(plan, [op](T x) { return unary_op(op, x); });
    });
}

}  // namespace minitorch::cpu
