// batch_norm.cpp — CPU kernels of the fused batch norm (kernels.h), forward and backward,
// on a contiguous (N, C, S) tensor: channel c's values are N rows of S contiguous values.
// Threads split the channels. Forward (training): one pass of shifted sums per channel
// (batch_norm_math.h), the running statistics updated, then one pass writing
// y = (x - mean) * scale + shift. Backward: one pass of sum(g) and sum(g * xhat) per channel, one
// pass writing dx = kg * g + kx * (x - mean) + kc. Inner loops run over a row's S values in L
// independent lanes (SIMD registers; the lanes are summed in double per row), so every
// pass goes at memory speed. With S < L (BatchNorm1d's (N, C) input: S = 1) the rows are
// too short for lanes, and the channels of one sample (contiguous) are walked instead.
// float16 / bfloat16 inputs are read and written in place (the table's entries are these
// functions, not Widen's staging), computed in float32, with parameters of the input's
// dtype or float32 (mixed batch norm, as under autocast).
#include <cmath>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/batch_norm_math.h"
#include "minitorch/parallel.h"
#include "norm_sums.h"

namespace minitorch::cpu {

namespace {

using A = BatchNormAcc;
constexpr int kLanes = kNormLanes;

struct Dims {
    int64_t N, C, S;
};
Dims dims_of(const Tensor& in, const Tensor& mean)
{
    const int64_t C = mean->numel(), N = in->shape[0];
    return {N, C, N * C != 0 ? in->numel() / (N * C) : 0};
}

// Channels per task: enough work per task to be worth a thread.
int64_t channel_grain(const Dims& d) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(4 * d.N * d.S, 1)); }

}  // namespace

void batch_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, const Tensor& running_mean, const Tensor& running_var, const Tensor& batches,
                bool training, double momentum, double eps)
{
    if (training && batches) *batches->data_as<int64_t>() += 1;
    const Dims d = dims_of(in, mean);
    const int64_t M = d.N * d.S;
    const DType pd = batch_norm_param_dtype(in->dtype, {&weight, &bias, &running_mean, &running_var});
    dispatch_batch_norm(in->dtype, pd, "batch_norm", [&](auto tag, auto ptag) {
        using T = typename decltype(tag)::type;
        using P = typename decltype(ptag)::type;
        using C = BatchNormCompute<T>;
        const T* x = in->data_as<T>();
        const P* w = weight ? weight->data_as<P>() : nullptr;
        const P* b = bias ? bias->data_as<P>() : nullptr;
        T* y = out->data_as<T>();
        C *mu = mean->data_as<C>(), *rs = rstd->data_as<C>();
        P* rm = running_mean ? running_mean->data_as<P>() : nullptr;
        P* rv = running_var ? running_var->data_as<P>() : nullptr;
        // The statistics of channel c from its sums; the running statistics move toward them.
        auto finish = [&](int64_t c, A K, A s, A q) {
            A m, r, var_unbiased;
            batch_norm_stats(K, s, q, M, eps, m, r, var_unbiased);
            mu[c] = C(m), rs[c] = C(r);
            if (rm) rm[c] = batch_norm_running(rm[c], m, momentum);
            if (rv) rv[c] = batch_norm_running(rv[c], var_unbiased, momentum);
        };
        if (!training) {
            for (int64_t c = 0; c < d.C; ++c) {
                mu[c] = C(rm[c]);
                rs[c] = batch_norm_eval_rstd<C>(rv[c], eps);
            }
        } else if (d.S >= kLanes) {
            parallel_for(d.C, channel_grain(d), [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c) {
                    const C K = C(x[c * d.S]);
                    A s = 0, q = 0;
                    for (int64_t n = 0; n < d.N; ++n) shifted_sums(x + (n * d.C + c) * d.S, d.S, K, s, q);
                    finish(c, A(K), s, q);
                }
            });
        } else {
            // Short rows: walk each sample's C * S values in order, one accumulator per channel.
            std::vector<A> s(d.C, 0.0), q(d.C, 0.0);
            for (int64_t n = 0; n < d.N; ++n)
                for (int64_t c = 0; c < d.C; ++c) {
                    const T* row = x + (n * d.C + c) * d.S;
                    const A K = A(C(x[c * d.S]));
                    for (int64_t j = 0; j < d.S; ++j) {
                        const A v = A(C(row[j])) - K;
                        s[c] += v, q[c] += v * v;
                    }
                }
            for (int64_t c = 0; c < d.C; ++c) finish(c, A(C(x[c * d.S])), s[c], q[c]);
        }
        // y = (x - mean) * scale + bias, channel by channel of each sample.
        parallel_for(d.N * d.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d.S, 1)), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t c = r % d.C;
                const C scale = C(A(rs[c]) * (w ? A(C(w[c])) : A(1))), m = mu[c], shift = b ? C(b[c]) : C(0);
                const T* __restrict xr = x + r * d.S;
                T* __restrict yr = y + r * d.S;
                for (int64_t j = 0; j < d.S; ++j) yr[j] = T((C(xr[j]) - m) * scale + shift);
            }
        });
    });
}

void batch_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight, bool training)
{
    const Dims d = dims_of(in, mean);
    const int64_t M = d.N * d.S;
    const DType pd = batch_norm_param_dtype(in->dtype, {&weight, &grad_weight, &grad_bias});
    dispatch_batch_norm(in->dtype, pd, "batch_norm_backward", [&](auto tag, auto ptag) {
        using T = typename decltype(tag)::type;
        using P = typename decltype(ptag)::type;
        using C = BatchNormCompute<T>;
        const T *g = grad_out->data_as<T>(), *x = in->data_as<T>();
        const C *mu = mean->data_as<C>(), *rs = rstd->data_as<C>();
        const P* w = weight ? weight->data_as<P>() : nullptr;
        // Pass 1: per channel, sg = sum(g) and sgd = sum(g * (x - mean)) (sgx = sgd * rstd).
        std::vector<A> sg(d.C, 0.0), sgd(d.C, 0.0);
        if (d.S >= kLanes) {
            parallel_for(d.C, channel_grain(d), [&](int64_t c0, int64_t c1) {
                for (int64_t c = c0; c < c1; ++c)
                    for (int64_t n = 0; n < d.N; ++n) {
                        const int64_t o = (n * d.C + c) * d.S;
                        grad_sums(g + o, x + o, d.S, mu[c], sg[c], sgd[c]);
                    }
            });
        } else {
            for (int64_t n = 0; n < d.N; ++n)
                for (int64_t c = 0; c < d.C; ++c) {
                    const int64_t o = (n * d.C + c) * d.S;
                    for (int64_t j = 0; j < d.S; ++j)
                        sg[c] += A(C(g[o + j])), sgd[c] += A(C(g[o + j])) * (A(C(x[o + j])) - A(mu[c]));
                }
        }
        if (grad_weight)
            for (int64_t c = 0; c < d.C; ++c) grad_weight->data_as<P>()[c] = P(sgd[c] * A(rs[c]));
        if (grad_bias)
            for (int64_t c = 0; c < d.C; ++c) grad_bias->data_as<P>()[c] = P(sg[c]);
        if (!grad_in) return;
        // Pass 2: dx = kg * g + kx * (x - mean) + kc per channel.
        std::vector<C> kg(d.C), kx(d.C), kc(d.C);
        for (int64_t c = 0; c < d.C; ++c) {
            A a, bx, bc;
            batch_norm_grad_coeffs(training, A(rs[c]), w ? A(C(w[c])) : A(1), sg[c], sgd[c] * A(rs[c]), M, a, bx,
                                   bc);
            kg[c] = C(a), kx[c] = C(bx), kc[c] = C(bc);
        }
        T* gx = grad_in->data_as<T>();
        parallel_for(d.N * d.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d.S, 1)), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t c = r % d.C;
                const C a = kg[c], bx = kx[c], bc = kc[c], m = mu[c];
                const T *__restrict gr = g + r * d.S, *__restrict xr = x + r * d.S;
                T* __restrict out = gx + r * d.S;
                for (int64_t j = 0; j < d.S; ++j) out[j] = T(a * C(gr[j]) + bx * (C(xr[j]) - m) + bc);
            }
        });
    });
}

}  // namespace minitorch::cpu
