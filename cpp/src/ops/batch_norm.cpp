// batch_norm.cpp — the fused batch norm, one graph node (kernels batch_norm and
// batch_norm_backward; formulas in batch_norm_math.h):
//   training  y = (x - mean) / sqrt(var + eps) * w + b with the batch's per-channel mean and
//             biased var (one statistics pass, one normalizing pass), running_mean /
//             running_var moved toward the mean and the unbiased var in the same kernel;
//   eval      y = (x - mean) * scale + b from the running statistics (one pass).
// The input (N, C, *) is seen as a contiguous (N, C, S) tensor. Backward is one reduction
// pass (per-channel sum(g), sum(g * xhat)) and one elementwise pass; under create_graph it
// is written with ordinary ops instead, so its own gradient is recorded.
// Mixed batch norm (PyTorch's, what autocast gives a BatchNorm after a float16 / bfloat16
// convolution): a 16-bit input with float32 weight, bias and running statistics. The output
// and grad_input have the input's dtype; the statistics are computed in float32 and the
// running statistics and the parameter gradients stay float32. The kernels read both
// dtypes in place (batch_norm_math.h), so this costs no conversion passes.
#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }

// derivative of batch_norm, input input: training: w * rstd * (g - mean(g) - xhat * mean(g * xhat)), means per channel over N and the spatial dims, xhat = (x - mean) * rstd; eval: w * rstd * g
// derivative of batch_norm, input weight: per-channel sum of g * xhat
// derivative of batch_norm, input bias: per-channel sum of g
struct BatchNormBackward : Node {
    Tensor x, mean, rstd, weight;  // x as (N, C, S), contiguous; mean, rstd (C,)
    bool training = true;
    double eps = 1e-5;
    DType param_dtype = DType::Float32;  // weight, bias and their gradients
    std::string name() const override { return "NativeBatchNormBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        if (autograd::is_grad_enabled()) return gradient_ops(grads[0]);
        Tensor g = contiguous(reshape(to_dtype(grads[0], x->dtype), x->shape));
        return norm_backward_grads(*this, x, param_dtype, [&](const Tensor& gx, const Tensor& gw, const Tensor& gb) {
            kernels(x->device()).batch_norm_backward(gx, gw, gb, g, x, mean, rstd, weight, training);
        });
    }
    void release() override { x.reset(), mean.reset(), rstd.reset(), weight.reset(); }

    // The formulas above in ops, for create_graph. Training: the batch statistics are
    // recomputed from an input_proxy of x, so their own derivatives enter the second
    // derivative; eval: mean and rstd are constants.
    std::vector<Tensor> gradient_ops(const Tensor& grad) const
    {
        const Shape ncs = x->shape;
        const Shape c11{1, ncs[1], 1};
        const std::vector<int64_t> dims{0, 2};
        auto mean_nc = [&](const Tensor& t) { return minitorch::mean(t, dims, true, std::nullopt); };
        Tensor xp = reshape(autograd::input_proxy(*this, 0, reshape(x, input_meta[0].shape)), ncs);
        Tensor m, r;
        if (training) {
            m = mean_nc(xp);
            Tensor xc = sub(xp, m);
            r = unary(UnaryOp::Rsqrt,
                      binary(BinaryOp::Add, mean_nc(mul(xc, xc)), scalar_tensor(Scalar(eps), Device{})));
        } else {
            m = reshape(to_dtype(mean, x->dtype), c11), r = reshape(to_dtype(rstd, x->dtype), c11);
        }
        Tensor xhat = mul(sub(xp, m), r);
        Tensor g = reshape(to_dtype(grad, x->dtype), ncs);
        Tensor gx, gw, gb;
        if (needs_input_grad(0)) {
            Tensor gwt = weight ? mul(g, reshape(autograd::input_proxy(*this, 1, reshape(weight, input_meta[1].shape)),
                                                 c11))
                                : g;
            gx = training ? mul(r, sub(sub(gwt, mean_nc(gwt)), mul(xhat, mean_nc(mul(gwt, xhat))))) : mul(r, gwt);
            gx = reshape(to_dtype(gx, x->dtype), input_meta[0].shape);
        }
        auto param_grad = [&](const Tensor& t, int i) { return reshape(to_dtype(t, param_dtype), input_meta[i].shape); };
        if (needs_input_grad(1)) gw = param_grad(sum(mul(g, xhat), dims, false, std::nullopt), 1);
        if (needs_input_grad(2)) gb = param_grad(sum(g, dims, false, std::nullopt), 2);
        return {gx, gw, gb};
    }
};

// The dtype the kernels compute a dtype in (float16 and bfloat16 in float32).
DType compute_dtype(DType t) { return t == DType::Float64 ? DType::Float64 : DType::Float32; }

// The dtype of weight, bias and the running statistics the kernels take: the input's, or
// float32 beside a 16-bit input (mixed). Checks that weight and bias agree with it.
DType param_dtype(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean)
{
    const Tensor& p = weight ? weight : bias;
    const bool mixed = is_16bit(x->dtype) &&
                       (p ? p->dtype == DType::Float32 : running_mean && running_mean->dtype == DType::Float32);
    if (!mixed) {
        if (weight) check_layer_dtypes("batch_norm", x, weight, bias);
        else if (bias) check_layer_dtypes("batch_norm", x, bias, nullptr);
        return x->dtype;
    }
    MT_CHECK_TYPE(!weight || !bias || bias->dtype == weight->dtype, "batch_norm: weight (", weight->dtype,
                  ") and bias (", bias ? bias->dtype : weight->dtype, ") must have the same dtype");
    return DType::Float32;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps, const Tensor& num_batches_tracked)
{
    MT_PROFILE_OP("batch_norm", x, weight, bias);
    MT_CHECK_TYPE(is_floating(x->dtype), "batch_norm: expected a floating tensor, got ", x->dtype);
    MT_CHECK(x->dim() >= 2, "batch_norm: expected an input of shape (N, C, *), got ", x->shape);
    const int64_t N = x->shape[0], C = x->shape[1], S = N * C != 0 ? x->numel() / (N * C) : 1;
    const char* names[] = {"running_mean", "running_var", "weight", "bias"};
    const Tensor* params[] = {&running_mean, &running_var, &weight, &bias};
    for (int i = 0; i < 4; ++i)
        if (*params[i]) {
            MT_CHECK((*params[i])->numel() == C && (*params[i])->dim() == 1, "batch_norm: ", names[i], " should contain ",
                     C, " elements (the channels of input of shape ", x->shape, "), not ", (*params[i])->numel(),
                     " (shape ", (*params[i])->shape, ")");
            check_same_device("batch_norm", x, *params[i]);
            MT_CHECK_TYPE(is_floating((*params[i])->dtype), "batch_norm: ", names[i], " must be floating, got ",
                          (*params[i])->dtype);
        }
    const DType pdt = param_dtype(x, weight, bias, running_mean);
    MT_CHECK(!training || N * S > 1, "batch_norm: expected more than 1 value per channel when training, got input of "
             "shape ", x->shape);
    MT_CHECK(training || (running_mean && running_var),
             "batch_norm: running_mean and running_var must be given when training=False");
    const Device dev = x->device();
    const DType stat_dtype = compute_dtype(x->dtype);
    // The kernel updates running statistics of the parameters' dtype, contiguous; others
    // (float32 statistics of a float64 input, a strided view) go through a staged copy.
    auto staged = [&](const Tensor& r) -> Tensor {
        if (!r || !training) return r;
        if (r->dtype == pdt && r->is_contiguous()) return r;
        Tensor t = empty({C}, pdt, dev);
        kernels(dev).copy(t, r);
        return t;
    };
    Tensor rm = staged(running_mean), rv = staged(running_var);
    Tensor eval_m, eval_v;  // eval: the running statistics, read in the parameters' dtype
    if (!training) {
        eval_m = contiguous(to_dtype(running_mean, pdt)), eval_v = contiguous(to_dtype(running_var, pdt));
    }
    // The batch counter rides along in the statistics kernel (no launch of its own) when the
    // kernel runs and can write it; otherwise it is an add_ of its own below.
    const Tensor& nbt = num_batches_tracked;
    const bool count_in_kernel = nbt && training && x->numel() && nbt->dtype == DType::Int64 && nbt->numel() == 1 &&
                                 nbt->is_contiguous() && nbt->device() == dev;
    Tensor xc, mean, rstd, w;
    auto forward = [&] {
        xc = contiguous(reshape(x, {N, C, S}));
        w = weight ? contiguous(weight) : nullptr;
        Tensor b = bias ? contiguous(bias) : nullptr;
        Tensor out = empty({N, C, S}, x->dtype, dev);
        mean = empty({C}, stat_dtype, dev);
        rstd = empty({C}, stat_dtype, dev);
        if (xc->numel())
            kernels(dev).batch_norm(out, mean, rstd, xc, w, b, training ? rm : eval_m, training ? rv : eval_v,
                                    count_in_kernel ? nbt : nullptr, training, momentum, eps);
        return reshape(out, x->shape);
    };
    Tensor out = autograd::record_op<BatchNormBackward>(
        {&x, &weight, &bias}, forward, [&](BatchNormBackward& n, const Tensor&) {
            n.x = autograd::save(n, xc);
            n.mean = autograd::save(n, mean);
            n.rstd = autograd::save(n, rstd);
            n.training = training, n.eps = eps, n.param_dtype = pdt;
            if (w) n.weight = autograd::save(n, w);
        });
    if (training)
        for (auto [r, t] : {std::pair{running_mean, rm}, std::pair{running_var, rv}})
            if (r) {
                if (t != r) kernels(dev).copy(r, t);
                autograd::bump_version(r);
            }
    if (nbt && training) {
        if (count_in_kernel) autograd::bump_version(nbt);
        else binary_(BinaryOp::Add, nbt, scalar_tensor(Scalar(int64_t(1)), Device{}));
    }
    return out;
}

}  // namespace minitorch
