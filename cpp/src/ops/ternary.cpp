// ternary.cpp — the three-input elementwise ops lerp, addcmul and addcdiv, and their
// in-place forms (lerp_, addcmul_, addcdiv_): PyTorch's dtype rules and checks, broadcasting
// of all three, one call of the `ternary` kernel (kernels.h; the per-element formulas are in
// elementwise_math.h), and their backward. Optimizers and EMA code call the in-place forms
// on every parameter at every step: they write self in one pass, with no temporaries.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

#include <optional>

namespace minitorch {

namespace {

const char* ternary_name(TernaryOp op)
{
    switch (op) {
        case TernaryOp::Lerp: return "lerp";
        case TernaryOp::Addcmul: return "addcmul";
        case TernaryOp::Addcdiv: return "addcdiv";
        case TernaryOp::Clamp: return "clamp";
        case TernaryOp::ClampBackward: return "clamp_backward";
        case TernaryOp::LeakyReluBackward: return "leaky_relu_backward";
        case TernaryOp::EluBackward: return "elu_backward";
        case TernaryOp::BceBackward: return "binary_cross_entropy_backward";
        case TernaryOp::BceWithLogitsBackward: return "binary_cross_entropy_with_logits_backward";
        case TernaryOp::HuberBackward: return "huber_loss_backward";
        case TernaryOp::MseLossBackward: return "mse_loss_backward";
        case TernaryOp::L1LossBackward: return "l1_loss_backward";
        case TernaryOp::DivBackwardDivisor: return "div_backward_divisor";
        case TernaryOp::NormBackward: return "norm_backward";
        case TernaryOp::VarBackward: return "var_backward";
        case TernaryOp::HardtanhBackward: return "hardtanh_backward";
    }
    return "?";
}

// The kernels that other ops call for one pass (clamp with two bounds; the backward of
// clamp, leaky_relu, elu and the per-element losses): those ops record their own gradient,
// so these record none.
bool internal_kernel(TernaryOp op)
{
    return op != TernaryOp::Lerp && op != TernaryOp::Addcmul && op != TernaryOp::Addcdiv;
}

}  // namespace

// PyTorch's promotion over three operands (result_type's rule, ops/elementwise.cpp): the
// tensors with dims decide; 0-dim tensors, then Python numbers, only matter when they are
// of a higher category (bool < int < float). A Python float that wins gives float32.
DType result_type(const Tensor& a, const Tensor& b, const Tensor& c)
{
    auto tier = [](const Tensor& t) { return t->wrapped_number ? 0 : (t->dim() == 0 ? 1 : 2); };
    auto as_seen = [](const Tensor& t) {
        return (t->wrapped_number && t->dtype == DType::Float64) ? default_float() : t->dtype;
    };
    std::optional<DType> dt;
    for (int level = 2; level >= 0; --level) {
        std::optional<DType> here;
        for (const Tensor* t : {&a, &b, &c})
            if (tier(*t) == level) here = here ? promote(*here, as_seen(*t)) : as_seen(*t);
        if (here && (!dt || category(*here) > category(*dt))) dt = dt ? promote(*dt, *here) : *here;
    }
    return *dt;
}

namespace {

// The dtype the op computes in, after PyTorch's checks: lerp takes floating tensors of one
// dtype (a number weight aside); addcmul promotes, but not to bool; addcdiv refuses two
// integer (or bool) divisor operands, as PyTorch 1.5+ does.
DType ternary_dtype(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c)
{
    const char* name = ternary_name(op);
    if (op == TernaryOp::Lerp) {
        MT_CHECK_TYPE(is_floating(a->dtype), "lerp: not implemented for ", a->dtype,
                      " tensors (expected a floating point dtype)");
        MT_CHECK_TYPE(b->dtype == a->dtype, "lerp: expected dtype ", a->dtype, " for `end` but got dtype ", b->dtype);
        MT_CHECK_TYPE(c->wrapped_number || c->dtype == a->dtype, "lerp: expected dtype ", a->dtype,
                      " for `weight` but got dtype ", c->dtype);
        return a->dtype;
    }
    if (op == TernaryOp::Addcdiv)
        MT_CHECK_TYPE(is_floating(b->dtype) || is_floating(c->dtype),
                      "addcdiv: Integer division with addcdiv is no longer supported, and in a future release "
                      "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior "
                      "can be implemented as (input + value * trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                      "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                      "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
                      "dtypes.");
    const DType dt = result_type(a, b, c);
    MT_CHECK_TYPE(dt != DType::Bool, name, ": not implemented for bool tensors");
    return dt;
}

// The dtype an operand reaches the kernel in: the op's, except a scalar (a Python number,
// a 0-dim tensor) beside float16 / bfloat16 tensors, which stays float32 as PyTorch reads it.
DType ternary_operand_dtype(const Tensor& t, DType dt)
{
    const bool scalar = t->wrapped_number || (t->dim() == 0 && !is_16bit(t->dtype));
    return is_16bit(dt) && scalar ? DType::Float32 : dt;
}

Shape ternary_shape(const char* name, const Tensor& a, const Tensor& b, const Tensor& c)
{
    return broadcast_shapes(broadcast_shapes(a->shape, b->shape, name), c->shape, name);
}

// The operands on one device: the op runs where a non-CPU operand is (`lead`); a host
// number stays on the host (the kernel takes its value), any other 0-dim CPU tensor moves.
void check_ternary_devices(const char* name, const Tensor& lead, std::initializer_list<const Tensor*> operands)
{
    for (const Tensor* t : operands)
        if (!host_number(*t, lead)) check_same_device(name, lead, *t);
}

Tensor ternary_forward(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value)
{
    const char* name = ternary_name(op);
    const Tensor& lead = !a->device().is_cpu() ? a : !b->device().is_cpu() ? b : c;
    check_ternary_devices(name, lead, {&a, &b, &c});
    const DType dt = ternary_dtype(op, a, b, c);
    const Shape shape = ternary_shape(name, a, b, c);
    const Device device = lead->device();
    Tensor out = empty(shape, dt, device);
    if (out->numel() == 0) return out;
    auto operand = [&](const Tensor& t) { return expand(kernel_operand(t, ternary_operand_dtype(t, dt), device), shape); };
    kernels(device).ternary(op, out, operand(a), operand(b), operand(c), value);
    return out;
}

// ---------------------------------------------------------------------------
// Backward, written with ops (so it has gradients too: create_graph).
// ---------------------------------------------------------------------------
Tensor mul(const Tensor& x, const Tensor& y) { return binary(BinaryOp::Mul, x, y); }
Tensor sub(const Tensor& x, const Tensor& y) { return binary(BinaryOp::Sub, x, y); }
Tensor div(const Tensor& x, const Tensor& y) { return binary(BinaryOp::Div, x, y); }
Tensor number(Scalar v) { return scalar_tensor(v, Device{}); }  // stays on the host (host_number)

// derivative of lerp, input input: g * (1 - weight)
// derivative of lerp, input end: g * weight
// derivative of lerp, input weight: g * (end - input)
// derivative of addcmul, input input: g
// derivative of addcmul, input tensor1: g * value * tensor2
// derivative of addcmul, input tensor2: g * value * tensor1
// derivative of addcdiv, input input: g
// derivative of addcdiv, input tensor1: g * value / tensor2
// derivative of addcdiv, input tensor2: -g * value * tensor1 / tensor2^2
struct TernaryBackward : autograd::Node {
    TernaryOp op;
    Scalar value;
    Tensor a, b, c;  // saved only when a formula for an input that needs a gradient reads them
    std::string name() const override
    {
        switch (op) {
            case TernaryOp::Lerp: return "LerpBackward1";
            case TernaryOp::Addcmul: return "AddcmulBackward0";
            case TernaryOp::Addcdiv: return "AddcdivBackward0";
            case TernaryOp::Clamp:
            case TernaryOp::ClampBackward:
            case TernaryOp::LeakyReluBackward:
            case TernaryOp::EluBackward:
            case TernaryOp::BceBackward:
            case TernaryOp::BceWithLogitsBackward:
            case TernaryOp::HuberBackward:
            case TernaryOp::MseLossBackward:
            case TernaryOp::L1LossBackward:
            case TernaryOp::DivBackwardDivisor:
            case TernaryOp::NormBackward:
            case TernaryOp::VarBackward:
            case TernaryOp::HardtanhBackward: break;  // never recorded (internal_kernel)
        }
        return "TernaryBackward";
    }
    // The gradient for input i: summed back to its shape (the forward broadcast it), in its dtype.
    Tensor to_input(size_t i, const Tensor& g) const
    {
        return to_dtype(autograd::sum_to(g, input_meta[i].shape), input_meta[i].dtype);
    }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Tensor& g = grads[0];
        std::vector<Tensor> out(3);
        if (op == TernaryOp::Lerp) {
            if (needs_input_grad(0)) out[0] = to_input(0, mul(g, sub(number(Scalar(1.0)), c)));
            if (needs_input_grad(1)) out[1] = to_input(1, mul(g, c));
            if (needs_input_grad(2)) out[2] = to_input(2, mul(g, sub(b, a)));
            return out;
        }
        if (needs_input_grad(0)) out[0] = to_input(0, g);
        const Tensor gv = needs_input_grad(1) || needs_input_grad(2) ? mul(g, number(value)) : Tensor{};
        if (op == TernaryOp::Addcmul) {
            if (needs_input_grad(1)) out[1] = to_input(1, mul(gv, c));
            if (needs_input_grad(2)) out[2] = to_input(2, mul(gv, b));
        } else {
            if (needs_input_grad(1)) out[1] = to_input(1, div(gv, c));
            if (needs_input_grad(2)) out[2] = to_input(2, unary(UnaryOp::Neg, div(mul(gv, b), mul(c, c))));
        }
        return out;
    }
    void release() override { a.reset(), b.reset(), c.reset(); }
};

// An operand on the device of the op (place_beside the first non-CPU one).
struct Placed {
    Tensor a, b, c;
};
Placed place(const Tensor& a, const Tensor& b, const Tensor& c)
{
    const Tensor& lead = !a->device().is_cpu() ? a : !b->device().is_cpu() ? b : c;
    return {place_beside(a, lead), place_beside(b, lead), place_beside(c, lead)};
}

// Whether x reads exactly the elements of self, each where self has it (x is self, or a
// view of the same place): then writing self element by element is safe.
bool same_elements(const Tensor& x, const Tensor& self)
{
    return x->storage == self->storage && x->offset == self->offset && x->shape == self->shape &&
           x->strides == self->strides && x->dtype == self->dtype;
}

}  // namespace

Tensor ternary(TernaryOp op, const Tensor& a_in, const Tensor& b_in, const Tensor& c_in, Scalar value)
{
    const Placed p = place(a_in, b_in, c_in);
    const Tensor &a = p.a, &b = p.b, &c = p.c;
    if (internal_kernel(op)) return ternary_forward(op, a, b, c, value);  // in its caller's profile event
    MT_PROFILE_OP(ternary_name(op), a_in, b_in, c_in);
    return autograd::record_op<TernaryBackward>({&a, &b, &c}, [&] { return ternary_forward(op, a, b, c, value); },
                                                [&](TernaryBackward& n, const Tensor&) {
        n.op = op;
        n.value = value;
        const bool ga = a->requires_grad, gb = b->requires_grad, gc = c->requires_grad;
        if (op == TernaryOp::Lerp) {
            if (gc) n.a = autograd::save(n, a), n.b = autograd::save(n, b);
            if (ga || gb) n.c = autograd::save(n, c);
        } else {
            if (gc) n.b = autograd::save(n, b);
            if (gb || gc) n.c = autograd::save(n, c);
        }
    });
}

void ternary_(TernaryOp op, const Tensor& self, const Tensor& b_in, const Tensor& c_in, Scalar value)
{
    const char* base = ternary_name(op);
    const std::string name = std::string(base) + "_";
    MT_PROFILE_OP(profiler::inplace(base), self, b_in, c_in);
    const Tensor b = place_beside(b_in, self), c = place_beside(c_in, self);
    check_no_internal_overlap(self, name.c_str());
    const bool in_graph = autograd::inplace_in_graph(self, {&b, &c});
    // The internal kernels record no gradient (ternary() runs them unrecorded), so their
    // in-place form would lose one inside a graph: there only lerp_ / addcmul_ / addcdiv_
    // run (hardtanh_ writes with clamp's kernel outside one and records its own node).
    MT_CHECK_RUNTIME(!internal_kernel(op) || !in_graph, "internal error: ", name, " records no gradient in a graph");
    if (in_graph) autograd::check_rebase(self, name.c_str());
    check_ternary_devices(name.c_str(), self, {&b, &c});
    const DType dt = ternary_dtype(op, self, b, c);
    // PyTorch: the result must be castable back to self's dtype without losing its kind.
    MT_CHECK_TYPE(category(dt) <= category(self->dtype), name, ": result type ", dt,
                  " can't be cast to the desired output type ", self->dtype);
    const Shape shape = ternary_shape(base, self, b, c);
    MT_CHECK(shape == self->shape, name, ": output with shape ", self->shape, " doesn't match the broadcast shape ",
             shape);
    if (in_graph) {  // inside a graph: compute with the gradient recorded, write, rebase (autograd.h)
        // On a copy of self, which backward may read (lerp's weight gradient; x.addcmul_(x, x)
        // saves x as tensor1 and tensor2) and the write must leave intact.
        const Tensor s = clone(self);
        autograd::rebase_history(self, ternary(op, s, b == self ? s : b, c == self ? s : c, value), name.c_str());
        return;
    }
    if (self->numel() == 0) return;
    const Device device = self->device();
    auto operand = [&](const Tensor& t) {
        Tensor k = kernel_operand(t, ternary_operand_dtype(t, dt), device);
        // x.addcmul_(x.t(), y) must not read what it already wrote; x.addcmul_(x, x) may
        if (k->storage == self->storage && !same_elements(k, self)) k = clone(k);
        return expand(k, shape);
    };
    const Tensor bc = operand(b), cc = operand(c);
    if (dt == self->dtype) {
        kernels(device).ternary(op, self, self, bc, cc, value);  // each element read, then written: one pass
    } else {  // a float result written into a wider or 16-bit tensor of another dtype: compute, then copy
        Tensor tmp = empty(shape, dt, device);
        kernels(device).ternary(op, tmp, to_dtype(self, dt), bc, cc, value);
        kernels(device).copy(self, tmp);
    }
    autograd::bump_version(self);
}

}  // namespace minitorch
