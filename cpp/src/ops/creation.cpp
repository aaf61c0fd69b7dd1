// creation.cpp — new tensors: full/zeros, ranges, eye, scalars and random fills.
#include <cmath>

#include "minitorch/counter_rng.h"
#include "minitorch/ops.h"

namespace minitorch {

Tensor full(const Shape& shape, Scalar value, DType dtype, Device device)
{
    MT_PROFILE_OP("full");
    Tensor t = empty(shape, dtype, device);
    if (t->numel()) kernels(device).fill(t, value);
    return t;
}

Tensor zeros(const Shape& shape, DType dtype, Device device)
{
    MT_PROFILE_OP("zeros");
    return full(shape, Scalar(0.0), dtype, device);
}

Tensor scalar_tensor(Scalar value, Device device, std::optional<DType> dtype)
{
    DType dt = dtype ? *dtype : value.dtype;
    Tensor t;
    if (device.is_cpu()) {  // the hot path of `x * 2.0`: write the one value directly
        t = empty({}, dt, device);
        dispatch_storage(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            *t->data_as<T>() = value.to<T>();
        });
    } else {
        t = full({}, value, dt, device);
    }
    t->wrapped_number = true;
    return t;
}

Tensor arange(double start, double end, double step, DType dtype, Device device)
{
    MT_PROFILE_OP("arange");
    MT_CHECK(step != 0.0, "arange: step must be nonzero");
    MT_CHECK(std::isfinite(start) && std::isfinite(end), "arange: unsupported range ", start, " -> ", end);
    MT_CHECK((end - start) / step >= 0 || start == end, "arange: upper bound and step are inconsistent (start=", start,
             ", end=", end, ", step=", step, ")");
    double count = std::ceil((end - start) / step);
    MT_CHECK(count < 9.2e18, "arange: too many elements (", count, ")");
    Tensor t = empty({int64_t(std::max(0.0, count))}, dtype, device);
    if (t->numel()) kernels(device).arange(t, start, step);
    return t;
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device)
{
    MT_PROFILE_OP("linspace");
    MT_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
    Tensor t = empty({steps}, dtype, device);
    if (steps == 1) kernels(device).fill(t, Scalar(start));
    else if (steps > 1) kernels(device).linspace(t, start, end);
    return t;
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device)
{
    MT_PROFILE_OP("eye");
    MT_CHECK(n >= 0 && m >= 0, "eye: sizes must be non-negative, got n=", n, ", m=", m);
    Tensor t = zeros({n, m}, dtype, device);
    // The diagonal is a strided view: one step down and one step right = m + 1 elements.
    int64_t k = std::min(n, m);
    if (k) kernels(device).fill(make_view(t, {k}, {m + 1}, 0), Scalar(1.0));
    return t;
}

// Like torch.manual_seed: seeds the CPU's generator and every device's.
void manual_seed(uint64_t seed) { manual_seed_all_devices(seed); }

namespace {
// The largest value of the 16-bit type T below hi: T(hi) rounded, then stepped down (bits - 1
// for a positive value, the smallest negative one after +0, bits + 1 for a negative value).
template <class T>
double largest_below(double hi)
{
    T v = T(hi);
    while (double(float(v)) >= hi) {
        const bool negative = v.bits & 0x8000u, zero = (v.bits & 0x7fffu) == 0;
        v.bits = zero ? uint16_t(0x8001u) : negative ? uint16_t(v.bits + 1) : uint16_t(v.bits - 1);
    }
    return double(float(v));
}

// Each device draws with its own generator (the CPU: a Mersenne Twister; a GPU: the
// counter-based stream), so one seed gives reproducible, but device-specific, values.
Tensor random_tensor(RandomOp op, const Shape& shape, DType dtype, Device device, double lo, double hi)
{
    if ((dtype == DType::Float16 || dtype == DType::BFloat16) && op != RandomOp::Integer) {
        // Drawn in float32 (the values Widen's staging gave, without its copy of the empty
        // output), then rounded. A uniform draw within half a step of hi rounds up to hi
        // (1 - 2^-9 is 1.0 in bfloat16), so those become the largest 16-bit value below hi,
        // and rand() stays in [0, 1) as PyTorch's does.
        Tensor u = empty(shape, DType::Float32, device);
        if (!u->numel()) return empty(shape, dtype, device);
        kernels(device).random(op, u, lo, hi);
        Tensor t = to_dtype(u, dtype);
        if (op == RandomOp::Uniform) {
            const double top = dtype == DType::Float16 ? largest_below<Half>(hi) : largest_below<BFloat16>(hi);
            binary_(BinaryOp::Minimum, t, scalar_tensor(Scalar(top), Device{}));
        }
        return t;
    }
    Tensor t = empty(shape, dtype, device);
    if (t->numel()) kernels(device).random(op, t, lo, hi);
    return t;
}
}  // namespace

Tensor rand(const Shape& shape, DType dtype, Device device)
{
    MT_PROFILE_OP("rand");
    MT_CHECK_TYPE(is_floating(dtype), "rand: expected a floating dtype, got ", dtype);
    return random_tensor(RandomOp::Uniform, shape, dtype, device, 0.0, 1.0);
}

Tensor randn(const Shape& shape, DType dtype, Device device)
{
    MT_PROFILE_OP("randn");
    MT_CHECK_TYPE(is_floating(dtype), "randn: expected a floating dtype, got ", dtype);
    return random_tensor(RandomOp::Normal, shape, dtype, device, 0.0, 1.0);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device)
{
    MT_PROFILE_OP("randint");
    MT_CHECK(low < high, "randint: expected low < high, got low=", low, ", high=", high);
    // The bounds travel as doubles: the CPU's integer distribution gets them back exactly
    // up to 2^62 when they are powers of two or below 2^53; a GPU thread scales one
    // 53-bit uniform, so there every value is reachable only below 2^53.
    const int64_t limit = int64_t(1) << (device.is_cpu() ? 62 : 53);
    MT_CHECK(low >= -limit && high <= limit, "randint: on ", device, " the bounds must lie within +-", limit,
             ", got low=", low, ", high=", high);
    return random_tensor(RandomOp::Integer, shape, dtype, device, double(low), double(high));
}

}  // namespace minitorch
