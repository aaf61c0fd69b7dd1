// random.cpp — random fills from the CPU's one Mersenne Twister, so manual_seed(s)
// makes every run reproducible. (A GPU has its own counter-based stream: cuda/random.cu.)
#include <random>
#include <sstream>

#include "kernels_cpu.h"

namespace minitorch::cpu {

namespace {
std::mt19937_64& generator()
{
    static std::mt19937_64 gen(5489u);
    return gen;
}
}  // namespace

void manual_seed(uint64_t seed) { generator().seed(seed); }

std::string rng_state()
{
    std::ostringstream out;
    out << generator();
    return out.str();
}

void set_rng_state(const std::string& state)
{
    std::istringstream in(state);
    std::mt19937_64 gen;
    in >> gen;
    MT_CHECK(!in.fail(), "set_rng_state: not a state of the CPU generator");
    generator() = gen;
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
