// random.cpp — random fills from one global Mersenne Twister, so manual_seed(s)
// makes every run (and every device, which draws here too) reproducible.
#include <random>

#include "kernels_cpu.h"
#include "random_state.h"

namespace minitorch::cpu {

std::mt19937_64& generator()
{
    static std::mt19937_64 gen(5489u);
    return gen;
}

void random(RandomOp op, const Tensor& dst, double lo, double hi)
{
    auto& gen = generator();
    const int64_t n = dst->numel();
    dispatch(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* out = dst->data_as<T>();
        if (op == RandomOp::Integer) {
            std::uniform_int_distribution<int64_t> dist(int64_t(lo), int64_t(hi) - 1);
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(gen));
        } else if constexpr (std::is_floating_point_v<T>) {
            if (op == RandomOp::Uniform) {
                std::uniform_real_distribution<T> dist{T(lo), T(hi)};
                for (int64_t i = 0; i < n; ++i) {
                    T v = dist(gen);
                    out[i] = v < T(hi) ? v : T(lo);  // guard the rare rounding up to hi
                }
            } else {
                std::normal_distribution<T> dist{T(lo), T(hi)};
                for (int64_t i = 0; i < n; ++i) out[i] = dist(gen);
            }
        }
    });
}

}  // namespace minitorch::cpu
