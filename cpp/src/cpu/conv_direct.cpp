// conv_direct.cpp — a direct convolution for the CPU: conv2d's forward and both gradients
// without im2col, for the narrow layers of small CNNs (issue 32).
//
// Why: with few input channels, im2col + GEMM multiplies (O, C*KH*KW) by (C*KH*KW, OH*OW)
// with K = C*KH*KW = 9 or 72 — a GEMM far too thin to run near the CPU's peak — after
// copying the input KH*KW times into the columns. The direct loops (conv_direct_loops.h)
// keep a block of outputs (2 vectors wide, 4 output channels) in registers and add every
// tap of every input channel into it, reading a zero-padded copy of one sample's input.
//
//   forward:        y[n, o] = sum over c, kh, kw of W[o, c, kh, kw] * x[n, c, oh + kh*dh - ph, ow + kw*dw - pw]
//   input grad:     the same loops on the padded output gradient, with W's taps flipped
//                   and its two channel axes swapped (the transposed convolution of
//                   stride 1 is a convolution)
//   weight grad:    gW[o, c, kh, kw] = sum over n, oh, ow of gy[n, o, oh, ow] * x[n, c, shifted],
//                   vectors of partial sums along ow, added up once at the end
//
// Stride 1 and padding <= (K - 1) * dilation (so the flipped convolution has padding >= 0);
// any dilation and groups; float32 and float64. conv.cpp asks these functions first (they
// are the CPU's ConvLibrary) and runs im2col + GEMM for whatever they decline.
// minitorch.backends.cpu.conv_algorithm chooses: "auto" (direct for narrow layers, where it
// was measured faster), "direct" (wherever it applies) or "im2col" (the lectures' path).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "conv_direct_loops.h"
#include "kernels_cpu.h"
#include "minitorch/parallel.h"
#include "minitorch/vector_math.h"

namespace minitorch::cpu {

#if defined(__x86_64__)
// In conv_direct_avx2.cpp (compiled with -mavx2 -mfma).
void conv_direct_forward_avx2_f32(float* y, const float* xp, const float* w, const int64_t* g);
void conv_direct_forward_avx2_f64(double* y, const double* xp, const double* w, const int64_t* g);
void conv_direct_weight_grad_avx2_f32(float* acc, const float* gy, int64_t gw, const float* xp, const int64_t* g);
void conv_direct_weight_grad_avx2_f64(double* acc, const double* gy, int64_t gw, const double* xp, const int64_t* g);
#endif

namespace {

ConvAlgo g_conv_algo = ConvAlgo::Auto;

// "auto" takes the direct loops up to this many multiply-adds per output (C/groups*KH*KW):
// measured on the course's layers and bench_cpu.py's wider ones (docs/ARCHITECTURE.md).
constexpr int64_t kAutoMaxPatch = 256;

// Columns of the padded planes: a whole number of blocks of 16 (>= 2 vectors of any width
// here), so the loops never need a partial load.
constexpr int64_t kRowBlock = 16;
inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

DirectShape shape_of(const int64_t* g) { return {g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10]}; }

// The loops for one dtype on this CPU: AVX2 (32-byte vectors), SSE2 / NEON (16 bytes), or
// one value at a time where the capability is "DEFAULT" (MINITORCH_CPU_CAPABILITY=default).
template <class T>
struct Loops {
    void (*forward)(T* y, const T* xp, const T* w, const int64_t* g);
    void (*weight_grad)(T* acc, const T* gy, int64_t gw, const T* xp, const int64_t* g);
    int64_t lanes;
};

template <class T, int L>
void forward_entry(T* y, const T* xp, const T* w, const int64_t* g)
{
    direct_forward<T, L>(y, xp, w, shape_of(g));
}
template <class T, int L>
void weight_grad_entry(T* acc, const T* gy, int64_t gw, const T* xp, const int64_t* g)
{
    direct_weight_grad<T, L>(acc, gy, gw, xp, shape_of(g));
}

template <class T>
Loops<T> loops()
{
    const std::string cap = cpu_capability();
#if defined(__x86_64__)
    if (cpu_has_avx2()) {
        if constexpr (sizeof(T) == 4) return {conv_direct_forward_avx2_f32, conv_direct_weight_grad_avx2_f32, 8};
        else return {conv_direct_forward_avx2_f64, conv_direct_weight_grad_avx2_f64, 4};
    }
#endif
#if defined(__x86_64__) || defined(__aarch64__)
    if (cap != "DEFAULT") {
        constexpr int L = int(16 / sizeof(T));
        return {forward_entry<T, L>, weight_grad_entry<T, L>, L};
    }
#endif
    return {forward_entry<T, 1>, weight_grad_entry<T, 1>, 1};
}

// Does the direct path take this convolution? (conv.cpp has checked that OH and OW are the
// natural output sizes.)
bool takes(const Window2d& w, DType dt)
{
    if (g_conv_algo == ConvAlgo::Im2col) return false;
    if (dt != DType::Float32 && dt != DType::Float64) return false;
    if (w.stride_h != 1 || w.stride_w != 1) return false;
    if (w.pad_h > (w.KH - 1) * w.dil_h || w.pad_w > (w.KW - 1) * w.dil_w) return false;
    if (g_conv_algo == ConvAlgo::Auto) return w.KH * w.KW > 1 && (w.C / w.groups) * w.KH * w.KW <= kAutoMaxPatch;
    return true;
}

// Copies src (C, H, W) into the middle of dst (C, HP, WP), zeros around it.
template <class T>
void pad_planes(T* dst, const T* src, int64_t C, int64_t H, int64_t W, int64_t HP, int64_t WP, int64_t top,
                int64_t left)
{
    std::memset(dst, 0, sizeof(T) * size_t(C * HP * WP));
    for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
            std::memcpy(dst + (c * HP + top + h) * WP + left, src + (c * H + h) * W, sizeof(T) * size_t(W));
}

// Samples per thread's chunk: a million multiply-adds at least (~100 us, parallel.h's
// rule), so a second thread is woken only for work that pays for it.
int64_t sample_grain(int64_t macs_per_sample)
{
    return std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(macs_per_sample, 1));
}

// y (N, O, OH, OW) = the stride-1 convolution of x (N, C, H, W) padded by (top, left) on
// each side, with weight (O, C/groups, KH, KW).
template <class T>
void run_forward(T* y, const T* x, const T* weight, int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t OH,
                 int64_t OW, const Window2d& w, int64_t top, int64_t left)
{
    const Loops<T> lp = loops<T>();
    const int64_t HP = OH + (w.KH - 1) * w.dil_h, WP = round_up(OW, kRowBlock) + (w.KW - 1) * w.dil_w;
    const int64_t g[11] = {C, HP, WP, O, OH, OW, w.KH, w.KW, w.dil_h, w.dil_w, w.groups};
    const int64_t taps = (C / w.groups) * w.KH * w.KW, macs = O * OH * OW * taps;
    std::vector<T> wp(size_t(O * taps));
    pack_weights(wp.data(), weight, O, w.groups, taps);
    parallel_for(N, sample_grain(macs), [&](int64_t n0, int64_t n1) {
        std::vector<T> xp(size_t(C * HP * WP));
        for (int64_t n = n0; n < n1; ++n) {
            pad_planes(xp.data(), x + n * C * H * W, C, H, W, HP, WP, top, left);
            lp.forward(y + n * O * OH * OW, xp.data(), wp.data(), g);
        }
    });
}

template <class T>
void forward_typed(const Tensor& y, const Tensor& x, const Tensor& weight, const Window2d& w)
{
    run_forward<T>(y->data_as<T>(), x->data_as<T>(), weight->data_as<T>(), w.N, w.C, w.H, w.W, y->shape[1], w.OH,
                   w.OW, w, w.pad_h, w.pad_w);
}

// gx = the stride-1 transposed convolution of gy: a convolution of gy padded by
// (K - 1) * dilation - padding, with Wt[c, o, a, b] = W[o, c, KH-1-a, KW-1-b] per group.
template <class T>
void input_grad_typed(const Tensor& gx, const Tensor& gy, const Tensor& weight, const Window2d& w)
{
    const int64_t O = gy->shape[1], G = w.groups, Og = O / G, Cg = w.C / G, KH = w.KH, KW = w.KW;
    const T* W = weight->data_as<T>();
    std::vector<T> wt(size_t(w.C * Og * KH * KW));
    for (int64_t g = 0; g < G; ++g)
        for (int64_t ol = 0; ol < Og; ++ol)
            for (int64_t c = 0; c < Cg; ++c)
                for (int64_t a = 0; a < KH; ++a)
                    for (int64_t b = 0; b < KW; ++b)
                        wt[(((g * Cg + c) * Og + ol) * KH + a) * KW + b] =
                            W[(((g * Og + ol) * Cg + c) * KH + (KH - 1 - a)) * KW + (KW - 1 - b)];
    run_forward<T>(gx->data_as<T>(), gy->data_as<T>(), wt.data(), w.N, O, w.OH, w.OW, w.C, w.H, w.W, w,
                   (KH - 1) * w.dil_h - w.pad_h, (KW - 1) * w.dil_w - w.pad_w);
}

template <class T>
void weight_grad_typed(const Tensor& gw, const Tensor& gy, const Tensor& x, const Window2d& w)
{
    const Loops<T> lp = loops<T>();
    const int64_t O = gy->shape[1], C = w.C, L = lp.lanes;
    const int64_t HP = w.OH + (w.KH - 1) * w.dil_h, WP = round_up(w.OW, kRowBlock) + (w.KW - 1) * w.dil_w;
    const int64_t GW = round_up(w.OW, 8);  // a whole number of vectors of any width here
    const int64_t g[11] = {C, HP, WP, O, w.OH, w.OW, w.KH, w.KW, w.dil_h, w.dil_w, w.groups};
    const int64_t taps = gw->numel(), macs = O * w.OH * w.OW * (C / w.groups) * w.KH * w.KW;
    // Each chunk of samples sums into its own vectors of partial sums; the chunks are added
    // in a fixed order at the end.
    const int64_t chunks =
        std::clamp<int64_t>(std::min<int64_t>(get_num_threads(), w.N / sample_grain(macs)), 1, std::max<int64_t>(w.N, 1));
    std::vector<T> acc(size_t(chunks * taps * L), T(0));
    const T* X = x->data_as<T>();
    const T* GY = gy->data_as<T>();
    parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
        std::vector<T> xp(size_t(C * HP * WP)), gp(size_t(O * w.OH * GW));
        for (int64_t ch = c0; ch < c1; ++ch)
            for (int64_t n = w.N * ch / chunks; n < w.N * (ch + 1) / chunks; ++n) {
                pad_planes(xp.data(), X + n * C * w.H * w.W, C, w.H, w.W, HP, WP, w.pad_h, w.pad_w);
                pad_planes(gp.data(), GY + n * O * w.OH * w.OW, O, w.OH, w.OW, w.OH, GW, 0, 0);
                lp.weight_grad(acc.data() + ch * taps * L, gp.data(), GW, xp.data(), g);
            }
    });
    T* out = gw->data_as<T>();
    for (int64_t t = 0; t < taps; ++t) {
        T s = 0;
        for (int64_t ch = 0; ch < chunks; ++ch)
            for (int64_t l = 0; l < L; ++l) s += acc[size_t((ch * taps + t) * L + l)];
        out[t] = s;
    }
}

bool forward(const Tensor& y, const Tensor& x, const Tensor& weight, const Window2d& w)
{
    if (!takes(w, y->dtype)) return false;
    dispatch_floating(y->dtype, "conv2d", [&](auto tag) { forward_typed<typename decltype(tag)::type>(y, x, weight, w); });
    return true;
}

bool backward_input(const Tensor& gx, const Tensor& gy, const Tensor& weight, const Window2d& w)
{
    if (!takes(w, gx->dtype)) return false;
    dispatch_floating(gx->dtype, "conv2d",
                      [&](auto tag) { input_grad_typed<typename decltype(tag)::type>(gx, gy, weight, w); });
    return true;
}

bool backward_weight(const Tensor& gw, const Tensor& gy, const Tensor& x, const Window2d& w)
{
    if (!takes(w, gw->dtype)) return false;
    dispatch_floating(gw->dtype, "conv2d",
                      [&](auto tag) { weight_grad_typed<typename decltype(tag)::type>(gw, gy, x, w); });
    return true;
}

const ConvLibrary kDirect = {forward, backward_input, backward_weight};
[[maybe_unused]] const bool kRegistered = (register_conv_library(DeviceType::CPU, &kDirect), true);

}  // namespace

void set_conv_algo(ConvAlgo algo) { g_conv_algo = algo; }
ConvAlgo conv_algo() { return g_conv_algo; }

}  // namespace minitorch::cpu
