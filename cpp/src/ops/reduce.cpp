// reduce.cpp — sum / mean / max / min / argmax / argmin along dims, and the statistics
// var / std / var_mean / std_mean / logsumexp / norm (one reduce_stats kernel each).
//
// One recipe for all: see the input as a contiguous (outer, R, inner) tensor whose middle
// dim holds the reduced dims, and let the kernel reduce that middle dim. When the reduced
// dims are adjacent in a dense layout this is a view (no copy); otherwise one copy moves
// them last (inner = 1).
#include <algorithm>
#include <cmath>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"
#include "minitorch/stats_math.h"

namespace minitorch {

namespace {

struct Plan {
    Tensor in;          // contiguous (outer, R, inner): the kernel reduces dim 1
    Shape out_shape;    // with or without the reduced dims, as keepdim says
};

// Are `order`'s dims (sizes > 1) laid out densely, the last one with stride 1?
bool dense_in_order(const Tensor& t, const std::vector<int64_t>& order)
{
    int64_t expected = 1;
    for (auto d = order.rbegin(); d != order.rend(); ++d) {
        if (t->strides[*d] != expected) return false;
        expected *= t->shape[*d];
    }
    return true;
}

// Do the dims of one kind (reduced or kept) appear in `order` in increasing order?
bool keeps_order(const std::vector<int64_t>& order, const std::vector<bool>& reduced, bool kind)
{
    int64_t last = -1;
    for (int64_t d : order)
        if (reduced[d] == kind) {
            if (d < last) return false;
            last = d;
        }
    return true;
}

// dims empty = reduce every dim. indices: the caller wants positions along the reduced
// dims (max(dim), argmax), which must count in the input's own dim order.
//
// Examples of views (no copy): sum(0) of a contiguous (4096, 4096) is (1, 4096, 4096);
// sum(-1) is (4096, 4096, 1); dims (1, 2) of (A, B, C, D) is (A, B*C, D). Size-1 dims do
// not matter (they may sit anywhere). A permuted contiguous tensor (x.T) is read in memory
// order (largest stride first) when that keeps the kept dims in their order, so the output
// is laid out as its shape says (and, with indices, the reduced dims too).
Plan plan_reduce(const Tensor& t, std::vector<int64_t> dims, bool keepdim, const char* op, bool indices = false)
{
    const int64_t n = t->dim();
    std::vector<bool> reduced(n, dims.empty());
    for (int64_t d : dims) {
        int64_t w = wrap_dim(d, n, op);
        if (n == 0) continue;
        MT_CHECK(!reduced[w], op, ": dim ", w, " appears multiple times in the list of dims");
        reduced[w] = true;
    }
    Shape out_shape;
    for (int64_t d = 0; d < n; ++d)
        if (!reduced[d]) out_shape.push_back(t->shape[d]);
        else if (keepdim) out_shape.push_back(1);

    // The dims that matter, in the order memory holds them.
    std::vector<int64_t> order;
    for (int64_t d = 0; d < n; ++d)
        if (t->shape[d] != 1) order.push_back(d);
    bool in_place = t->is_contiguous();
    if (!in_place) {
        auto larger_stride = [&](int64_t a, int64_t b) { return t->strides[a] > t->strides[b]; };
        std::stable_sort(order.begin(), order.end(), larger_stride);
        in_place = dense_in_order(t, order) && keeps_order(order, reduced, false) &&
                   (!indices || keeps_order(order, reduced, true));
    }
    // In place if the reduced dims are one run of `order`: [first, last).
    auto first = std::find_if(order.begin(), order.end(), [&](int64_t d) { return reduced[d]; });
    auto last = std::find_if(first, order.end(), [&](int64_t d) { return !reduced[d]; });
    in_place = in_place && std::none_of(last, order.end(), [&](int64_t d) { return reduced[d]; });
    auto size_of = [&](auto b, auto e) {
        int64_t s = 1;
        for (; b != e; ++b) s *= t->shape[*b];
        return s;
    };
    if (in_place) {
        Shape s3{size_of(order.begin(), first), size_of(first, last), size_of(last, order.end())};
        return {make_view(t, s3, contiguous_strides(s3), t->offset), out_shape};
    }
    // Otherwise one contiguous copy, kept dims first and reduced dims last (inner = 1).
    std::vector<int64_t> perm;
    int64_t outer = 1, reduce_size = 1;
    for (int64_t d = 0; d < n; ++d)
        if (!reduced[d]) perm.push_back(d), outer *= t->shape[d];
    for (int64_t d = 0; d < n; ++d)
        if (reduced[d]) perm.push_back(d), reduce_size *= t->shape[d];
    return {view(contiguous(permute(t, perm)), {outer, reduce_size, 1}), out_shape};
}

// The max / min / arg* family: values and/or indices of the best element per row.
std::tuple<Tensor, Tensor> best(ReduceOp op, const Tensor& t, std::vector<int64_t> dims, bool keepdim,
                                bool want_values, bool want_indices, const char* name)
{
    Plan p = plan_reduce(t, std::move(dims), keepdim, name, want_indices);
    MT_CHECK_INDEX(p.in->shape[1] > 0, name, ": expected the reduced dims to have non-zero size (input shape ", t->shape,
                   ")");
    Tensor values = want_values ? empty(p.out_shape, t->dtype, t->device()) : nullptr;
    Tensor indices = want_indices ? empty(p.out_shape, DType::Int64, t->device()) : nullptr;
    if (p.in->numel()) kernels(t->device()).reduce(op, values, indices, p.in);
    return {values, indices};
}

}  // namespace

namespace {

// sum, or (is_mean) mean: the sum divided by the line's length inside the one kernel.
Tensor sum_forward(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype,
                   bool is_mean = false)
{
    // Integer and bool sums are int64, like PyTorch. A bool input counted into int64 goes to
    // the kernel as it is (the kernels read bools and count in int64).
    DType out_t = dtype ? *dtype : (is_floating(t->dtype) ? t->dtype : DType::Int64);
    const bool count = !is_mean && t->dtype == DType::Bool && out_t == DType::Int64;
    Plan p = plan_reduce(count ? t : to_dtype(t, out_t), std::move(dims), keepdim, is_mean ? "mean" : "sum");
    Tensor out = empty(p.out_shape, out_t, t->device());
    if (out->numel() == 0) return out;
    if (p.in->shape[1] == 0) {
        // The sum of nothing is 0; the mean of nothing is NaN (0 / 0), as in PyTorch and NumPy.
        fill_(out, Scalar(is_mean ? NAN : 0.0));
        return out;
    }
    kernels(t->device()).reduce(is_mean ? ReduceOp::Mean : ReduceOp::Sum, out, nullptr, p.in);
    return out;
}

// ---- backward ----
using autograd::Node;

// The reduced dims (sorted, non-negative) for a dims argument; empty = all.
std::vector<int64_t> reduced_dims(const std::vector<int64_t>& dims, int64_t ndim)
{
    std::vector<int64_t> out;
    if (dims.empty())
        for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, "sum"));
    std::sort(out.begin(), out.end());
    return out;
}

// A reduced gradient back at the input's rank: size-1 dims where the reduction was.
Tensor unreduce(const Tensor& g, const std::vector<int64_t>& dims, bool keepdim)
{
    Tensor r = g;
    if (!keepdim)
        for (int64_t d : dims) r = unsqueeze(r, d);
    return r;
}

// d sum / dx = 1 everywhere: the gradient is broadcast back over the reduced dims.
// derivative of sum, input input: g expanded back to the input shape (mean: and divided by the count)
struct SumBackward : Node {
    std::vector<int64_t> dims;
    bool keepdim = false;
    bool all = true;    // sum() (SumBackward0) or sum(dim) (SumBackward1), as PyTorch names them
    int64_t count = 0;  // mean: the values each output averages (0: a sum)
    std::string name() const override
    {
        return std::string(count ? "MeanBackward" : "SumBackward") + (all ? "0" : "1");
    }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        Tensor r = expand(unreduce(g[0], dims, keepdim), m.shape);
        // mean: one kernel writes the whole gradient, dividing by the count as it goes (the
        // count stays a number on the host: no fill, no copy of it to the device)
        if (count) r = binary(BinaryOp::Div, r, scalar_tensor(Scalar(double(count)), Device{}));
        return {to_dtype(contiguous(r), m.dtype)};
    }
};

// max()/min() of everything: the gradient is shared evenly by the elements equal to
// the result (PyTorch's rule for ties).
// derivative of max() / min(), input input: g shared evenly among the elements equal to the result
struct MaxAllBackward : Node {
    Tensor x, out;
    bool is_max = true;
    std::string name() const override { return is_max ? "MaxBackward1" : "MinBackward1"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor hit = to_dtype(binary(BinaryOp::Eq, x, out), x->dtype);
        return {binary(BinaryOp::Mul, hit, binary(BinaryOp::Div, g[0], sum(hit, {}, false, std::nullopt)))};
    }
    void release() override { x.reset(), out.reset(); }
};

// max(dim)/min(dim): the gradient goes to the chosen index of each row.
// derivative of max(dim) / min(dim), input input: g at the index each row picked, 0 elsewhere
struct MaxDimBackward : Node {
    Tensor indices;  // keepdim form
    int64_t dim = 0;
    bool is_max = true;
    bool keepdim = false;
    std::string name() const override { return is_max ? "MaxBackward0" : "MinBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        if (m.shape.empty()) return {g[0]};  // max of a 0-dim tensor is itself
        Tensor gk = unreduce(g[0], {dim}, keepdim);
        // positions along `dim`, shaped (1, ..., size, ..., 1), compared with the indices
        Shape pos_shape(m.shape.size(), 1);
        pos_shape[dim] = m.shape[dim];
        Tensor pos = reshape(arange(0, double(m.shape[dim]), 1, DType::Int64, m.device), pos_shape);
        Tensor hit = binary(BinaryOp::Eq, pos, indices);
        return {where(hit, gk, scalar_tensor(Scalar(0.0), Device{}, gk->dtype))};  // a host 0: no fill
    }
    void release() override { indices.reset(); }
};

}  // namespace

Tensor sum(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    MT_PROFILE_OP("sum", t);
    return autograd::record_op<SumBackward>({&t}, [&] { return sum_forward(t, dims, keepdim, dtype); },
                                            [&](SumBackward& n, const Tensor&) {
                                                n.dims = t->dim() ? reduced_dims(dims, t->dim()) : std::vector<int64_t>{};
                                                n.keepdim = keepdim;
                                                n.all = dims.empty();
                                            });
}

Tensor mean(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    MT_PROFILE_OP("mean", t);
    // Check dims here so errors name mean, not the sum it is built from.
    std::vector<bool> seen(std::max<int64_t>(t->dim(), 1), false);
    for (int64_t d : dims) {
        int64_t w = wrap_dim(d, t->dim(), "mean");
        MT_CHECK(!seen[w], "mean: dim ", w, " appears multiple times in the list of dims");
        seen[w] = true;
    }
    DType out_t = dtype ? *dtype : t->dtype;
    MT_CHECK_TYPE(is_floating(out_t), "mean: could not infer output dtype; input dtype must be floating point, got ",
                  t->dtype, " (use .float() first or pass dtype=)");
    // One reduce kernel (ReduceOp::Mean): the sum divided by the count before its store.
    return autograd::record_op<SumBackward>(
        {&t}, [&] { return sum_forward(t, dims, keepdim, out_t, true); },
        [&](SumBackward& n, const Tensor&) {
            n.dims = t->dim() ? reduced_dims(dims, t->dim()) : std::vector<int64_t>{};
            n.keepdim = keepdim;
            n.all = dims.empty();
            n.count = 1;
            for (int64_t d : n.dims) n.count *= t->shape[d];
            n.count = std::max<int64_t>(n.count, 1);  // an empty input has an empty gradient
        });
}

namespace {

Tensor extreme_all(const Tensor& t, bool is_max)
{
    const char* name = is_max ? "max" : "min";
    MT_PROFILE_OP(name, t);
    MT_CHECK(t->numel() > 0, name, ": expected a non-empty tensor (shape ", t->shape, "); specify dim= for empty inputs");
    ReduceOp op = is_max ? ReduceOp::Max : ReduceOp::Min;
    return autograd::record_op<MaxAllBackward>({&t}, [&] { return std::get<0>(best(op, t, {}, false, true, false, name)); },
                                               [&](MaxAllBackward& n, const Tensor& out) {
                                                   n.is_max = is_max;
                                                   n.x = autograd::save(n, t);
                                                   n.out = autograd::save(n, out);
                                               });
}

std::tuple<Tensor, Tensor> extreme_dim(const Tensor& t, int64_t dim, bool keepdim, bool is_max)
{
    const char* name = is_max ? "max" : "min";
    MT_PROFILE_OP(name, t);
    ReduceOp op = is_max ? ReduceOp::Max : ReduceOp::Min;
    return autograd::record_op<MaxDimBackward>(
        {&t}, [&] { return best(op, t, {dim}, keepdim, true, true, name); },
        [&](MaxDimBackward& n, const std::tuple<Tensor, Tensor>& result) {
            n.is_max = is_max;
            n.dim = t->dim() ? wrap_dim(dim, t->dim(), name) : 0;
            n.keepdim = keepdim || t->dim() == 0;
            Tensor saved = autograd::save(n, std::get<1>(result));  // returned to the caller, who may change it
            n.indices = t->dim() && !keepdim ? unsqueeze(saved, n.dim) : saved;
        });
}

}  // namespace

Tensor max_all(const Tensor& t) { return extreme_all(t, true); }
Tensor min_all(const Tensor& t) { return extreme_all(t, false); }
std::tuple<Tensor, Tensor> max_dim(const Tensor& t, int64_t dim, bool keepdim) { return extreme_dim(t, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min_dim(const Tensor& t, int64_t dim, bool keepdim) { return extreme_dim(t, dim, keepdim, false); }

namespace {

// argmax / argmin: over one dim, or (dim=None) over the flattened tensor, where
// keepdim keeps every dim as size 1.
Tensor arg_extreme(ReduceOp op, const Tensor& t, std::optional<int64_t> dim, bool keepdim, const char* name)
{
    MT_PROFILE_OP(name, t);
    if (dim) return std::get<1>(best(op, t, {*dim}, keepdim, false, true, name));
    MT_CHECK(t->numel() > 0, name, ": expected a non-empty tensor (shape ", t->shape, ")");
    Tensor i = std::get<1>(best(op, reshape(t, {t->numel()}), {}, false, false, true, name));
    return keepdim ? reshape(i, Shape(t->dim(), 1)) : i;
}

}  // namespace

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim)
{
    return arg_extreme(ReduceOp::ArgMax, t, dim, keepdim, "argmax");
}

Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim)
{
    return arg_extreme(ReduceOp::ArgMin, t, dim, keepdim, "argmin");
}

// ---- statistics: var, std, var_mean, std_mean, logsumexp, norm ----

namespace {

// A number for a formula: a host 0-dim tensor, which binary() reads as a value (no device fill, as
// PyTorch's wrapped numbers)
Tensor scalar_like(double v, const Tensor&) { return scalar_tensor(Scalar(v), Device{}); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }

// The statistic `spec` of every line over dims (and the lines' means when want_mean): the
// reduce plan (a view, or one copy when the dims are not adjacent), then one kernel.
std::tuple<Tensor, Tensor> stats_forward(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim,
                                         StatReduce spec, bool want_mean, const char* op)
{
    Plan p = plan_reduce(t, dims, keepdim, op);
    Tensor out = empty(p.out_shape, t->dtype, t->device());
    Tensor mean = want_mean ? empty(p.out_shape, t->dtype, t->device()) : nullptr;
    if (!out->numel()) return {out, mean};
    if (p.in->shape[1] == 0) {  // empty lines: the statistic of no values
        fill_(out, Scalar(stat_result(spec, stat_none(spec))));
        if (mean) fill_(mean, Scalar(stat_mean(stat_none(spec))));
    } else {
        kernels(t->device()).reduce_stats(out, mean, p.in, spec);
    }
    return {out, mean};
}

// How many values each line holds.
int64_t line_count(const Tensor& t, const std::vector<int64_t>& sorted_dims)
{
    int64_t n = 1;
    for (int64_t d : sorted_dims) n *= t->shape[d];
    return n;
}

// derivative of var / std / var_mean / std_mean, input input: gv * 2 (x - mean) / (N - correction) with gv = g (var) or g / (2 std) (std; 0 where std is 0), plus g_mean / N for the mean output
struct MomentsBackward : Node {
    Tensor x, mean_saved, out_saved;  // as the op returned them (unreduce adds the reduced dims back)
    std::vector<int64_t> dims;
    bool keepdim = false, is_std = false, with_mean = false;
    double correction = 1;
    int64_t count = 0;
    std::string name() const override
    {
        return std::string(is_std ? "Std" : "Var") + (with_mean ? "MeanBackward0" : "Backward0");
    }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        // Under create_graph the mean is x's own (its gradient matters for the second
        // derivative); the saved one is a constant unless the op returned it.
        const Tensor mean = autograd::is_grad_enabled() && !with_mean ? minitorch::mean(x, dims, true, std::nullopt)
                                                                      : unreduce(mean_saved, dims, keepdim);
        const Tensor out = is_std ? unreduce(out_saved, dims, keepdim) : nullptr;
        Tensor gv = unreduce(g[0], dims, keepdim);
        const double scale = 2.0 / (double(count) - correction);
        Tensor gx;
        if (!autograd::is_grad_enabled()) {
            // Two kernels: std's g / (2 std) (0 where std is 0) on the reduced shape, as the
            // 2-norm's x * (g / y) with x = 1/2; then gv * scale * (x - mean) over x.
            if (is_std) gv = ternary(TernaryOp::NormBackward, gv, scalar_like(0.5, x), out, Scalar(0.0));
            gx = ternary(TernaryOp::VarBackward, gv, x, mean, Scalar(scale));
        } else {  // create_graph: the ops, whose own gradients double backward needs
            if (is_std) {
                Tensor zero = scalar_like(0.0, x);
                Tensor half = binary(BinaryOp::Div, gv, mul(out, scalar_like(2.0, x)));
                gv = where(binary(BinaryOp::Eq, out, zero), zero, half);
            }
            gx = mul(mul(gv, scalar_like(scale, x)), binary(BinaryOp::Sub, x, mean));
        }
        if (with_mean)
            gx = binary(BinaryOp::Add, gx,
                        binary(BinaryOp::Div, unreduce(g[1], dims, keepdim), scalar_like(double(count), x)));
        return {to_dtype(gx, input_meta[0].dtype)};
    }
    void release() override { x.reset(), mean_saved.reset(), out_saved.reset(); }
};

std::tuple<Tensor, Tensor> moments(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim,
                                   bool is_std, bool with_mean)
{
    const char* op = is_std ? (with_mean ? "std_mean" : "std") : (with_mean ? "var_mean" : "var");
    MT_PROFILE_OP(op, t);
    MT_CHECK_TYPE(is_floating(t->dtype), op, ": only supports floating-point dtypes, got ", t->dtype);
    const StatReduce spec{is_std ? StatReduce::Std : StatReduce::Var, correction};
    auto forward = [&] { return stats_forward(t, dims, keepdim, spec, true, op); };
    if (!autograd::needs_grad(t)) {
        auto r = forward();
        return with_mean ? r : std::tuple<Tensor, Tensor>{std::get<0>(r), nullptr};
    }
    std::tuple<Tensor, Tensor> r;
    {
        autograd::NoGradGuard guard;
        r = forward();
    }
    auto node = std::make_shared<MomentsBackward>();
    node->dims = t->dim() ? reduced_dims(dims, t->dim()) : std::vector<int64_t>{};
    node->keepdim = keepdim;
    node->is_std = is_std;
    node->with_mean = with_mean;
    node->correction = correction;
    node->count = line_count(t, node->dims);
    node->x = autograd::save(*node, t);
    node->mean_saved = autograd::save(*node, std::get<1>(r));
    if (is_std) node->out_saved = autograd::save(*node, std::get<0>(r));
    if (with_mean) autograd::record(node, {&t}, {&std::get<0>(r), &std::get<1>(r)});
    else autograd::record(node, {&t}, {&std::get<0>(r)}), std::get<1>(r) = nullptr;
    return r;
}

// derivative of logsumexp, input input: g * exp(x - logsumexp(x)) (the softmax over the reduced dims)
struct LogsumexpBackward : Node {
    Tensor x, out_saved;  // out as the op returned it
    std::vector<int64_t> dims;
    bool keepdim = false;
    std::string name() const override { return "LogsumexpBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const Tensor out = unreduce(out_saved, dims, keepdim);
        return {mul(unreduce(g[0], dims, keepdim), unary(UnaryOp::Exp, binary(BinaryOp::Sub, x, out)))};
    }
    void release() override { x.reset(), out_saved.reset(); }
};

// derivative of norm, input input: g * sign(x) * abs(x)^(p-1) / y^(p-1), 0 where y == 0 (p=2: g * x / y; p=1: g * sign(x); p=+-inf: g * sign(x) shared evenly among the elements whose abs equals y; p=0: 0)
struct NormBackward : Node {
    Tensor x, out_saved;  // out (the norm y) as the op returned it
    std::vector<int64_t> dims;
    bool keepdim = false;
    double p = 2;
    std::string name() const override { return "LinalgVectorNormBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const Tensor out = unreduce(out_saved, dims, keepdim);
        const Tensor gk = unreduce(g[0], dims, keepdim);
        const Tensor zero = scalar_like(0.0, x);
        if (p == 0) return {zeros(x->shape, x->dtype, x->device())};
        // p = 2 in one kernel, x * (g / y) and 0 where y == 0 (with create_graph, the ops below)
        if (p == 2 && !autograd::is_grad_enabled()) return {ternary(TernaryOp::NormBackward, gk, x, out, Scalar(0.0))};
        const Tensor sign = unary(UnaryOp::Sign, x);
        if (p == 1) return {mul(sign, gk)};
        const Tensor at_zero = binary(BinaryOp::Eq, out, zero);
        if (p == 2) return {mul(where(at_zero, zero, binary(BinaryOp::Div, x, out)), gk)};
        const Tensor ax = unary(UnaryOp::Abs, x);
        if (p == INFINITY || p == -INFINITY) {
            Tensor hit = to_dtype(binary(BinaryOp::Eq, ax, out), x->dtype);
            Tensor share = binary(BinaryOp::Div, hit, sum(hit, dims, true, std::nullopt));
            return {mul(mul(sign, share), gk)};
        }
        const Tensor pm1 = scalar_like(p - 1, x);
        Tensor d = binary(BinaryOp::Div, mul(sign, binary(BinaryOp::Pow, ax, pm1)), binary(BinaryOp::Pow, out, pm1));
        return {mul(where(at_zero, zero, d), gk)};
    }
    void release() override { x.reset(), out_saved.reset(); }
};

// One statistic with one output and its node N (logsumexp, norm): forward, and the node
// gets x and the output with the reduced dims kept.
template <class N>
Tensor single_stat(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim, StatReduce spec, const char* op,
                   N&& proto)
{
    return autograd::record_op<std::decay_t<N>>(
        {&t}, [&] { return std::get<0>(stats_forward(t, dims, keepdim, spec, false, op)); },
        [&](std::decay_t<N>& n, const Tensor& out) {
            n = proto;
            n.dims = t->dim() ? reduced_dims(dims, t->dim()) : std::vector<int64_t>{};
            n.keepdim = keepdim;
            n.x = autograd::save(n, t);
            n.out_saved = autograd::save(n, out);
        });
}

}  // namespace

Tensor var(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim)
{
    return std::get<0>(moments(t, std::move(dims), correction, keepdim, false, false));
}

Tensor std_dev(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim)
{
    return std::get<0>(moments(t, std::move(dims), correction, keepdim, true, false));
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim)
{
    return moments(t, std::move(dims), correction, keepdim, false, true);
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim)
{
    return moments(t, std::move(dims), correction, keepdim, true, true);
}

Tensor logsumexp(const Tensor& t, std::vector<int64_t> dims, bool keepdim)
{
    MT_PROFILE_OP("logsumexp", t);
    // Integers and bools are summed as the default float type, as PyTorch does.
    const Tensor x = is_floating(t->dtype) ? t : to_dtype(t, default_float());
    return single_stat(x, dims, keepdim, {StatReduce::LogSumExp, 0}, "logsumexp", LogsumexpBackward{});
}

Tensor norm(const Tensor& t, double p, std::vector<int64_t> dims, bool keepdim)
{
    MT_PROFILE_OP("norm", t);
    MT_CHECK_TYPE(is_floating(t->dtype), "norm: expected a floating point input, got ", t->dtype);
    if (std::isinf(p) && t->numel() == 0) {
        Plan plan = plan_reduce(t, dims, keepdim, "norm");
        MT_CHECK_INDEX(plan.in->shape[1] > 0, "norm: expected the reduced dims to have non-zero size for p = ", p,
                       " (input shape ", t->shape, ")");
    }
    NormBackward proto;
    proto.p = p;
    return single_stat(t, dims, keepdim, {StatReduce::Norm, p}, "norm", std::move(proto));
}

// ---- prod ----

namespace {

// The product over dims in out_t (int64 for integers and bools unless a dtype is given):
// the reduce plan, then the reduce kernel's Prod; the product of no values is 1.
Tensor prod_forward(const Tensor& t, std::vector<int64_t> dims, bool keepdim, DType out_t)
{
    const DType run_t = out_t == DType::Bool ? DType::Int64 : out_t;  // prod(dtype=bool): a count's truth
    Plan p = plan_reduce(to_dtype(t, run_t), std::move(dims), keepdim, "prod");
    Tensor out = empty(p.out_shape, run_t, t->device());
    if (out->numel() == 0) return to_dtype(out, out_t);
    if (p.in->shape[1] == 0) fill_(out, Scalar(1.0));
    else kernels(t->device()).reduce(ReduceOp::Prod, out, nullptr, p.in);
    return to_dtype(out, out_t);
}

// d prod / dx_i = the product of the other values of the line. Dividing out / x_i gives it
// only where the line has no zero, so (as PyTorch) P = the product of the line's non-zero
// values: no zero -> P / x_i; one zero -> P at the zero, 0 elsewhere; two or more -> 0.
// derivative of prod, input input: g * (P / x where the line has no zero; P at a line's only zero; 0 elsewhere), P = the product of the line's non-zero values
struct ProdBackward : Node {
    Tensor x;
    std::vector<int64_t> dims;  // sorted, non-negative; every dim for prod()
    bool keepdim = false;
    bool all = true;  // prod() (ProdBackward0) or prod(dim) (ProdBackward1), as PyTorch names them
    std::string name() const override { return all ? "ProdBackward0" : "ProdBackward1"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        const Device dev = x->device();
        Tensor zero = scalar_tensor(Scalar(0.0), dev, x->dtype), one = scalar_tensor(Scalar(1.0), dev, x->dtype);
        Tensor is_zero = binary(BinaryOp::Eq, x, zero);
        Tensor x_safe = where(is_zero, one, x);
        Tensor zeros_in_line = sum(is_zero, dims, true, DType::Int64);
        Tensor P = prod_forward(x_safe, dims, true, x->dtype);
        auto count_is = [&](int64_t k) { return binary(BinaryOp::Eq, zeros_in_line, scalar_tensor(Scalar(k), dev)); };
        Tensor factor = where(is_zero, where(count_is(1), P, zero),
                              where(count_is(0), binary(BinaryOp::Div, P, x_safe), zero));
        Tensor gk = unreduce(g[0], dims, keepdim);
        return {to_dtype(binary(BinaryOp::Mul, gk, factor), m.dtype)};
    }
    void release() override { x.reset(); }
};

}  // namespace

Tensor prod(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype)
{
    MT_PROFILE_OP("prod", t);
    // PyTorch: integers and bools multiply (and return) in int64 unless a dtype is given.
    const DType out_t = dtype ? *dtype : (is_floating(t->dtype) ? t->dtype : DType::Int64);
    Tensor in = to_dtype(t, out_t);  // differentiable: the cast's node sits below this op's
    return autograd::record_op<ProdBackward>({&in}, [&] { return prod_forward(in, dims, keepdim, out_t); },
                                             [&](ProdBackward& n, const Tensor&) {
                                                 n.x = autograd::save(n, in);
                                                 n.dims = in->dim() ? reduced_dims(dims, in->dim()) : std::vector<int64_t>{};
                                                 n.keepdim = keepdim;
                                                 n.all = dims.empty();
                                             });
}

}  // namespace minitorch
