// indexing.cpp — ops that read or write elements named by index tensors: gather /
// scatter / scatter_add along one dim, NumPy's advanced indexing written by index_put,
// and masks (masked_fill, masked_select, nonzero). Each checks its inputs, allocates, and
// makes one kernel call (cpu/indexing.cpp, cuda/indexing.cu), which also checks the
// indices; its backward is the node beside it.
#include <limits>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

void check_index_dtype(const char* op, const Tensor& index)
{
    MT_CHECK_TYPE(index->dtype == DType::Int64, op, "(): expected dtype int64 for index, got ", index->dtype);
}

// t seen as at least 1-D (a 0-dim tensor as (1,)).
Tensor at_least_1d(const Tensor& t) { return t->dim() ? t : reshape(t, {1}); }

// gather and scatter: index has self's number of dims (or both are at most 1-D) and is
// no larger than self (and src) in every dim but `dim`.
void check_dim_shapes(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src)
{
    MT_CHECK(index->dim() == self->dim() || (index->dim() <= 1 && self->dim() <= 1), op,
             ": index tensor must have the same number of dimensions as input tensor (index ", index->shape,
             ", input ", self->shape, ")");
    for (int64_t d = 0; d < index->dim(); ++d) {
        MT_CHECK(d == dim || !self->dim() || index->shape[d] <= self->shape[d], op, ": size of index ", index->shape,
                 " must not exceed the input ", self->shape, " in dimension ", d, " (other than dim ", dim, ")");
        MT_CHECK(!src || !src->dim() || index->shape[d] <= src->shape[d], op, ": size of index ", index->shape,
                 " must not exceed src ", src->shape, " in dimension ", d);
    }
}

IndexCheck dim_check(const char* op, const Tensor& self, int64_t dim)
{
    IndexCheck c{op, self->dim() ? self->shape[dim] : 1};
    c.dim = dim;
    return c;
}

// derivative of gather, input input: zeros with g added at the places index names (scatter_add)
struct GatherBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    std::string name() const override { return "GatherBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        if (autograd::is_grad_enabled())  // create_graph: the scatter-add as an op (its gradient is gather)
            return {scatter(zeros(m.shape, g[0]->dtype, m.device), dim, index, g[0], true)};
        // Two launches: the zero fill and one scatter-add kernel into it (no copy of the zeros).
        Tensor grad = zeros(m.shape, g[0]->dtype, m.device);
        if (index->numel())
            kernels(m.device).scatter(WriteOp::Add, at_least_1d(grad), at_least_1d(g[0]), at_least_1d(index), dim,
                                      dim_check("gather", grad, dim));
        return {grad};
    }
    void release() override { index.reset(); }
};

// scatter: out = self; out[index] = src (or += src: scatter_add), along dim
// derivative of scatter, input self: g with the places index names set to zero
// derivative of scatter_add, input self: g
// derivative of scatter / scatter_add, input src: g.gather(dim, index)
struct ScatterBackward : autograd::Node {
    Tensor index;
    int64_t dim = 0;
    bool add = false;
    std::string name() const override { return add ? "ScatterAddBackward0" : "ScatterBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gself, gsrc;
        if (needs_input_grad(0))
            gself = add ? g[0] : scatter(g[0], dim, index, expand(zeros({}, g[0]->dtype, g[0]->device()), index->shape), false);
        if (needs_input_grad(1)) gsrc = gather(g[0], dim, index);
        return {gself, gsrc};
    }
    void release() override { index.reset(); }
};

// scatter_reduce: out = self; out[index] reduced with src (sum, prod, mean, amax, amin) along
// dim; include_self=False leaves self's value out of every place index names.
// In the formulas below, N counts the values reduced into each place (1 for self where it
// takes part), "at index" is .gather(dim, index), and "self out" zeroes what belongs to a
// self left out (the places index names, when include_self is False).
// derivative of scatter_reduce sum, input self: g (self out)
// derivative of scatter_reduce sum, input src: g at index
// derivative of scatter_reduce mean, input self: g / N (self out)
// derivative of scatter_reduce mean, input src: (g / N) at index
// derivative of scatter_reduce prod, input self: g * (the product of the rest) = g * result / self, the product with self replaced by 1 where self is 0 (self out)
// derivative of scatter_reduce prod, input src: (g * result) at index / src; where src is the only 0 of its place, (g * the product with that src replaced by 1) at index
// derivative of scatter_reduce amax / amin, input self: g / E where self equals the result, else 0 (self out); E counts the values equal to the result at each place, self included only where it takes part
// derivative of scatter_reduce amax / amin, input src: (g / E) at index where src equals the result at index, else 0
struct ScatterReduceBackward : autograd::Node {
    Tensor index;
    Tensor self, src, result;  // prod, amax and amin only (sum's and mean's g does not depend on them)
    int64_t dim = 0;
    ScatterReduction reduce = ScatterReduction::Sum;
    bool include_self = true;
    std::string name() const override { return "ScatterReduceBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override;
    void release() override
    {
        self.reset();
        src.reset();
        index.reset();
        result.reset();
    }
};

// derivative of masked_fill, input self: g where mask is False, else 0
// derivative of masked_fill, input value: g where mask is True, else 0 (summed to value's shape by its expand)
struct MaskedFillBackward : autograd::Node {
    Tensor mask;
    std::string name() const override { return "MaskedFillBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor zero = expand(zeros({}, g[0]->dtype, g[0]->device()), g[0]->shape), gs, gv;
        if (needs_input_grad(0)) gs = where(mask, zero, g[0]);
        if (needs_input_grad(1)) gv = where(mask, g[0], zero);
        return {gs, gv};
    }
    void release() override { mask.reset(); }
};

// derivative of masked_select, input input: zeros with g written at the selected positions (summed to input's shape)
struct MaskedSelectBackward : autograd::Node {
    Tensor positions;  // (n,) flat positions in the broadcast shape
    Shape shape;       // the broadcast shape of input and mask
    std::string name() const override { return "MaskedSelectBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        int64_t n = 1;
        for (int64_t s : shape) n *= s;
        Tensor flat = scatter(zeros({n}, g[0]->dtype, g[0]->device()), 0, positions, g[0], true);
        return {autograd::sum_to(reshape(flat, shape), input_meta[0].shape)};
    }
    void release() override { positions.reset(); }
};

// index: self[indices], NumPy's advanced indexing on self's first k dims
// derivative of index, input self: zeros with g added at the indexed places (index_put with accumulate)
struct IndexBackward : autograd::Node {
    std::vector<Tensor> indices;  // k 1-D int64 views of nb positions, as the kernel takes them
    std::string name() const override { return "IndexBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override;
    void release() override { indices.clear(); }
};

// index_put: out = self; out[indices] = values (or += values with accumulate)
// derivative of index_put, input self: g, with the indexed places set to zero unless accumulate
// derivative of index_put, input values: g[indices]
struct IndexPutBackward : autograd::Node {
    std::vector<Tensor> indices;  // as IndexBackward's
    bool accumulate = false;
    std::string name() const override { return "IndexPutBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override;
    void release() override { indices.clear(); }
};

// The k index tensors (int64, or bool masks, which stand for their nonzero() columns),
// broadcast against each other, each as a 1-D view of the nb broadcast positions: a view,
// not a copy, unless broadcasting spreads an index over several dims (x[i[:, None], j]).
// bshape receives the broadcast shape.
std::vector<Tensor> index_rows(const char* op, const Tensor& self, const std::vector<Tensor>& indices, Shape& bshape)
{
    std::vector<Tensor> idx;
    for (const Tensor& given : indices) {
        MT_CHECK(given, op, ": indices must be tensors (None is not supported here)");
        check_same_device(op, self, given);
        MT_CHECK_TYPE(is_integral(given->dtype) || given->dtype == DType::Bool, op,
                      ": tensors used as indices must be long, int, byte or bool, got ", given->dtype);
        // As in PyTorch: int32/int16/int8 indices are indices, a uint8 tensor is a mask.
        const Tensor i = given->dtype == DType::UInt8 ? to_dtype(given, DType::Bool)
                         : is_integral(given->dtype) ? to_dtype(given, DType::Int64) : given;
        if (i->dtype == DType::Int64) {
            idx.push_back(i);
            continue;
        }
        const int64_t d = int64_t(idx.size());
        MT_CHECK_INDEX(d + i->dim() <= self->dim(), op, ": too many indices for tensor of dimension ", self->dim());
        for (int64_t k = 0; k < i->dim(); ++k)
            MT_CHECK_INDEX(i->shape[k] == self->shape[d + k], op, ": the shape of the mask ", i->shape,
                           " at index ", k, " does not match the shape of the indexed tensor ", self->shape);
        Tensor pos = nonzero(i);  // (n, i.dim()): column k indexes dim d + k
        for (int64_t k = 0; k < i->dim(); ++k) idx.push_back(select(pos, 1, k));
    }
    MT_CHECK_INDEX(int64_t(idx.size()) <= self->dim(), op, ": too many indices for tensor of dimension ", self->dim(),
                   " (got ", idx.size(), ")");
    MT_CHECK(!idx.empty(), op, ": expected at least one index tensor");
    bshape = idx[0]->shape;
    for (const Tensor& i : idx) bshape = broadcast_shapes(bshape, i->shape, op);
    int64_t nb = 1;
    for (int64_t s : bshape) nb *= s;
    std::vector<Tensor> rows;
    for (const Tensor& i : idx) rows.push_back(reshape(expand(i, bshape), {nb}));
    return rows;
}

// The shape of self[rows]: (nb, self's dims after the k indexed ones).
Shape indexed_shape(const Tensor& self, const std::vector<Tensor>& rows)
{
    Shape shape{rows[0]->shape[0]};
    for (int64_t d = int64_t(rows.size()); d < self->dim(); ++d) shape.push_back(self->shape[d]);
    return shape;
}

// self[rows] as an (nb, rest) contiguous tensor: one kernel.
Tensor index_get(const Tensor& self, const std::vector<Tensor>& rows, const char* op)
{
    Tensor out = empty(indexed_shape(self, rows), self->dtype, self->device());
    if (out->numel()) kernels(self->device()).index_put(WriteOp::Put, true, self, out, rows, op);
    return out;
}

// values (of self[rows]'s shape, any strides) written or added into self where it lies.
void index_write(const Tensor& self, const std::vector<Tensor>& rows, const Tensor& values, bool accumulate,
                 const char* op)
{
    if (values->numel())
        kernels(self->device()).index_put(accumulate ? WriteOp::Add : WriteOp::Put, false, self, values, rows, op);
}

// A copy of self with values written or added at the indexed places.
Tensor index_put_rows(const Tensor& self, const std::vector<Tensor>& rows, const Tensor& values, bool accumulate)
{
    Tensor out = clone(self);
    index_write(out, rows, values, accumulate, "index_put");
    return out;
}

std::vector<Tensor> IndexBackward::apply(std::vector<Tensor>& g)
{
    const auto& m = input_meta[0];
    Tensor grad = zeros(m.shape, g[0]->dtype, m.device);
    const Shape shape = indexed_shape(grad, indices);
    if (autograd::is_grad_enabled())  // create_graph: the accumulation as an op (its gradient is index)
        return {index_put(grad, indices, reshape(g[0], shape), true)};
    index_write(grad, indices, reshape(g[0], shape), true, "index");  // zero fill + one kernel
    return {grad};
}

std::vector<Tensor> IndexPutBackward::apply(std::vector<Tensor>& g)
{
    Tensor gs, gv;
    if (needs_input_grad(0))
        gs = accumulate ? g[0]
                        : index_put_rows(g[0], indices,
                                         expand(zeros({}, g[0]->dtype, g[0]->device()), indexed_shape(g[0], indices)),
                                         false);
    if (needs_input_grad(1)) gv = reshape(index_get(g[0], indices, "index_put"), input_meta[1].shape);
    return {gs, gv};
}

// values broadcast to the shape of self[indices] (bshape, then self's dims after the k
// indexed ones), PyTorch's rule: leading size-1 dims of values dropped, then expand.
Tensor broadcast_values(const char* op, const Tensor& self, const Tensor& values, const Shape& bshape, size_t k)
{
    Shape target = bshape;
    for (int64_t d = int64_t(k); d < self->dim(); ++d) target.push_back(self->shape[d]);
    Tensor v = values;
    while (v->dim() > int64_t(target.size()) && v->shape[0] == 1) v = select(v, 0, 0);
    bool fits = v->dim() <= int64_t(target.size());
    for (int64_t d = 1; fits && d <= v->dim(); ++d)
        fits = v->shape[v->dim() - d] == 1 || v->shape[v->dim() - d] == target[target.size() - d];
    MT_CHECK(fits, op, ": shape mismatch: value tensor of shape ", values->shape,
             " cannot be broadcast to indexing result of shape ", target);
    return expand(v, target);  // recorded: the values' gradient sums over what was broadcast
}

// The checks scatter and scatter_reduce share (devices, dtypes, shapes; dim wrapped in
// place), then src seen as index's shape: a src of one element and other dims stands for a
// value (expanded, scatter only); a larger src takes part with its leading corner only.
// Both are recorded views, so src's gradient is theirs.
Tensor scatter_source(const char* op, const Tensor& t, int64_t& dim, const Tensor& index, const Tensor& src,
                      bool value_allowed)
{
    check_same_device(op, t, index);
    check_same_device(op, t, src);
    check_index_dtype(op, index);
    MT_CHECK_TYPE(src->dtype == t->dtype, op, ": expected self and src to have the same dtype, got ", t->dtype,
                  " and ", src->dtype);
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), op);
    MT_CHECK(src->dim() == index->dim() || (value_allowed && src->numel() == 1), op, ": index ", index->shape,
             " and src ", src->shape, " must have the same number of dimensions");
    check_dim_shapes(op, t, dim, index, src->dim() == index->dim() ? src : nullptr);
    Tensor s = src;
    if (src->dim() != index->dim()) {
        s = expand(reshape(src, {}), index->shape);
    } else if (src->shape != index->shape) {
        for (int64_t d = 0; d < index->dim(); ++d) s = slice(s, d, 0, index->shape[d], 1);
    }
    return s;
}

// The value a reduction starts from, which changes nothing (include_self=False puts it
// where self's value would have taken part): 0, 1, or the lowest / highest of the dtype.
Scalar reduction_identity(ScatterReduction r, DType dt)
{
    if (r == ScatterReduction::Sum || r == ScatterReduction::Mean) return Scalar(int64_t(0));
    if (r == ScatterReduction::Prod) return Scalar(int64_t(1));
    const bool low = r == ScatterReduction::Amax;
    if (dt == DType::Bool) return Scalar(!low);
    if (is_floating(dt)) return Scalar(low ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
    switch (dt) {
        case DType::UInt8: return Scalar(int64_t(low ? 0 : 255));
        case DType::Int8: return Scalar(int64_t(low ? -128 : 127));
        case DType::Int16: return Scalar(int64_t(low ? -32768 : 32767));
        case DType::Int32: return Scalar(int64_t(low ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max()));
        default: return Scalar(low ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max());
    }
}

WriteOp write_op_of(ScatterReduction r)
{
    switch (r) {
        case ScatterReduction::Prod: return WriteOp::Mul;
        case ScatterReduction::Amax: return WriteOp::Max;
        case ScatterReduction::Amin: return WriteOp::Min;
        default: return WriteOp::Add;  // sum, and mean's sum
    }
}

// How many values each place of self's shape reduces (mean's backward): 1 for self where it
// takes part (everywhere if include_self, else where index names nothing) plus one per
// element of src that lands there. In dt, made of ops (create_graph records them).
Tensor reduce_counts(const Shape& shape, int64_t dim, const Tensor& index, bool include_self, DType dt, Device dev)
{
    Tensor count = full(shape, Scalar(int64_t(include_self ? 1 : 0)), dt, dev);
    return scatter(count, dim, index, expand(full({}, Scalar(int64_t(1)), dt, dev), index->shape), true);
}

}  // namespace

ScatterReduction scatter_reduction(const std::string& name)
{
    if (name == "sum") return ScatterReduction::Sum;
    if (name == "prod") return ScatterReduction::Prod;
    if (name == "mean") return ScatterReduction::Mean;
    if (name == "amax") return ScatterReduction::Amax;
    if (name == "amin") return ScatterReduction::Amin;
    throw ValueError(detail::str("scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, got '",
                                 name, "'"));
}

Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduction reduce,
                      bool include_self)
{
    const char* op = "scatter_reduce";
    MT_PROFILE_OP(op, t, index, src);
    const Tensor s = scatter_source(op, t, dim, index, src, false);
    MT_CHECK_TYPE(reduce != ScatterReduction::Mean || t->dtype != DType::Bool, op,
                  ": reduce='mean' is not implemented for bool tensors");
    const IndexCheck check = dim_check(op, t, dim);
    auto forward = [&] {
        Tensor out = clone(at_least_1d(t));  // contiguous
        if (!index->numel()) return reshape(out, t->shape);
        const KernelTable& k = kernels(t->device());
        const Device dev = t->device();
        const Tensor idx = at_least_1d(index);
        // include_self=False: the places index names start from the reduction's identity.
        Tensor start;
        if (!include_self) {
            start = expand(full({1}, reduction_identity(reduce, t->dtype), t->dtype, dev), idx->shape);
            k.scatter(WriteOp::Put, out, start, idx, dim, check);
        }
        k.scatter(write_op_of(reduce), out, at_least_1d(s), idx, dim, check);
        if (reduce == ScatterReduction::Mean) {
            // The sum divided by how many values each place holds: 1 for self (or 0 where
            // it was left out) plus one per src element; a place nothing reached counts 1,
            // so that it keeps its value. Integers round down, as PyTorch's.
            Tensor count = full(out->shape, Scalar(int64_t(1)), t->dtype, dev);
            if (!include_self) k.scatter(WriteOp::Put, count, start, idx, dim, check);  // start is 0 for mean
            k.scatter(WriteOp::Add, count, expand(full({1}, Scalar(int64_t(1)), t->dtype, dev), idx->shape), idx, dim,
                      check);
            out = binary(is_floating(t->dtype) ? BinaryOp::Div : BinaryOp::FloorDivide, out, count);
        }
        return reshape(out, t->shape);
    };
    return autograd::record_op<ScatterReduceBackward>({&t, &s}, forward, [&](ScatterReduceBackward& n, const Tensor& out) {
        n.index = autograd::save(n, index);
        if (reduce != ScatterReduction::Sum && reduce != ScatterReduction::Mean) {  // the values matter
            n.self = autograd::save(n, t);
            n.src = autograd::save(n, s);
            n.result = autograd::save(n, out);
        }
        n.dim = dim;
        n.reduce = reduce;
        n.include_self = include_self;
    });
}

// The formulas stated above the node, as ops (so that create_graph differentiates them).
std::vector<Tensor> ScatterReduceBackward::apply(std::vector<Tensor>& g)
{
    const Tensor& grad = g[0];
    const Device dev = grad->device();
    const DType dt = grad->dtype;
    const Shape& self_shape = input_meta[0].shape;
    auto zero = [&] { return full({}, Scalar(int64_t(0)), dt, dev); };
    auto one = [&] { return full({}, Scalar(int64_t(1)), dt, dev); };
    auto at_index = [&](const Tensor& x) { return gather(x, dim, index); };
    auto mul = [](const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); };
    auto div = [](const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); };
    auto eq = [](const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); };
    // x with the places index names set to 0 (false): where a self left out of the
    // reduction has no part in the result (ScatterBackward's formula for self).
    auto zero_at_index = [&](const Tensor& x) {
        return scatter(x, dim, index, expand(zeros({}, x->dtype, dev), index->shape), false);
    };
    Tensor gself, gsrc;
    switch (reduce) {
        case ScatterReduction::Sum:
            gself = grad;
            gsrc = at_index(grad);
            break;
        case ScatterReduction::Mean: {
            // a place nothing reached counts 0 but passes g through whole (its value is self's)
            const Tensor n = binary(BinaryOp::Maximum, reduce_counts(self_shape, dim, index, include_self, dt, dev), one());
            const Tensor g_per = div(grad, n);
            gself = g_per;
            gsrc = at_index(g_per);
            break;
        }
        case ScatterReduction::Prod: {
            // Dividing the result by a factor fails where that factor is 0: there the
            // derivative is the product of the others, computed again with the 0 replaced by 1.
            const Tensor self_zero = eq(self, zero());
            const Tensor self_or_one = where(self_zero, one(), self);
            gself = div(mul(grad, scatter_reduce(self_or_one, dim, index, src, reduce, include_self)), self_or_one);
            const Tensor src_zero = eq(src, zero());
            const Tensor zeros_there =
                at_index(scatter(full(self_shape, Scalar(int64_t(0)), dt, dev), dim, index, to_dtype(src_zero, dt), true));
            const Tensor single_zero = binary(BinaryOp::LogicalAnd, src_zero, eq(zeros_there, one()));
            const Tensor src_or_one = where(single_zero, one(), src);
            const Tensor without = scatter_reduce(self, dim, index, src_or_one, reduce, include_self);
            gsrc = where(single_zero, at_index(mul(grad, without)),
                         div(at_index(mul(grad, result)), where(src_zero, one(), src)));
            break;
        }
        case ScatterReduction::Amax:
        case ScatterReduction::Amin: {
            // A tie shares g evenly among the values equal to the result; a self left out
            // is not one of them (PyTorch 2.x counts it, and src's share comes out too small).
            Tensor self_is = eq(self, result);
            if (!include_self) self_is = zero_at_index(self_is);
            const Tensor src_is = eq(src, at_index(result));
            const Tensor ties = scatter(to_dtype(self_is, dt), dim, index, to_dtype(src_is, dt), true);
            const Tensor share = div(grad, binary(BinaryOp::Maximum, ties, one()));
            gself = where(self_is, share, zero());
            gsrc = where(src_is, at_index(share), zero());
            break;
        }
    }
    if (!include_self) gself = zero_at_index(gself);
    return {needs_input_grad(0) ? gself : Tensor{}, needs_input_grad(1) ? gsrc : Tensor{}};
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index)
{
    MT_PROFILE_OP("gather", t, index);
    check_same_device("gather", t, index);
    check_index_dtype("gather", index);
    dim = wrap_dim(dim, std::max<int64_t>(t->dim(), 1), "gather");
    check_dim_shapes("gather", t, dim, index, nullptr);
    const IndexCheck check = dim_check("gather", t, dim);
    auto forward = [&] {
        Tensor idx = at_least_1d(index);
        Tensor out = empty(idx->shape, t->dtype, t->device());
        if (out->numel()) kernels(t->device()).gather(out, at_least_1d(t), idx, dim, check);
        return reshape(out, index->shape);
    };
    return autograd::record_op<GatherBackward>({&t}, forward, [&](GatherBackward& n, const Tensor&) {
        n.index = autograd::save(n, index);
        n.dim = dim;
    });
}

Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, bool add)
{
    const char* op = add ? "scatter_add" : "scatter";
    MT_PROFILE_OP(op, t, index, src);
    const Tensor s = scatter_source(op, t, dim, index, src, true);
    const IndexCheck check = dim_check(op, t, dim);
    auto forward = [&] {
        Tensor out = clone(at_least_1d(t));  // contiguous
        if (index->numel())
            kernels(t->device()).scatter(add ? WriteOp::Add : WriteOp::Put, out, at_least_1d(s), at_least_1d(index),
                                         dim, check);
        return reshape(out, t->shape);
    };
    return autograd::record_op<ScatterBackward>({&t, &s}, forward, [&](ScatterBackward& n, const Tensor&) {
        n.index = autograd::save(n, index);
        n.dim = dim;
        n.add = add;
    });
}

namespace {

// masked_fill's checks, and the value as the where kernel takes it: in t's dtype, expanded to
// t's shape (recorded: its gradient sums). A value that needs no gradient stays a host number
// on a GPU: the kernel takes it as an argument.
Tensor masked_fill_value(const Tensor& t, const Tensor& mask, const Tensor& value, const char* op)
{
    check_same_device(op, t, mask);
    MT_CHECK_TYPE(mask->dtype == DType::Bool, op, ": expected a bool mask, got ", mask->dtype);
    MT_CHECK(value->dim() == 0, op, ": only supports a 0-dimensional value tensor, but got one with ", value->dim(),
             " dimension(s)");
    MT_CHECK(broadcast_shapes(t->shape, mask->shape, op) == t->shape, op, ": mask of shape ", mask->shape,
             " cannot be broadcast to the tensor's shape ", t->shape);
    const bool on_host = !t->device().is_cpu() && value->device().is_cpu() && !value->requires_grad;
    const Tensor placed = value->device() == t->device() || on_host ? value : to_device(value, t->device());
    return expand(kernel_operand(placed, t->dtype, t->device()), t->shape);
}

}  // namespace

Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value)
{
    MT_PROFILE_OP("masked_fill", t, mask, value);
    Tensor v = masked_fill_value(t, mask, value, "masked_fill");
    Tensor m = expand(mask, t->shape);
    auto forward = [&] {
        Tensor out = empty(t->shape, t->dtype, t->device());
        if (out->numel()) kernels(t->device()).where(out, m, v, t);
        return out;
    };
    return autograd::record_op<MaskedFillBackward>({&t, &v}, forward, [&](MaskedFillBackward& n, const Tensor&) {
        n.mask = m;
        n.has_saved = true;
    });
}

// t.masked_fill_(mask, value): one where launch that writes t itself (out = t and b = t: each
// element reads its own old value, then writes it). Inside a graph, as hardtanh_ does: the
// write, then the node (it keeps only the mask) recorded with t as its output, so t's history
// becomes the node. A view of a live base, a value that needs a gradient, or a mask or value in
// t's own memory (they would change under the write) take the general path: computed aside,
// then written in (rebased inside a graph).
void masked_fill_(const Tensor& t, const Tensor& mask, const Tensor& value)
{
    MT_PROFILE_OP(profiler::inplace("masked_fill"), t, mask, value);
    Tensor v = masked_fill_value(t, mask, value, "masked_fill_");
    check_no_internal_overlap(t, "masked_fill_");
    const bool in_graph = autograd::inplace_in_graph(t, {&value});
    if (in_graph) autograd::check_rebase(t, "masked_fill_");
    const bool shares_t = mask->storage == t->storage || value->storage == t->storage;
    if (shares_t || (in_graph && (autograd::live_view(t) || value->requires_grad))) {
        if (in_graph) autograd::rebase_history(t, masked_fill(t, mask, value), "masked_fill_");
        else copy_(t, masked_fill(t, mask, value));
        return;
    }
    const Tensor m = expand(mask, t->shape);
    if (t->numel()) kernels(t->device()).where(t, m, v, t);
    autograd::bump_version(t);
    if (!in_graph || t->numel() == 0) return;
    auto node = std::make_shared<MaskedFillBackward>();
    autograd::record(node, std::vector<Tensor>{t, v}, std::vector<Tensor>{t});
    node->mask = m;
    node->has_saved = true;
}

Tensor nonzero(const Tensor& t)
{
    MT_PROFILE_OP("nonzero", t);
    Tensor in = contiguous(t);
    Tensor count = empty({1}, DType::Int64, t->device());
    auto& k = kernels(t->device());
    if (in->numel()) k.nonzero(nullptr, count, in);
    else fill_(count, Scalar(int64_t(0)));
    // The result's size depends on the values: the host reads the count (PyTorch waits too).
    const int64_t n = to_device(count, Device{})->data_as<int64_t>()[0];
    Tensor out = empty({n, t->dim()}, DType::Int64, t->device());
    if (out->numel()) k.nonzero(out, nullptr, in);
    return out;
}

Tensor masked_select(const Tensor& t, const Tensor& mask)
{
    MT_PROFILE_OP("masked_select", t, mask);
    check_same_device("masked_select", t, mask);
    MT_CHECK_TYPE(mask->dtype == DType::Bool, "masked_select: expected a bool mask tensor, got ", mask->dtype);
    const Shape shape = broadcast_shapes(t->shape, mask->shape, "masked_select");
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    Tensor found = nonzero(reshape(contiguous(expand(mask, shape)), {numel}));  // (n, 1)
    Tensor positions = reshape(found, {found->shape[0]});
    auto forward = [&] {
        Tensor out = empty({positions->numel()}, t->dtype, t->device());
        if (out->numel())
            kernels(t->device()).gather(out, reshape(contiguous(expand(t, shape)), {numel}), positions, 0,
                                        IndexCheck{"masked_select", numel});
        return out;
    };
    return autograd::record_op<MaskedSelectBackward>({&t}, forward, [&](MaskedSelectBackward& n, const Tensor&) {
        n.positions = positions;
        n.shape = shape;
        n.has_saved = true;
    });
}

Tensor index(const Tensor& t, const std::vector<Tensor>& indices)
{
    MT_PROFILE_OP("index", t, indices);
    Shape bshape;
    const std::vector<Tensor> rows = index_rows("index", t, indices, bshape);
    auto forward = [&] {
        Shape shape = bshape;
        for (int64_t d = int64_t(rows.size()); d < t->dim(); ++d) shape.push_back(t->shape[d]);
        return reshape(index_get(t, rows, "index"), shape);
    };
    return autograd::record_op<IndexBackward>({&t}, forward, [&](IndexBackward& n, const Tensor&) {
        n.indices = rows;
        n.has_saved = true;
    });
}

Tensor index_put(const Tensor& t, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate)
{
    MT_PROFILE_OP("index_put", t, indices, values);
    check_same_device("index_put", t, values);
    MT_CHECK_TYPE(values->dtype == t->dtype, "index_put: values (", values->dtype, ") must have self's dtype (",
                  t->dtype, ")");
    Shape bshape;
    const std::vector<Tensor> rows = index_rows("index_put", t, indices, bshape);
    Tensor v = broadcast_values("index_put_", t, values, bshape, rows.size());
    auto forward = [&] { return index_put_rows(t, rows, reshape(v, indexed_shape(t, rows)), accumulate); };
    return autograd::record_op<IndexPutBackward>({&t, &v}, forward, [&](IndexPutBackward& n, const Tensor&) {
        n.indices = rows;
        n.accumulate = accumulate;
        n.has_saved = true;
    });
}

void index_put_(const Tensor& t, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate)
{
    MT_PROFILE_OP(profiler::inplace("index_put"), t, indices, values);
    check_same_device("index_put_", t, values);
    check_no_internal_overlap(t, "index_put_");
    MT_CHECK_TYPE(values->dtype == t->dtype, "index_put_: values (", values->dtype, ") must have self's dtype (",
                  t->dtype, ")");
    if (autograd::inplace_in_graph(t, {&values})) {  // x[i] = v inside a graph: rebase (autograd.h)
        autograd::check_rebase(t, "index_put_");
        autograd::rebase_history(t, index_put(t, indices, values, accumulate), "index_put_");
        return;
    }
    Shape bshape;
    const std::vector<Tensor> rows = index_rows("index_put_", t, indices, bshape);
    Tensor v = reshape(broadcast_values("index_put_", t, values, bshape, rows.size()), indexed_shape(t, rows));
    if (v->storage == t->storage) v = clone(v);  // x[i] = x[j:k] must not read what it wrote
    index_write(t, rows, v, accumulate, "index_put_");
    autograd::bump_version(t);
}

}  // namespace minitorch
