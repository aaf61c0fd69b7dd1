// copy.cpp — CPU kernels for the "fill & strided copy" family.
#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/strided_loop.h"

namespace minitorch::cpu {

void copy(const Tensor& dst, const Tensor& src)
{
    StridedPlan<2> plan({dst.get(), src.get()});
    // Any storage type to any other: 16-bit values convert through float (half.h).
    dispatch_storage(dst->dtype, [&](auto dt) {
        using D = typename decltype(dt)::type;
        dispatch_storage(src->dtype, [&](auto st) {
            using S = typename decltype(st)::type;
            plan.run([](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                D* out = reinterpret_cast<D*>(p[0]);
                const S* in = reinterpret_cast<const S*>(p[1]);
                if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
                    for (int64_t i = 0; i < n; ++i) out[i] = convert<D>(in[i]);
                } else {
                    for (int64_t i = 0; i < n; ++i)
                        *reinterpret_cast<D*>(p[0] + i * s[0]) = convert<D>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
                }
            }, kMemoryBoundGrain);
        });
    });
}

void fill(const Tensor& dst, Scalar value)
{
    StridedPlan<1> plan({dst.get()});
    dispatch_storage(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T v = value.to<T>();
        plan.run([v](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
            if (s[0] == sizeof(T)) {
                T* out = reinterpret_cast<T*>(p[0]);
                for (int64_t i = 0; i < n; ++i) out[i] = v;
            } else {
                for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
            }
        }, kMemoryBoundGrain);
    });
}

void arange(const Tensor& dst, double start, double step)
{
    dispatch(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* out = dst->data_as<T>();
        const int64_t n = dst->numel();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + double(i) * step);
    });
}

void linspace(const Tensor& dst, double start, double end)
{
    dispatch(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* out = dst->data_as<T>();
        const int64_t n = dst->numel();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(linspace_value(start, end, n, i));
    });
}

}  // namespace minitorch::cpu
