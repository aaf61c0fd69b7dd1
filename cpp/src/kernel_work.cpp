// kernel_work.cpp — the FLOPs and bytes of every kernel call (see kernel_work.h), the one
// place minitorch.profiler's counts come from. docs/profiling.md lists them as a table.
//
// Conventions (an estimate, the same on every device):
//   * bytes: the compulsory traffic, each tensor argument read or written once in full
//     (its distinct elements: a broadcast operand counts once); an output that is also read
//     (accumulated into) counts twice. Indexing kernels count the elements they touch.
//     Caches, re-reads by a tiled kernel and the staging of 16-bit tensors are not counted.
//   * flops: one per arithmetic operation on an element (an add, a multiply, an exp, a
//     compare alike), as a textbook counts them; a multiply-add is 2 (matmul: 2*M*N*K).
//     Data movement (copy, fill, indexing, sort, random) is 0 FLOPs.
#include "minitorch/kernel_work.h"

#include <algorithm>

namespace minitorch::work {

using profiler::Work;

double tensor_bytes(const Tensor& t)
{
    if (!t || t->numel() == 0) return 0;
    double elements = 1;
    for (size_t d = 0; d < t->shape.size(); ++d)
        if (t->strides[d] != 0) elements *= double(t->shape[d]);
    return elements * double(itemsize(t->dtype));
}

namespace {

double n(const Tensor& t) { return t ? double(t->numel()) : 0.0; }
template <class... Ts>
double bytes(const Ts&... ts)
{
    return (0.0 + ... + tensor_bytes(ts));
}
double has(const Tensor& t) { return t ? 1.0 : 0.0; }
// Elements moved by a kernel that reads `elements` values of `t`'s dtype through an index.
double indexed_bytes(const Tensor& like, double elements) { return elements * double(itemsize(like->dtype)); }

}  // namespace

// ---- data movement: 0 FLOPs ----------------------------------------------------------
Work copy(const Tensor& dst, const Tensor& src) { return {0, bytes(dst, src)}; }
Work fill(const Tensor& dst, Scalar) { return {0, bytes(dst)}; }
Work arange(const Tensor& dst, double, double) { return {0, bytes(dst)}; }
Work linspace(const Tensor& dst, double, double) { return {0, bytes(dst)}; }
Work where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b)
{
    return {0, bytes(out, cond, a, b)};
}
Work gather_rows(const Tensor& out, const Tensor& in, const Tensor& index, const IndexCheck&) { return {0, 2 * bytes(out) + bytes(index)}; }
Work put_rows(const Tensor& out, const Tensor& in, const Tensor& index) { return {0, 2 * bytes(in) + bytes(index)}; }
Work sort(const Tensor& values, const Tensor& indices, const Tensor& in, bool) { return {0, bytes(values, indices, in)}; }
Work remap(const Tensor& out, const Tensor& in, const Remap&)
{
    return {0, bytes(out) + std::min(bytes(in), bytes(out))};  // repeat reads its input once per copy
}
Work check_index(const Tensor& out, const Tensor& index, const IndexCheck&) { return {0, bytes(out, index)}; }
Work im2col(const Tensor& cols, const Tensor& input, const Window2d&) { return {0, bytes(cols, input)}; }
Work random(RandomOp, const Tensor& dst, double, double) { return {0, bytes(dst)}; }
// dropout: compare and two multiplies (3) per element; backward: two multiplies (2).
Work dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double) { return {3 * n(in), bytes(out, mask, in)}; }
Work dropout_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& mask, double)
{
    return {2 * n(grad_out), bytes(grad_in, grad_out, mask)};
}
Work manual_seed(uint64_t) { return {}; }
Work gather(const Tensor& out, const Tensor& in, const Tensor& index, int64_t, const IndexCheck&)
{
    return {0, 2 * bytes(out) + bytes(index)};
}
Work cat(const Tensor& out, const std::vector<Tensor>& inputs, int64_t)
{
    double b = bytes(out);
    for (const Tensor& t : inputs) b += bytes(t);
    return {0, b};
}
Work nonzero(const Tensor& out, const Tensor& count, const Tensor& in) { return {0, bytes(out, count, in)}; }
Work searchsorted(const Tensor& out, const Tensor& sorted, const Tensor& values, bool)
{
    return {0, bytes(out, sorted, values)};
}

// ---- elementwise: 1 FLOP per output element (exp, sigmoid, pow alike) ---------------
Work map(UnaryOp, const Tensor& out, const Tensor& in) { return {n(out), bytes(out, in)}; }
Work zip(BinaryOp, const Tensor& out, const Tensor& a, const Tensor& b) { return {n(out), bytes(out, a, b)}; }
// lerp, addcmul, addcdiv: three operations per element (lerp: a subtract, a multiply, an add)
Work ternary(TernaryOp, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Scalar)
{
    return {3 * n(out), bytes(out, a, b, c)};
}

// ---- reductions and scans: 1 FLOP per input element (an add or a compare) -------------
Work reduce(ReduceOp, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    return {n(in), bytes(values, indices, in)};
}
Work scan(ScanOp, const Tensor& out, const Tensor& in, bool) { return {n(in), bytes(out, in)}; }
Work scan_extreme(bool, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    return {n(in), bytes(values, indices, in)};
}
// var/std: subtract the mean, square, add (3 per element); logsumexp: subtract the max,
// exp, add (3); a p-norm: |x|^p and add (2).
Work reduce_stats(const Tensor& out, const Tensor& mean, const Tensor& in, const StatReduce& spec)
{
    const double per_element = spec.kind == StatReduce::Norm ? 2 : 3;
    return {per_element * n(in), bytes(out, mean, in)};
}

// ---- matrix products: 2*M*N*K (a multiply and an add per term) -----------------------
Work matmul(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_batches)
{
    // a is (batch..., M, K) expanded to the batch shape, b (batch..., K, N).
    const double flops = 2.0 * n(a) * double(b->shape.back());
    return {flops, bytes(out, a, b) + (sum_batches ? bytes(out) : 0.0)};  // sum_batches adds into out
}
Work matmul_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias)
{
    const double flops = 2.0 * n(a) * double(b->shape.back()) + n(out);  // and one add per output
    return {flops, bytes(out, a, b) + bytes(bias)};
}
Work conv_forward(const Tensor& y, const Tensor& x, const Tensor& weight, const Window2d& w)
{
    // Each output element is a dot product of (C / groups) * KH * KW terms.
    return {2.0 * n(y) * double(w.C / w.groups * w.KH * w.KW), bytes(y, x, weight)};
}
Work conv_backward_input(const Tensor& grad_x, const Tensor& grad_y, const Tensor& weight, const Window2d& w)
{
    return {2.0 * n(grad_y) * double(w.C / w.groups * w.KH * w.KW), bytes(grad_x, grad_y, weight)};
}
Work conv_backward_weight(const Tensor& grad_weight, const Tensor& grad_y, const Tensor& x, const Window2d& w)
{
    return {2.0 * n(grad_y) * double(w.C / w.groups * w.KH * w.KW), bytes(grad_weight, grad_y, x)};
}
// col2im adds each column value into its input pixel.
Work col2im(const Tensor& grad_input, const Tensor& cols, const Window2d&)
{
    return {n(cols), bytes(cols) + 2 * bytes(grad_input)};
}

// ---- pooling: a compare (max) or an add (avg) per window element ---------------------
Work max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& input, const Window2d& w)
{
    return {n(out) * double(w.KH * w.KW), bytes(out, indices, input)};
}
Work max_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices, const Window2d&)
{
    return {n(grad_out), bytes(grad_input, grad_out, indices)};
}
Work avg_pool2d(const Tensor& out, const Tensor& input, const Window2d& w)
{
    return {n(out) * double(w.KH * w.KW), bytes(out, input)};  // KH*KW - 1 adds and a divide
}
Work avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Window2d& w)
{
    return {n(grad_out) * double(w.KH * w.KW), bytes(grad_input, grad_out)};
}

// ---- upsampling: per output pixel, a copy (nearest) or three two-tap blends of 3 flops (bilinear)
Work upsample2d(const Tensor& out, const Tensor& input, const Upsample2d& s)
{
    return {s.mode == UpsampleMode::Bilinear ? 9.0 * n(out) : 0.0, bytes(out, input)};
}
Work upsample2d_backward(const Tensor& grad_in, const Tensor& grad_out, const Upsample2d& s)
{
    return {s.mode == UpsampleMode::Bilinear ? 9.0 * n(grad_out) : n(grad_out), bytes(grad_in, grad_out)};  // nearest: an add each
}

// ---- normalization and softmax: per element of the input ------------------------------
// layer_norm: mean (add), variance (subtract, square, add), normalize (multiply by rstd):
// 5, plus 1 for the weight's multiply and 1 for the bias's add.
Work layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, double)
{
    return {n(in) * (5 + has(weight) + has(bias)), bytes(out, mean, rstd, in, weight, bias)};
}
// grad_in: xhat = (x - mean) * rstd (2), the row sums of gw and gw * xhat (3), then
// rstd * (gw - m1 - xhat * m2) (4): 9 per element (+1 for gw = g * weight); grad_weight:
// g * xhat and add (2); grad_bias: add (1).
Work layer_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight)
{
    const double per_element = has(grad_in) * (9 + has(weight)) + 2 * has(grad_weight) + has(grad_bias);
    return {n(grad_out) * per_element, bytes(grad_in, grad_weight, grad_bias, grad_out, in, mean, rstd, weight)};
}
// batch_norm training: the statistics (sum, and square and add: 3), then (x - mean) * scale
// + bias with scale = rstd * weight folded per channel (3): 6 per element; eval: 3. The
// running statistics are per channel (negligible).
Work batch_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, const Tensor& running_mean, const Tensor& running_var, const Tensor&, bool training,
                double, double)
{
    return {n(in) * (training ? 6 : 3),
            bytes(out, mean, rstd, in, weight, bias) + 2 * bytes(running_mean, running_var)};
}
// batch_norm_backward: the per-channel sums of g and g * xhat (xhat: 2, then 3), and
// grad_in = scale * (g - m1 - xhat * m2) (4) in training, scale * g (1) in eval.
Work batch_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight, bool training)
{
    const double per_element = 5 + has(grad_in) * (training ? 4 : 1);
    return {n(grad_out) * per_element, bytes(grad_in, grad_weight, grad_bias, grad_out, in, mean, rstd, weight)};
}
// group_norm: as layer_norm (the statistics 5, the weight's multiply and the bias's add),
// per element of the input.
Work group_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& in, const Tensor& weight,
                const Tensor& bias, double)
{
    return {n(in) * (5 + has(weight) + has(bias)), bytes(out, mean, rstd, in, weight, bias)};
}
// group_norm_backward: the planes' sums of g and g * (x - mean) (1 + 3), and
// grad_in = kg * g + kx * (x - mean) + kc (5).
Work group_norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& weight)
{
    const double per_element = 4 + 5 * has(grad_in);
    return {n(grad_out) * per_element, bytes(grad_in, grad_weight, grad_bias, grad_out, in, mean, rstd, weight)};
}
// qgemm: 2 M N K integer operations (a multiply and an add per term), like a float GEMM.
Work qgemm(const Tensor& out, const Tensor& a, const Tensor& b, const QGemm& q)
{
    const double M = double(a->shape[0]), K = double(a->shape[1]), N = double(b->shape[0]);
    return {2 * M * N * K, bytes(out, a, b, q.b_zp, q.bias, q.act_times_w)};
}
// attention: per score, as the composed ops count it: the dot product q.k (2E), the scale (1),
// the softmax (5: max, subtract, exp, sum, divide) and p * v into the output (2Ev); causal
// calls count the full (L, S) square (an estimate: the kernels skip the tiles above the
// diagonal). Bytes: q, k, v, out, lse and the mask's distinct elements once.
namespace {
double attention_scores(const Tensor& q, const Tensor& k) { return n(q) / double(q->size(-1)) * double(k->size(-2)); }
}  // namespace
Work attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v,
               const Tensor& mask, const Attention&)
{
    const double per_score = 2.0 * double(q->size(-1)) + 6 + 2.0 * double(v->size(-1));
    return {attention_scores(q, k) * per_score, bytes(out, lse, q, k, v, mask)};
}
// The backward recomputes each score (2E + 5), and adds dP = dO.v (2Ev), dS = P * (dP - D)
// (2), and the three products dV += P dO (2Ev), dQ += dS k and dK += dS q (4E).
Work attention_backward(const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v, const Tensor& grad_out,
                        const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                        const Tensor& mask, const Attention&)
{
    const double per_score = 6.0 * double(q->size(-1)) + 7 + 4.0 * double(v->size(-1));
    return {attention_scores(q, k) * per_score, bytes(grad_q, grad_k, grad_v, grad_out, q, k, v, out, lse, mask)};
}
// softmax: max (compare), subtract and exp, sum (add), divide: 5 per element (log_softmax:
// compare, subtract, exp, add, subtract the log: 5 too).
Work softmax(const Tensor& out, const Tensor& in, int64_t, bool) { return {5 * n(in), bytes(out, in)}; }
// softmax: y * (g - sum(g * y)): multiply, add, subtract, multiply; log_softmax
// g - exp(y) * sum(g): add, exp, multiply, subtract. 4 per element.
Work softmax_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out, int64_t, bool)
{
    return {4 * n(out), bytes(grad_in, grad_out, out)};
}
// cross_entropy: the row's logsumexp (compare, subtract, exp, add: 4 per logit); both
// losses: pick the target and add into the reduction (2 per row).
Work class_loss(const Tensor& out, const Tensor& lse, const Tensor& count, const Tensor& input, const Tensor& target,
                const Tensor& weight, const ClassLoss& spec)
{
    return {(spec.from_logits ? (spec.smoothing > 0 ? 6 : 4) * n(input) : 0.0) + 2 * n(target),
            bytes(out, lse, count, input, target, weight)};
}
// softmax(input) - onehot, times the row's weight: subtract lse, exp, subtract, multiply.
Work class_loss_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& input, const Tensor& lse,
                         const Tensor& count, const Tensor& target, const Tensor& weight, const ClassLoss& spec)
{
    return {spec.from_logits ? 4 * n(grad_input) : n(target),
            bytes(grad_input, grad_out, input, lse, count, target, weight)};
}

// ---- fused layers and optimizer steps ---------------------------------------------------
// lstm_cell: one activation per gate element; c = f*c_prev + i*g (3) and h = o*tanh(c) (2)
// per hidden element.
Work lstm_cell(const Tensor& h, const Tensor& c, const Tensor& act, const Tensor& gates, const Tensor& gates2,
               const Tensor& c_prev)
{
    return {n(gates) + n(gates2) + 5 * n(c), bytes(h, c, act, gates, gates2, c_prev)};
}
// The chain rule through the same: about 14 per hidden element (4 gate derivatives of 2-3
// each, the cell's two products).
Work lstm_cell_backward(const Tensor& grad_gates, const Tensor& grad_c_prev, const Tensor& grad_h,
                        const Tensor& grad_h2, const Tensor& grad_c, const Tensor& act, const Tensor& c_prev,
                        const Tensor& c)
{
    return {14 * n(c) + n(grad_h2), bytes(grad_gates, grad_c_prev, grad_h, grad_h2, grad_c, act, c_prev, c)};
}
// gru_cell: two sigmoids, a tanh and about 10 more per hidden element.
Work gru_cell(const Tensor& h, const Tensor& act, const Tensor& xw, const Tensor& hw, const Tensor& bias,
              const Tensor& h_prev)
{
    return {13 * n(h), bytes(h, act, xw, hw, bias, h_prev)};
}
// Its chain rule: about 16 per hidden element.
Work gru_cell_backward(const Tensor& grad_xw, const Tensor& grad_hw, const Tensor& grad_h_direct, const Tensor& grad_h,
                       const Tensor& grad_h2, const Tensor& grad_h3, const Tensor& act, const Tensor& h_prev)
{
    return {16 * n(grad_h), bytes(grad_xw, grad_hw, grad_h_direct, grad_h, grad_h2, grad_h3, act, h_prev)};
}
// p -= lr * d (2), weight decay d += wd * p (2), momentum buf = m * buf + (1 - dampening) * d
// (3), nesterov d += m * buf (2). param and the buffer are read and written.
Work sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& opt)
{
    const double per_element =
        2 + (opt.weight_decay != 0 ? 2 : 0) + (momentum_buffer ? 3 : 0) + (momentum_buffer && opt.nesterov ? 2 : 0);
    return {per_element * n(param), 2 * bytes(param) + bytes(grad) + 2 * bytes(momentum_buffer)};
}
// m = b1*m + (1-b1)*g (3), v = b2*v + (1-b2)*g*g (4), p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
// (7), weight decay (2), maximize (1), amsgrad's max (1, its state read and written).
Work adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const AdamStep& opt)
{
    const double per_element = 14 + (opt.weight_decay != 0 ? 2 : 0) + (opt.maximize ? 1 : 0) + (opt.amsgrad ? 1 : 0);
    return {per_element * n(param), 2 * bytes(param, exp_avg, exp_avg_sq) + bytes(grad)};
}
// The multi-tensor steps: the single steps' work, summed over the parameters.
Work sgd_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffers, const SgdStep& opt)
{
    Work total{};
    for (size_t k = 0; k < params.size(); ++k) {
        const Work w = sgd_step(params[k], grads[k], momentum_buffers.empty() ? nullptr : momentum_buffers[k], opt);
        total.flops += w.flops, total.bytes += w.bytes;
    }
    return total;
}
Work adam_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& opt)
{
    Work total{};
    for (size_t k = 0; k < params.size(); ++k) {
        const Work w = adam_step(params[k], grads[k], exp_avgs[k], exp_avg_sqs[k], opt);
        total.flops += w.flops, total.bytes += w.bytes;
        if (!max_exp_avg_sqs.empty()) total.bytes += 2 * bytes(max_exp_avg_sqs[k]);
    }
    return total;
}
// clip_grad_norm_: g*g and a sum (2) per element to measure, one multiply to scale; every
// grad is read twice and written once.
Work clip_grad_multi(const std::vector<Tensor>& grads, const Tensor& total, double max_norm, bool inf_norm)
{
    Work w{};
    for (const Tensor& g : grads) w.flops += 3 * n(g), w.bytes += 3 * bytes(g);
    return w;
}
// RMSprop: v = a*v + (1-a)*g*g (4), sqrt(v) + eps (2), p += (-lr*g) / avg (3); maximize (1),
// weight decay (2), centered m = lerp(m, g) (3) and v - m*m (2), momentum buf = mu*buf +
// g/avg (3) with p -= lr*buf (2) instead of the division step. State is read and written.
Work rmsprop_multi_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& momentum_buffers,
                        const std::vector<Tensor>& grad_avgs, const RmspropStep& opt)
{
    const bool momentum = !momentum_buffers.empty(), centered = !grad_avgs.empty();
    const double per_element = 9 + (opt.maximize ? 1 : 0) + (opt.weight_decay != 0 ? 2 : 0) + (centered ? 5 : 0) +
                               (momentum ? 2 : 0);
    Work total{};
    for (size_t k = 0; k < params.size(); ++k) {
        total.flops += per_element * n(params[k]);
        total.bytes += 2 * bytes(params[k], square_avgs[k]) + bytes(grads[k]) +
                       (momentum ? 2 * bytes(momentum_buffers[k]) : 0) + (centered ? 2 * bytes(grad_avgs[k]) : 0);
    }
    return total;
}
// grad *= inv_scale and the inf/NaN test, for every grad.
Work amp_unscale(const std::vector<Tensor>& grads, const Tensor& found_inf, const Tensor& inv_scale)
{
    Work w{0, bytes(found_inf, inv_scale)};
    for (const Tensor& g : grads) w.flops += 2 * n(g), w.bytes += 2 * bytes(g);
    return w;
}

// ---- indexing that adds: 1 FLOP per added element --------------------------------------
Work scatter_add_rows(const Tensor& out, const Tensor& in, const Tensor& index, const IndexCheck&)
{
    return {n(in), 3 * bytes(in) + bytes(index)};  // in read, the rows of out read and written
}
Work scatter(WriteOp op, const Tensor& out, const Tensor& src, const Tensor& index, int64_t, const IndexCheck&)
{
    const bool reduces = op != WriteOp::Put;  // out read too, to add (multiply, compare) into
    const double places = indexed_bytes(out, n(index));  // the elements of out written (and read)
    return {reduces ? n(index) : 0.0, bytes(src, index) + (reduces ? 2 : 1) * places};
}
Work index_put(WriteOp op, bool read, const Tensor& self, const Tensor& values, const std::vector<Tensor>& indices,
               const char*)
{
    const bool adds = !read && op == WriteOp::Add;
    double index_bytes = 0;  // one int64 per position per index tensor (a broadcast one is read once)
    for (const Tensor& i : indices) index_bytes += i->strides[0] ? 8.0 * double(values->shape[0]) : 8.0;
    return {adds ? n(values) : 0.0, (adds ? 3 : 2) * bytes(values) + index_bytes};
}

}  // namespace minitorch::work
