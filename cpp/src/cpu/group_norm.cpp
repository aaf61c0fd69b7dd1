// group_norm.cpp — CPU kernels of the fused group norm (kernels.h), forward and backward, on
// a contiguous (N, C, S) tensor with G groups; formulas in group_norm_math.h. Threads split
// the (n, g) rows, each row contiguous (D = C / G * S values). Forward: per row, one pass of
// shifted sums for the statistics, one writing y = (x - mean) * scale + b per channel.
// Backward: per row, one pass of the channels' sums of g and g * xhat, one writing dx; then
// dw, db add the planes' sums over the samples. The sums run in SIMD lanes (norm_sums.h), as
// the batch norm's. float16 / bfloat16 are read and written in place
// (the table's entries are these functions, not Widen's staging), computed in float32.
#include <cmath>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/group_norm_math.h"
#include "minitorch/parallel.h"
#include "norm_sums.h"

namespace minitorch::cpu {

namespace {

using A = GroupNormAcc;

struct Dims {
    int64_t N, G, Cg, S, D;  // D = Cg * S values per (n, g) row
};
Dims dims_of(const Tensor& in, const Tensor& mean)
{
    const int64_t N = in->shape[0], C = in->shape[1], G = mean->shape[1];
    const int64_t S = N * C != 0 ? in->numel() / (N * C) : 0;
    return {N, G, C / G, S, C / G * S};
}

template <class T>
const T* data_or_null(const Tensor& t)
{
    return t ? t->data_as<T>() : nullptr;
}

// Rows per task: enough work per task to be worth a thread.
int64_t row_grain(const Dims& d) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(4 * d.D, 1)); }

// Calls f(Tag<T>{}) for a floating dtype, 16-bit ones included.
template <class F>
void dispatch_group_norm(DType t, const char* op, F&& f)
{
    if (t == DType::Float16) return f(Tag<Half>{});
    if (t == DType::BFloat16) return f(Tag<BFloat16>{});
    dispatch_floating(t, op, f);
}

}  // namespace

void group_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, double eps)
{
    const Dims d = dims_of(in, mean);
    A *mu = mean->data_as<A>(), *rs = rstd->data_as<A>();
    dispatch_group_norm(in->dtype, "group_norm", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = GroupNormCompute<T>;
        const T *x = in->data_as<T>(), *w = data_or_null<T>(weight), *b = data_or_null<T>(bias);
        T* y = out->data_as<T>();
        parallel_for(d.N * d.G, row_grain(d), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const T* xr = x + r * d.D;
                const C K = C(xr[0]);
                A s = 0, q = 0;
                shifted_sums(xr, d.D, K, s, q);
                group_norm_stats(A(K), s, q, d.D, eps, mu[r], rs[r]);
                C hi, lo;
                group_norm_split(mu[r], hi, lo);
                const C rc = C(rs[r]);
                const int64_t c0 = (r % d.G) * d.Cg;
                for (int64_t k = 0; k < d.Cg; ++k) {
                    const C scale = w ? rc * C(w[c0 + k]) : rc, shift = (b ? C(b[c0 + k]) : C(0)) - lo * scale;
                    const T* xp = xr + k * d.S;
                    T* yp = y + r * d.D + k * d.S;
                    for (int64_t j = 0; j < d.S; ++j) yp[j] = T((C(xp[j]) - hi) * scale + shift);
                }
            }
        });
    });
}

void group_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight)
{
    const Dims d = dims_of(in, mean);
    const int64_t C_ = d.G * d.Cg;
    const A *mu = mean->data_as<A>(), *rs = rstd->data_as<A>();
    // The planes' sums: sg[n * C + c] = sum(g), sgx[n * C + c] = sum(g * xhat).
    std::vector<A> sg(d.N * C_), sgx(d.N * C_);
    dispatch_group_norm(in->dtype, "group_norm_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = GroupNormCompute<T>;
        const T *g = grad_out->data_as<T>(), *x = in->data_as<T>(), *w = data_or_null<T>(weight);
        T* gx = grad_in ? grad_in->data_as<T>() : nullptr;
        parallel_for(d.N * d.G, row_grain(d), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const int64_t c0 = (r % d.G) * d.Cg, p0 = r * d.Cg;  // the row's first channel, plane
                C hi, lo;
                group_norm_split(mu[r], hi, lo);
                A ws1 = 0, ws2 = 0;  // sums over the row's channels of w * sg and w * sgx
                for (int64_t k = 0; k < d.Cg; ++k) {
                    A s = 0, sd = 0;
                    grad_sums(g + r * d.D + k * d.S, x + r * d.D + k * d.S, d.S, hi, s, sd);
                    sg[p0 + k] = s, sgx[p0 + k] = (sd - A(lo) * s) * rs[r];
                    const A wk = w ? A(C(w[c0 + k])) : A(1);
                    ws1 += wk * sg[p0 + k], ws2 += wk * sgx[p0 + k];
                }
                if (!gx) continue;
                A kx, kc;
                group_norm_row_coeffs(rs[r], ws1, ws2, d.D, kx, kc);
                const C rc = C(rs[r]), cx = C(kx), cc = C(kc - kx * A(lo));
                for (int64_t k = 0; k < d.Cg; ++k) {
                    const C kg = w ? rc * C(w[c0 + k]) : rc;
                    const int64_t o = r * d.D + k * d.S;
                    for (int64_t j = 0; j < d.S; ++j) gx[o + j] = T(kg * C(g[o + j]) + cx * (C(x[o + j]) - hi) + cc);
                }
            }
        });
        // dw, db: each channel's planes added over the samples (N * C values: serial).
        for (int64_t c = 0; c < C_; ++c) {
            A sw = 0, sb = 0;
            for (int64_t n = 0; n < d.N; ++n) sw += sgx[n * C_ + c], sb += sg[n * C_ + c];
            if (grad_weight) grad_weight->data_as<T>()[c] = T(sw);
            if (grad_bias) grad_bias->data_as<T>()[c] = T(sb);
        }
    });
}

}  // namespace minitorch::cpu
