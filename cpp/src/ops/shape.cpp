// shape.cpp — ops that rearrange elements: flip, roll, tril / triu, repeat. Each is one
// pass of the remap kernel (kernels.h, shape_math.h): every output element reads one input
// element, found through the input's own strides (no contiguous copy first). Backward:
// flip and roll apply the inverse map, tril/triu the same mask, repeat sums the copies.
#include <algorithm>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

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

}  // namespace

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
