// elementwise.cpp — unary map and binary zip ops: broadcasting, dtype promotion,
// the checks PyTorch makes, then one kernel call.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

const char* op_name(UnaryOp op)
{
    switch (op) {
        case UnaryOp::Neg: return "neg";
        case UnaryOp::Exp: return "exp";
        case UnaryOp::Log: return "log";
        case UnaryOp::Sqrt: return "sqrt";
        case UnaryOp::Abs: return "abs";
        case UnaryOp::Sigmoid: return "sigmoid";
        case UnaryOp::Relu: return "relu";
        case UnaryOp::Tanh: return "tanh";
        case UnaryOp::LogicalNot: return "logical_not";
        case UnaryOp::Sign: return "sign";
    }
    return "?";
}

const char* op_name(BinaryOp op)
{
    switch (op) {
        case BinaryOp::Add: return "add";
        case BinaryOp::Sub: return "sub";
        case BinaryOp::Mul: return "mul";
        case BinaryOp::Div: return "div";
        case BinaryOp::Pow: return "pow";
        case BinaryOp::Maximum: return "maximum";
        case BinaryOp::Minimum: return "minimum";
        case BinaryOp::Eq: return "eq";
        case BinaryOp::Ne: return "ne";
        case BinaryOp::Lt: return "lt";
        case BinaryOp::Le: return "le";
        case BinaryOp::Gt: return "gt";
        case BinaryOp::Ge: return "ge";
    }
    return "?";
}

// NumPy's rule: align shapes at the right; each pair of sizes must be equal or one of
// them 1, and the result takes the larger.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op)
{
    if (a == b) return a;
    const size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
        int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
        MT_CHECK(x == y || x == 1 || y == 1, op, ": shapes ", a, " and ", b,
                 " cannot be broadcast together (size ", x, " != ", y, " at dimension ", i, ")");
        out[i] = x == 1 ? y : x;
    }
    return out;
}

// PyTorch's promotion: tensors with dims decide first; a 0-dim tensor, then a Python
// number, only matter when they are of a higher category (bool < int < float). A
// Python float that wins gives the default dtype (float32), not float64.
DType result_type(const Tensor& a, const Tensor& b)
{
    auto tier = [](const Tensor& t) { return t->wrapped_number ? 0 : (t->dim() == 0 ? 1 : 2); };
    auto as_seen = [](const Tensor& t) {
        return (t->wrapped_number && t->dtype == DType::Float64) ? kDefaultFloat : t->dtype;
    };
    int ta = tier(a), tb = tier(b);
    if (ta == tb) {
        if (ta == 0) return promote(as_seen(a), as_seen(b));
        return promote(a->dtype, b->dtype);
    }
    const Tensor& hi = ta > tb ? a : b;
    const Tensor& lo = ta > tb ? b : a;
    DType lo_t = as_seen(lo);
    return category(lo_t) > category(hi->dtype) ? promote(hi->dtype, lo_t) : hi->dtype;
}

namespace {

// PyTorch lets a 0-dim CPU tensor (a number in tensor form) meet a tensor on any
// device: it is moved over (a 4-byte copy). Anything else must already match.
Tensor follow_device(const Tensor& t, const Tensor& other)
{
    if (t->device() != other->device() && t->dim() == 0 && t->device().is_cpu()) return to_device(t, other->device());
    return t;
}

// The dtype an op computes in, given the promoted input dtype.
DType compute_dtype(BinaryOp op, DType common, const Tensor& a, const Tensor& b)
{
    if (op == BinaryOp::Div && !is_floating(common)) return kDefaultFloat;  // true division
    if (op == BinaryOp::Sub)
        MT_CHECK_TYPE(common != DType::Bool, "sub: subtraction, the `-` operator, with two bool tensors is not "
                                             "supported; use the `^` or logical_xor() operator instead");
    return common;
}

}  // namespace

namespace {

Tensor unary_forward(UnaryOp op, const Tensor& x)
{
    DType dt = x->dtype;
    switch (op) {
        case UnaryOp::Exp: case UnaryOp::Log: case UnaryOp::Sqrt: case UnaryOp::Sigmoid: case UnaryOp::Tanh:
            if (!is_floating(dt)) dt = kDefaultFloat;  // exp(int tensor) is a float tensor, as in PyTorch
            break;
        case UnaryOp::Neg:
            MT_CHECK_TYPE(dt != DType::Bool, "neg: negation, the `-` operator, on a bool tensor is not supported; "
                                             "use the `~` or logical_not() operator instead");
            break;
        case UnaryOp::Relu:
            MT_CHECK_TYPE(dt != DType::Bool, "relu: not supported for bool tensors");
            break;
        case UnaryOp::LogicalNot: {
            Tensor out = empty(x->shape, DType::Bool, x->device());
            if (out->numel()) kernels(x->device()).map(op, out, to_dtype(x, DType::Bool));
            return out;
        }
        default: break;
    }
    Tensor in = to_dtype(x, dt);
    Tensor out = empty(x->shape, dt, x->device());
    if (out->numel()) kernels(x->device()).map(op, out, in);
    return out;
}

Tensor binary_forward(BinaryOp op, const Tensor& a, const Tensor& b)
{
    const char* name = op_name(op);
    check_same_device(name, a, b);
    DType common = result_type(a, b);
    if (op == BinaryOp::Pow && !is_floating(common) && b->wrapped_number && b->dtype == DType::Int64)
        // (the exponent is one number; on a GPU it is read back, a rare 8-byte copy)
        MT_CHECK(to_device(b, Device{})->data_as<int64_t>()[0] >= 0,
                 "pow: integers to negative integer powers are not allowed");
    DType dt = compute_dtype(op, common, a, b);
    Shape shape = broadcast_shapes(a->shape, b->shape, name);
    Tensor out = empty(shape, is_comparison(op) ? DType::Bool : dt, a->device());
    if (out->numel() == 0) return out;
    Tensor ac = expand(to_dtype(a, dt), shape), bc = expand(to_dtype(b, dt), shape);
    kernels(a->device()).zip(op, out, ac, bc);
    return out;
}

}  // namespace

void binary_(BinaryOp op, const Tensor& a, const Tensor& b_in)
{
    const Tensor b = follow_device(b_in, a);
    autograd::check_inplace(a, op_name(op));
    check_no_internal_overlap(a, op_name(op));
    const char* name = op_name(op);
    check_same_device(name, a, b);
    DType common = result_type(a, b);
    DType dt = compute_dtype(op, common, a, b);
    MT_CHECK_TYPE(!is_comparison(op), name, "_: comparisons have no in-place form here");
    // PyTorch: the result must be castable back to a's dtype without losing its kind.
    MT_CHECK_TYPE(category(dt) <= category(a->dtype), name, "_: result type ", dt,
                  " can't be cast to the desired output type ", a->dtype);
    Shape shape = broadcast_shapes(a->shape, b->shape, name);
    MT_CHECK(shape == a->shape, name, "_: output with shape ", a->shape,
             " doesn't match the broadcast shape ", shape);
    if (a->numel() == 0) return;
    Tensor bc = to_dtype(b, dt);
    if (bc->storage == a->storage) bc = clone(bc);  // x += x.t() must not read what it wrote
    Tensor ac = to_dtype(a, dt);
    if (ac == a) {
        kernels(a->device()).zip(op, a, a, expand(bc, shape));
    } else {
        Tensor tmp = empty(shape, dt, a->device());
        kernels(a->device()).zip(op, tmp, ac, expand(bc, shape));
        kernels(a->device()).copy(a, tmp);
    }
    autograd::bump_version(a);
}

namespace {

Tensor where_forward(const Tensor& cond, const Tensor& a, const Tensor& b)
{
    check_same_device("where", cond, a);
    check_same_device("where", a, b);
    MT_CHECK_TYPE(cond->dtype == DType::Bool, "where: expected condition to be a bool tensor, but got ", cond->dtype);
    DType dt = result_type(a, b);
    Shape shape = broadcast_shapes(broadcast_shapes(cond->shape, a->shape, "where"), b->shape, "where");
    Tensor out = empty(shape, dt, a->device());
    if (out->numel() == 0) return out;
    kernels(a->device()).where(out, expand(cond, shape), expand(to_dtype(a, dt), shape), expand(to_dtype(b, dt), shape));
    return out;
}

}  // namespace

Tensor clamp_forward(const Tensor& x, const Tensor* lo, const Tensor* hi)
{
    MT_CHECK(lo || hi, "clamp: at least one of 'min' or 'max' must not be None");
    Tensor out = x;
    if (lo) out = binary(BinaryOp::Maximum, out, *lo);
    if (hi) out = binary(BinaryOp::Minimum, out, *hi);
    return out;
}

// ---------------------------------------------------------------------------
// Backward formulas. g is the gradient of the output; each input's gradient is
// summed back to its own shape (sum_to) because the forward broadcast it.
// ---------------------------------------------------------------------------
namespace {

using autograd::Node;

Tensor num(double v, const Tensor& like) { return scalar_tensor(Scalar(v), like->device()); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }

// The gradient for input i: back to its shape and dtype.
Tensor to_input(const Node& n, size_t i, const Tensor& g)
{
    const auto& m = n.input_meta[i];
    return to_dtype(autograd::sum_to(g, m.shape), m.dtype);
}

struct UnaryBackward : Node {
    UnaryOp op;
    Tensor x, out;  // saved (only what the formula needs)
    std::string name() const override
    {
        static const char* names[] = {"NegBackward0",     "ExpBackward0",  "LogBackward0",
                                      "SqrtBackward0",    "AbsBackward0",  "SigmoidBackward0",
                                      "ReluBackward0",    "TanhBackward0", "LogicalNotBackward0", "SignBackward0"};
        return names[int(op)];
    }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Tensor& g = grads[0];
        Tensor r;
        switch (op) {
            case UnaryOp::Neg: r = unary(UnaryOp::Neg, g); break;                       // d(-x) = -1
            case UnaryOp::Exp: r = mul(g, out); break;                                   // d e^x = e^x
            case UnaryOp::Log: r = div(g, x); break;                                     // d log x = 1/x
            case UnaryOp::Sqrt: r = div(g, mul(out, num(2.0, g))); break;                // 1 / (2 sqrt x)
            case UnaryOp::Abs: r = mul(g, unary(UnaryOp::Sign, x)); break;               // sign(x)
            case UnaryOp::Sigmoid: r = mul(g, mul(out, sub(num(1.0, g), out))); break;   // s (1 - s)
            case UnaryOp::Relu: r = mul(g, binary(BinaryOp::Gt, out, num(0.0, g))); break;  // 1 where x > 0
            case UnaryOp::Tanh: r = mul(g, sub(num(1.0, g), mul(out, out))); break;      // 1 - tanh^2
            default: r = zeros(g->shape, g->dtype, g->device()); break;                  // sign: 0
        }
        return {to_input(*this, 0, r)};
    }
    void release() override { x.reset(), out.reset(); }
};

struct BinaryBackward : Node {
    BinaryOp op;
    Tensor a, b, out;
    std::string name() const override
    {
        switch (op) {
            case BinaryOp::Add: return "AddBackward0";
            case BinaryOp::Sub: return "SubBackward0";
            case BinaryOp::Mul: return "MulBackward0";
            case BinaryOp::Div: return "DivBackward0";
            case BinaryOp::Pow: return "PowBackward0";
            case BinaryOp::Maximum: return "MaximumBackward0";
            default: return "MinimumBackward0";
        }
    }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Tensor& g = grads[0];
        Tensor ga, gb;
        const bool need_a = needs_input_grad(0), need_b = needs_input_grad(1);
        switch (op) {
            case BinaryOp::Add: ga = g, gb = g; break;
            case BinaryOp::Sub: ga = g; if (need_b) gb = unary(UnaryOp::Neg, g); break;
            case BinaryOp::Mul: if (need_a) ga = mul(g, b); if (need_b) gb = mul(g, a); break;
            case BinaryOp::Div:  // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
                if (need_a) ga = div(g, b);
                if (need_b) gb = unary(UnaryOp::Neg, div(mul(g, a), mul(b, b)));
                break;
            case BinaryOp::Pow:  // d(a^b)/da = b a^(b-1), d(a^b)/db = a^b log a (0 where a == 0, b >= 0)
                if (need_a) {  // 0 where the exponent is 0 (avoids 0 * inf at a == 0)
                    Tensor r = mul(g, mul(b, binary(BinaryOp::Pow, a, sub(b, num(1.0, b)))));
                    ga = where(binary(BinaryOp::Eq, b, num(0.0, b)), num(0.0, r), r);
                }
                if (need_b) {
                    Tensor r = mul(g, mul(out, unary(UnaryOp::Log, a)));
                    Tensor zero_base = binary(BinaryOp::Mul, binary(BinaryOp::Eq, a, num(0.0, a)),
                                              binary(BinaryOp::Ge, b, num(0.0, b)));
                    gb = where(zero_base, num(0.0, r), r);
                }
                break;
            default: {  // maximum / minimum: the chosen side gets g; ties split it evenly
                BinaryOp wins = op == BinaryOp::Maximum ? BinaryOp::Gt : BinaryOp::Lt;
                Tensor half_ties = mul(binary(BinaryOp::Eq, a, b), num(0.5, g));
                Tensor wa = binary(BinaryOp::Add, binary(wins, a, b), half_ties);
                if (need_a) ga = mul(g, wa);
                if (need_b) gb = mul(g, sub(num(1.0, g), wa));
            }
        }
        return {need_a ? to_input(*this, 0, ga) : nullptr, need_b ? to_input(*this, 1, gb) : nullptr};
    }
    void release() override { a.reset(), b.reset(), out.reset(); }
};

struct WhereBackward : Node {
    Tensor cond;
    std::string name() const override { return "WhereBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Tensor& g = grads[0];
        Tensor zero = num(0.0, g);
        return {needs_input_grad(0) ? to_input(*this, 0, where(cond, g, zero)) : nullptr,
                needs_input_grad(1) ? to_input(*this, 1, where(cond, zero, g)) : nullptr};
    }
    void release() override { cond.reset(); }
};

// clamp with bounds that need no gradient: g where min <= x <= max, else 0. At a bound
// the derivative is undefined; like PyTorch we pass the subgradient 1 there (so an
// input sitting exactly on a bound still learns).
struct ClampBackward : Node {
    Tensor mask;
    std::string name() const override { return "ClampBackward1"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override { return {mul(grads[0], mask)}; }
    void release() override { mask.reset(); }
};

bool differentiable(UnaryOp op) { return op != UnaryOp::LogicalNot && op != UnaryOp::Sign; }

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x)
{
    if (!differentiable(op) || !autograd::needs_grad(x)) return unary_forward(op, x);
    Tensor out;
    {
        autograd::NoGradGuard guard;
        out = unary_forward(op, x);
    }
    auto node = std::make_shared<UnaryBackward>();
    node->op = op;
    node->has_saved = op != UnaryOp::Neg;
    if (op == UnaryOp::Log || op == UnaryOp::Abs) node->x = autograd::save(*node, x);
    if (op == UnaryOp::Exp || op == UnaryOp::Sqrt || op == UnaryOp::Sigmoid || op == UnaryOp::Relu ||
        op == UnaryOp::Tanh)
        node->out = autograd::save(*node, out);
    autograd::record(node, {&x}, {&out});
    return out;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b)
{
    if (a->device() != b->device()) {
        Tensor a2 = follow_device(a, b), b2 = follow_device(b, a);
        if (a2 != a || b2 != b) return binary(op, a2, b2);
    }
    if (is_comparison(op) || !autograd::needs_grad(a, b)) return binary_forward(op, a, b);
    Tensor out;
    {
        autograd::NoGradGuard guard;
        out = binary_forward(op, a, b);
    }
    auto node = std::make_shared<BinaryBackward>();
    node->op = op;
    node->has_saved = op != BinaryOp::Add && op != BinaryOp::Sub;
    if (node->has_saved) {
        // Save only what backward will read (as PyTorch does), so changing a tensor in
        // place is an error only when it really changes a gradient: d(a*b)/da needs b
        // alone, d(a/b)/da needs b alone.
        const bool mul_or_div = op == BinaryOp::Mul || op == BinaryOp::Div;
        if (!mul_or_div || b->requires_grad) node->a = autograd::save(*node, a);
        if (op != BinaryOp::Mul || a->requires_grad) node->b = autograd::save(*node, b);
        if (op == BinaryOp::Pow) node->out = autograd::save(*node, out);
    }
    autograd::record(node, {&a, &b}, {&out});
    return out;
}

Tensor clamp(const Tensor& x, const Tensor* lo, const Tensor* hi)
{
    bool bounds_need_grad = (lo && (*lo)->requires_grad) || (hi && (*hi)->requires_grad);
    // Tensor bounds that need gradients: compose maximum/minimum (they record themselves).
    if (!autograd::needs_grad(x) || bounds_need_grad) return clamp_forward(x, lo, hi);
    Tensor out, mask;
    {
        autograd::NoGradGuard guard;
        out = clamp_forward(x, lo, hi);
        mask = full(x->shape, Scalar(true), DType::Bool, x->device());
        if (lo) mask = binary(BinaryOp::Mul, mask, binary(BinaryOp::Ge, x, *lo));
        if (hi) mask = binary(BinaryOp::Mul, mask, binary(BinaryOp::Le, x, *hi));
    }
    auto node = std::make_shared<ClampBackward>();
    node->mask = mask;
    node->has_saved = true;
    autograd::record(node, {&x}, {&out});
    return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b)
{
    if (a->device() != b->device()) {
        Tensor a2 = follow_device(a, b), b2 = follow_device(b, a);
        if (a2 != a || b2 != b) return where(cond, a2, b2);
    }
    if (!autograd::needs_grad(a, b)) return where_forward(cond, a, b);
    Tensor out;
    {
        autograd::NoGradGuard guard;
        out = where_forward(cond, a, b);
    }
    auto node = std::make_shared<WhereBackward>();
    node->cond = autograd::save(*node, cond);
    node->has_saved = true;
    autograd::record(node, {&a, &b}, {&out});
    return out;
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b)
{
    MT_CHECK_RUNTIME(a->device() == b->device(), op, ": expected all tensors to be on the same device, but found ",
                     a->device(), " and ", b->device());
}

}  // namespace minitorch
