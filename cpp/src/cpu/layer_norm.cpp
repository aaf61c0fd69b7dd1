// layer_norm.cpp — CPU kernels of the fused layer norm, forward and backward, on rows
// of a contiguous (rows, D) tensor (kernels.h). Each row's mean and variance are taken
// in two passes (the mean first, then the squared deviations), in LayerNormAcc (double,
// as on a GPU: layer_norm_math.h), so a row far from zero loses no precision to cancellation.
// Without a mean tensor the same kernels are the RMS norm: no centring (the mean is 0), so
// rstd = 1 / sqrt(mean(x^2) + eps), and the backward loses its mean(gw) term.
#include <cmath>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/layer_norm_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

void layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, double eps)
{
    const int64_t rows = rstd->numel(), D = rows ? in->numel() / rows : 0;
    dispatch_floating(in->dtype, "layer_norm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        const T* w = weight ? weight->data_as<T>() : nullptr;
        const T* b = bias ? bias->data_as<T>() : nullptr;
        T *y = out->data_as<T>(), *mu = mean ? mean->data_as<T>() : nullptr, *rs = rstd->data_as<T>();
        parallel_for(rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(4 * D, 1)), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const T* xr = x + r * D;
                using A = LayerNormAcc;
                A m = 0;  // the RMS norm (no mean tensor) does not centre
                if (mu) {
                    for (int64_t j = 0; j < D; ++j) m += A(xr[j]);
                    m /= A(D);
                }
                A v = 0;
                for (int64_t j = 0; j < D; ++j) v += (A(xr[j]) - m) * (A(xr[j]) - m);
                const T mr = T(m), rr = T(A(1) / std::sqrt(v / A(D) + A(eps)));
                if (mu) mu[r] = mr;
                rs[r] = rr;
                T* yr = y + r * D;
                for (int64_t j = 0; j < D; ++j) {
                    T v2 = (xr[j] - mr) * rr;
                    if (w) v2 = v2 * w[j];
                    if (b) v2 = v2 + b[j];
                    yr[j] = v2;
                }
            }
        });
    });
}

void layer_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight)
{
    const int64_t rows = rstd->numel(), D = rows ? in->numel() / rows : 0;
    dispatch_floating(in->dtype, "layer_norm_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *g = grad_out->data_as<T>(), *x = in->data_as<T>(), *rs = rstd->data_as<T>();
        const T* w = weight ? weight->data_as<T>() : nullptr;
        const T* mu_or_null = mean ? mean->data_as<T>() : nullptr;  // null: the RMS norm, mean 0
        auto mu = [&](int64_t r) { return mu_or_null ? mu_or_null[r] : T(0); };
        if (grad_in) {
            T* gx = grad_in->data_as<T>();
            parallel_for(rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(4 * D, 1)), [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r) {
                    const T *gr = g + r * D, *xr = x + r * D;
                    LayerNormAcc s1 = 0, s2 = 0;  // sums of gw and gw * xhat over the row
                    for (int64_t j = 0; j < D; ++j) {
                        const T gw = w ? gr[j] * w[j] : gr[j];
                        s1 += gw;
                        s2 += gw * (xr[j] - mu(r)) * rs[r];
                    }
                    // the RMS norm's xhat does not move with the row's mean: no mean(gw) term
                    const T m1 = mu_or_null ? T(s1 / LayerNormAcc(D)) : T(0), m2 = T(s2 / LayerNormAcc(D));
                    for (int64_t j = 0; j < D; ++j) {
                        const T gw = w ? gr[j] * w[j] : gr[j];
                        const T xhat = (xr[j] - mu(r)) * rs[r];
                        gx[r * D + j] = rs[r] * (gw - m1 - xhat * m2);
                    }
                }
            });
        }
        // The parameter gradients sum over rows. Threads split the columns (each its own
        // range [j0, j1): no shared accumulator, the same sums whatever the thread count);
        // each goes row by row, adding into its accumulators (a contiguous inner loop).
        if (grad_weight || grad_bias) {
            std::vector<LayerNormAcc> sw(D, 0.0), sb(D, 0.0);
            parallel_for(D, std::max<int64_t>(16, kGrainSize / std::max<int64_t>(4 * rows, 1)), [&](int64_t j0, int64_t j1) {
                for (int64_t r = 0; r < rows; ++r) {
                    const T *gr = g + r * D, *xr = x + r * D;
                    for (int64_t j = j0; j < j1; ++j) {
                        sw[j] += layer_norm_weight_term(gr[j], xr[j], mu(r), rs[r]);
                        sb[j] += gr[j];
                    }
                }
            });
            if (grad_weight)
                for (int64_t j = 0; j < D; ++j) grad_weight->data_as<T>()[j] = T(sw[j]);
            if (grad_bias)
                for (int64_t j = 0; j < D; ++j) grad_bias->data_as<T>()[j] = T(sb[j]);
        }
    });
}

}  // namespace minitorch::cpu
