// elementwise.cpp — the ops of op_list.h (unary map, binary zip) plus where and clamp:
// dtype rules, broadcasting, the checks PyTorch makes, one kernel call; and their
// backward, whose formulas are the gradient columns of op_list.h.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace minitorch {

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
        return (t->wrapped_number && t->dtype == DType::Float64) ? default_float() : t->dtype;
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

// PyTorch lets a 0-dim CPU tensor (a number in tensor form) meet a tensor on any
// device: it is moved over (a 4-byte copy). Anything else must already match.
Tensor follow_device(const Tensor& t, const Tensor& other)
{
    if (t->device() != other->device() && t->dim() == 0 && t->device().is_cpu()) return to_device(t, other->device());
    return t;
}

// In a binary op, a 0-dim CPU tensor that needs no gradient (a Python number: the 2.0 of
// x * 2.0, the 1 of x.add_(1)) meeting a GPU tensor is not moved over: it stays on the host
// and the GPU kernel takes its value as an argument (cuda/elementwise.cu), as PyTorch does
// -- one launch, where putting the number on the GPU would be a fill kernel first.
bool host_number(const Tensor& t, const Tensor& other)
{
    return t->dim() == 0 && t->device().is_cpu() && !other->device().is_cpu() && !t->requires_grad;
}

// Where a binary op's operand t goes beside the other: a host number stays, any other 0-dim
// CPU tensor follows the other to its device (follow_device).
Tensor place_beside(const Tensor& t, const Tensor& other) { return host_number(t, other) ? t : follow_device(t, other); }

// Either operand of a binary op after place_beside: the device the op runs on.
Device op_device(const Tensor& a, const Tensor& b) { return a->device().is_cpu() ? b->device() : a->device(); }

// An operand converted to dtype dt for the kernels of `device`. A host number is converted
// on the host; it is copied over only where the kernels would stage its dtype (narrow
// integers are widened through copies on the device, which cannot read host memory).
Tensor kernel_operand(const Tensor& t, DType dt, Device device)
{
    Tensor c = to_dtype(t, dt);
    if (c->device() != device && is_narrow_int(dt)) c = to_device(c, device);
    return c;
}

namespace {

void check_binary_devices(const char* op, const Tensor& a, const Tensor& b)
{
    if (!host_number(a, b) && !host_number(b, a)) check_same_device(op, a, b);
}

// Ops that refuse bool say what to use instead.
const char* bool_hint(const char* op)
{
    if (!strcmp(op, "neg")) return "neg: negation, the `-` operator, on a bool tensor is not supported; use the `~` "
                                   "or logical_not() operator instead";
    if (!strcmp(op, "sub")) return "sub: subtraction, the `-` operator, with two bool tensors is not supported; use "
                                   "the `^` or logical_xor() operator instead";
    return nullptr;
}

// The dtype an operand is handed to the kernel in. A scalar (a Python number, or a 0-dim
// tensor of another type, such as one a backward formula saved) meeting a float16 or
// bfloat16 tensor stays float32, as PyTorch reads it in its float "opmath" type: h * 0.3
// multiplies by 0.3, not by 0.3 rounded to 16 bits (the kernel computes in float32 anyway).
DType operand_dtype(const Tensor& t, DType dt)
{
    const bool scalar = t->wrapped_number || (t->dim() == 0 && !is_16bit(t->dtype));
    if (is_16bit(dt) && scalar) return DType::Float32;
    // A 16-bit operand of a float32 op (bf16 + float32) is handed over as it is: the kernels
    // read it in float32 anyway (a GPU in place, the CPU through Widen), without a float32 copy.
    if (dt == DType::Float32 && is_16bit(t->dtype)) return t->dtype;
    return dt;
}

// The dtype an op computes in, from its inputs' (promoted) dtype and its OpResult rule;
// refuses the dtypes the rule excludes.
DType compute_dtype(const char* op, OpResult rule, DType dt)
{
    switch (rule) {
        case OpResult::Same:
        case OpResult::Compare:
        case OpResult::Bool: return dt;
        case OpResult::NoBool: {
            const char* hint = bool_hint(op);
            if (hint) MT_CHECK_TYPE(dt != DType::Bool, hint);
            MT_CHECK_TYPE(dt != DType::Bool, op, ": not supported for bool tensors");
            return dt;
        }
        case OpResult::Float: return is_floating(dt) ? dt : default_float();  // exp(int) is a float tensor
        case OpResult::FloatOnly:
            MT_CHECK_TYPE(is_floating(dt), op, ": only floating point tensors are supported, got ", dt);
            return dt;
        case OpResult::Integral:
            MT_CHECK_TYPE(!is_floating(dt), op, ": only bool and integer tensors are supported, got ", dt);
            return dt;
    }
    return dt;
}

DType result_dtype(OpResult rule, DType computed) { return has_bool_result(rule) ? DType::Bool : computed; }

// Integer remainder / fmod by zero: PyTorch raises on the CPU ("ZeroDivisionError").
// The CPU can look at the divisor for free; a GPU kernel writes 0 instead (reading the
// divisor back would stall the GPU), as PyTorch's CUDA kernels do not raise either.
bool integer_division(BinaryOp op)
{
    return op == BinaryOp::Remainder || op == BinaryOp::Fmod || op == BinaryOp::FloorDivide;
}

void check_integer_divisor(const char* op, const Tensor& b)
{
    if (!b->device().is_cpu()) return;
    Tensor d = contiguous(to_dtype(b, DType::Int64));
    const int64_t* p = d->data_as<int64_t>();
    for (int64_t i = 0; i < d->numel(); ++i)
        MT_CHECK_RUNTIME(p[i] != 0, op, ": ZeroDivisionError (integer division by zero)");
}

Tensor unary_forward(UnaryOp op, const Tensor& x)
{
    const UnaryOpInfo& i = info(op);
    DType dt = compute_dtype(i.name, i.result, x->dtype);
    Tensor out = empty(x->shape, result_dtype(i.result, dt), x->device());
    if (out->numel()) kernels(x->device()).map(op, out, to_dtype(x, dt));
    return out;
}

Tensor binary_forward(BinaryOp op, const Tensor& a, const Tensor& b)
{
    const BinaryOpInfo& i = info(op);
    check_binary_devices(i.name, a, b);
    const Device device = op_device(a, b);
    DType dt = compute_dtype(i.name, i.result, result_type(a, b));
    if (op == BinaryOp::Pow && !is_floating(dt) && b->wrapped_number && b->dtype == DType::Int64)
        // (the exponent is one number; on a GPU it is read back, a rare 8-byte copy)
        MT_CHECK(to_device(b, Device{})->data_as<int64_t>()[0] >= 0,
                 "pow: integers to negative integer powers are not allowed");
    if (integer_division(op) && !is_floating(dt)) check_integer_divisor(i.name, b);
    Shape shape = broadcast_shapes(a->shape, b->shape, i.name);
    Tensor out = empty(shape, result_dtype(i.result, dt), device);
    if (out->numel() == 0) return out;
    Tensor ac = expand(kernel_operand(a, operand_dtype(a, dt), device), shape);
    Tensor bc = expand(kernel_operand(b, operand_dtype(b, dt), device), shape);
    kernels(device).zip(op, out, ac, bc);
    return out;
}

// x.relu_() / x += y inside a graph, written in place and recorded (below, beside the nodes).
bool record_unary_in_place(UnaryOp op, const Tensor& a, DType dt);
bool record_binary_in_place(BinaryOp op, const Tensor& a, const Tensor& b, DType dt);

}  // namespace

void binary_(BinaryOp op, const Tensor& a, const Tensor& b_in)
{
    MT_PROFILE_OP(profiler::inplace(op_name(op)), a, b_in);
    const Tensor b = place_beside(b_in, a);
    const BinaryOpInfo& i = info(op);
    check_no_internal_overlap(a, i.name);
    const bool in_graph = autograd::inplace_in_graph(a, {&b});
    if (in_graph) autograd::check_rebase(a, i.name);
    check_binary_devices(i.name, a, b);
    DType dt = compute_dtype(i.name, i.result, result_type(a, b));
    MT_CHECK_TYPE(!has_bool_result(i.result), i.name, "_: ops with a bool result have no in-place form here");
    // PyTorch: the result must be castable back to a's dtype without losing its kind.
    MT_CHECK_TYPE(category(dt) <= category(a->dtype), i.name, "_: result type ", dt,
                  " can't be cast to the desired output type ", a->dtype);
    if (integer_division(op) && !is_floating(dt)) check_integer_divisor(i.name, b);
    Shape shape = broadcast_shapes(a->shape, b->shape, i.name);
    MT_CHECK(shape == a->shape, i.name, "_: output with shape ", a->shape,
             " doesn't match the broadcast shape ", shape);
    if (in_graph) {  // x += y inside a graph: compute with the gradient recorded, write, rebase (autograd.h)
        if (record_binary_in_place(op, a, b, dt)) return;
        // The general path (a view, a dtype change, x += x): a new result, copied into x.
        // An op whose backward reads x (x *= y saves x) runs on a copy of x, so that the
        // write leaves what it saved intact; x *= x takes the copy as both operands.
        const unsigned saves = i.saves_for_a | i.saves_for_b;
        const bool reads_a = (saves & kSavesA) || (b == a && (saves & kSavesB));
        const Tensor a_in = reads_a ? clone(a) : a;
        autograd::rebase_history(a, binary(op, a_in, b == a ? a_in : b), (std::string(i.name) + "_").c_str());
        return;
    }
    if (a->numel() == 0) return;
    Tensor bc = kernel_operand(b, operand_dtype(b, dt), a->device());
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

void unary_(UnaryOp op, const Tensor& a)
{
    MT_PROFILE_OP(profiler::inplace(op_name(op)), a);
    const UnaryOpInfo& i = info(op);
    const std::string name = std::string(i.name) + "_";
    check_no_internal_overlap(a, name.c_str());
    const DType dt = result_dtype(i.result, compute_dtype(name.c_str(), i.result, a->dtype));
    MT_CHECK_TYPE(category(dt) <= category(a->dtype), name, ": result type ", dt,
                  " can't be cast to the desired output type ", a->dtype);
    if (autograd::inplace_in_graph(a, {})) {  // h.relu_() in a forward: as binary_ above
        autograd::check_rebase(a, name.c_str());
        if (record_unary_in_place(op, a, dt)) return;
        const Tensor a_in = (i.saves & kSavesX) ? clone(a) : a;
        autograd::rebase_history(a, unary(op, a_in), name.c_str());
        return;
    }
    if (a->numel() == 0) return;
    if (dt == a->dtype) {
        // Each element is read, then written, by the same thread: one pass, no buffer.
        kernels(a->device()).map(op, a, a);
    } else {  // a bool result written into a wider tensor (x.logical_not_() of a float
              // tensor): compute, then copy
        Tensor tmp = unary_forward(op, a);
        kernels(a->device()).copy(a, tmp);
    }
    autograd::bump_version(a);
}

namespace {

Tensor where_forward(const Tensor& cond, const Tensor& a, const Tensor& b)
{
    // a and b may be host numbers (where() below); the condition is on the op's device
    if (!host_number(a, cond)) check_same_device("where", cond, a);
    if (!host_number(b, cond)) check_same_device("where", cond, b);
    MT_CHECK_TYPE(cond->dtype == DType::Bool, "where: expected condition to be a bool tensor, but got ", cond->dtype);
    DType dt = result_type(a, b);
    Shape shape = broadcast_shapes(broadcast_shapes(cond->shape, a->shape, "where"), b->shape, "where");
    const Device device = cond->device();
    Tensor out = empty(shape, dt, device);
    if (out->numel() == 0) return out;
    kernels(device).where(out, expand(cond, shape), expand(kernel_operand(a, dt, device), shape),
                          expand(kernel_operand(b, dt, device), shape));
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
// Backward. The formulas are the gradient columns of op_list.h, pasted into a switch
// below; g is the gradient of the output. Each input's gradient is summed back to its
// own shape (sum_to) because the forward broadcast it.
// ---------------------------------------------------------------------------
namespace {

using autograd::Node;

// A formula variable: wraps a Tensor so that `g * cos(x)` means tensor ops. (Tensor is
// a shared_ptr, whose own operators would compare pointers.)
struct Expr {
    Tensor t;
};
// A formula that reads a tensor its row's saves column does not list gets null here.
const Tensor& in_formula(const Expr& e)
{
    MT_CHECK_RUNTIME(e.t, "internal error: a gradient formula in op_list.h reads a tensor that its saves column "
                          "does not save");
    return e.t;
}
Tensor num(double v, const Tensor&) { return scalar_tensor(Scalar(v), Device{}); }  // a host number, as host_num
// A number in a binary op stays on the host (host_number above): one launch, no fill.
Tensor host_num(double v) { return scalar_tensor(Scalar(v), Device{}); }
Expr bin(BinaryOp op, const Expr& a, const Expr& b) { return {binary(op, in_formula(a), in_formula(b))}; }
Expr bin(BinaryOp op, const Expr& a, double b) { return {binary(op, in_formula(a), host_num(b))}; }
Expr bin(BinaryOp op, double a, const Expr& b) { return {binary(op, host_num(a), in_formula(b))}; }
Expr un(UnaryOp op, const Expr& x) { return {unary(op, in_formula(x))}; }

#define MT_EXPR_OPERATOR(sym, op)                                                        \
    inline Expr operator sym(const Expr& a, const Expr& b) { return bin(BinaryOp::op, a, b); } \
    inline Expr operator sym(const Expr& a, double b) { return bin(BinaryOp::op, a, b); }      \
    inline Expr operator sym(double a, const Expr& b) { return bin(BinaryOp::op, a, b); }
MT_EXPR_OPERATOR(+, Add)
MT_EXPR_OPERATOR(-, Sub)
MT_EXPR_OPERATOR(*, Mul)
MT_EXPR_OPERATOR(/, Div)
MT_EXPR_OPERATOR(==, Eq)
MT_EXPR_OPERATOR(<, Lt)
MT_EXPR_OPERATOR(>, Gt)
MT_EXPR_OPERATOR(>=, Ge)
MT_EXPR_OPERATOR(<=, Le)
#undef MT_EXPR_OPERATOR
Expr operator-(const Expr& x) { return un(UnaryOp::Neg, x); }
Expr sign(const Expr& x) { return un(UnaryOp::Sign, x); }
Expr exp(const Expr& x) { return un(UnaryOp::Exp, x); }
Expr log(const Expr& x) { return un(UnaryOp::Log, x); }
Expr sin(const Expr& x) { return un(UnaryOp::Sin, x); }
Expr cos(const Expr& x) { return un(UnaryOp::Cos, x); }
Expr sqrt(const Expr& x) { return un(UnaryOp::Sqrt, x); }
Expr floor(const Expr& x) { return un(UnaryOp::Floor, x); }
Expr trunc(const Expr& x) { return un(UnaryOp::Trunc, x); }
Expr pow(const Expr& a, const Expr& b) { return bin(BinaryOp::Pow, a, b); }
Expr logical_and(const Expr& a, const Expr& b) { return bin(BinaryOp::LogicalAnd, a, b); }
Expr threshold_backward(const Expr& g, const Expr& y) { return bin(BinaryOp::ThresholdBackward, g, y); }
Expr tanh_backward(const Expr& g, const Expr& y) { return bin(BinaryOp::TanhBackward, g, y); }
Expr sigmoid_backward(const Expr& g, const Expr& y) { return bin(BinaryOp::SigmoidBackward, g, y); }
Expr where(const Expr& cond, double a, const Expr& b) { return {where(cond.t, num(a, b.t), b.t)}; }
Expr zeros_like(const Expr& g) { return {zeros(g.t->shape, g.t->dtype, g.t->device())}; }
const Expr not_differentiable{};  // the column of ops whose output is bool or integer
constexpr double kTwoOverSqrtPi = 1.1283791670955126;  // d erf(x) = 2/sqrt(pi) e^(-x^2)
constexpr double kSqrtPiOverTwo = 0.886226925452758;    // d erfinv(y) = sqrt(pi)/2 e^(erfinv(y)^2)
constexpr double kSqrtTwoPi = 2.5066282746310002;       // d ndtri(p) = sqrt(2 pi) e^(ndtri(p)^2 / 2)
Expr digamma(const Expr& x) { return un(UnaryOp::Digamma, x); }
Expr trigamma(const Expr& x) { return un(UnaryOp::Trigamma, x); }
// The gradient of an op whose derivative minitorch does not compute (trigamma's, which
// only a third derivative of lgamma reaches): backward through it raises.
Expr no_gradient_formula(const char* op, const Expr&)
{
    throw std::runtime_error(detail::str("the derivative of ", op, " is not implemented (polygamma(2, x) would be)"));
}

// The value of a number operand (a 0-dim CPU tensor: x ** 2's 2, clamp's bounds), else NaN.
double number_value(const Tensor* t)
{
    if (!t || (*t)->dim() != 0 || !(*t)->device().is_cpu()) return std::nan("");
    return dispatch_storage((*t)->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return convert<double>(*(*t)->template data_as<T>());
    });
}

// div's gradient for its divisor b, -g * a / b^2, in one kernel (with create_graph as the
// ops, whose own gradients double backward needs)
Expr div_backward_divisor(const Expr& g, const Expr& a, const Expr& b)
{
    if (autograd::is_grad_enabled()) return -g * a / (b * b);
    return {ternary(TernaryOp::DivBackwardDivisor, in_formula(g), in_formula(a), in_formula(b), Scalar(0.0))};
}
// d(a^b)/da = b a^(b-1), taken as 0 where b == 0 (avoids 0 * inf at a == 0). A number
// exponent (x ** 2) is read on the host: 2 is g * a * 2, two kernels instead of six.
Expr pow_grad_base(const Expr& g, const Expr& a, const Expr& b)
{
    const double v = number_value(&in_formula(b));
    if (!std::isnan(v) && !b.t->requires_grad) {
        if (v == 0) return zeros_like(g);
        if (v == 1) return g;
        if (v == 2) return g * a * 2.0;
        return g * bin(BinaryOp::Pow, a, v - 1) * v;
    }
    return where(b == 0, 0, g * b * pow(a, b - 1));
}
// d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0 (the limit; log 0 is -inf).
Expr pow_grad_exponent(const Expr& g, const Expr& a, const Expr& b, const Expr& y)
{
    return where(logical_and(a == 0, b >= 0), 0, g * y * log(a));
}
// maximum / minimum: the chosen side gets g; ties split it evenly (as PyTorch).
Expr share_of_a(const Expr& a_wins, const Expr& a, const Expr& b) { return a_wins + (a == b) * 0.5; }

// The fused activations (op_list.h). Their backward is one kernel each, g * act'(x), with
// act' computed in elementwise_math.h (Phi, phi: the standard normal CDF and density):
// derivative of gelu, input x: approximate='none': g * (Phi(x) + x * phi(x)), one kernel: _gelu_backward(g, x)
// derivative of gelu, input x: approximate='tanh': g * ((1 + t) / 2 + x / 2 * (1 - t^2) * u'), t = tanh(u), u = sqrt(2/pi) * (x + 0.044715 x^3), one kernel: _gelu_tanh_backward(g, x)
// derivative of silu, input x: g * s * (1 + x * (1 - s)), s = sigmoid(x), one kernel: _silu_backward(g, x)
// derivative of mish, input x: g * (T + x * s * (1 - T^2)), T = tanh(softplus(x)), s = sigmoid(x), one kernel: _mish_backward(g, x)
// derivative of hardswish, input x: g * (0 if x < -3, x / 3 + 1/2 if x <= 3, else 1), one kernel: _hardswish_backward(g, x)
// derivative of hardsigmoid, input x: g / 6 where -3 < x < 3, else 0, one kernel: _hardsigmoid_backward(g, x)
Expr gelu_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::GeluBackward, g, x); }
Expr gelu_tanh_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::GeluTanhBackward, g, x); }
Expr silu_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::SiluBackward, g, x); }
Expr mish_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::MishBackward, g, x); }
Expr hardswish_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::HardswishBackward, g, x); }
Expr hardsigmoid_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::HardsigmoidBackward, g, x); }
// derivative of softplus, input x: g * sigmoid(x) (g above 20), one kernel: _softplus_backward(g, x)
// derivative of leaky_relu, input x: g * (1 if x > 0 else slope), one kernel: _leaky_relu_backward(g, x, slope)
// derivative of leaky_relu, input slope (prelu's weight): g * min(x, 0)
// derivative of elu, input x: g * (1 if x > 0 else alpha * e^x), one kernel: _elu_backward(g, x, alpha)
// derivative of elu, input alpha: g * (e^min(x, 0) - 1)
Expr softplus_backward(const Expr& g, const Expr& x) { return bin(BinaryOp::SoftplusBackward, g, x); }
Expr leaky_relu_derivative(const Expr& x, const Expr& slope) { return bin(BinaryOp::LeakyReluDerivative, x, slope); }
Expr elu_derivative(const Expr& x, const Expr& alpha) { return bin(BinaryOp::EluDerivative, x, alpha); }
// g * f'(x, b) (an activation's or a per-element loss's) in one ternary kernel `op`; while a
// graph is built (create_graph) as the two ops g * derivative(x, b), whose own gradients
// double backward needs.
Expr fused_backward(TernaryOp op, const Expr& g, const Expr& x, const Expr& b,
                    Expr (*derivative)(const Expr&, const Expr&))
{
    if (autograd::is_grad_enabled()) return g * derivative(x, b);
    return {ternary(op, in_formula(g), in_formula(x), in_formula(b), Scalar(0.0))};
}
Expr leaky_relu_backward(const Expr& g, const Expr& x, const Expr& slope)
{
    return fused_backward(TernaryOp::LeakyReluBackward, g, x, slope, leaky_relu_derivative);
}
Expr elu_backward(const Expr& g, const Expr& x, const Expr& alpha)
{
    return fused_backward(TernaryOp::EluBackward, g, x, alpha, elu_derivative);
}
Expr at_most(const Expr& x, double v) { return bin(BinaryOp::Le, x, v); }  // bool: x <= v
Expr nonpositive(const Expr& x) { return at_most(x, 0.0); }
Expr nonpositive_part(const Expr& x) { return bin(BinaryOp::Minimum, x, 0.0); }  // min(x, 0)
Expr expm1(const Expr& x) { return un(UnaryOp::Expm1, x); }
// ... and act''(x), which double backward (create_graph=True) needs, in tensor ops (so
// that it has gradients too). Derived from the first derivatives listed in op_list.h.
Expr tanh(const Expr& x) { return un(UnaryOp::Tanh, x); }
Expr sigmoid(const Expr& x) { return un(UnaryOp::Sigmoid, x); }
Expr abs(const Expr& x) { return un(UnaryOp::Abs, x); }
Expr relu(const Expr& x) { return un(UnaryOp::Relu, x); }
Expr log1p(const Expr& x) { return un(UnaryOp::Log1p, x); }
constexpr double kInvSqrt2Pi = 0.3989422804014327, kSqrt2OverPi = 0.7978845608028654, kGeluTanhCubic = 0.044715;
// gelu'' = phi(x) (2 - x^2)
Expr gelu_second_derivative(const Expr& x) { return exp(x * x * -0.5) * kInvSqrt2Pi * (2 - x * x); }
// gelu_tanh'' = (1 - t^2) (u' + x/2 (u'' - 2 t u'^2)), u' = k (1 + 3c x^2), u'' = 6 k c x
Expr gelu_tanh_second_derivative(const Expr& x)
{
    const Expr t = tanh((x + x * x * x * kGeluTanhCubic) * kSqrt2OverPi);
    const Expr du = (x * x * (3 * kGeluTanhCubic) + 1) * kSqrt2OverPi;
    return (1 - t * t) * (du + x * 0.5 * (x * (6 * kSqrt2OverPi * kGeluTanhCubic) - t * du * du * 2));
}
// silu'' = s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x)
Expr silu_second_derivative(const Expr& x)
{
    const Expr s = sigmoid(x);
    return s * (1 - s) * (x * (1 - s * 2) + 2);
}
// mish'' = (1 - T^2) s (2 + x (1 - s - 2 T s)), T = tanh(softplus(x)), s = sigmoid(x)
Expr mish_second_derivative(const Expr& x)
{
    const Expr t = tanh(relu(x) + log1p(exp(-abs(x)))), s = sigmoid(x);
    return (1 - t * t) * s * (x * (1 - s - t * s * 2) + 2);
}
// softplus'' = s (1 - s), s = sigmoid(x), 0 above 20
Expr softplus_second_derivative(const Expr& x)
{
    const Expr s = sigmoid(x);
    return s * (1 - s) * at_most(x, 20);
}
// hardswish'' = 1/3 on (-3, 3), else 0
Expr hardswish_second_derivative(const Expr& x)
{
    return where(logical_and(x > -3, x < 3), 1.0 / 3, zeros_like(x));
}

// The per-element losses (op_list.h). Backward is g * <loss>'(a, b) in one ternary kernel;
// while a graph is built (create_graph), the two ops g * _<loss>_derivative(a, b), whose
// own gradients (double backward) are written in tensor ops.
// derivative of binary_cross_entropy, input input: g * (p - y) / max(p (1 - p), 1e-12), one kernel: binary_cross_entropy_backward(g, p, y)
// derivative of binary_cross_entropy, input target: g * (max(log(1 - p), -100) - max(log p, -100))
// derivative of binary_cross_entropy_with_logits, input input: g * (sigmoid(x) - y), one kernel: binary_cross_entropy_with_logits_backward(g, x, y)
// derivative of binary_cross_entropy_with_logits, input target: -g * x
// derivative of huber_loss, input input: g * clamp(d, -delta, delta), d = input - target (smooth_l1_loss: / beta), one kernel: huber_loss_backward(g, d, delta)
Expr bce_derivative(const Expr& p, const Expr& y) { return bin(BinaryOp::BceDerivative, p, y); }
Expr bce_with_logits_derivative(const Expr& x, const Expr& y) { return bin(BinaryOp::BceWithLogitsDerivative, x, y); }
Expr huber_derivative(const Expr& d, const Expr& delta) { return bin(BinaryOp::HuberDerivative, d, delta); }
Expr bce_backward(const Expr& g, const Expr& p, const Expr& y)
{
    return fused_backward(TernaryOp::BceBackward, g, p, y, bce_derivative);
}
Expr bce_with_logits_backward(const Expr& g, const Expr& x, const Expr& y)
{
    return fused_backward(TernaryOp::BceWithLogitsBackward, g, x, y, bce_with_logits_derivative);
}
Expr huber_backward(const Expr& g, const Expr& d, const Expr& delta)
{
    return fused_backward(TernaryOp::HuberBackward, g, d, delta, huber_derivative);
}
// derivative of mse_loss, input input: g * 2 (x - y), one kernel: mse_loss_backward(g, x, y)
// derivative of mse_loss, input target: -g * 2 (x - y)
// derivative of l1_loss, input input: g * sign(x - y), one kernel: l1_loss_backward(g, x, y)
// derivative of l1_loss, input target: -g * sign(x - y)
Expr mse_loss_derivative(const Expr& x, const Expr& y) { return (x - y) * 2.0; }
Expr l1_loss_derivative(const Expr& x, const Expr& y) { return sign(x - y); }
Expr mse_backward(const Expr& g, const Expr& x, const Expr& y)
{
    return fused_backward(TernaryOp::MseLossBackward, g, x, y, mse_loss_derivative);
}
Expr l1_backward(const Expr& g, const Expr& x, const Expr& y)
{
    return fused_backward(TernaryOp::L1LossBackward, g, x, y, l1_loss_derivative);
}
Expr clamped_log(const Expr& p) { return bin(BinaryOp::Maximum, log(p), -100.0); }
Expr clamped_log1m(const Expr& p) { return bin(BinaryOp::Maximum, log1p(-p), -100.0); }
Expr bce_denominator(const Expr& p) { return bin(BinaryOp::Maximum, p * (1 - p), 1e-12); }
// d/dp (p - y) / q, q = max(p (1 - p), 1e-12): (1 - (p - y) (1 - 2p) / q) / q where q = p (1 - p),
// 1 / q where the floor holds q
Expr bce_second_derivative(const Expr& p, const Expr& y)
{
    const Expr q = bce_denominator(p);
    return (1 - (p - y) * (1 - p * 2) * (p * (1 - p) > 1e-12) / q) / q;
}

Expr unary_gradient(UnaryOp op, const Expr& g, const Expr& x, const Expr& y)
{
    switch (op) {
#define MT_UNARY_GRADIENT(Enum, name, result, saves, ...) \
    case UnaryOp::Enum: return __VA_ARGS__;
        MT_UNARY_OPS(MT_UNARY_GRADIENT)
#undef MT_UNARY_GRADIENT
    }
    return not_differentiable;
}

// The gradient for input `which` (0: a, 1: b) of a binary op.
Expr binary_gradient(BinaryOp op, int which, const Expr& g, const Expr& a, const Expr& b, const Expr& y)
{
    switch (op) {
#define MT_BINARY_GRADIENT(Enum, name, result, saves_a, saves_b, gradient_a, ...) \
    case BinaryOp::Enum: return which == 0 ? (gradient_a) : (__VA_ARGS__);
        MT_BINARY_OPS(MT_BINARY_GRADIENT)
#undef MT_BINARY_GRADIENT
    }
    return not_differentiable;
}

// The gradient for input i: back to its shape and dtype.
Tensor to_input(const Node& n, size_t i, const Expr& g)
{
    const auto& m = n.input_meta[i];
    return to_dtype(autograd::sum_to(g.t, m.shape), m.dtype);
}

struct UnaryBackward : Node {
    UnaryOp op;
    Tensor x, y;  // saved only when the formula reads them (op_list.h's saves column)
    std::string name() const override
    {
        // PyTorch has one node for both forms of gelu (approximate is an attribute of it)
        return op == UnaryOp::GeluTanh ? "GeluBackward0" : info(op).backward_name;
    }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        return {to_input(*this, 0, unary_gradient(op, {grads[0]}, {x}, {y}))};
    }
    void release() override { x.reset(), y.reset(); }
};

struct BinaryBackward : Node {
    BinaryOp op;
    Tensor a, b, y;
    std::string name() const override { return info(op).backward_name; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Expr g{grads[0]};
        return {needs_input_grad(0) ? to_input(*this, 0, binary_gradient(op, 0, g, {a}, {b}, {y})) : nullptr,
                needs_input_grad(1) ? to_input(*this, 1, binary_gradient(op, 1, g, {a}, {b}, {y})) : nullptr};
    }
    void release() override { a.reset(), b.reset(), y.reset(); }
};

// derivative of where, input input: where(cond, g, 0)
// derivative of where, input other: where(cond, 0, g)
struct WhereBackward : Node {
    Tensor cond;
    std::string name() const override { return "WhereBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Tensor& g = grads[0];
        Tensor zero = num(0.0, g);
        return {needs_input_grad(0) ? to_input(*this, 0, {where(cond, g, zero)}) : nullptr,
                needs_input_grad(1) ? to_input(*this, 1, {where(cond, zero, g)}) : nullptr};
    }
    void release() override { cond.reset(); }
};

// clamp with bounds that need no gradient: g where min <= x <= max, else 0. At a bound
// the derivative is undefined; like PyTorch we pass the subgradient 1 there (so an
// input sitting exactly on a bound still learns).
// "min <= x <= max" is read from the forward's input and output: x == y exactly there (a
// NaN x or bound gives a NaN y, so no gradient, as PyTorch's comparisons give). Saving the
// two costs no launch in forward; building a mask there cost five. Bounds given as numbers
// with min > max hold no x at all (every y is max): no gradient anywhere. One kernel
// (ternary _clamp_backward(g, x, y)); with create_graph, eq and where (ops with gradients).
// derivative of clamp, input input: g where min <= x <= max, else 0
struct ClampBackward : Node {
    Tensor x, y;
    bool empty_range = false;
    std::string name() const override { return "ClampBackward1"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const auto& m = input_meta[0];
        if (empty_range) return {zeros(m.shape, m.dtype, m.device)};
        if (autograd::is_grad_enabled())
            return {to_input(*this, 0, {where(binary(BinaryOp::Eq, x, y), grads[0], host_num(0.0))})};
        return {to_input(*this, 0, {ternary(TernaryOp::ClampBackward, grads[0], x, y, Scalar(0.0))})};
    }
    void release() override { x.reset(), y.reset(); }
};

// hardtanh's gradient: g where lo < y < hi, from the result y alone (so hardtanh_ needs no
// copy of x). The bounds are numbers, kept here.
// derivative of hardtanh, input input: g where min_val < result < max_val (0 at the bounds, unlike clamp)
// derivative of relu6, input input: g where 0 < result < 6 (hardtanh(0, 6))
struct HardtanhBackward : Node {
    Tensor y;
    double lo = 0, hi = 0;
    std::string name() const override { return "HardtanhBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        if (autograd::is_grad_enabled()) {  // create_graph: ops that record themselves
            const Tensor inside =
                binary(BinaryOp::LogicalAnd, binary(BinaryOp::Gt, y, host_num(lo)), binary(BinaryOp::Lt, y, host_num(hi)));
            return {to_input(*this, 0, {where(inside, grads[0], host_num(0.0))})};
        }
        return {to_input(*this, 0, {ternary(TernaryOp::HardtanhBackward, grads[0], y, host_num(lo), Scalar(hi))})};
    }
    void release() override { y.reset(); }
};

// The in-place forms inside a graph as PyTorch runs them: the kernel writes into x itself,
// then the op's node is recorded with x as its output, so x's history becomes the node (its
// input edge is x's old history, taken before). An op whose backward reads its input
// (x.sigmoid_() does not: it saves y; x *= y saves x) reads a copy of x, made first. One
// launch (two with the copy) where computing a new tensor and copying it into x took two
// (three). Saving the output after recording links it to the node weakly (autograd::save),
// so double backward goes through the node. Views of a live base (the write must also reach
// the base's history: CopySlices; a view whose base is gone is a tensor like any other),
// dtype changes and an operand sharing x's memory (x += x.t()) take the general path:
// these return false there.
bool record_unary_in_place(UnaryOp op, const Tensor& a, DType dt)
{
    const UnaryOpInfo& i = info(op);
    if (autograd::live_view(a) || dt != a->dtype || !differentiable(i.result) || a->numel() == 0) return false;
    const Tensor a_in = (i.saves & kSavesX) ? clone(a) : a;
    kernels(a->device()).map(op, a, a_in);
    autograd::bump_version(a);
    auto node = std::make_shared<UnaryBackward>();
    node->op = op;
    autograd::record(node, std::vector<Tensor>{a_in}, std::vector<Tensor>{a});
    if (i.saves & kSavesX) node->x = autograd::save(*node, a_in);
    if (i.saves & kSavesY) node->y = autograd::save(*node, a);
    return true;
}

bool record_binary_in_place(BinaryOp op, const Tensor& a, const Tensor& b, DType dt)
{
    const BinaryOpInfo& i = info(op);
    if (autograd::live_view(a) || dt != a->dtype || !differentiable(i.result) || a->numel() == 0) return false;
    if (b->storage == a->storage) return false;
    // Saved only for the inputs that need a gradient, as binary() does.
    const unsigned saves = (a->requires_grad ? i.saves_for_a : 0u) | (b->requires_grad ? i.saves_for_b : 0u);
    const Tensor a_in = (saves & kSavesA) ? clone(a) : a;
    kernels(a->device()).zip(op, a, a_in, expand(kernel_operand(b, operand_dtype(b, dt), a->device()), a->shape));
    autograd::bump_version(a);
    auto node = std::make_shared<BinaryBackward>();
    node->op = op;
    autograd::record(node, std::vector<Tensor>{a_in, b}, std::vector<Tensor>{a});
    if (saves & kSavesA) node->a = autograd::save(*node, a_in);
    if (saves & kSavesB) node->b = autograd::save(*node, b);
    if (saves & kSavesY) node->y = autograd::save(*node, a);
    return true;
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x)
{
    MT_PROFILE_OP(op_name(op), x);
    if (!differentiable(info(op).result)) return unary_forward(op, x);
    return autograd::record_op<UnaryBackward>({&x}, [&] { return unary_forward(op, x); },
                                              [&](UnaryBackward& n, const Tensor& y) {
                                                  n.op = op;
                                                  if (info(op).saves & kSavesX) n.x = autograd::save(n, x);
                                                  if (info(op).saves & kSavesY) n.y = autograd::save(n, y);
                                              });
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b)
{
    MT_PROFILE_OP(op_name(op), a, b);
    if (a->device() != b->device()) {
        Tensor a2 = place_beside(a, b), b2 = place_beside(b, a);
        if (a2 != a || b2 != b) return binary(op, a2, b2);
    }
    if (!differentiable(info(op).result)) return binary_forward(op, a, b);
    return autograd::record_op<BinaryBackward>({&a, &b}, [&] { return binary_forward(op, a, b); },
                                               [&](BinaryBackward& n, const Tensor& y) {
        // Save only what the gradients of the inputs that need one will read (as
        // PyTorch), so changing a tensor in place is an error only when it matters.
        n.op = op;
        const unsigned saves = (a->requires_grad ? info(op).saves_for_a : 0u) |
                               (b->requires_grad ? info(op).saves_for_b : 0u);
        if (saves & kSavesA) n.a = autograd::save(n, a);
        if (saves & kSavesB) n.b = autograd::save(n, b);
        if (saves & kSavesY) n.y = autograd::save(n, y);
    });
}

Tensor hardtanh(const Tensor& x, double lo, double hi)
{
    MT_PROFILE_OP("hardtanh", x);
    MT_CHECK_TYPE(is_floating(x->dtype), "hardtanh: expected a floating-point input, got ", x->dtype);
    MT_CHECK(lo <= hi, "hardtanh: min_val cannot be greater than max_val, got min_val=", lo, ", max_val=", hi);
    auto forward = [&] { return ternary(TernaryOp::Clamp, x, host_num(lo), host_num(hi), Scalar(0.0)); };
    return autograd::record_op<HardtanhBackward>({&x}, forward, [&](HardtanhBackward& n, const Tensor& y) {
        n.y = autograd::save(n, y);
        n.lo = lo, n.hi = hi;
    });
}

void hardtanh_(const Tensor& x, double lo, double hi)
{
    MT_PROFILE_OP(profiler::inplace("hardtanh"), x);
    MT_CHECK_TYPE(is_floating(x->dtype), "hardtanh_: expected a floating-point input, got ", x->dtype);
    MT_CHECK(lo <= hi, "hardtanh_: min_val cannot be greater than max_val, got min_val=", lo, ", max_val=", hi);
    check_no_internal_overlap(x, "hardtanh_");
    const bool in_graph = autograd::inplace_in_graph(x, {});
    if (in_graph) autograd::check_rebase(x, "hardtanh_");
    if (in_graph && autograd::live_view(x)) {  // the general path (record_unary_in_place's rule)
        autograd::rebase_history(x, hardtanh(x, lo, hi), "hardtanh_");
        return;
    }
    {
        autograd::NoGradGuard guard;  // the write alone (one kernel); the node is recorded below
        ternary_(TernaryOp::Clamp, x, host_num(lo), host_num(hi), Scalar(0.0));
    }
    if (!in_graph || x->numel() == 0) return;
    // Inside a graph: x's history becomes the node, whose backward reads x (the result).
    auto node = std::make_shared<HardtanhBackward>();
    autograd::record(node, std::vector<Tensor>{x}, std::vector<Tensor>{x});
    node->y = autograd::save(*node, x);
    node->lo = lo, node->hi = hi;
}

Tensor clamp(const Tensor& x, const Tensor* lo, const Tensor* hi)
{
    MT_PROFILE_OP("clamp", x, lo, hi);
    // PyTorch has no clamp for bool (a bound of True/False means nothing there).
    MT_CHECK_TYPE(x->dtype != DType::Bool, "clamp: not implemented for bool tensors");
    bool bounds_need_grad = (lo && (*lo)->requires_grad) || (hi && (*hi)->requires_grad);
    // Tensor bounds that need gradients: compose maximum/minimum (they record themselves).
    if (bounds_need_grad) return clamp_forward(x, lo, hi);
    // Two bounds: one kernel (ternary clamp), not maximum then minimum.
    auto forward = [&] { return lo && hi ? ternary(TernaryOp::Clamp, x, *lo, *hi, Scalar(0.0)) : clamp_forward(x, lo, hi); };
    return autograd::record_op<ClampBackward>({&x}, forward,
                                              [&](ClampBackward& n, const Tensor& y) {
        n.x = autograd::save(n, x);
        n.y = autograd::save(n, y);
        n.empty_range = number_value(lo) > number_value(hi);
    });
}

// x.clamp_(min, max): outside a graph one kernel writing x (the ternary clamp for two bounds,
// maximum / minimum for one, as clamp computes them); it was clamp computed aside, then copied
// in. Inside a graph: clamp of a copy of x (its backward reads x), written in and rebased.
// name: the form called (clamp_, clamp_min_, clamp_max_), for the messages.
void clamp_(const Tensor& x, const Tensor* lo, const Tensor* hi, const char* name)
{
    MT_PROFILE_OP(profiler::inplace("clamp"), x, lo, hi);
    MT_CHECK_TYPE(x->dtype != DType::Bool, name, ": not implemented for bool tensors");
    MT_CHECK(lo || hi, name, ": at least one of 'min' or 'max' must not be None");
    // PyTorch: the result must be castable back to x's dtype without losing its kind.
    const DType dt = lo && hi ? result_type(x, *lo, *hi) : result_type(x, lo ? *lo : *hi);
    MT_CHECK_TYPE(category(dt) <= category(x->dtype), name, ": result type ", dt,
                  " can't be cast to the desired output type ", x->dtype);
    check_no_internal_overlap(x, name);
    if (autograd::inplace_in_graph(x, {lo, hi})) {
        autograd::check_rebase(x, name);
        autograd::rebase_history(x, clamp(clone(x), lo, hi), name);
        return;
    }
    if (lo && hi) ternary_(TernaryOp::Clamp, x, *lo, *hi, Scalar(0.0));
    else binary_(lo ? BinaryOp::Maximum : BinaryOp::Minimum, x, lo ? *lo : *hi);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b)
{
    MT_PROFILE_OP("where", cond, a, b);
    if (a->device() != b->device() || cond->device() != a->device()) {
        // The op runs on a GPU when any of the three is there. A 0-dim CPU condition (a
        // gradient formula's: where(b == 0, ...) of pow) moves over; a host number (the 0.0
        // of where(c, x, 0.0)) stays, and the kernel takes its value (host_number above).
        const Tensor& gpu = !cond->device().is_cpu() ? cond : !a->device().is_cpu() ? a : b;
        Tensor c2 = follow_device(cond, gpu);
        auto place = [&](const Tensor& t) { return host_number(t, c2) ? t : follow_device(t, gpu); };
        Tensor a2 = place(a), b2 = place(b);
        if (a2 != a || b2 != b || c2 != cond) return where(c2, a2, b2);
    }
    return autograd::record_op<WhereBackward>({&a, &b}, [&] { return where_forward(cond, a, b); },
                                              [&](WhereBackward& n, const Tensor&) { n.cond = autograd::save(n, cond); });
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b)
{
    MT_CHECK_RUNTIME(a->device() == b->device(), op, ": expected all tensors to be on the same device, but found ",
                     a->device(), " and ", b->device());
}

void check_layer_dtypes(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias)
{
    if (x->dtype == weight->dtype && (!bias || bias->dtype == weight->dtype)) return;
    std::ostringstream names;
    names << "input (" << x->dtype << ")" << (bias ? ", " : " and ") << "weight (" << weight->dtype << ")";
    if (bias) names << " and bias (" << bias->dtype << ")";
    const char* numpy_hint = x->dtype == DType::Float64 && weight->dtype == DType::Float32
                                 ? "; NumPy arrays are float64 unless created with dtype=np.float32"
                                 : "";
    MT_CHECK_TYPE(false, op, ": ", names.str(), " must have the same dtype. Convert the input with .to(minitorch.",
                  weight->dtype, ")", numpy_hint);
}

}  // namespace minitorch
