// nn.cpp — the fused ops of the neural-network layer, each one graph node:
//   linear          y = x W^T + b          (one GEMM, one broadcast add)
//   log_softmax     x - max - log(sum(exp(x - max)))   (stable for large logits)
//   softmax         exp(log_softmax)
//   cross_entropy   nll_loss(log_softmax(logits), target), with the short backward
//                   (softmax - onehot(target)) * g / N
// Forward and backward are written with the ordinary ops, so they run on every device.
#include <tuple>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }

// x flattened to 2-D (rows, in) — batch dims of any rank become rows.
Tensor rows2d(const Tensor& x) { return reshape(x, {x->numel() / std::max<int64_t>(x->size(-1), 1), x->size(-1)}); }

// derivative of linear, input input: g @ W
// derivative of linear, input weight: g^T @ x
// derivative of linear, input bias: sum of g over rows
struct LinearBackward : Node {
    Tensor x, w;
    std::string name() const override { return "LinearBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        Tensor g = rows2d(grads[0]);  // (rows, out)
        Tensor gx, gw, gb;
        if (needs_input_grad(0)) gx = reshape(matmul(g, w), input_meta[0].shape);  // dX = dY W
        if (needs_input_grad(1)) gw = matmul(transpose(g, 0, 1), rows2d(x));       // dW = dY^T X
        if (needs_input_grad(2)) gb = sum(g, {0}, false, std::nullopt);  // db = sum of dY rows
        return {gx, gw, gb};
    }
    void release() override { x.reset(), w.reset(); }
};

// d log_softmax: g - softmax * sum(g)
// derivative of log_softmax, input input: g - softmax(x) * sum(g, dim)
struct LogSoftmaxBackward : Node {
    Tensor out;
    int64_t dim = 0;
    std::string name() const override { return "LogSoftmaxBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor s = unary(UnaryOp::Exp, out);
        return {sub(g[0], mul(s, sum(g[0], {dim}, true, std::nullopt)))};
    }
    void release() override { out.reset(); }
};

// d softmax: s * (g - sum(g * s))
// derivative of softmax, input input: y * (g - sum(g * y, dim))
struct SoftmaxBackward : Node {
    Tensor out;
    int64_t dim = 0;
    std::string name() const override { return "SoftmaxBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        return {mul(out, sub(g[0], sum(mul(g[0], out), {dim}, true, std::nullopt)))};
    }
    void release() override { out.reset(); }
};

// Loss over targets: backward (softmax - onehot) * weight, weight = g / count per row.
// derivative of cross_entropy, input input: (softmax(x) - onehot(target)) * g * row weight (1/count for mean)
// derivative of nll_loss, input input: -onehot(target) * g * row weight (1/count for mean)
struct CrossEntropyBackward : Node {
    Tensor logp, onehot, row_weight;  // row_weight: (N, 1), the loss weight of each row
    bool from_logits = true;          // false: nll_loss on log-probabilities
    int reduction = 1;
    std::string name() const override { return from_logits ? "CrossEntropyLossBackward0" : "NllLossBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor scale = reduction == 0 ? mul(unsqueeze(g[0], 1), row_weight) : mul(g[0], row_weight);
        Tensor d = from_logits ? sub(unary(UnaryOp::Exp, logp), onehot) : unary(UnaryOp::Neg, onehot);
        return {mul(d, scale), nullptr};
    }
    void release() override { logp.reset(), onehot.reset(), row_weight.reset(); }
};

Tensor log_softmax_forward(const Tensor& x, int64_t dim)
{
    Tensor m = std::get<0>(max_dim(x, dim, true));  // subtracting the max keeps exp finite
    Tensor shifted = sub(x, m);
    Tensor lse = unary(UnaryOp::Log, sum(unary(UnaryOp::Exp, shifted), {dim}, true, std::nullopt));
    return sub(shifted, lse);
}

// One-hot rows of the targets (ignored rows all zero), each row's loss weight, and
// (for the mean) how many rows count.
std::tuple<Tensor, Tensor, Tensor> targets(const Tensor& input, const Tensor& target, int reduction, int64_t ignore_index,
                                  const char* op)
{
    MT_CHECK(input->dim() == 2, op, ": expected input of shape (N, C), got ", input->shape);
    MT_CHECK_TYPE(target->dtype == DType::Int64, op, ": expected target of dtype int64 (class indices), got ",
                  target->dtype);
    MT_CHECK(target->dim() == 1 && target->shape[0] == input->shape[0], op, ": expected target of shape (",
             input->shape[0], ",) for input of shape ", input->shape, ", got ", target->shape);
    MT_CHECK(reduction >= 0 && reduction <= 2, op, ": unknown reduction ", reduction);
    check_same_device(op, input, target);
    const int64_t C = input->shape[1];
    // Check the class indices where they live (on a GPU the error comes at the next sync).
    Tensor t = empty({target->numel()}, DType::Int64, target->device());
    if (t->numel())
        kernels(target->device()).check_index(t, contiguous(target), IndexCheck{op, C, false, true, ignore_index});
    Tensor classes = reshape(arange(0, double(C), 1, DType::Int64, input->device()), {1, C});
    Tensor tgt = unsqueeze(t, 1);
    Tensor onehot = to_dtype(binary(BinaryOp::Eq, classes, tgt), input->dtype);
    Tensor keep = to_dtype(binary(BinaryOp::Ne, tgt, scalar_tensor(Scalar(ignore_index), input->device())), input->dtype);
    if (reduction != 1) return {onehot, keep, nullptr};
    // mean divides by the number of non-ignored targets, counted on the device; with
    // none, the weights stay 0 (so the gradient is 0, as in PyTorch)
    Tensor count = sum(keep, {}, false, std::nullopt);
    Tensor one = scalar_tensor(Scalar(1.0), count->device(), count->dtype);
    Tensor row_weight = binary(BinaryOp::Div, keep, binary(BinaryOp::Maximum, count, one));
    return {onehot, row_weight, count};
}

Tensor reduce_loss(const Tensor& per_row, int reduction)
{
    if (reduction == 0) return per_row;
    return sum(per_row, {}, false, std::nullopt);
}

Tensor loss_common(const Tensor& input, const Tensor& target, int reduction, int64_t ignore_index, bool from_logits)
{
    const char* op = from_logits ? "cross_entropy" : "nll_loss";
    Tensor logp, onehot, row_weight;  // set by forward, saved by setup
    auto forward = [&] {
        Tensor count;
        std::tie(onehot, row_weight, count) = targets(input, target, reduction, ignore_index, op);
        logp = from_logits ? log_softmax_forward(input, 1) : input;
        // per-row loss = -sum(logp * onehot) * weight
        Tensor per_row = unary(UnaryOp::Neg, sum(mul(logp, onehot), {1}, false, std::nullopt));
        per_row = mul(per_row, reshape(row_weight, {input->shape[0]}));
        Tensor out = reduce_loss(per_row, reduction);
        // The mean of no rows is NaN, as in PyTorch: count / count is 1, or 0 / 0 = NaN
        // when no row counts (decided on the device, without reading count back).
        if (count) out = mul(out, binary(BinaryOp::Div, count, count));
        return out;
    };
    return autograd::record_op<CrossEntropyBackward>({&input, &target}, forward,
                                                     [&](CrossEntropyBackward& n, const Tensor&) {
                                                         n.from_logits = from_logits;
                                                         n.reduction = reduction;
                                                         n.logp = from_logits ? logp : nullptr;
                                                         n.onehot = onehot;
                                                         n.row_weight = row_weight;
                                                         n.has_saved = true;
                                                     });
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b)
{
    MT_PROFILE_OP("linear", x, w, b);
    MT_CHECK(x->dim() >= 1 && w->dim() == 2, "linear: expected input (..., in_features) and weight (out, in), got ",
             x->shape, " and ", w->shape);
    MT_CHECK(x->size(-1) == w->shape[1], "linear: input of shape ", x->shape, " does not match weight of shape ",
             w->shape, " (in_features ", x->size(-1), " != ", w->shape[1], ")");
    if (b) MT_CHECK(b->dim() == 1 && b->shape[0] == w->shape[0], "linear: bias of shape ", b->shape,
                    " does not match weight of shape ", w->shape);
    auto forward = [&] {
        Tensor out = matmul(x, transpose(w, 0, 1));  // BLAS reads W^T in place (a transposed view)
        if (b) binary_(BinaryOp::Add, out, b);       // out is fresh memory: add the bias in place
        return out;
    };
    // A missing bias is a null input: no edge, needs_input_grad(2) is false.
    return autograd::record_op<LinearBackward>({&x, &w, &b}, forward, [&](LinearBackward& n, const Tensor&) {
        // dX = G W reads only w, dW = G^T X only x: save what will be read.
        if (w->requires_grad) n.x = autograd::save(n, x);
        if (x->requires_grad) n.w = autograd::save(n, w);
    });
}

Tensor log_softmax(const Tensor& x, int64_t dim)
{
    MT_PROFILE_OP("log_softmax", x);
    MT_CHECK_TYPE(is_floating(x->dtype), "log_softmax: expected a floating tensor, got ", x->dtype);
    dim = wrap_dim(dim, x->dim(), "log_softmax");
    if (x->dim() == 0) return zeros({}, x->dtype, x->device());
    return autograd::record_op<LogSoftmaxBackward>({&x}, [&] { return log_softmax_forward(x, dim); },
                                                   [&](LogSoftmaxBackward& n, const Tensor& out) {
                                                       n.out = autograd::save(n, out);
                                                       n.dim = dim;
                                                   });
}

Tensor softmax(const Tensor& x, int64_t dim)
{
    MT_PROFILE_OP("softmax", x);
    MT_CHECK_TYPE(is_floating(x->dtype), "softmax: expected a floating tensor, got ", x->dtype);
    dim = wrap_dim(dim, x->dim(), "softmax");
    auto forward = [&] {
        return x->dim() == 0 ? full({}, Scalar(1.0), x->dtype, x->device())
                             : unary(UnaryOp::Exp, log_softmax_forward(x, dim));
    };
    return autograd::record_op<SoftmaxBackward>({&x}, forward, [&](SoftmaxBackward& n, const Tensor& out) {
        n.out = autograd::save(n, out);
        n.dim = dim;
    });
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int reduction, int64_t ignore_index)
{
    MT_PROFILE_OP("cross_entropy", logits, target);
    MT_CHECK_TYPE(is_floating(logits->dtype), "cross_entropy: expected floating logits, got ", logits->dtype);
    return loss_common(logits, target, reduction, ignore_index, true);
}

Tensor nll_loss(const Tensor& logp, const Tensor& target, int reduction, int64_t ignore_index)
{
    MT_PROFILE_OP("nll_loss", logp, target);
    MT_CHECK_TYPE(is_floating(logp->dtype), "nll_loss: expected floating log-probabilities, got ", logp->dtype);
    return loss_common(logp, target, reduction, ignore_index, false);
}

}  // namespace minitorch
