// group_norm.cpp — the fused group norm, one graph node (kernels group_norm and
// group_norm_backward; formulas in group_norm_math.h):
//   y = (x - mean) / sqrt(var + eps) * w[c] + b[c], mean and biased var of each (sample, group)
// in one kernel (statistics, normalization and the per-channel affine: the composed version
// is a layer norm and two broadcast ops, three passes each way). The input (N, C, *) is seen
// as a contiguous (N, C, S) tensor. Backward is the planes' sums of g and g * xhat, then dx
// (and dw, db from the same sums); under create_graph it is written with ordinary ops instead,
// so its own gradient is recorded. F.instance_norm is a group norm with one channel per group.
#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }

// derivative of group_norm, input input: rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * weight[c], xhat = (x - mean) * rstd, means over each (sample, group)
// derivative of group_norm, input weight: per-channel sum of g * xhat
// derivative of group_norm, input bias: per-channel sum of g
struct GroupNormBackward : Node {
    Tensor x, mean, rstd, weight;  // x as (N, C, S), contiguous; mean, rstd (N, G) float64
    double eps = 1e-5;
    std::string name() const override { return "NativeGroupNormBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        if (autograd::is_grad_enabled()) return gradient_ops(grads[0]);
        Tensor g = contiguous(reshape(to_dtype(grads[0], x->dtype), x->shape));
        return norm_backward_grads(*this, x, x->dtype, [&](const Tensor& gx, const Tensor& gw, const Tensor& gb) {
            kernels(x->device()).group_norm_backward(gx, gw, gb, g, x, mean, rstd, weight);
        });
    }
    void release() override { x.reset(), mean.reset(), rstd.reset(), weight.reset(); }

    // The formulas above in ops, for create_graph: the statistics are recomputed from an
    // input_proxy of x (over (N, G, D) rows), so their own derivatives enter the second
    // derivative; the affine is per channel of the (N, C, S) view.
    std::vector<Tensor> gradient_ops(const Tensor& grad) const
    {
        const int64_t N = x->shape[0], C = x->shape[1], S = x->shape[2], G = mean->shape[1];
        const Shape ngd{N, G, C / G * S}, ncs = x->shape;
        auto mean_row = [](const Tensor& t) { return minitorch::mean(t, {2}, true, std::nullopt); };
        Tensor xp = reshape(autograd::input_proxy(*this, 0, reshape(x, input_meta[0].shape)), ngd);
        Tensor xc = sub(xp, mean_row(xp));
        Tensor r = unary(UnaryOp::Rsqrt,
                         binary(BinaryOp::Add, mean_row(mul(xc, xc)), scalar_tensor(Scalar(eps), Device{})));
        Tensor xhat = mul(xc, r);  // (N, G, D)
        Tensor g = reshape(to_dtype(grad, x->dtype), ncs);
        Tensor gx, gw, gb;
        if (needs_input_grad(0)) {
            Tensor gwt = weight ? mul(g, reshape(autograd::input_proxy(*this, 1, reshape(weight, input_meta[1].shape)),
                                                 {1, C, 1}))
                                : g;
            gwt = reshape(gwt, ngd);
            gx = mul(r, sub(sub(gwt, mean_row(gwt)), mul(xhat, mean_row(mul(gwt, xhat)))));
            gx = reshape(gx, input_meta[0].shape);
        }
        const std::vector<int64_t> dims{0, 2};
        if (needs_input_grad(1))
            gw = reshape(sum(mul(g, reshape(xhat, ncs)), dims, false, std::nullopt), input_meta[1].shape);
        if (needs_input_grad(2)) gb = reshape(sum(g, dims, false, std::nullopt), input_meta[2].shape);
        return {gx, gw, gb};
    }
};

}  // namespace

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps)
{
    MT_PROFILE_OP("group_norm", x, weight, bias);
    MT_CHECK_TYPE(is_floating(x->dtype), "group_norm: expected a floating tensor, got ", x->dtype);
    MT_CHECK(x->dim() >= 2, "group_norm: expected an input of shape (N, C, *), got ", x->shape);
    const int64_t N = x->shape[0], C = x->shape[1], S = N * C != 0 ? x->numel() / (N * C) : 1;
    MT_CHECK(num_groups > 0 && C % num_groups == 0, "group_norm: the ", C, " channels of input of shape ", x->shape,
             " cannot be split into ", num_groups, " groups");
    const char* names[] = {"weight", "bias"};
    const Tensor* params[] = {&weight, &bias};
    for (int i = 0; i < 2; ++i)
        if (*params[i]) {
            MT_CHECK((*params[i])->dim() == 1 && (*params[i])->numel() == C, "group_norm: ", names[i],
                     " should have shape (", C, ",) (one value per channel of input of shape ", x->shape, "), got ",
                     (*params[i])->shape);
            check_same_device("group_norm", x, *params[i]);
        }
    if (weight) check_layer_dtypes("group_norm", x, weight, bias);
    else if (bias) check_layer_dtypes("group_norm", x, bias, nullptr);
    const Device dev = x->device();
    Tensor xc, mean, rstd, w;
    auto forward = [&] {
        xc = contiguous(reshape(x, {N, C, S}));
        w = weight ? contiguous(weight) : nullptr;
        Tensor b = bias ? contiguous(bias) : nullptr;
        Tensor out = empty({N, C, S}, x->dtype, dev);
        mean = empty({N, num_groups}, DType::Float64, dev);  // GroupNormAcc: group_norm_math.h
        rstd = empty({N, num_groups}, DType::Float64, dev);
        if (xc->numel()) kernels(dev).group_norm(out, mean, rstd, xc, w, b, eps);
        return reshape(out, x->shape);
    };
    auto save = [&](GroupNormBackward& n, const Tensor&) {
        n.x = autograd::save(n, xc);
        n.mean = autograd::save(n, mean);
        n.rstd = autograd::save(n, rstd);
        n.eps = eps;
        if (w) n.weight = autograd::save(n, w);
    };
    return autograd::record_op<GroupNormBackward>({&x, &weight, &bias}, forward, save);
}

}  // namespace minitorch
