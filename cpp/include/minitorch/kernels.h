// kernels.h — the device interface: the few kernel families every op is built from.
//
// A device (CPU, CUDA) fills one KernelTable. The ops in cpp/src/ops check their inputs,
// allocate outputs, prepare views (broadcast with expand, cast with copy), then call
// these. Kernels trust their callers: shapes and dtypes are already checked.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "minitorch/op_list.h"
#include "minitorch/profiler.h"
#include "minitorch/scalar.h"
#include "minitorch/tensor.h"

namespace minitorch {

// UnaryOp and BinaryOp come from the one list of elementwise ops (op_list.h).
enum class ReduceOp { Sum, Max, Min, ArgMax, ArgMin, Prod, Mean };
enum class RandomOp { Uniform, Normal, Integer };
enum class ScanOp { Sum, Prod, LogSumExp };  // formulas: scan_math.h
// What the scatter and index_put kernels do at each named place: write or add; scatter
// also multiplies or keeps the larger / smaller (scatter_reduce's prod, amax, amin).
enum class WriteOp { Put, Add, Mul, Max, Min };
// The three-input elementwise ops of the kernel `ternary` (formulas: elementwise_math.h):
// the ops lerp / addcmul / addcdiv, clamp with both bounds, and the one-kernel backward of
// clamp, leaky_relu and elu (g, x and the bound or parameter), of the per-element losses,
// of div's divisor, of the 2-norm and of var / std, which their nodes call.
// MT_TERNARY_OPS(X) lists them once, for the enum and for the kernels' switches.
#define MT_TERNARY_OPS(X) X(Lerp) X(Addcmul) X(Addcdiv) X(Clamp) X(ClampBackward) X(LeakyReluBackward) X(EluBackward) \
    X(BceBackward) X(BceWithLogitsBackward) X(HuberBackward) \
    X(MseLossBackward) X(L1LossBackward) X(DivBackwardDivisor) X(NormBackward) X(VarBackward) \
    X(HardtanhBackward)
#define MT_TERNARY_ENUM(Op) Op,
enum class TernaryOp { MT_TERNARY_OPS(MT_TERNARY_ENUM) };
#undef MT_TERNARY_ENUM

// Geometry of a 2-D sliding window (convolution or pooling) over (N, C, H, W) input:
// output pixel (oh, ow) reads input rows oh*stride_h - pad_h + kh*dil_h (likewise w).
struct Window2d {
    int64_t N = 0, C = 0, H = 0, W = 0;  // input
    int64_t KH = 1, KW = 1;              // window
    int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
    int64_t OH = 0, OW = 0;              // output
    int64_t groups = 1;                  // convolution only: channel groups (C and O divisible by it)
};

// The output size along one dim of a window sliding over `in` values (0 when it does not fit).
inline int64_t window_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, bool ceil_mode = false)
{
    int64_t span = in + 2 * pad - dil * (k - 1) - 1;
    if (span < 0) return 0;
    int64_t o = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // ceil_mode: the last window must start inside the input or left padding
    if (ceil_mode && (o - 1) * stride >= in + pad) --o;
    return o;
}

// F.interpolate's 2-D modes over (N, C, H, W) input to (N, C, OH, OW): output pixel
// (oh, ow) reads the input rows and columns that minitorch/upsample_math.h's index rule
// names (one tap per dim for nearest, two for bilinear). scale_h / scale_w are the
// scale_factor the user gave (0: none, then the step is in / out), as PyTorch's kernels take.
enum class UpsampleMode { Nearest, NearestExact, Bilinear };
struct Upsample2d {
    int64_t N = 0, C = 0, H = 0, W = 0;  // input
    int64_t OH = 0, OW = 0;              // output
    UpsampleMode mode = UpsampleMode::Nearest;
    bool align_corners = false;          // bilinear only
    double scale_h = 0, scale_w = 0;
};

// A quantized GEMM (cpu/qgemm.cpp, cuda/qgemm.cu): out (M, N) from uint8 a (M, K) and int8
// b (N, K), both contiguous, as acc = sum_k (a[m][k] - a_zp) * (b[n][k] - b_zp[n]); out's dtype
// picks the epilogue (minitorch/qgemm_math.h): int32 (acc itself), uint8 (requantized with
// bias, act_times_w, out_scale, out_zp, relu) or float32 (dequantized: acc * act_times_w + bias).
struct QGemm {
    int32_t a_zp = 0;
    Tensor b_zp;         // int32 (N,)
    Tensor bias;         // float32 (N,), or null
    Tensor act_times_w;  // float32 (N,): a_scale * b_scale[n] (uint8 and float32 outputs)
    float out_scale = 1.f;
    int32_t out_zp = 0;
    bool relu = false;
};

// What an index check guards, for its error message. Valid values are [0, size), or
// [-size, size) with Python-style negatives when wrap_negative; for class targets,
// `ignore` (ignore_index) is allowed too.
struct IndexCheck {
    const char* op;  // a string literal: "index_select", "cross_entropy", ...
    int64_t size;
    bool wrap_negative = false;
    bool is_target = false;  // "target 7 is out of bounds for 5 classes (at index 3)"
    // With is_target: a target that is no class (cross_entropy's ignore_index). In
    // scatter_add_rows: an index whose rows add nothing (embedding's padding_idx).
    int64_t ignore = INT64_MIN;
    int64_t dim = -1;        // >= 0: the message names the dim ("... for dimension 1 with size 4")
};
// The IndexError message for `value` at `position` (shared by every device).
std::string index_error_message(const IndexCheck& check, int64_t value, int64_t position);

// One optimizer step's hyper-parameters, in PyTorch's names (torch.optim.SGD / Adam).
// The kernels turn them into the parameter's float type once (optim_math.h).
struct SgdStep {
    double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
    bool nesterov = false;
    // The momentum buffer is new: it takes d itself (PyTorch clones the first d) instead
    // of momentum * buf + (1 - dampening) * d.
    bool first_step = false;
};
struct AdamStep {
    double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
    bool decoupled = false;  // AdamW: p *= 1 - lr * weight_decay (Adam adds weight_decay * p to g)
    int64_t step = 1;        // this step's number t, from 1 (for the bias corrections)
    bool amsgrad = false;    // divide by the running maximum of exp_avg_sq (max_exp_avg_sq)
    bool maximize = false;   // ascend: the gradient's sign is flipped first
};
struct RmspropStep {
    double lr = 0, alpha = 0, eps = 0, weight_decay = 0, momentum = 0;
    bool centered = false;  // subtract the square of the running mean gradient (grad_avg)
    bool maximize = false;  // ascend: the gradient's sign is flipped first
};

// What remap reads for each output element (flip, roll, tril/triu, repeat): output
// coordinate o[d] comes from input coordinate c = (o[d] + shift[d]) mod in_size[d],
// reversed (in_size[d] - 1 - c) where flip[d]; the element is at sum of c * in_stride[d]
// (elements, from in's data()). With `triangle` (+1 tril, -1 triu) an element of the last
// two dims (row, col) is kept only where col - row <= diagonal (tril) or >= diagonal
// (triu), and is 0 elsewhere. With `pad` (constant_pad_nd) c = o[d] - pad_left[d], and an
// output element whose c lies outside [0, in_size[d]) on any dim is `fill`: the element's
// bytes, widened to 64 bits (0 for tril/triu). See shape_math.h for the arithmetic.
struct Remap {
    int ndim = 0;
    int64_t in_size[kMaxDims] = {};
    int64_t in_stride[kMaxDims] = {};
    int64_t shift[kMaxDims] = {};  // in [0, in_size)
    bool flip[kMaxDims] = {};
    int triangle = 0;
    int64_t diagonal = 0;
    bool pad = false;
    int64_t pad_left[kMaxDims] = {};  // >= 0
    uint64_t fill = 0;
};

// What reduce_stats computes on each line (stats_math.h has the arithmetic, for every
// device): the variance with `param` = correction (Var), its square root (Std), the
// log of the sum of exps (LogSumExp), or the vector p-norm with `param` = p (Norm).
struct StatReduce {
    enum Kind { Var = 0, Std = 1, LogSumExp = 2, Norm = 3 };
    Kind kind = Var;
    double param = 0;
};

// A contiguous tensor seen as (outer, C, inner) around dimension `dim`, as the softmax
// kernels see it: outer * inner rows of C elements each, `inner` apart (row r starts at
// (r / inner) * C * inner + r % inner). A 0-dim tensor is one row of one element.
struct SoftmaxRows {
    int64_t outer = 1, C = 1, inner = 1;
};
inline SoftmaxRows softmax_rows(const Shape& shape, int64_t dim)
{
    SoftmaxRows r;
    for (int64_t d = 0; d < int64_t(shape.size()); ++d) (d < dim ? r.outer : d == dim ? r.C : r.inner) *= shape[d];
    return r;
}

// What a class-target loss computes (cross_entropy, nll_loss), for its kernels.
struct ClassLoss {
    enum Reduction { None = 0, Mean = 1, Sum = 2 };  // the codes nn.functional passes
    IndexCheck check;          // the op's name, C (the classes) and ignore_index; is_target
    int reduction = Mean;
    bool from_logits = true;   // cross_entropy: input holds logits; nll_loss: log-probabilities
    double smoothing = 0;      // cross_entropy's label_smoothing (from logits only)
};

// One fused attention call (kernels attention, attention_backward): the scores' scale and
// whether query i sees only keys j <= i (causal, aligned at the top left as PyTorch's);
// dropout_p > 0: each weight is kept with probability 1 - dropout_p and scaled by
// 1 / (1 - dropout_p), its mask drawn from (seed, offset) (AttentionDropout, attention_math.h).
struct Attention {
    double scale = 1;
    bool causal = false;
    double dropout_p = 0;
    uint64_t seed = 0, offset = 0;
};

// The kernel interface, declared once. Each device defines these functions in its
// own namespace (minitorch::cpu, minitorch::cuda) and fills a KernelTable by name with
// MT_DEFINE_KERNEL_TABLE, so a kernel cannot be missing or land in another's slot.
// Kernels trust their callers (shapes and dtypes checked by the op) and never call ops.
//
//  copy       dst[i] = cast(src[i]); same shape, any strides and dtypes (src may be expanded).
//  fill       dst[i] = value; any strides.
//  arange     dst[i] = start + i * step; dst contiguous 1-D.
//  linspace   dst (n,) contiguous, n >= 2: n evenly spaced values from start to end. The
//             first half counts up from start, the second half down from end (as PyTorch),
//             so both ends are exact whatever the rounding (a GPU's fused multiply-add too).
//  map        out[i] = op(in[i]); same shape, any strides; in has the op's compute dtype,
//             out that dtype too, or bool for bool-result ops (isnan, logical_not).
//  zip        out[i] = op(a[i], b[i]); a and b expanded to out's shape, one dtype; out has
//             that dtype too, or bool for comparisons and logical ops. (With float16 /
//             bfloat16, which compute in float32, an operand may be float32 beside a 16-bit
//             one, or 16-bit beside a float32 out.)
//  where      out[i] = cond[i] ? a[i] : b[i]; all expanded to out's shape, a/b/out one dtype.
//  ternary    out[i] = op(a[i], b[i], c[i], value): lerp(a, end b, weight c), a + value * b * c,
//             a + value * b / c, clamp(a, b, c), the backward ones g = a, x = b (and c the
//             output, slope or alpha); all expanded to out's shape, one dtype (with float16 / bfloat16
//             an operand may be a float32 scalar); out may be a (in place). A GPU reads a
//             0-dim CPU operand (a Python number) on the host, as zip does.
//  reduce     in: contiguous (outer, R, inner), R >= 1. Reduces the middle dim: values[o, i]
//             = op over r of in[o, r, i] (and, for max/min and the arg ops, the r it was
//             found at into indices[o, i], int64: NaN wins, ties go to the smaller r).
//             values/indices: contiguous, outer * inner elements (any shape); either may be
//             null where the op needs only the other (Sum, Prod: indices null). A bool Sum
//             (sum(dtype=bool)) is True where any value is; a bool in with int64 values
//             (Sum: b.sum()) counts the True values, read as bools. Prod multiplies (floats in double,
//             integers in int64 with wraparound); the op passes no bool. Mean is Sum divided
//             by R before the one store (floating dtypes only: one launch, one rounding).
//  matmul     out (batch..., M, N) contiguous = a (batch..., M, K) @ b (batch..., K, N);
//             a and b expanded to one batch shape, one dtype, and each matrix has a unit
//             stride along its rows or its columns (the kernel copies otherwise); out
//             is not empty and K > 0 (the op handles those).
//             With sum_batches, out is one (M, N) matrix and gets the products of every
//             batch ADDED to it: out += sum over p of a[p] @ b[p] (convolution's weight
//             gradient: one GEMM per sample, accumulated).
//  matmul_bias  as matmul (no sum_batches), with bias (N values, contiguous) added to every
//             row: Linear's forward in one launch where the library can add it itself
//             (cuBLASLt's bias epilogue, when the batches fold into one GEMM), else the rows
//             start as the bias and the GEMM adds into them (BLAS's beta = 1).
//  gather_rows       out[i, :] = in[index[i], :]     (in, out contiguous (rows, row_size))
//  scatter_add_rows  out[index[i], :] += in[i, :]    (index contiguous int64)
//             Both check index[i] as check_index does (negatives wrap where `check` allows;
//             a GPU records a bad one, writes zeros for its row / skips it).
//  put_rows          out[index[i], :] = in[i, :]     (the same; where two rows name one index,
//             the CPU keeps the last and a GPU any one of them, as PyTorch's index_copy_)
//  scan       out (outer, R, inner) = the running sum or product along the middle dim of in,
//             both contiguous, one dtype: out[o, r, i] = in[o, 0, i] op ... op in[o, r, i];
//             with `reverse`, from the end: in[o, r, i] op ... op in[o, R-1, i] (cumsum's
//             backward). Floating sums and products run in double.
//  layer_norm  out = (x - mean) * rstd * weight + bias for each row of in (rows, D), all
//             contiguous, one floating dtype; weight and bias (D,) or null; mean and rstd
//             (rows,) receive each row's mean and 1 / sqrt(var + eps) (biased var) for backward.
//             mean null: the RMS norm, the mean taken as 0 (rstd = 1 / sqrt(mean(x^2) + eps)).
//  layer_norm_backward  grad_in (rows, D) = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),
//             gw = grad_out * weight (grad_out alone without weight), xhat = (x - mean) * rstd;
//             grad_weight, grad_bias (D,) = sums over rows of grad_out * xhat and of grad_out
//             (either, and grad_in, may be null when not needed). mean null: the RMS norm's,
//             xhat = x * rstd and no mean(gw) term.
//  batch_norm  out (N, C, S) = (x - mean) * rstd * weight + bias per channel c of in (N, C, S),
//             all contiguous, one floating dtype; weight, bias (C,) or null. training: mean
//             and rstd (C,) receive the batch statistics (biased var), and running_mean /
//             running_var (C,), when not null, move toward the mean and the unbiased var
//             (momentum), and batches (0-dim int64, BatchNorm's num_batches_tracked), when
//             not null, is incremented by 1; eval: mean and rstd come from running_mean /
//             running_var.
//             Formulas: batch_norm_math.h.
//  batch_norm_backward  grad_in (N, C, S) (null when not needed) from grad_out, in, the saved
//             mean and rstd and weight (or null); grad_weight, grad_bias (C,) (or null) =
//             per-channel sums of grad_out * xhat and of grad_out.
//  group_norm  out (N, C, S) = (x - mean) * rstd * weight[c] + bias[c] for in (N, C, S), its C
//             channels in G groups of C / G adjacent ones: mean and rstd (N, G) receive each
//             (sample, group)'s mean and 1 / sqrt(var + eps) (biased var), float64 for every
//             input dtype (float16 / bfloat16 read in place). All contiguous; weight, bias (C,)
//             of the input's dtype, or null. Formulas: group_norm_math.h.
//  group_norm_backward  grad_in (N, C, S) (null when not needed) from grad_out, in, the saved
//             mean and rstd and weight (or null); grad_weight, grad_bias (C,) (or null) =
//             per-channel sums of grad_out * xhat and of grad_out.
//  lstm_cell  one LSTM step from its gate pre-activations gates + gates2 (N, 4H; gates2 may
//             be null), in PyTorch's order i, f, g, o, and c_prev (N, H): act (N, 4H) =
//             sigmoid(i), sigmoid(f), tanh(g), sigmoid(o); c = f * c_prev + i * g;
//             h = o * tanh(c). All contiguous, one dtype.
//  lstm_cell_backward  grad_gates (N, 4H) and grad_c_prev (N, H) (may be null, or grad_c
//             itself: updated in place) from grad_h + grad_h2 (grad_h2 may be null), grad_c
//             (N, H) and the forward's act, c_prev and c.
//  gru_cell   one GRU step, gates r, z, n: from xw, hw (N, 3H) (x W_ih^T + b_ih and
//             h_prev W_hh^T), bias (3H,) = b_hh or null, and h_prev (N, H): h (N, H) and act
//             (N, 4H) = r, z, n and hw_n + b_n (what backward reads). Formulas: rnn_math.h.
//  gru_cell_backward  grad_xw, grad_hw (N, 3H) and grad_h_direct (N, H) (the part of h_prev's
//             gradient that does not pass through W_hh; may be grad_h3 itself) from grad_h +
//             grad_h2 + grad_h3 (the last two may be null), act and h_prev.
//  sort       values, indices (int64) (outer, K, inner) = the first K (K <= R) of each line
//             in[o, :, i] (outer, R, inner) sorted, in ascending (or descending) order; all
//             contiguous (K < R: topk). Stable: equal values keep their order. NaN sorts above
//             every number (last ascending, first descending), as PyTorch.
//  remap      out (contiguous) = in rearranged as `map` says (flip, roll, tril/triu, repeat): one
//             pass, in read through its own strides; any dtype (it moves bytes: 16-bit too).
//  reduce_stats  out[o, i] = the statistic `spec` of the line in[o, :, i] of a contiguous
//             (outer, R, inner) float tensor (R may be 0), and mean[o, i] its mean (mean may
//             be null). Accumulates in double; one pass (Welford's for var/std, the online
//             max-and-sum for logsumexp).
//  check_index  out[i] = index[i], negatives wrapped (+size) where allowed; both contiguous
//             int64 (n,). A value out of range is an IndexError: the CPU raises it at once.
//             A GPU records the first one in device memory, writes 0 in its place (so later
//             kernels stay inside their tensors) and raises it at the next synchronization
//             (.item(), .cpu(), cuda.synchronize()): reading it back at once would stall.
//  im2col     cols (N, C*KH*KW, OH*OW) contiguous, input (N, C, H, W) contiguous: for each
//             sample n, row (c, kh, kw) holds, for every output pixel, the input value that
//             tap sees (zero where the window is over padding) -- F.unfold's layout. The op
//             calls it on a chunk of samples at a time (w.N is the chunk's size).
//  col2im     the reverse, adding cols back into grad_input (N, C, H, W), zeroed by the caller.
//  max_pool2d / avg_pool2d (+ _backward)  over each (n, c) plane, all contiguous. max:
//             out and indices (N, C, OH, OW), indices are flat positions ih*W + iw in the
//             plane (as PyTorch); padding never wins. avg: divides by the window's size
//             within the padded input (padding counts as zeros). The _backward kernels write
//             all of grad_input (N, C, H, W), zeros included: the caller need not fill it.
//  upsample2d  out (N, C, OH, OW) from input (N, C, H, W), both contiguous, by the spec's
//             mode (F.interpolate's nearest, nearest-exact, bilinear); float16 / bfloat16
//             compute in float32 and round once.
//  upsample2d_backward  grad_in (N, C, H, W) = the gradient of upsample2d for grad_out
//             (N, C, OH, OW), both contiguous; grad_in is written, not added to (no zero
//             fill needed). Each input pixel gathers the output pixels that read it, in a
//             fixed order: deterministic, no atomics.
//  random     fill from the device's generator: Uniform [lo, hi), Normal(mean=lo, std=hi),
//             Integer [lo, hi). dst contiguous.
//  dropout    in one pass: keep = u >= p, mask = keep (bool), out = in * keep * (1 / (1 - p)),
//             u the next uniform [0, 1) draws of the device's generator in in's dtype -- the
//             values random(Uniform, 0, 1) would give, so the same masks as rand() >= p.
//             in, out, mask contiguous, one shape; in floating; 0 < p < 1. float16 / bfloat16
//             draw and compute in float32 (the masks of a float32 input, as PyTorch's).
//  dropout_backward  grad_in = grad_out * scale * mask (mask bool), contiguous, one shape.
//  manual_seed  reseed the device's generator (minitorch.manual_seed reseeds every device).
//  sgd_step   one SGD step on one parameter, in place, in one pass: param, grad and
//             momentum_buffer (null without momentum) contiguous, one shape and float dtype.
//  adam_step  one Adam / AdamW step the same way: param, exp_avg, exp_avg_sq updated in place
//             (not amsgrad, whose extra state only the multi-step takes).
//  sgd_multi_step / adam_multi_step  the same steps on many parameters at once (the
//             optimizers' foreach path): lists of one length, entry k of each list matching
//             params[k]; all non-empty, contiguous, one float dtype; momentum_buffers empty
//             without momentum, max_exp_avg_sqs empty without amsgrad. The CUDA kernels
//             update them all in a few launches.
//  rmsprop_multi_step  RMSprop's step on many parameters the same way: square_avgs always,
//             momentum_buffers (momentum > 0) and grad_avgs (centered) empty when not used.
//  clip_grad_multi  clip_grad_norm_ over many gradients at once: total (0-d, the grads'
//             dtype) = the 2-norm of all their elements (max |g| when inf_norm), then every
//             grad *= min(1, max_norm / (total + 1e-6)), in place. grads: non-empty,
//             contiguous, one float dtype. The scale never leaves the device (no host wait);
//             the CUDA kernels take one launch for the norm, one to finish it, one to scale.
//  amp_unscale  GradScaler's check: every grad *= inv_scale in place, and found_inf[0] = 1
//             when any element of any grad was inf or NaN. grads: non-empty, contiguous,
//             one float dtype. found_inf and inv_scale are one-element float32 tensors on
//             the grads' device, read and written by the kernels themselves, so the host
//             never waits for the GPU here. The CUDA kernel takes all the grads in one
//             launch (more only when the lists fill more than one table).
//  softmax    out = softmax(in), or log_softmax(in) when `log`, along dim; in and out contiguous,
//             one floating dtype and shape, not empty. Each row of softmax_rows(shape, dim) is
//             read once for its max and sum (online, softmax_math.h), then written.
//  softmax_backward  grad_in from grad_out and the forward's out, all contiguous, one shape, not
//             empty: softmax y * (g - sum(g * y)), log_softmax g - exp(y) * sum(g), sums along dim.
//  class_loss  cross_entropy (spec.from_logits) or nll_loss of input (N, C) and int64 target
//             (N,), both contiguous, with class weights w (C,) of input's dtype (null: all 1).
//             Per row: w[t] (logsumexp(row) - row[t]) (from logits; the row's logsumexp goes to
//             lse (N,) float64, else lse is null) or -w[t] row[t]; with spec.smoothing = e (from
//             logits), (1 - e) times that plus e / C sum_c w[c] (logsumexp(row) - row[c]) (class
//             _row_loss, softmax_math.h); 0 where t is ignore_index.
//             Reduction None: out (N,) holds them; Sum / Mean: out () their sum, or their sum
//             over the rows' weights w[t] summed over the rows not ignored (their count without
//             weights; NaN when none), and count () that sum (Mean only, else null). A target out
//             of range is an IndexError, raised as check_index does.
//  class_loss_backward  grad_input (N, C) contiguous = r (softmax(input) - onehot(t)) w[t] (from
//             logits; input and lse as class_loss saw them) or -r onehot(t) w[t] (input and lse
//             null), with the smoothing's share as class_loss_grad (softmax_math.h) has it: r =
//             grad_out[n] (None: (N,), any stride), grad_out (Sum) or grad_out / count (Mean),
//             and 0 for rows whose target is ignored or out of range.
//  attention  out (B, L, Ev) = softmax(q k^T * scale + mask) v for each of the B (batch, head)
//             pairs of q (B, L, E), k (B, S, E), v (B, S, Ev), one floating dtype (a GPU reads
//             float16/bfloat16 itself), E and Ev <= 128. Each operand, out too, is a (B0, B1,
//             rows, width) view, B = B0 * B1, of any strides but a contiguous last dim
//             (AttentionRows, attention_math.h). mask null or an additive (batch..., L, S) view
//             of the compute type (lse's dtype), any strides; spec.causal masks j > i. Online
//             softmax: no (L, S) matrix is stored. lse (B, L) contiguous receives each row's
//             logsumexp of the scores (float32, float64 for float64 inputs), for the backward.
//             A row with every key masked gives NaN. spec.dropout_p > 0: the weights P are
//             multiplied by the dropout factors Z (0 or 1 / (1 - p), AttentionDropout) before
//             they meet v; lse stays that of P.
//  attention_backward  grad_q, grad_k, grad_v (the shapes of q, k, v) from grad_out (B0, B1, L,
//             Ev), all laid out as the forward's operands, and the forward's q, k, v, out, lse
//             and mask: P = exp(scores - lse) is recomputed tile by tile, D = rowsum(grad_out *
//             out), dS = P * (dP - D) with dP = grad_out v^T; grad_v = P^T grad_out, grad_q =
//             dS k * scale, grad_k = dS^T q * scale. With dropout (the same spec): grad_v =
//             (P * Z)^T grad_out and dS = P * (dP * Z - D), Z drawn again from the spec's seed
//             and offset.
//  ---- indexing by tensors along one dim, or by several index tensors (cpu/indexing.cpp,
//  cuda/indexing.cu). Indices are checked as check_index does (a GPU records the first bad
//  one and writes or reads nothing for it); `check` names the op and the indexed size.
//  gather     out[p] = in[p with p[dim] := index[p]]; out and index of one shape (index any
//             strides, expanded too), in any strides and at least index's sizes but along dim;
//             out shares no memory with in or index (the GPU kernel reads them __restrict__).
//  scatter    out[p with p[dim] := index[p]] = src[p] (Put) or += src[p] (Add), *= (Mul), or
//             max / min with it (Max, Min: a NaN wins); src and index of one shape, any
//             strides (src may be expanded); out any strides, not overlapping itself. Where two
//             elements name one place, Put keeps the last on the CPU and any one on a GPU; the
//             others combine both (atomics on a GPU: a sum's or product's order may vary).
//  index_put  NumPy's advanced indexing with k index tensors on the first k dims of self:
//             place(b, r) = self[indices[0][b], ..., indices[k-1][b], r] for each of the nb
//             broadcast index positions b and the rest r (self's other dims, row-major);
//             indices k 1-D int64 tensors of nb values, any stride (0: one index for all),
//             negatives wrapped; values (nb, rest...) any strides (expanded too, unless
//             read). Put / Add write values there (self any strides, not overlapping
//             itself); with `read`, values[b, r] = place(b, r) instead. `op_name` names the
//             op in errors.
//  cat        out (contiguous) = inputs joined along dim; inputs of out's dtype, any strides,
//             sizes as out's but along dim; empty inputs take no room. Moves bytes: never
//             upcast (16-bit tensors are joined as they are).
//  nonzero    in contiguous: count (1,) int64 = the number of its non-zero elements (count
//             may be null), and, when out (n, max(in.dim(), 1)) int64 is given, the
//             coordinates of the first n of them, in row-major order.
//  scan_extreme  values (outer, R, inner) = the running max (is_max) or min of each line
//             in[o, :, i], indices (int64) = where each was found: a tie moves the index to
//             the later place, a NaN wins and stays (each later NaN moves the index), as
//             PyTorch's cummax / cummin. All contiguous.
//  searchsorted  out[b, m] (int64) = the insertion place of values[b, m] in the ascending
//             row sorted[b, :] (sorted (B, N), values and out (B, M), all contiguous, one
//             dtype): the first n with !(sorted[n] < v) (right: !(sorted[n] <= v)) by binary
//             search, comparisons as PyTorch's: a NaN value goes to N.
#define MT_KERNELS(X)                                                                                \
    X(copy, (const Tensor& dst, const Tensor& src))                                                  \
    X(fill, (const Tensor& dst, Scalar value))                                                       \
    X(arange, (const Tensor& dst, double start, double step))                                        \
    X(linspace, (const Tensor& dst, double start, double end))                                       \
    X(map, (UnaryOp op, const Tensor& out, const Tensor& in))                                        \
    X(zip, (BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b))                       \
    X(where, (const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b))              \
    X(ternary, (TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c,  \
                Scalar value))                                                                       \
    X(reduce, (ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in))          \
    X(matmul, (const Tensor& out, const Tensor& a, const Tensor& b, bool sum_batches))               \
    X(matmul_bias, (const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias))        \
    X(gather_rows, (const Tensor& out, const Tensor& in, const Tensor& index,                        \
                    const IndexCheck& check))                                                        \
    X(scatter_add_rows, (const Tensor& out, const Tensor& in, const Tensor& index,                   \
                         const IndexCheck& check))                                                   \
    X(put_rows, (const Tensor& out, const Tensor& in, const Tensor& index))                          \
    X(scan, (ScanOp op, const Tensor& out, const Tensor& in, bool reverse))                          \
    X(sort, (const Tensor& values, const Tensor& indices, const Tensor& in, bool descending))        \
    X(remap, (const Tensor& out, const Tensor& in, const Remap& map))                                \
    X(reduce_stats, (const Tensor& out, const Tensor& mean, const Tensor& in, const StatReduce& spec)) \
    X(layer_norm, (const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in,      \
                   const Tensor& weight, const Tensor& bias, double eps))                            \
    X(layer_norm_backward, (const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias, \
                            const Tensor& grad_out, const Tensor& in, const Tensor& mean,            \
                            const Tensor& rstd, const Tensor& weight))                               \
    X(batch_norm, (const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in,      \
                   const Tensor& weight, const Tensor& bias, const Tensor& running_mean,             \
                   const Tensor& running_var, const Tensor& batches, bool training, double momentum, \
                   double eps))                                                                      \
    X(batch_norm_backward, (const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias, \
                            const Tensor& grad_out, const Tensor& in, const Tensor& mean,            \
                            const Tensor& rstd, const Tensor& weight, bool training))                \
    X(group_norm, (const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in,      \
                   const Tensor& weight, const Tensor& bias, double eps))                            \
    X(group_norm_backward, (const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias, \
                            const Tensor& grad_out, const Tensor& in, const Tensor& mean,            \
                            const Tensor& rstd, const Tensor& weight))                               \
    X(lstm_cell, (const Tensor& h, const Tensor& c, const Tensor& act, const Tensor& gates,          \
                  const Tensor& gates2, const Tensor& c_prev))                                       \
    X(lstm_cell_backward, (const Tensor& grad_gates, const Tensor& grad_c_prev, const Tensor& grad_h, \
                           const Tensor& grad_h2, const Tensor& grad_c, const Tensor& act,           \
                           const Tensor& c_prev, const Tensor& c))                                   \
    X(gru_cell, (const Tensor& h, const Tensor& act, const Tensor& xw, const Tensor& hw,             \
                 const Tensor& bias, const Tensor& h_prev))                                          \
    X(gru_cell_backward, (const Tensor& grad_xw, const Tensor& grad_hw, const Tensor& grad_h_direct, \
                          const Tensor& grad_h, const Tensor& grad_h2, const Tensor& grad_h3,        \
                          const Tensor& act, const Tensor& h_prev))                                  \
    X(check_index, (const Tensor& out, const Tensor& index, const IndexCheck& check))                \
    X(im2col, (const Tensor& cols, const Tensor& input, const Window2d& w))                          \
    X(col2im, (const Tensor& grad_input, const Tensor& cols, const Window2d& w))                     \
    X(max_pool2d, (const Tensor& out, const Tensor& indices, const Tensor& input, const Window2d& w)) \
    X(max_pool2d_backward,                                                                           \
      (const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices, const Window2d& w))  \
    X(avg_pool2d, (const Tensor& out, const Tensor& input, const Window2d& w))                       \
    X(avg_pool2d_backward, (const Tensor& grad_input, const Tensor& grad_out, const Window2d& w))    \
    X(upsample2d, (const Tensor& out, const Tensor& input, const Upsample2d& spec))                  \
    X(upsample2d_backward, (const Tensor& grad_in, const Tensor& grad_out, const Upsample2d& spec))  \
    X(random, (RandomOp op, const Tensor& dst, double lo, double hi))                                \
    X(dropout, (const Tensor& out, const Tensor& mask, const Tensor& in, double p))                  \
    X(dropout_backward, (const Tensor& grad_in, const Tensor& grad_out, const Tensor& mask, double scale)) \
    X(manual_seed, (uint64_t seed))                                                                  \
    X(sgd_step,                                                                                      \
      (const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& opt))  \
    X(adam_step, (const Tensor& param, const Tensor& grad, const Tensor& exp_avg,                    \
                  const Tensor& exp_avg_sq, const AdamStep& opt))                                  \
    X(amp_unscale, (const std::vector<Tensor>& grads, const Tensor& found_inf, const Tensor& inv_scale)) \
    X(sgd_multi_step, (const std::vector<Tensor>& params, const std::vector<Tensor>& grads,          \
                       const std::vector<Tensor>& momentum_buffers, const SgdStep& opt))             \
    X(adam_multi_step, (const std::vector<Tensor>& params, const std::vector<Tensor>& grads,         \
                        const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs, \
                        const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& opt))            \
    X(rmsprop_multi_step, (const std::vector<Tensor>& params, const std::vector<Tensor>& grads,      \
                           const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& momentum_buffers, \
                           const std::vector<Tensor>& grad_avgs, const RmspropStep& opt))            \
    X(clip_grad_multi, (const std::vector<Tensor>& grads, const Tensor& total, double max_norm,      \
                        bool inf_norm))                                                              \
    X(softmax, (const Tensor& out, const Tensor& in, int64_t dim, bool log))                         \
    X(softmax_backward,                                                                              \
      (const Tensor& grad_in, const Tensor& grad_out, const Tensor& out, int64_t dim, bool log))     \
    X(class_loss, (const Tensor& out, const Tensor& lse, const Tensor& count, const Tensor& input,   \
                   const Tensor& target, const Tensor& weight, const ClassLoss& spec))               \
    X(class_loss_backward, (const Tensor& grad_input, const Tensor& grad_out, const Tensor& input,   \
                            const Tensor& lse, const Tensor& count, const Tensor& target,            \
                            const Tensor& weight, const ClassLoss& spec))                            \
    X(attention, (const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k,            \
                  const Tensor& v, const Tensor& mask, const Attention& spec))                       \
    X(attention_backward, (const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v,         \
                           const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v, \
                           const Tensor& out, const Tensor& lse, const Tensor& mask,                 \
                           const Attention& spec))                                                   \
    X(gather, (const Tensor& out, const Tensor& in, const Tensor& index, int64_t dim,                \
               const IndexCheck& check))                                                             \
    X(scatter, (WriteOp op, const Tensor& out, const Tensor& src, const Tensor& index, int64_t dim,  \
                const IndexCheck& check))                                                            \
    X(index_put, (WriteOp op, bool read, const Tensor& self, const Tensor& values,                   \
                  const std::vector<Tensor>& indices, const char* op_name))                          \
    X(cat, (const Tensor& out, const std::vector<Tensor>& inputs, int64_t dim))                      \
    X(nonzero, (const Tensor& out, const Tensor& count, const Tensor& in))                           \
    X(scan_extreme, (bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in))     \
    X(searchsorted, (const Tensor& out, const Tensor& sorted, const Tensor& values, bool right))     \
    X(qgemm, (const Tensor& out, const Tensor& a, const Tensor& b, const QGemm& q))

struct KernelTable {
#define MT_KERNEL_MEMBER(name, params) void(*name) params = nullptr;
    MT_KERNELS(MT_KERNEL_MEMBER)
#undef MT_KERNEL_MEMBER
};

// In a device's namespace: declares every kernel function (one line per device).
#define MT_DECLARE_KERNEL(name, params) void name params;
#define MT_DECLARE_KERNELS() MT_KERNELS(MT_DECLARE_KERNEL)
// In a device's namespace: defines `const KernelTable& kernel_table()`, its table filled by
// name from that namespace's kernel functions (one line per device).
// Every kernel goes in through Widen (below), but copy, fill, remap, cat and qgemm, which handle
// the storage-only types themselves. A device may replace entries with its own, after the others
// are filled: MT_DEFINE_KERNEL_TABLE(filled.matmul = &matmul_native16;) (see cuda/runtime.cu).
// Every entry also counts its FLOPs and bytes for the profiler (kernel_work.h): Widen's
// third argument, or Counted (MT_COUNTED_KERNEL(name, fn): fn counted as kernel `name`).
#define MT_FILL_KERNEL(name, params)                                                             \
    filled.name = &::minitorch::detail::Widen<void params>::template call<                       \
        &name, &copy, &::minitorch::work::name, ::minitorch::detail::arg_roles(#name).written,   \
        ::minitorch::detail::arg_roles(#name).write_only>;
#define MT_COUNTED_KERNEL(name, fn) \
    &::minitorch::detail::Counted<std::remove_pointer_t<decltype(filled.name)>>::template call<&fn, &::minitorch::work::name>
#define MT_DEFINE_KERNEL_TABLE(...)                            \
    const KernelTable& kernel_table()                          \
    {                                                          \
        static const KernelTable table = [] {                  \
            KernelTable filled;                                \
            MT_KERNELS(MT_FILL_KERNEL)                         \
            filled.copy = MT_COUNTED_KERNEL(copy, copy);       \
            filled.fill = MT_COUNTED_KERNEL(fill, fill);       \
            filled.remap = MT_COUNTED_KERNEL(remap, remap);    \
            filled.cat = MT_COUNTED_KERNEL(cat, cat);          \
            filled.qgemm = MT_COUNTED_KERNEL(qgemm, qgemm);    \
            __VA_ARGS__                                        \
            return filled;                                     \
        }();                                                   \
        return table;                                          \
    }

// ---- float16 / bfloat16 and narrow integer tensors in the compute kernels ----------
// The compute kernels are written for bool, int64, float32 and float64. A float16 or
// bfloat16 tensor reaches them through Widen: each 16-bit tensor argument is staged
// as a float32 tensor of its shape (converted by the device's copy kernel), the kernel
// runs in float32, and the staged tensors it writes are converted back, the last argument
// first, so that outputs (the first arguments, by the convention of this file) are written
// last and win where an output and an input share memory. Which arguments a kernel writes,
// and which of those it writes whole without reading them, is arg_roles below: an input
// is not converted back, and an output written whole is not converted in (its old values
// are never read). A kernel not listed there has every argument converted in and back.
// So 16-bit ops compute in float32 and round once, when the result is stored, as
// PyTorch's do; the price is one extra pass over each 16-bit argument. A uint8, int8, int16 or int32 tensor is staged the same way as
// int64: the kernel computes in 64 bits and the copy back wraps the result around into
// the narrow type (200 + 100 in uint8 gives 44), which is what PyTorch's narrow integer
// arithmetic gives. Without a storage-only argument the kernel is called directly.
namespace detail {

// What a kernel does with its arguments, by position (bit i: argument i, counting every
// parameter, the op enums too): `written` the ones it writes (converted back after it),
// `write_only` those of them it writes at every element without reading (not converted in).
struct ArgRoles {
    uint32_t written = ~0u, write_only = 0;
};
constexpr uint32_t at(std::initializer_list<int> positions)  // argument positions as bits
{
    uint32_t mask = 0;
    for (int p : positions) mask |= 1u << p;
    return mask;
}
// The kernels whose outputs are known (their comments above): each writes every element of
// the outputs listed as write_only (an elementwise result, a reduction's values and places,
// a sorted line, a scan) and reads its other tensor arguments only; scatter and matmul
// read and write their output (an update in place, a sum into it). The rest keep the
// default: index_put, for one, writes self or (read) values.
constexpr ArgRoles arg_roles(std::string_view kernel)
{
    struct Entry {
        std::string_view name;
        ArgRoles roles;
    };
    constexpr Entry entries[] = {
        {"map", {at({1}), at({1})}},              // (op, out, in)
        {"zip", {at({1}), at({1})}},              // (op, out, a, b)
        {"where", {at({0}), at({0})}},            // (out, cond, a, b)
        {"ternary", {at({1}), at({1})}},          // (op, out, a, b, c, value)
        {"reduce", {at({1, 2}), at({1, 2})}},     // (op, values, indices, in)
        {"scan", {at({1}), at({1})}},             // (op, out, in, reverse)
        {"scan_extreme", {at({1, 2}), at({1, 2})}},  // (is_max, values, indices, in)
        {"sort", {at({0, 1}), at({0, 1})}},       // (values, indices, in, descending)
        {"softmax", {at({0}), at({0})}},          // (out, in, dim, log)
        {"softmax_backward", {at({0}), at({0})}},  // (grad_in, grad_out, out, dim, log)
        {"layer_norm", {at({0, 1, 2}), at({0, 1, 2})}},  // (out, mean, rstd, in, weight, bias, eps)
        {"gather", {at({0}), at({0})}},           // (out, in, index, dim, ...)
        {"gather_rows", {at({0}), at({0})}},      // (out, in, index, check)
        {"searchsorted", {at({0}), at({0})}},     // (out, sorted, values, right)
        {"scatter", {at({1}), 0}},                // (op, out, src, index, dim, ...)
        {"matmul", {at({0}), 0}},                 // (out, a, b, sum_batches)
        {"matmul_bias", {at({0}), at({0})}},      // (out, a, b, bias)
    };
    for (const Entry& e : entries)
        if (e.name == kernel) return e.roles;
    return {};
}

struct Staging {
    void (*copy)(const Tensor& dst, const Tensor& src);
    std::vector<std::pair<Tensor, Tensor>> staged;  // (the narrow tensor, its wide stand-in), to write back

    Tensor stage(const Tensor& t, bool read, bool written)
    {
        if (!t || !is_storage_only(t->dtype)) return t;
        Tensor wide = empty(t->shape, wide_dtype(t->dtype), t->device());
        if (read && wide->numel()) copy(wide, t);
        if (written) staged.emplace_back(t, wide);
        return wide;
    }
    void write_back()
    {
        for (auto it = staged.rbegin(); it != staged.rend(); ++it)
            if (it->second->numel()) copy(it->first, it->second);
    }
};

// A list of tensors (the multi-tensor optimizer steps) is staged tensor by tensor.
template <class A>
bool is_storage_only_arg(const A& a)
{
    if constexpr (std::is_same_v<A, Tensor>) {
        return a && is_storage_only(a->dtype);
    } else if constexpr (std::is_same_v<A, std::vector<Tensor>>) {
        for (const Tensor& t : a)
            if (is_storage_only_arg(t)) return true;
        return false;
    } else {
        return false;
    }
}
template <class A>
A stage_arg(Staging& s, const A& a, bool read, bool written)
{
    if constexpr (std::is_same_v<A, Tensor>) {
        return s.stage(a, read, written);
    } else if constexpr (std::is_same_v<A, std::vector<Tensor>>) {
        std::vector<Tensor> out;
        for (const Tensor& t : a) out.push_back(s.stage(t, read, written));
        return out;
    } else {
        return a;
    }
}

// Widen<void(kernel parameters)>::call<&kernel, &copy> (the signature is spelled out,
// rather than deduced from the function pointer, so that nvcc's front end accepts it).
// With Count (kernel_work.h), the call's FLOPs and bytes go to the running profile.
template <class... Args>
profiler::Work no_work(Args...)
{
    return {};
}
template <class Signature>
struct Widen;
template <class... Args>
struct Widen<void(Args...)> {
    static constexpr profiler::Work (*kNoWork)(Args...) = &no_work<Args...>;  // for a call that is counted outside

    template <void (*Fn)(Args...), void (*Copy)(const Tensor&, const Tensor&),
              profiler::Work (*Count)(Args...) = kNoWork, uint32_t kWritten = ~0u, uint32_t kWriteOnly = 0>
    static void call(Args... args)
    {
        profiler::KernelCall counted;
        if (counted.counting()) counted.set(Count(args...));
        if (!(false || ... || is_storage_only_arg(args))) return Fn(args...);
        staged_call<Fn, Copy, kWritten, kWriteOnly>(std::index_sequence_for<Args...>{}, args...);
    }

private:
    template <void (*Fn)(Args...), void (*Copy)(const Tensor&, const Tensor&), uint32_t kWritten, uint32_t kWriteOnly,
              std::size_t... I>
    static void staged_call(std::index_sequence<I...>, Args... args)
    {
        Staging s{Copy, {}};
        // A braced list is evaluated left to right: the arguments are staged in order.
        std::tuple<std::decay_t<Args>...> staged{
            stage_arg(s, args, !((kWriteOnly >> I) & 1u), bool((kWritten >> I) & 1u))...};
        std::apply(Fn, staged);
        s.write_back();
    }
};

// MT_WIDEN(kernel, its parameter types...)(arguments): a device's own kernel called through
// Widen with that kernel's arg_roles, not counted (the table entry that calls it is): the
// fallback of a kernel that takes some 16-bit cases itself (cuda/elementwise.cu).
#define MT_WIDEN(name, ...)                                                                      \
    ::minitorch::detail::Widen<void(__VA_ARGS__)>::template call<                                \
        &name, &copy, ::minitorch::detail::Widen<void(__VA_ARGS__)>::kNoWork,                    \
        ::minitorch::detail::arg_roles(#name).written, ::minitorch::detail::arg_roles(#name).write_only>

// Counted<void(kernel parameters)>::call<&kernel, &work::kernel>: the kernel, its FLOPs
// and bytes counted for the profiler (the entries that do not go through Widen).
template <class Signature>
struct Counted;
template <class... Args>
struct Counted<void(Args...)> {
    template <void (*Fn)(Args...), profiler::Work (*Count)(Args...)>
    static void call(Args... args)
    {
        profiler::KernelCall counted;
        if (counted.counting()) counted.set(Count(args...));
        Fn(args...);
    }
};

}  // namespace detail

const KernelTable& kernels(Device device);
// Makes `table` the kernels of device type `type`, unless another table already is: a
// process has one implementation of "cuda" (the GPU's or the emulator's), fixed by the
// first to register. Returns whether `table` serves `type` now.
bool register_kernels(DeviceType type, const KernelTable* table);
// Why a device type has no kernels (shown by every "is not available" error): set by the
// bindings, which know whether it was built, found, or can be emulated. Null: a generic text.
void set_unavailable_reason(DeviceType type, std::string (*reason)());
std::string unavailable_reason(DeviceType type);
// A contiguous copy of t made with a device's own copy kernel, for kernels that need
// one layout (kernels never call ops such as contiguous(), which record autograd nodes).
inline Tensor packed(const Tensor& t, void (*copy)(const Tensor& dst, const Tensor& src))
{
    if (t->is_contiguous()) return t;
    Tensor out = empty(t->shape, t->dtype, t->device());
    if (out->numel()) copy(out, t);
    return out;
}

// Reseeds the generator of every device that has kernels (minitorch.manual_seed).
void manual_seed_all_devices(uint64_t seed);

// TF32 tensor-core math for float32 GEMMs on a GPU, PyTorch's two switches: matmul and
// Linear follow backends.cuda.matmul.allow_tf32 (off by default), convolutions follow
// backends.cudnn.allow_tf32 (on by default). The CPU and the emulator compute in full
// float32 whatever they say.
struct Tf32Switches {
    bool matmul = false;
    bool conv = true;
};
Tf32Switches& tf32_switches();
// While one lives, the GEMMs this thread runs are a convolution's (conv2d and its backward).
class ConvGemmScope {
public:
    ConvGemmScope();
    ~ConvGemmScope();
    ConvGemmScope(const ConvGemmScope&) = delete;
    ConvGemmScope& operator=(const ConvGemmScope&) = delete;

private:
    bool prev_;
};
// May a float32 GEMM that starts now on this thread use TF32?
bool tf32_allowed_now();

// A device's convolution library (cuDNN on a GPU, see cuda/cudnn_conv.cu; on the CPU the
// direct convolution of cpu/conv_direct.cpp). conv2d and its
// backward try it before im2col + GEMMs; each function returns false for a case it does
// not take (the library is off, missing, or does not support it), which then runs im2col.
// Tensors are contiguous NCHW (weights O, C/groups, KH, KW) of one floating dtype; results
// are written whole.
struct ConvLibrary {
    bool (*forward)(const Tensor& y, const Tensor& x, const Tensor& weight, const Window2d& w);
    bool (*backward_input)(const Tensor& grad_x, const Tensor& grad_y, const Tensor& weight, const Window2d& w);
    bool (*backward_weight)(const Tensor& grad_weight, const Tensor& grad_y, const Tensor& x, const Window2d& w);
};
void register_conv_library(DeviceType type, const ConvLibrary* library);
const ConvLibrary* conv_library(Device device);  // null: the device has none
// A device's recurrent-layer library (cuDNN's RNN API on a GPU, cuda/cudnn_rnn.cu; the CPU
// and the emulator have none). ops/rnn.cpp's cudnn_rnn_layer asks it first and otherwise
// nn.LSTM / GRU / RNN run minitorch's per-step kernels (lstm_layer, gru_layer, rnn_layer).
// One call runs one layer over the whole sequence, both directions when bidirectional.
enum class RnnMode { RnnRelu = 0, RnnTanh = 1, Lstm = 2, Gru = 3 };  // cuDNN's numbering
struct RnnShape {
    RnnMode mode = RnnMode::Lstm;
    bool bidirectional = false;
    bool bias = true;
    int64_t T = 0, N = 0, I = 0, H = 0;  // steps, batch, input size, hidden size
    DType dtype = DType::Float32;
    int64_t directions() const { return bidirectional ? 2 : 1; }
    int64_t gates() const { return mode == RnnMode::Lstm ? 4 : mode == RnnMode::Gru ? 3 : 1; }
};
// What a forward keeps for its backward (the library's copy of the weights, its reserve space).
struct RnnSaved {
    virtual ~RnnSaved() = default;
};
struct RnnLibrary {
    // x (T, N, I), hx / cx (D, N, H) contiguous (cx only for an LSTM); weights per direction
    // w_ih (G H, I), w_hh (G H, H) and, with bias, b_ih, b_hh (G H), in PyTorch's gate order.
    // Writes y (T, N, D H), hy and cy (D, N, H) whole; `training` keeps what backward needs.
    // Null when the library does not take this case (nothing was written).
    std::shared_ptr<RnnSaved> (*forward)(const RnnShape& s, const Tensor& y, const Tensor& hy, const Tensor& cy,
                                         const Tensor& x, const Tensor& hx, const Tensor& cx,
                                         const std::vector<Tensor>& weights, bool training);
    // Writes dx, dhx, dcx whole from dy, dhy, dcy (contiguous); returns the weights'
    // gradients in forward's order (views of one buffer), or none when !weights_needed.
    std::vector<Tensor> (*backward)(const RnnShape& s, RnnSaved& saved, const Tensor& dx, const Tensor& dhx,
                                    const Tensor& dcx, const Tensor& x, const Tensor& hx, const Tensor& cx,
                                    const Tensor& y, const Tensor& dy, const Tensor& dhy, const Tensor& dcy,
                                    bool weights_needed);
};
void register_rnn_library(DeviceType type, const RnnLibrary* library);
const RnnLibrary* rnn_library(Device device);  // null: the device has none
// The reference RnnLibrary (cpu/rnn_reference.cpp): the same contract kept with minitorch's
// own layer ops. Registered for the CPU by tests only, so cudnn_rnn_layer runs without a GPU.
const RnnLibrary* reference_rnn_library();
// minitorch.backends.cudnn's switches, PyTorch's names and defaults.
struct CudnnSwitches {
    bool enabled = true;         // use cuDNN where it loads
    bool benchmark = false;      // time every algorithm once per shape and keep the fastest
    bool deterministic = false;  // only algorithms that give the same bits every run
};
CudnnSwitches& cudnn_switches();

namespace cpu {
const KernelTable& kernel_table();

// Which CPU matmul runs (for the lectures' comparison; BLAS is the default).
enum class MatmulAlgo { Naive, Blocked, Blas };
void set_matmul_algo(MatmulAlgo algo);
MatmulAlgo matmul_algo();
// Which CPU convolution runs (minitorch.backends.cpu.conv_algorithm; cpu/conv_direct.cpp):
// Auto = the direct loops for narrow layers, im2col + GEMM otherwise (the default);
// Direct = the direct loops wherever they apply; Im2col = always im2col + GEMM.
enum class ConvAlgo { Auto, Direct, Im2col };
void set_conv_algo(ConvAlgo algo);
ConvAlgo conv_algo();

// The CPU generator's state as text, and setting it back (utils.checkpoint replays the
// random numbers of a forward: the same dropout masks).
std::string rng_state();
void set_rng_state(const std::string& state);
}

}  // namespace minitorch

#include "minitorch/kernel_work.h"  // the work:: functions MT_FILL_KERNEL names
