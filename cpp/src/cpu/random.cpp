// random.cpp — random fills from the CPU's one Mersenne Twister, so manual_seed(s)
// makes every run reproducible; and dropout, whose mask is such a fill compared with p.
// (A GPU has its own counter-based stream: cuda/random.cu.)
#include <random>
#include <sstream>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"

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

// Dropout in one pass: element i's draw is the one random(Uniform, 0, 1) would give it
// (the same distribution, the same generator, in order), so the masks are those of
// rand() >= p. Serial: the generator is one sequential stream.
void dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double p)
{
    auto& gen = generator();
    const int64_t n = in->numel();
    dispatch_floating(in->dtype, "dropout", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        T* y = out->data_as<T>();
        bool* m = mask->data_as<bool>();
        std::uniform_real_distribution<T> dist{T(0), T(1)};
        const T pt = T(p), scale = T(1.0 / (1.0 - p));
        for (int64_t i = 0; i < n; ++i) {
            T u = dist(gen);
            if (!(u < T(1))) u = T(0);  // random()'s guard of the rare rounding up to 1
            const bool keep = u >= pt;
            m[i] = keep;
            y[i] = x[i] * T(keep) * scale;  // as x * keep * scale composed: -0 and NaN alike
        }
    });
}

void dropout_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& mask, double scale)
{
    const int64_t n = grad_out->numel();
    dispatch_floating(grad_out->dtype, "dropout_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* g = grad_out->data_as<T>();
        const bool* m = mask->data_as<bool>();
        T* gx = grad_in->data_as<T>();
        const T s = T(scale);
        parallel_for(n, kGrainSize, [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1; ++i) gx[i] = g[i] * s * T(m[i]);
        });
    });
}

}  // namespace minitorch::cpu
