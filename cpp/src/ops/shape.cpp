// shape.cpp — ops that rearrange elements: flip, roll, tril / triu, repeat, constant_pad_nd.
// Each is one pass of the remap kernel (kernels.h, shape_math.h): every output element reads
// one input element, found through the input's own strides (no contiguous copy first), or
// a fill value. Backward: flip and roll apply the inverse map, tril/triu the same mask,
// repeat sums the copies, constant_pad_nd cuts the padding off again (a view).
#include <algorithm>
#include <cstring>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"
#include "minitorch/shape_math.h"

namespace minitorch {

namespace {

// A Remap that reads t as it is (identity on every dim).
Remap identity_map(const Tensor& t, const char* op)
{
    MT_CHECK(t->dim() <= kMaxDims, op, ": at most ", kMaxDims, " dims are supported, got ", t->dim());
    Remap m;
    m.ndim = int(t->dim());
    for (int d = 0; d < m.ndim; ++d) m.in_size[d] = t->shape[d], m.in_stride[d] = t->strides[d];
    return m;
}

// The output of shape `shape` filled by one remap pass over t.
Tensor run_remap(const Tensor& t, const Shape& shape, const Remap& m)
{
    Tensor out = empty(shape, t->dtype, t->device());
    if (out->numel()) kernels(t->device()).remap(out, t, m);
    return out;
}

// dims wrapped and checked for repeats ("dim 0 appears multiple times in the list of dims").
std::vector<int64_t> unique_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op)
{
    std::vector<int64_t> out;
    for (int64_t d : dims) {
        const int64_t w = wrap_dim(d, ndim, op);
        MT_CHECK(std::find(out.begin(), out.end(), w) == out.end(), op, ": dim ", w,
                 " appears multiple times in the list of dims");
        out.push_back(w);
    }
    return out;
}

Tensor flip_forward(const Tensor& t, const std::vector<int64_t>& dims)
{
    Remap m = identity_map(t, "flip");
    for (int64_t d : dims)
        if (t->dim()) m.flip[d] = true;
    return run_remap(t, t->shape, m);
}

// derivative of flip, input input: flip(g, dims) (flip is its own inverse)
struct FlipBackward : autograd::Node {
    std::vector<int64_t> dims;
    std::string name() const override { return "FlipBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override { return {flip(g[0], dims)}; }
};

// shifts already reduced to [0, size) per dim; dims wrapped.
Tensor roll_forward(const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims)
{
    Remap m = identity_map(t, "roll");
    for (size_t k = 0; k < dims.size(); ++k) {
        const int64_t n = t->shape[dims[k]];
        if (n == 0) continue;
        // out[o] = in[o - shift]: read at o + (n - shift) mod n, added up over repeated dims.
        m.shift[dims[k]] = (m.shift[dims[k]] + (n - ((shifts[k] % n) + n) % n)) % n;
    }
    return run_remap(t, t->shape, m);
}

// derivative of roll, input input: roll(g, -shifts, dims)
struct RollBackward : autograd::Node {
    std::vector<int64_t> shifts, dims;
    std::string name() const override { return "RollBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        std::vector<int64_t> back;
        for (int64_t s : shifts) back.push_back(-s);
        return {roll(g[0], back, dims)};
    }
};

Tensor triangle(const Tensor& t, int64_t diagonal, bool lower);

// derivative of tril / triu, input input: tril(g, diagonal) / triu(g, diagonal) (the same mask)
struct TriangleBackward : autograd::Node {
    int64_t diagonal = 0;
    bool lower = true;
    std::string name() const override { return lower ? "TrilBackward0" : "TriuBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override { return {triangle(g[0], diagonal, lower)}; }
};

Tensor triangle(const Tensor& t, int64_t diagonal, bool lower)
{
    const char* op = lower ? "tril" : "triu";
    MT_PROFILE_OP(op, t);
    MT_CHECK(t->dim() >= 2, op, ": input tensor must have at least 2 dimensions, got shape ", t->shape);
    return autograd::record_op<TriangleBackward>(
        {&t},
        [&] {
            Remap m = identity_map(t, op);
            m.triangle = lower ? 1 : -1;
            m.diagonal = diagonal;
            return run_remap(t, t->shape, m);
        },
        [&](TriangleBackward& n, const Tensor&) {
            n.diagonal = diagonal;
            n.lower = lower;
        });
}

// derivative of repeat, input input: g seen as (r0, s0, r1, s1, ...) summed over the r dims
struct RepeatBackward : autograd::Node {
    std::vector<int64_t> repeats;
    std::string name() const override { return "RepeatBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const Shape& in = input_meta[0].shape;
        const size_t lead = repeats.size() - in.size();  // new leading dims (input size 1)
        Shape pairs;
        std::vector<int64_t> summed;
        for (size_t d = 0; d < repeats.size(); ++d) {
            summed.push_back(int64_t(pairs.size()));
            pairs.push_back(repeats[d]);
            pairs.push_back(d < lead ? 1 : in[d - lead]);
        }
        Tensor gx = sum(reshape(g[0], pairs), summed, false, std::nullopt);
        return {reshape(gx, in)};
    }
};

// derivative of constant_pad_nd, input input: g with the padding cut off (a view of g; a crop, negative amounts, is the slice before the op, whose gradient pads g back with zeros)
struct ConstantPadBackward : autograd::Node {
    std::vector<int64_t> pad;  // (left, right) of the last dim first, all >= 0
    std::string name() const override { return "ConstantPadNdBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor r = g[0];
        for (size_t i = 0; i < pad.size() / 2; ++i) {
            const int64_t d = r->dim() - 1 - int64_t(i);
            if (pad[2 * i] || pad[2 * i + 1]) r = slice(r, d, pad[2 * i], r->shape[d] - pad[2 * i + 1], 1);
        }
        return {r};
    }
};

// The bits of `value` as one element of `dtype`, widened to 64 bits (Remap::fill): the
// value goes through a 0-dim tensor, so it is converted as full() converts it.
uint64_t element_bits(const Scalar& value, DType dtype)
{
    Tensor one = full({}, value, dtype, Device{});
    uint64_t bits = 0;
    dispatch_bytes(itemsize(dtype), [&](auto tag) {
        using Bytes = typename decltype(tag)::type;
        Bytes b;
        std::memcpy(&b, one->data_as<Bytes>(), sizeof(Bytes));
        bits = b;
    });
    return bits;
}

}  // namespace

Tensor constant_pad_nd(const Tensor& t, const std::vector<int64_t>& pad, const Scalar& value)
{
    MT_PROFILE_OP("constant_pad_nd", t);
    MT_CHECK(pad.size() % 2 == 0, "constant_pad_nd: padding length must be divisible by 2, got ", pad.size(), " (",
             Shape(pad), ")");
    const int64_t padded = int64_t(pad.size() / 2);
    MT_CHECK(padded <= t->dim(), "constant_pad_nd: padding length too large: ", pad.size(), " values pad ", padded,
             " dims, but input of shape ", t->shape, " has ", t->dim());
    MT_CHECK(t->dim() <= kMaxDims, "constant_pad_nd: at most ", kMaxDims, " dims are supported, got ", t->dim());
    // Negative amounts crop: a slice view of t, made before the op is recorded, so that its
    // own backward (slice's) pads the gradient back with zeros.
    Tensor x = t;
    Shape shape = t->shape;
    bool grows = false;
    for (int64_t i = 0; i < padded; ++i) {
        const int64_t d = t->dim() - 1 - i, left = pad[2 * i], right = pad[2 * i + 1], n = t->shape[d];
        if (left < 0 || right < 0) {
            MT_CHECK(n + std::min<int64_t>(left, 0) + std::min<int64_t>(right, 0) >= 0, "constant_pad_nd: cropping (",
                     left, ", ", right, ") from dim ", d, " of size ", n, " of input of shape ", t->shape,
                     " leaves a negative size");
            x = slice(x, d, std::max<int64_t>(-left, 0), n - std::max<int64_t>(-right, 0), 1);
        }
        grows = grows || left > 0 || right > 0;
        shape[d] = n + left + right;
    }
    std::vector<int64_t> grow;  // the non-negative part, recorded with the op
    for (int64_t p : pad) grow.push_back(std::max<int64_t>(p, 0));
    return autograd::record_op<ConstantPadBackward>(
        {&x},
        [&] {
            Remap m = identity_map(x, "constant_pad_nd");
            m.pad = true;
            for (int64_t i = 0; i < padded; ++i) m.pad_left[x->dim() - 1 - i] = grow[2 * i];
            m.fill = grows ? element_bits(value, x->dtype) : 0;
            return run_remap(x, shape, m);
        },
        [&](ConstantPadBackward& n, const Tensor&) { n.pad = grow; });
}

Tensor flip(const Tensor& t, const std::vector<int64_t>& dims)
{
    MT_PROFILE_OP("flip", t);
    std::vector<int64_t> wrapped = unique_dims(dims, t->dim(), "flip");
    return autograd::record_op<FlipBackward>({&t}, [&] { return flip_forward(t, wrapped); },
                                             [&](FlipBackward& n, const Tensor&) { n.dims = wrapped; });
}

Tensor roll(const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims)
{
    MT_PROFILE_OP("roll", t);
    if (dims.empty()) {  // roll the flattened tensor, then give it its shape back
        MT_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align: with no dims, expected one shift, got ",
                 shifts.size());
        return reshape(roll(reshape(t, {t->numel()}), shifts, {0}), t->shape);
    }
    MT_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align: got ", shifts.size(),
             " shifts and ", dims.size(), " dims");
    std::vector<int64_t> wrapped;
    for (int64_t d : dims) wrapped.push_back(wrap_dim(d, t->dim(), "roll"));
    if (t->dim() == 0) return clone(t);
    return autograd::record_op<RollBackward>({&t}, [&] { return roll_forward(t, shifts, wrapped); },
                                             [&](RollBackward& n, const Tensor&) {
                                                 n.shifts = shifts;
                                                 n.dims = wrapped;
                                             });
}

Tensor tril(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, true); }
Tensor triu(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, false); }

Tensor repeat(const Tensor& t, const std::vector<int64_t>& repeats)
{
    MT_PROFILE_OP("repeat", t);
    MT_CHECK(int64_t(repeats.size()) >= t->dim(), "repeat: number of dimensions of repeat dims (", repeats.size(),
             ") can not be smaller than number of dimensions of tensor (", t->dim(), ")");
    for (int64_t r : repeats)
        MT_CHECK(r >= 0, "repeat: trying to create tensor with negative dimension ", r, " (repeats ", Shape(repeats),
                 ")");
    MT_CHECK(int64_t(repeats.size()) <= kMaxDims, "repeat: at most ", kMaxDims, " dims are supported, got ",
             repeats.size());
    return autograd::record_op<RepeatBackward>(
        {&t},
        [&] {
            // The input seen with the new leading dims (size 1), each output dim d reading
            // its input dim modulo that dim's size.
            const int lead = int(repeats.size() - t->dim());
            Remap m;
            m.ndim = int(repeats.size());
            Shape shape;
            for (int d = 0; d < m.ndim; ++d) {
                m.in_size[d] = d < lead ? 1 : t->shape[d - lead];
                m.in_stride[d] = d < lead ? 0 : t->strides[d - lead];
                shape.push_back(m.in_size[d] * repeats[d]);
            }
            return run_remap(t, shape, m);
        },
        [&](RepeatBackward& n, const Tensor&) { n.repeats = repeats; });
}

}  // namespace minitorch
