// random.cu — random fills on the GPU from the counter-based stream (counter_rng.h), and
// dropout, whose mask is such a fill compared with p (drawn and applied in one pass).
//
// Thread mapping: one thread per output element, grid-stride loop; element i uses
// counter offset + i, so the values do not depend on how threads are scheduled.
// dropout and its backward read and write float16 / bfloat16 in place (the table's entries
// skip Widen's staging): one launch each way, computed in float32 registers.
#include <math.h>

#include "common.cuh"
#include "minitorch/counter_rng.h"

namespace minitorch::cuda {

namespace {

template <class T>
__global__ void random_kernel(T* out, int64_t n, RandomOp op, double lo, double hi, CounterStream s)
{
    MT_GRID_STRIDE(i, n) {
        const uint64_t counter = s.offset + uint64_t(i);
        const double u = bits_to_unit(counter_bits(s.seed, counter));
        double v;
        if (op == RandomOp::Normal) {
            // Box-Muller: two independent uniforms give one standard normal sample.
            const double u2 = bits_to_unit(counter_bits(s.seed, counter, 1));
            v = lo + hi * sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * u2);  // 1 - u is in (0, 1]
        } else if (op == RandomOp::Integer) {
            v = floor(lo + u * (hi - lo));
            if (v >= hi) v = hi - 1;
        } else {
            v = lo + u * (hi - lo);
        }
        T x = static_cast<T>(v);
        // Uniform [lo, hi): rounding to float can land on hi; fold it back to lo.
        if (op == RandomOp::Uniform && !(x < static_cast<T>(hi))) x = static_cast<T>(lo);
        out[i] = x;
    }
}

// Element i's uniform [0, 1) value of stream s in T: what random_kernel writes for Uniform
// on [0, 1) (u rounded to T, a round-up to 1 folded back to 0), so dropout's masks are
// those of rand() >= p.
template <class T>
__device__ __forceinline__ T unit_uniform(const CounterStream& s, int64_t i)
{
    const T x = static_cast<T>(bits_to_unit(counter_bits(s.seed, s.offset + uint64_t(i))));
    return x < T(1) ? x : T(0);
}

// Thread mapping: one thread per element, grid-stride; element i draws counter offset + i,
// decides keep, and writes the mask byte and the output: one pass, no uniform tensor.
// T is the stored type, C = Compute<T> the one the draw and the product are taken in: a
// float16 / bfloat16 input draws its uniform in float32 (so its mask is float32's for the
// same seed, as PyTorch's draws in its float accumulate type) and is rounded once at the store.
template <class T>
__global__ void dropout_kernel(T* out, bool* mask, const T* in, int64_t n, Compute<T> p, Compute<T> scale,
                               CounterStream s)
{
    using C = Compute<T>;
    MT_GRID_STRIDE(i, n) {
        const bool keep = unit_uniform<C>(s, i) >= p;
        mask[i] = keep;
        out[i] = T(C(in[i]) * C(keep) * scale);  // as x * keep * scale composed: -0 and NaN alike
    }
}

// Thread mapping: one thread per element, grid-stride.
template <class T>
__global__ void dropout_backward_kernel(T* grad_in, const T* grad_out, const bool* mask, int64_t n, Compute<T> scale)
{
    using C = Compute<T>;
    MT_GRID_STRIDE(i, n) grad_in[i] = T(C(grad_out[i]) * scale * C(mask[i]));
}

// The device's generator: a seed and how far fills have used the stream.
uint64_t g_seed = 5489u, g_offset = 0;

// The stream for a fill of n values (moves the offset past them, so fills differ).
CounterStream next_counter_stream(uint64_t n)
{
    CounterStream s{g_seed, g_offset};
    g_offset += n;
    return s;
}

}  // namespace

void manual_seed(uint64_t seed)
{
    g_seed = seed;
    g_offset = 0;
}

std::array<uint64_t, 2> rng_state() { return {g_seed, g_offset}; }

void set_rng_state(uint64_t seed, uint64_t offset)
{
    g_seed = seed;
    g_offset = offset;
}

void random(RandomOp op, const Tensor& dst, double lo, double hi)
{
    const int64_t n = dst->numel();
    const CounterStream s = next_counter_stream(uint64_t(n));
    dispatch(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, random_kernel<T>)(dst->data_as<T>(), n, op, lo, hi, s);
    });
    MT_CUDA_CHECK_LAUNCH("random");
}

void dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double p)
{
    const int64_t n = in->numel();
    const CounterStream s = next_counter_stream(uint64_t(n));  // the draws rand() of this shape would use
    dispatch_floating16(in->dtype, "dropout", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = Compute<T>;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, dropout_kernel<T>)(out->data_as<T>(), mask->data_as<bool>(),
                                                                    in->data_as<T>(), n, C(p), C(1.0 / (1.0 - p)), s);
    });
    MT_CUDA_CHECK_LAUNCH("dropout");
}

void dropout_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& mask, double scale)
{
    const int64_t n = grad_out->numel();
    dispatch_floating16(grad_out->dtype, "dropout_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, dropout_backward_kernel<T>)(
            grad_in->data_as<T>(), grad_out->data_as<T>(), mask->data_as<bool>(), n, Compute<T>(scale));
    });
    MT_CUDA_CHECK_LAUNCH("dropout_backward");
}

}  // namespace minitorch::cuda
