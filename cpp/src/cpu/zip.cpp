// zip.cpp — CPU kernels for the binary "zip" family (out[i] = f(a[i], b[i])) and where.
// Broadcasting happened before: a and b arrive expanded (stride 0 on broadcast dims).
#include <cmath>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/strided_loop.h"

namespace minitorch::cpu {

namespace {

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

// Arithmetic that costs about a memory access per element (integer division does not).
template <class T>
constexpr bool memory_bound(BinaryOp op)
{
    if constexpr (std::is_same_v<T, bool>) return false;
    return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul ||
           (op == BinaryOp::Div && std::is_floating_point_v<T>);
}

}  // namespace

void zip(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b)
{
    StridedPlan<3> plan({out.get(), a.get(), b.get()});
    dispatch(a->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        // Comparisons and logical ops write bool whatever T is.
        if (out->dtype == DType::Bool && a->dtype != DType::Bool)
            return run_zip<bool, T>(plan, [op](T x, T y) { return binary_op(op, x, y); }, kMemoryBoundGrain);
        if (out->dtype == a->dtype) {
            // Every op its own loop (the op a compile-time constant, no switch per element,
            // so + - * / vectorise); the memory-bound arithmetic gets a bigger grain.
            switch (op) {
#define MT_FIXED_LOOP(Enum, ...)                                                                     \
    case BinaryOp::Enum:                                                                             \
        return run_zip<T, T>(plan, [](T x, T y) { return binary_op(BinaryOp::Enum, x, y); },         \
                             memory_bound<T>(BinaryOp::Enum) ? kMemoryBoundGrain : kGrainSize);
                MT_BINARY_OPS(MT_FIXED_LOOP)
#undef MT_FIXED_LOOP
            }
        }
        run_zip<T, T>(plan, [op](T x, T y) { return binary_op(op, x, y); });
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
