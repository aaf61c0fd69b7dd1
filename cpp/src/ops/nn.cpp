// nn.cpp — the fused ops of the neural-network layer, each one graph node:
//   linear          y = x W^T + b          (one GEMM adding the bias to every row: matmul_bias)
//   log_softmax     x - logsumexp(x)       (one softmax kernel: the row's max and sum in
//   softmax         exp(x - max) / sum      one pass, then the write; stable for large x)
//   cross_entropy   logsumexp(row) - row[target], one class_loss kernel (+ one for the
//                   mean or sum), with the short backward (softmax - onehot(target)) * g / N
//   nll_loss        -row[target], the same kernels on log-probabilities
//   layer_norm      (x - mean) / sqrt(var + eps) * w + b over each row of the last D
//                   values, one kernel each way (kernels layer_norm, layer_norm_backward)
//   rms_norm        x / sqrt(mean(x^2) + eps) * w, the same kernels without the mean
// linear's forward and backward are written with the ordinary ops; the others call
// their own kernels (kernels.h: softmax, softmax_backward, class_loss, class_loss_backward).

#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

// x flattened to 2-D (rows, in) — batch dims of any rank become rows (in = 0 too).
Tensor rows2d(const Tensor& x)
{
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < x->dim(); ++d) rows *= x->shape[d];
    return reshape(x, {rows, x->size(-1)});
}

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

// The softmax backward, one kernel: gx = y * (g - sum(g * y)), or g - exp(y) * sum(g)
// for log_softmax (y: the saved output, contiguous).
Tensor softmax_backward(const Tensor& g, const Tensor& y, int64_t dim, bool log)
{
    Tensor gx = empty(y->shape, y->dtype, y->device());
    if (gx->numel()) kernels(y->device()).softmax_backward(gx, contiguous(to_dtype(g, y->dtype)), y, dim, log);
    return gx;
}

// The same formulas written with ordinary ops, for create_graph (their own gradients are
// recorded; y, the saved output, leads back to the softmax node).
Tensor softmax_backward_ops(const Tensor& g, const Tensor& y, int64_t dim, bool log)
{
    Tensor g0 = to_dtype(g, y->dtype);
    if (log)
        return binary(BinaryOp::Sub, g0,
                      binary(BinaryOp::Mul, unary(UnaryOp::Exp, y), sum(g0, {dim}, true, std::nullopt)));
    Tensor gy = binary(BinaryOp::Mul, g0, y);
    return binary(BinaryOp::Sub, gy, binary(BinaryOp::Mul, y, sum(gy, {dim}, true, std::nullopt)));
}

// derivative of log_softmax, input input: g - softmax(x) * sum(g, dim)
struct LogSoftmaxBackward : Node {
    Tensor out;
    int64_t dim = 0;
    std::string name() const override { return "LogSoftmaxBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        if (autograd::is_grad_enabled()) return {softmax_backward_ops(g[0], out, dim, true)};
        return {softmax_backward(g[0], out, dim, true)};
    }
    void release() override { out.reset(); }
};

// derivative of softmax, input input: y * (g - sum(g * y, dim))
struct SoftmaxBackward : Node {
    Tensor out;
    int64_t dim = 0;
    std::string name() const override { return "SoftmaxBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        if (autograd::is_grad_enabled()) return {softmax_backward_ops(g[0], out, dim, false)};
        return {softmax_backward(g[0], out, dim, false)};
    }
    void release() override { out.reset(); }
};

// softmax or log_softmax along dim, one kernel (one copy first for a strided x): each
// row is read once for its max and sum, then written.
Tensor softmax_forward(const Tensor& x, int64_t dim, bool log)
{
    Tensor in = contiguous(x);
    Tensor out = empty(in->shape, in->dtype, in->device());
    if (out->numel()) kernels(in->device()).softmax(out, in, dim, log);
    return out;
}

// Loss over targets, one kernel: (softmax - onehot) * w[t] * r, r = g (sum), g / count
// (mean) or g[row] (none), 0 for ignored rows; with label smoothing e, softmax * ((1 - e) w[t]
// + e sum(w) / C) - (1 - e) w[t] onehot - e w / C in place of (softmax - onehot) w[t]. Saves
// the logits and one logsumexp per row.
// derivative of cross_entropy, input input: (softmax(x) - onehot(target)) * weight[target] * g * r (r: 1, or 1 / sum of the counted rows' weights for mean); label_smoothing e: (softmax(x) * ((1 - e) weight[target] + e sum(weight) / C) - (1 - e) weight[target] onehot(target) - e weight / C) * g * r
// derivative of nll_loss, input input: -onehot(target) * weight[target] * g * r (r as cross_entropy's)
struct ClassLossBackward : Node {
    Tensor input, lse, count, target, weight;  // input, lse: cross_entropy only; count: mean only; weight or null
    ClassLoss spec;
    std::string name() const override { return spec.from_logits ? "CrossEntropyLossBackward0" : "NllLossBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        if (autograd::is_grad_enabled()) return {gradient_ops(g[0]), nullptr};
        const autograd::TensorMeta& x = input_meta[0];
        Tensor gx = empty(x.shape, x.dtype, x.device);
        if (gx->numel())
            kernels(x.device).class_loss_backward(gx, to_dtype(g[0], x.dtype), input, lse, count, target, weight,
                                                  spec);
        return {gx, nullptr};
    }
    void release() override { input.reset(), lse.reset(), count.reset(), target.reset(), weight.reset(); }

    // The kernel's formula in ops, for create_graph: (softmax(x) - onehot) * w[t] * row weight
    // (and the smoothing's terms), with x an input_proxy so that the softmax leads back to the
    // logits.
    Tensor gradient_ops(const Tensor& g) const
    {
        const autograd::TensorMeta& m = input_meta[0];
        const int64_t N = m.shape[0], C = m.shape[1];
        const Device dev = m.device;
        Tensor valid = binary(BinaryOp::Ne, target, scalar_tensor(Scalar(spec.check.ignore), Device{}));
        Tensor t = where(valid, target, scalar_tensor(Scalar(int64_t(0)), dev));
        Tensor onehot = to_dtype(binary(BinaryOp::Eq, reshape(t, {N, 1}),
                                        reshape(arange(0, double(C), 1, DType::Int64, dev), {1, C})),
                                 m.dtype);
        Tensor row = binary(BinaryOp::Mul, to_dtype(valid, m.dtype), to_dtype(g, m.dtype));  // (N,): g is () or (N,)
        if (spec.reduction == ClassLoss::Mean) row = binary(BinaryOp::Div, row, count);
        auto mul = [](const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); };
        auto num = [&](double v) { return scalar_tensor(Scalar(v), Device{}, m.dtype); };
        const Tensor w_cls = weight ? reshape(index_select(weight, 0, t), {N, 1}) : num(1.0);
        if (!spec.from_logits) return mul(mul(unary(UnaryOp::Neg, onehot), w_cls), reshape(row, {N, 1}));
        const Tensor p = softmax(autograd::input_proxy(*this, 0, input), 1);
        Tensor base = mul(binary(BinaryOp::Sub, p, onehot), w_cls);
        if (spec.smoothing > 0) {
            const double e = spec.smoothing;
            const Tensor wsum = weight ? sum(weight, {}, false, std::nullopt) : num(double(C));
            const Tensor w = weight ? reshape(weight, {1, C}) : num(1.0);
            Tensor coef = binary(BinaryOp::Add, mul(w_cls, num(1 - e)), mul(wsum, num(e / double(C))));
            base = binary(BinaryOp::Sub, binary(BinaryOp::Sub, mul(p, coef), mul(mul(onehot, w_cls), num(1 - e))),
                          mul(w, num(e / double(C))));
        }
        return mul(base, reshape(row, {N, 1}));
    }
};

Tensor loss_common(const Tensor& input, const Tensor& target, int reduction, int64_t ignore_index, bool from_logits,
                   const Tensor& weight, double smoothing)
{
    const char* op = from_logits ? "cross_entropy" : "nll_loss";
    MT_CHECK(input->dim() == 2, op, ": expected input of shape (N, C), got ", input->shape);
    MT_CHECK_TYPE(target->dtype == DType::Int64, op, ": expected target of dtype int64 (class indices), got ",
                  target->dtype);
    MT_CHECK(target->dim() == 1 && target->shape[0] == input->shape[0], op, ": expected target of shape (",
             input->shape[0], ",) for input of shape ", input->shape, ", got ", target->shape);
    MT_CHECK(reduction >= 0 && reduction <= 2, op, ": unknown reduction ", reduction);
    check_same_device(op, input, target);
    MT_CHECK(smoothing >= 0 && smoothing <= 1 && (from_logits || smoothing == 0), op,
             ": label_smoothing must be between 0.0 and 1.0, got ", smoothing);
    const int64_t N = input->shape[0], C = input->shape[1];
    if (weight) {
        check_same_device(op, input, weight);
        MT_CHECK(weight->dim() == 1 && weight->shape[0] == C, op, ": expected weight of shape (", C,
                 ",) (one per class), got ", weight->shape);
        MT_CHECK_TYPE(is_floating(weight->dtype), op, ": expected a floating weight, got ", weight->dtype);
    }
    const ClassLoss spec{IndexCheck{op, C, false, true, ignore_index}, reduction, from_logits, smoothing};
    // The weights take no gradient (as PyTorch's): a detached copy in the input's dtype.
    const Tensor w = weight ? contiguous(to_dtype(make_alias(weight), input->dtype)) : nullptr;
    Tensor x, t, lse, count;  // set by forward, saved by setup
    auto forward = [&] {
        // One kernel for the per-row losses (checking the targets where they live: on a GPU
        // the IndexError comes at the next sync) and, unless none, one for their sum or mean.
        x = contiguous(input);
        t = contiguous(target);
        const Device device = x->device();
        if (from_logits) lse = empty({N}, DType::Float64, device);  // see row_logsumexp
        if (reduction == ClassLoss::Mean) count = empty({}, x->dtype, device);
        Tensor out = empty(reduction == ClassLoss::None ? Shape{N} : Shape{}, x->dtype, device);
        kernels(device).class_loss(out, lse, count, x, t, w, spec);
        return out;
    };
    return autograd::record_op<ClassLossBackward>({&input, &target}, forward, [&](ClassLossBackward& n, const Tensor&) {
        n.spec = spec;
        if (from_logits) n.input = autograd::save(n, x), n.lse = autograd::save(n, lse);
        if (count) n.count = autograd::save(n, count);
        n.target = autograd::save(n, t);
        n.weight = w;
    });
}

// derivative of layer_norm, input input: rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * weight, xhat = (x - mean) * rstd (per row)
// derivative of layer_norm, input weight: sum over rows of g * xhat
// derivative of layer_norm, input bias: sum over rows of g
// derivative of rms_norm, input input: rstd * (gw - xhat * mean(gw * xhat)), gw = g * weight, xhat = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps) (per row)
// derivative of rms_norm, input weight: sum over rows of g * xhat
struct LayerNormBackward : Node {
    Tensor x, mean, rstd, weight;  // x as (rows, D), contiguous; mean null for the RMS norm
    double eps = 1e-5;
    bool rms = false;  // rms_norm: inputs (x, weight), no centring
    std::string name() const override { return rms ? "FusedRmsNormBackward0" : "NativeLayerNormBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        if (autograd::is_grad_enabled()) return gradient_ops(grads[0]);
        Tensor g = contiguous(reshape(grads[0], x->shape));
        std::vector<Tensor> out =
            norm_backward_grads(*this, x, x->dtype, [&](const Tensor& gx, const Tensor& gw, const Tensor& gb) {
                kernels(x->device()).layer_norm_backward(gx, gw, gb, g, x, mean, rstd, weight);
            });
        if (rms) out.pop_back();  // no bias
        return out;
    }
    void release() override { x.reset(), mean.reset(), rstd.reset(), weight.reset(); }

    // The formulas above in ops, for create_graph: the row statistics are recomputed from
    // an input_proxy of x (their own derivatives enter the second derivative).
    std::vector<Tensor> gradient_ops(const Tensor& grad) const
    {
        const Shape rows_d = x->shape;
        const std::vector<int64_t> last{1};
        auto mean_rows = [&](const Tensor& t) { return minitorch::mean(t, last, true, std::nullopt); };
        auto mul = [](const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); };
        auto sub = [](const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); };
        Tensor xp = reshape(autograd::input_proxy(*this, 0, reshape(x, input_meta[0].shape)), rows_d);
        Tensor xc = rms ? xp : sub(xp, mean_rows(xp));
        Tensor var = mean_rows(mul(xc, xc));
        Tensor r = unary(UnaryOp::Rsqrt, binary(BinaryOp::Add, var, scalar_tensor(Scalar(eps), Device{})));
        Tensor xhat = mul(xc, r);
        Tensor g = reshape(to_dtype(grad, x->dtype), rows_d);
        Tensor gx, gw, gb;
        if (needs_input_grad(0)) {
            Tensor gwt = weight ? mul(g, reshape(autograd::input_proxy(*this, 1, reshape(weight, input_meta[1].shape)),
                                                 {rows_d[1]}))
                                : g;
            gx = mul(r, sub(rms ? gwt : sub(gwt, mean_rows(gwt)), mul(xhat, mean_rows(mul(gwt, xhat)))));
            gx = reshape(gx, input_meta[0].shape);
        }
        if (needs_input_grad(1)) gw = reshape(sum(mul(g, xhat), {0}, false, std::nullopt), input_meta[1].shape);
        if (rms) return {gx, gw};
        if (needs_input_grad(2)) gb = reshape(sum(g, {0}, false, std::nullopt), input_meta[2].shape);
        return {gx, gw, gb};
    }
};

}  // namespace

std::vector<Tensor> norm_backward_grads(const autograd::Node& node, const Tensor& x, DType param_dtype,
                                        const std::function<void(const Tensor& gx, const Tensor& gw,
                                                                 const Tensor& gb)>& run)
{
    const Device dev = x->device();
    const int64_t C = x->shape[1];
    Tensor gx = node.needs_input_grad(0) ? empty(x->shape, x->dtype, dev) : nullptr;
    Tensor gw = node.needs_input_grad(1) ? empty({C}, param_dtype, dev) : nullptr;
    Tensor gb = node.needs_input_grad(2) ? empty({C}, param_dtype, dev) : nullptr;
    if (x->numel()) run(gx, gw, gb);
    else
        for (const Tensor* t : {&gx, &gw, &gb})
            if (*t && (*t)->numel()) fill_(*t, 0.0);
    auto in_shape = [&](const Tensor& t, size_t i) { return t ? reshape(t, node.input_meta[i].shape) : nullptr; };
    return {in_shape(gx, 0), in_shape(gw, 1), in_shape(gb, 2)};
}

namespace {

// layer_norm and rms_norm: one kernel each way; rms_norm passes no bias and no mean (the
// kernels then skip the centring).
Tensor norm_rows(const char* op, const Tensor& x, int64_t D, const Tensor& weight, const Tensor& bias, double eps,
                 bool rms)
{
    MT_CHECK_TYPE(is_floating(x->dtype), op, ": expected a floating tensor, got ", x->dtype);
    MT_CHECK(D > 0 && x->numel() % D == 0, op, ": input of shape ", x->shape, " cannot be normalized over its last ", D,
             " values");
    for (const Tensor* p : {&weight, &bias})
        if (*p) MT_CHECK((*p)->numel() == D, op, ": weight and bias must have ", D, " elements, got shape ", (*p)->shape);
    if (weight) check_layer_dtypes(op, x, weight, bias);
    else if (bias) check_layer_dtypes(op, x, bias, nullptr);
    if (weight) check_same_device(op, x, weight);
    if (bias) check_same_device(op, x, bias);
    const int64_t rows = x->numel() / D;
    Tensor xc, mean, rstd, w;
    auto forward = [&] {
        xc = contiguous(reshape(x, {rows, D}));
        w = weight ? contiguous(reshape(weight, {D})) : nullptr;
        Tensor b = bias ? contiguous(reshape(bias, {D})) : nullptr;
        Tensor out = empty({rows, D}, x->dtype, x->device());
        if (!rms) mean = empty({rows}, x->dtype, x->device());
        rstd = empty({rows}, x->dtype, x->device());
        if (rows) kernels(x->device()).layer_norm(out, mean, rstd, xc, w, b, eps);
        return reshape(out, x->shape);
    };
    auto setup = [&](LayerNormBackward& n, const Tensor&) {
        n.x = autograd::save(n, xc);
        n.eps = eps;
        n.rms = rms;
        if (mean) n.mean = autograd::save(n, mean);
        n.rstd = autograd::save(n, rstd);
        if (w) n.weight = autograd::save(n, w);
    };
    if (rms) return autograd::record_op<LayerNormBackward>({&x, &weight}, forward, setup);
    return autograd::record_op<LayerNormBackward>({&x, &weight, &bias}, forward, setup);
}

}  // namespace

Tensor layer_norm(const Tensor& x, int64_t D, const Tensor& weight, const Tensor& bias, double eps)
{
    MT_PROFILE_OP("layer_norm", x, weight, bias);
    return norm_rows("layer_norm", x, D, weight, bias, eps, false);
}

Tensor rms_norm(const Tensor& x, int64_t D, const Tensor& weight, double eps)
{
    MT_PROFILE_OP("rms_norm", x, weight);
    return norm_rows("rms_norm", x, D, weight, nullptr, eps, true);
}

namespace {

// The mask (bool) of the forward; scale = 1 / (1 - p). One kernel, or the same product in
// ops under create_graph (so that it has a gradient too).
// derivative of dropout, input input: g * mask / (1 - p)
struct DropoutBackward : Node {
    Tensor mask;
    double scale = 1;
    std::string name() const override { return "NativeDropoutBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Tensor& g = grads[0];
        // (g * scale) * mask: the order of the two products of `x * mask * scale` composed.
        if (autograd::is_grad_enabled())
            return {binary(BinaryOp::Mul, binary(BinaryOp::Mul, g, scalar_tensor(Scalar(scale), Device{})), mask)};
        Tensor gc = contiguous(g);
        Tensor gx = empty(gc->shape, gc->dtype, gc->device());
        if (gx->numel()) kernels(gc->device()).dropout_backward(gx, gc, mask, scale);
        return {gx};
    }
    void release() override { mask.reset(); }
};

}  // namespace

Tensor dropout(const Tensor& x, double p)
{
    MT_PROFILE_OP("dropout", x);
    MT_CHECK(p > 0 && p < 1, "dropout: the fused kernel takes 0 < p < 1, got p = ", p);
    MT_CHECK_TYPE(is_floating(x->dtype), "dropout: the fused kernel takes a floating tensor, got ", x->dtype);
    Tensor mask;
    auto forward = [&] {
        Tensor in = contiguous(x);
        Tensor out = empty(in->shape, in->dtype, in->device());
        mask = empty(in->shape, DType::Bool, in->device());
        if (out->numel()) kernels(in->device()).dropout(out, mask, in, p);
        return out;
    };
    return autograd::record_op<DropoutBackward>({&x}, forward, [&](DropoutBackward& n, const Tensor&) {
        n.mask = mask;
        n.scale = 1.0 / (1.0 - p);
        n.has_saved = true;
    });
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b)
{
    MT_PROFILE_OP("linear", x, w, b);
    MT_CHECK(x->dim() >= 1 && w->dim() == 2, "linear: expected input (..., in_features) and weight (out, in), got ",
             x->shape, " and ", w->shape);
    MT_CHECK(x->size(-1) == w->shape[1], "linear: input of shape ", x->shape, " does not match weight of shape ",
             w->shape, " (in_features ", x->size(-1), " != ", w->shape[1], ")");
    if (b) MT_CHECK(b->dim() == 1 && b->shape[0] == w->shape[0], "linear: bias of shape ", b->shape,
                    " does not match weight of shape ", w->shape);
    check_layer_dtypes("linear", x, w, b);
    check_same_device("linear", x, w);
    if (b) check_same_device("linear", x, b);
    MT_CHECK_TYPE(x->dtype != DType::Bool, "linear: not implemented for bool tensors");
    auto forward = [&] {
        Tensor wt = transpose(w, 0, 1);  // BLAS reads W^T in place (a transposed view)
        if (!b) return matmul(x, wt);
        // x (batch..., M, K) @ W^T + b in one kernel (matmul_bias), read where x lies; the
        // kernel folds batches whose rows follow one another into one GEMM.
        Tensor a = x->dim() == 1 ? unsqueeze(x, 0) : x;
        const int64_t N = w->shape[0];
        Shape b_shape(a->shape.begin(), a->shape.end() - 2), shape = b_shape;
        b_shape.insert(b_shape.end(), {w->shape[1], N});
        shape.insert(shape.end(), {a->size(-2), N});
        Tensor out = empty(shape, x->dtype, x->device());
        if (out->numel() && w->shape[1] == 0)  // a sum of no terms: every row is the bias
            kernels(x->device()).copy(out, expand(b, shape));
        else if (out->numel())
            kernels(x->device()).matmul_bias(out, a, expand(wt, b_shape), contiguous(b));
        return x->dim() == 1 ? squeeze(out, std::vector<int64_t>{0}) : out;
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
    return autograd::record_op<LogSoftmaxBackward>({&x}, [&] { return softmax_forward(x, dim, true); },
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
    return autograd::record_op<SoftmaxBackward>({&x}, [&] { return softmax_forward(x, dim, false); },
                                                [&](SoftmaxBackward& n, const Tensor& out) {
                                                    n.out = autograd::save(n, out);
                                                    n.dim = dim;
                                                });
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, int reduction, int64_t ignore_index,
                     const Tensor& weight, double label_smoothing)
{
    MT_PROFILE_OP("cross_entropy", logits, target);
    MT_CHECK_TYPE(is_floating(logits->dtype), "cross_entropy: expected floating logits, got ", logits->dtype);
    return loss_common(logits, target, reduction, ignore_index, true, weight, label_smoothing);
}

Tensor nll_loss(const Tensor& logp, const Tensor& target, int reduction, int64_t ignore_index, const Tensor& weight)
{
    MT_PROFILE_OP("nll_loss", logp, target);
    MT_CHECK_TYPE(is_floating(logp->dtype), "nll_loss: expected floating log-probabilities, got ", logp->dtype);
    return loss_common(logp, target, reduction, ignore_index, false, weight, 0.0);
}

}  // namespace minitorch
