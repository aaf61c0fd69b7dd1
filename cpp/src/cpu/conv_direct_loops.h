// conv_direct_loops.h — the inner loops of the direct convolution (conv_direct.cpp), on
// vectors of L values of T (vector_loops.h's GCC vector type; L = 1 is the scalar fallback).
//
// Included by conv_direct.cpp (baseline x86-64 SSE2 / AArch64 NEON, and L = 1) and by
// conv_direct_avx2.cpp (compiled with -mavx2 -mfma), so the same source is compiled once per
// instruction set; like vector_loops.h, everything is in an anonymous namespace.
//
// Both loops read a padded copy of their input plane (conv_direct.cpp makes it): zeros
// around the image, and zero columns on the right up to a whole number of vectors, so no
// loop needs a bounds check. Stride 1 only: along a row, consecutive outputs read
// consecutive inputs, and a vector of L outputs reads L neighbouring inputs.
#pragma once
#include "vector_loops.h"

namespace minitorch::cpu {
namespace {

// The first n < L lanes of v, one by one (a memcpy of a variable size would be a call).
template <class T, int L>
inline void store_part(T* p, vec<T, L> v, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) p[i] = v[i];
}

// One sample's geometry. The padded source xp is (C, HP, WP); the output y is (O, OH, OW);
// the weight is (O, C/groups, KH, KW); output (oh, ow) of channel o reads, for each tap,
// xp[c, oh + kh*dh, ow + kw*dw].
struct DirectShape {
    int64_t C, HP, WP, O, OH, OW, KH, KW, dh, dw, groups;
};

// y[o] = sum over the group's channels c and taps of w[o, c, kh, kw] * xp[c, shifted]: for
// each output row, blocks of 2 vectors of outputs times OB output channels stay in registers
// (2 * OB accumulators) while every input channel and tap is added in. The weights come
// packed (pack_weights): the OB values of one tap side by side. KW > 0 is the kernel
// width known at compile time (the taps of a row unrolled), 0 a width read from s.
template <class T, int L, int OB, int KW>
inline void direct_block(T* y, const T* xp, const T* wp, const DirectShape& s, int64_t o0, int64_t c0, int64_t Cg)
{
    const int64_t kw_n = KW > 0 ? KW : s.KW;
    const T* wblock = wp + o0 * Cg * s.KH * kw_n;
    for (int64_t oh = 0; oh < s.OH; ++oh)
        for (int64_t ow = 0; ow < s.OW; ow += 2 * L) {
            vec<T, L> acc[OB][2] = {};
            const T* wk = wblock;
            for (int64_t c = 0; c < Cg; ++c)
                for (int64_t kh = 0; kh < s.KH; ++kh) {
                    const T* row = xp + ((c0 + c) * s.HP + oh + kh * s.dh) * s.WP + ow;
                    for (int64_t kw = 0; kw < kw_n; ++kw, wk += OB) {
                        const vec<T, L> a = load<T, L>(row + kw * s.dw), b = load<T, L>(row + kw * s.dw + L);
                        for (int o = 0; o < OB; ++o) {
                            acc[o][0] += wk[o] * a;
                            acc[o][1] += wk[o] * b;
                        }
                    }
                }
            const int64_t n = s.OW - ow;  // outputs left in this row
            for (int o = 0; o < OB; ++o) {
                T* out = y + ((o0 + o) * s.OH + oh) * s.OW + ow;
                if (n >= 2 * L) {  // whole vectors (a memcpy of a constant size: one store)
                    store<T, L>(out, acc[o][0]);
                    store<T, L>(out + L, acc[o][1]);
                } else if (n >= L) {
                    store<T, L>(out, acc[o][0]);
                    store_part<T, L>(out + L, acc[o][1], n - L);
                } else {
                    store_part<T, L>(out, acc[o][0], n);
                }
            }
        }
}

// How direct_forward walks a group's output channels: blocks of 4, then one at a time.
// wp[o0 * taps + tap * OB + o] = w[(o0 + o) * taps + tap] for the block (o0, OB) holding o.
template <class T>
void pack_weights(T* wp, const T* w, int64_t O, int64_t groups, int64_t taps)
{
    const int64_t Og = O / groups;
    for (int64_t g = 0; g < groups; ++g)
        for (int64_t o0 = g * Og; o0 < (g + 1) * Og;) {
            const int64_t ob = o0 + 4 <= (g + 1) * Og ? 4 : 1;
            for (int64_t o = 0; o < ob; ++o)
                for (int64_t t = 0; t < taps; ++t) wp[o0 * taps + t * ob + o] = w[(o0 + o) * taps + t];
            o0 += ob;
        }
}

template <class T, int L, int KW>
void direct_groups(T* y, const T* xp, const T* wp, const DirectShape& s)
{
    const int64_t Og = s.O / s.groups, Cg = s.C / s.groups;
    for (int64_t g = 0; g < s.groups; ++g) {
        int64_t o = g * Og;
        for (; o + 4 <= (g + 1) * Og; o += 4) direct_block<T, L, 4, KW>(y, xp, wp, s, o, g * Cg, Cg);
        for (; o < (g + 1) * Og; ++o) direct_block<T, L, 1, KW>(y, xp, wp, s, o, g * Cg, Cg);
    }
}

// The whole forward of one sample: y (O, OH, OW) from xp and the packed weights; needs
// WP >= round_up(OW, 2L) + (KW - 1) * dw.
template <class T, int L>
void direct_forward(T* y, const T* xp, const T* wp, const DirectShape& s)
{
    if (s.KW == 3) direct_groups<T, L, 3>(y, xp, wp, s);
    else if (s.KW == 5) direct_groups<T, L, 5>(y, xp, wp, s);  // LeNet's kernels
    else direct_groups<T, L, 0>(y, xp, wp, s);
}

// One sample's share of the weight gradient: acc[o, c, kh, kw] (L partial sums each, the
// lanes of a vector) += sum over (oh, ow) of gy[o, oh, ow] * xp[c, oh + kh*dh, ow + kw*dw]. gy is padded
// to rows of GW = round_up(OW, L) with zeros (so the columns past OW add nothing), and xp's
// WP >= GW + (KW - 1) * dw. OB output channels and all KW taps of a row (3 or 5 at a time) are
// accumulated in registers along the whole plane.
template <class T, int L, int OB, int KW>
inline void weight_grad_block(T* acc, const T* gy, int64_t GW, const T* xp, const DirectShape& s, int64_t o0,
                              int64_t c0, int64_t Cg)
{
    for (int64_t c = 0; c < Cg; ++c)
        for (int64_t kh = 0; kh < s.KH; ++kh)
            for (int64_t kw0 = 0; kw0 < s.KW; kw0 += KW) {
                vec<T, L> sum[OB][KW] = {};
                for (int64_t oh = 0; oh < s.OH; ++oh) {
                    const T* row = xp + ((c0 + c) * s.HP + oh + kh * s.dh) * s.WP + kw0 * s.dw;
                    for (int64_t ow = 0; ow < GW; ow += L) {
                        vec<T, L> x[KW];
                        for (int k = 0; k < KW; ++k) x[k] = load<T, L>(row + ow + k * s.dw);
                        for (int o = 0; o < OB; ++o) {
                            const vec<T, L> gv = load<T, L>(gy + ((o0 + o) * s.OH + oh) * GW + ow);
                            for (int k = 0; k < KW; ++k) sum[o][k] += gv * x[k];
                        }
                    }
                }
                for (int o = 0; o < OB; ++o)
                    for (int k = 0; k < KW; ++k) {
                        T* a = acc + ((((o0 + o) * Cg + c) * s.KH + kh) * s.KW + kw0 + k) * L;
                        store<T, L>(a, load<T, L>(a) + sum[o][k]);
                    }
            }
}

// Output channels go OB at a time: 4 with 3 taps (12 accumulators), 2 with 5 (10), so
// the accumulators, the taps' inputs and the gradient vector fit in 16 vector registers.
template <class T, int L, int KW>
void weight_grad_groups(T* acc, const T* gy, int64_t GW, const T* xp, const DirectShape& s)
{
    constexpr int OB = KW > 3 ? 2 : 4;
    const int64_t Og = s.O / s.groups, Cg = s.C / s.groups;
    for (int64_t g = 0; g < s.groups; ++g) {
        int64_t o = g * Og;
        for (; o + OB <= (g + 1) * Og; o += OB) weight_grad_block<T, L, OB, KW>(acc, gy, GW, xp, s, o, g * Cg, Cg);
        for (; o < (g + 1) * Og; ++o) weight_grad_block<T, L, 1, KW>(acc, gy, GW, xp, s, o, g * Cg, Cg);
    }
}

template <class T, int L>
void direct_weight_grad(T* acc, const T* gy, int64_t GW, const T* xp, const DirectShape& s)
{
    if (s.KW % 3 == 0) weight_grad_groups<T, L, 3>(acc, gy, GW, xp, s);
    else if (s.KW % 5 == 0) weight_grad_groups<T, L, 5>(acc, gy, GW, xp, s);  // LeNet's kernels
    else weight_grad_groups<T, L, 1>(acc, gy, GW, xp, s);
}

}  // namespace
}  // namespace minitorch::cpu
