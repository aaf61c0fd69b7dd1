// ops.h — every tensor operation. Each checks its inputs, allocates the output and
// calls a kernel family from kernels.h. Errors name the op and the offending shapes.
#pragma once
#include <array>
#include <functional>
#include <optional>
#include <tuple>
#include <vector>

#include "minitorch/kernels.h"
#include "minitorch/profiler.h"  // MT_PROFILE_OP, the first line of each op that does work
#include "minitorch/scalar.h"
#include "minitorch/tensor.h"

namespace minitorch {

// ---- creation (ops/creation.cpp) ----
Tensor full(const Shape& shape, Scalar value, DType dtype, Device device = {});
Tensor zeros(const Shape& shape, DType dtype = default_float(), Device device = {});
Tensor arange(double start, double end, double step, DType dtype, Device device = {});
Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device = {});
Tensor eye(int64_t n, int64_t m, DType dtype, Device device = {});
// A Python number as a 0-dim "wrapped number" tensor, of the number's own dtype
// (bool / int64 / float64) unless one is given.
Tensor scalar_tensor(Scalar value, Device device = {}, std::optional<DType> dtype = std::nullopt);
void manual_seed(uint64_t seed);
Tensor rand(const Shape& shape, DType dtype, Device device = {});
Tensor randn(const Shape& shape, DType dtype, Device device = {});
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device = {});

// ---- copies and casts (ops/copy.cpp) ----
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
Tensor to_dtype(const Tensor& t, DType dtype);  // returns t itself when nothing changes
Tensor to_device(const Tensor& t, Device device);
void copy_(const Tensor& dst, const Tensor& src);  // broadcasts src to dst
// In-place ops refuse a destination where several elements share one memory location
// (an expanded tensor): each shared cell would be updated once per alias.
void check_no_internal_overlap(const Tensor& t, const char* op);
// "<op>: expected all tensors to be on the same device, but found cpu and cuda:0"
void check_same_device(const char* op, const Tensor& a, const Tensor& b);
// Layers (linear, conv2d) do not promote: "<op>: input (float64), weight (float32) and bias
// (float32) must have the same dtype", with how to convert the input. bias may be null.
void check_layer_dtypes(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias);
void fill_(const Tensor& dst, Scalar value);
// The backward of a fused norm (layer_norm, batch_norm, group_norm; ops/nn.cpp): the gradients
// of its inputs x (contiguous, C = x's dim 1), weight (C,) and bias (C,), the last two in
// param_dtype. Each is allocated only where `node` needs it and filled by `run(gx, gw, gb)`
// (the norm's backward kernel; null where not needed), or with zeros when x is empty; each
// is returned in the shape of the node's input.
std::vector<Tensor> norm_backward_grads(const autograd::Node& node, const Tensor& x, DType param_dtype,
                                        const std::function<void(const Tensor& gx, const Tensor& gw,
                                                                 const Tensor& gb)>& run);

// ---- views (ops/views.cpp) ----
Tensor view(const Tensor& t, Shape shape);
Tensor reshape(const Tensor& t, Shape shape);
Tensor permute(const Tensor& t, std::vector<int64_t> dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor t_(const Tensor& t);  // .t(): 2-D transpose (0-D and 1-D unchanged)
Tensor expand(const Tensor& t, const Shape& shape);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor squeeze(const Tensor& t, std::optional<std::vector<int64_t>> dims);
Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> stop, int64_t step);
Tensor as_strided(const Tensor& t, Shape shape, Strides strides, int64_t offset);
// Tensor.unfold: the windows of `size` elements `step` apart along dim, as a new last dim
// (a view; windows overlap when step < size).
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);

// ---- elementwise (ops/elementwise.cpp) ----
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Tensor& b, const Tensor& c);  // the same rule over three
Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& x, const Tensor* lo, const Tensor* hi);
void clamp_(const Tensor& x, const Tensor* lo, const Tensor* hi, const char* name = "clamp_");  // one kernel outside a graph
// F.hardtanh (and relu6 = hardtanh(0, 6)): clamp to [lo, hi] in one kernel, with PyTorch's
// gradient, 0 at the bounds as outside them. hardtanh_ writes into x (one kernel inside a
// graph too: the backward reads only the result).
Tensor hardtanh(const Tensor& x, double lo, double hi);
void hardtanh_(const Tensor& x, double lo, double hi);
// In place: a = op(a, b), b broadcast to a's shape, result cast to a's dtype.
void binary_(BinaryOp op, const Tensor& a, const Tensor& b);
// x.relu_(), x.exp_() ...: x <- op(x) in one kernel that reads and writes x.
void unary_(UnaryOp op, const Tensor& a);
// t in dtype dt for the kernels of `device`: a host number (a 0-dim CPU tensor) is converted
// on the host and stays there, except for narrow integer dtypes (ops/elementwise.cpp).
Tensor kernel_operand(const Tensor& t, DType dt, Device device);
// A 0-dim CPU tensor meeting a GPU tensor `other`: a host number (no gradient) stays on
// the host, read by the kernel as an argument; another moves over (place_beside, follow_device).
bool host_number(const Tensor& t, const Tensor& other);
Tensor follow_device(const Tensor& t, const Tensor& other);
Tensor place_beside(const Tensor& t, const Tensor& other);
Device op_device(const Tensor& a, const Tensor& b);
// lerp (a, end b, weight c: a tensor or a Python number), addcmul, addcdiv (ops/ternary.cpp):
// one kernel; value is addcmul / addcdiv's. ternary_ writes the result into self.
Tensor ternary(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c, Scalar value);
void ternary_(TernaryOp op, const Tensor& self, const Tensor& b, const Tensor& c, Scalar value);

// ---- reductions (ops/reduce.cpp) ----
// dims empty = all dims.
Tensor sum(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype);
Tensor mean(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype);
Tensor max_all(const Tensor& t);
Tensor min_all(const Tensor& t);
std::tuple<Tensor, Tensor> max_dim(const Tensor& t, int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor> min_dim(const Tensor& t, int64_t dim, bool keepdim);
Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim);

// ---- indexing by tensors (ops/index_select.cpp) ----
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
// F.embedding's rows: weight.index_select(0, indices) for 1-D int64 indices, where a
// negative index is an IndexError naming "embedding" (not wrapped), checked in the kernel.
// Rows picked at padding_idx (negative: counted from the end) get no gradient.
Tensor embedding_rows(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx = std::nullopt);
// A copy of t with source's rows added at (index_add) or written to (index_copy) the
// positions `index` (1-D int64) along dim; source has t's shape with index.numel() rows there.
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, double alpha);
Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);

// A copy of t with the slices `index` names along dim set to value (0-dim, t's dtype).
Tensor index_fill(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& value);

// ---- joining and splitting (ops/join.cpp) ----
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
// Joins tensors of one shape along a new dim.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);
std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim);

// ---- elements named by index tensors, masks (ops/indexing.cpp) ----
// out[p] = t[p with p[dim] := index[p]]; out has index's shape.
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
// A copy of t with src[p] written (or added) at p with p[dim] := index[p]. src of index's
// dims and at least its sizes (its leading corner is used), or of one element (a value).
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, bool add);
// A copy of t with src[p] reduced into the place p with p[dim] := index[p] (sum, prod, mean,
// amax, amin); include_self=False leaves t's values out of the places index names. src of
// index's dims and at least its sizes (its leading corner is used).
enum class ScatterReduction { Sum, Prod, Mean, Amax, Amin };
ScatterReduction scatter_reduction(const std::string& name);  // "sum"... (InputError otherwise)
Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduction reduce,
                      bool include_self);
// A copy of t with value (0-dim) where mask (bool, broadcastable to t) is true.
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value);
void masked_fill_(const Tensor& t, const Tensor& mask, const Tensor& value);  // one where launch into t
// The elements of t where mask (bool, broadcast with t) is true, as a 1-D tensor.
Tensor masked_select(const Tensor& t, const Tensor& mask);
// The coordinates (n, t.dim()) of t's non-zero elements, row-major (reads a count on the host).
Tensor nonzero(const Tensor& t);
// A copy of t with values written (or added) at t[indices]: int64 index tensors (bool masks
// stand for their nonzero() columns) on t's first dims, broadcast together; values broadcast
// to the shape of t[indices].
Tensor index_put(const Tensor& t, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);
// The same written into t where it lies (any strides; x[i] = v): one kernel.
void index_put_(const Tensor& t, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);
// t[indices] (NumPy's advanced indexing, the same indices): shape of the broadcast indices,
// then t's dims after the indexed ones. One kernel, the indices checked in it.
Tensor index(const Tensor& t, const std::vector<Tensor>& indices);

// ---- running sums, products and log-sum-exps (ops/scan.cpp); integers run in int64 unless dtype ----
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype);
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype);
// log(exp(x_0) + ... + exp(x_i)) along dim, without overflow or early underflow (floating only).
Tensor logcumsumexp(const Tensor& t, int64_t dim);

// ---- sorting (ops/sort.cpp): stable, NaN above every number; (values, int64 indices) ----
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending);

// ---- matmul (ops/matmul.cpp) ----
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- convolution and pooling (ops/conv.cpp); NCHW, (h, w) pairs ----
// conv2d: weight (O, C/groups, KH, KW); conv_transpose2d: weight (C, O/groups, KH, KW), its
// adjoint. im2col is F.unfold (N, C, H, W) -> (N, C*KH*KW, L), col2im F.fold (its adjoint).
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
              std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, int64_t groups = 1);
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
                        std::array<int64_t, 2> padding, std::array<int64_t, 2> output_padding, int64_t groups,
                        std::array<int64_t, 2> dilation);
Tensor im2col(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> dilation,
              std::array<int64_t, 2> padding, std::array<int64_t, 2> stride);
Tensor col2im(const Tensor& cols, std::array<int64_t, 2> output_size, std::array<int64_t, 2> kernel,
              std::array<int64_t, 2> dilation, std::array<int64_t, 2> padding, std::array<int64_t, 2> stride);
std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                                      std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, bool ceil_mode);
Tensor avg_pool2d(const Tensor& x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                  std::array<int64_t, 2> padding, bool ceil_mode);
// F.interpolate's 2-D modes (ops/upsample.cpp): x (N, C, H, W) resized to `size` (OH, OW) by
// mode "nearest", "nearest-exact" or "bilinear"; scales: the scale_factor the user gave per
// dim (0: none; then the source step is in / out), as PyTorch's upsample ops take them.
Tensor upsample2d(const Tensor& x, std::array<int64_t, 2> size, const std::string& mode, bool align_corners,
                  std::array<double, 2> scales);
// The checked geometry of a pooling window over x (N, C, H, W) of any dtype (ops/conv.cpp;
// the float pools and the quantized max pool share it).
Window2d pool_geometry(const char* op, const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                       std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode);

// ---- fused neural-network ops (ops/nn.cpp) ----
// y = x @ w^T + b; x (..., in), w (out, in), b (out,) or null.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor softmax(const Tensor& x, int64_t dim);
// Mean / sum / per-sample negative log-likelihood of log_softmax(logits) at the targets.
// logits (N, C), target (N,) int64; reduction: 0 none, 1 mean, 2 sum.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, int reduction, int64_t ignore_index,
                     const Tensor& weight = nullptr, double label_smoothing = 0);
Tensor nll_loss(const Tensor& logp, const Tensor& target, int reduction, int64_t ignore_index,
                const Tensor& weight = nullptr);
// Layer norm over the last D values of x (the normalized_shape's elements); weight and
// bias have D elements (any shape) or are null.
Tensor layer_norm(const Tensor& x, int64_t D, const Tensor& weight, const Tensor& bias, double eps);
// RMS norm over the last D values of x: x / sqrt(mean(x^2) + eps) * weight (weight D
// elements or null); the layer norm's kernels without the centring.
Tensor rms_norm(const Tensor& x, int64_t D, const Tensor& weight, double eps);
// Dropout of each element with probability p (0 < p < 1), the rest scaled by 1 / (1 - p),
// one kernel each way (ops/nn.cpp); float32 / float64. The mask is drawn as rand() >= p.
Tensor dropout(const Tensor& x, double p);
// Batch norm of x (N, C, *) per channel (ops/batch_norm.cpp): training uses the batch's
// statistics and updates running_mean / running_var (C,) in place when given; eval uses them.
// weight, bias (C,) or null. num_batches_tracked (BatchNorm's counter, or null): training adds
// 1 to it, in the statistics kernel when it is a one-element int64 tensor on x's device.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps,
                  const Tensor& num_batches_tracked = nullptr);
// Group norm of x (N, C, *) (ops/group_norm.cpp): each sample's C channels in num_groups
// groups of adjacent channels, each group normalized over its values, then weight and bias
// (C,) (or null) per channel; one kernel each way.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps);
// One fused LSTM step: gates (N, 4H) pre-activations (i, f, g, o), c_prev (N, H) -> (h, c).
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& gates, const Tensor& c_prev);
// A whole LSTM layer (ops/rnn.cpp): xw (T, N, 4H) the input projection of every step, h0, c0
// (N, H), w_hh (4H, H); steps run t = 0..T-1, or T-1..0 when reverse. Returns the outputs
// h (T, N, H) in time order and the final h_n, c_n (N, H). One graph node.
std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& xw, const Tensor& h0, const Tensor& c0,
                                              const Tensor& w_hh, bool reverse);
// A whole GRU layer, the same way: xw (T, N, 3H) = x W_ih^T + b_ih, h0 (N, H), w_hh (3H, H),
// b_hh (3H,) or null. Returns the outputs (T, N, H) and h_n (N, H).
std::tuple<Tensor, Tensor> gru_layer(const Tensor& xw, const Tensor& h0, const Tensor& w_hh, const Tensor& b_hh,
                                     bool reverse);
// A whole Elman RNN layer: xw (T, N, H) = x W_ih^T + b_ih + b_hh, h0 (N, H), w_hh (H, H);
// h' = tanh (or relu) of xw[t] + h W_hh^T. Returns the outputs (T, N, H) and h_n (N, H).
std::tuple<Tensor, Tensor> rnn_layer(const Tensor& xw, const Tensor& h0, const Tensor& w_hh, bool relu, bool reverse);
// One whole layer on the device's recurrent-layer library (kernels.h's RnnLibrary: cuDNN
// on a GPU), both directions when bidirectional: x (T, N, I), hx and (LSTM only, else null)
// cx (D, N, H), weights per direction w_ih, w_hh and optionally b_ih, b_hh in PyTorch's
// shapes and gate order. Returns {y (T, N, D H), h_n (D, N, H)[, c_n]}, or nothing when the
// device has no such library or it declines the case (the caller runs the layers above).
std::optional<std::vector<Tensor>> cudnn_rnn_layer(const Tensor& x, const Tensor& hx, const Tensor& cx,
                                                   const std::vector<Tensor>& weights, RnnMode mode,
                                                   bool bidirectional);
// Fused attention (ops/attention.cpp): softmax(query key^T * scale + mask) value over the last
// two dims, query (..., L, E), key (..., S, E), value (..., S, Ev) of one batch shape; attn_mask
// null, bool (True = attend) or additive, broadcastable to (..., L, S); never with is_causal.
// dropout_p > 0 (below 1): dropout on the weights, its mask drawn from (seed, offset) of the
// device's counter stream (the caller takes B * L * S counters of it; AttentionDropout).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, bool is_causal, double scale, double dropout_p = 0,
                                    uint64_t seed = 0, uint64_t offset = 0);
// The keep mask (B, L, S) bool, on the CPU, that scaled_dot_product_attention's dropout with
// these arguments applies to the weights of the B flattened (batch, head) pairs.
Tensor attention_dropout_mask(uint64_t seed, uint64_t offset, int64_t B, int64_t L, int64_t S, double p);

// ---- fused optimizer steps (ops/optim.cpp); formulas in optim_math.h ----
// One step on one parameter, in place, in one kernel pass. grad and the state match param
// (shape, dtype, device); param and state are contiguous. sgd_step returns the momentum
// buffer: `momentum_buffer`, or a new one on the first momentum step (null without momentum).
Tensor sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, SgdStep opt);
void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const AdamStep& opt);
// The same steps on many parameters at once (the optimizers' foreach path): entry k of
// every list belongs to params[k]; all params on one device with one dtype. A few kernel
// launches update them all. momentum_buffers holds null where a param has none yet; the
// buffers are returned in the params' order.
std::vector<Tensor> sgd_step_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                     const std::vector<Tensor>& momentum_buffers, SgdStep opt);
// Adam's max_exp_avg_sqs are read only with opt.amsgrad (one per param; empty otherwise).
void adam_step_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                       const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& opt);
// RMSprop's step: momentum_buffers are read only with momentum > 0, grad_avgs only when
// centered (each then one per param; pass empty lists otherwise).
void rmsprop_step_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& momentum_buffers,
                          const std::vector<Tensor>& grad_avgs, const RmspropStep& opt);
// clip_grad_norm_ over every gradient at once (PyTorch's foreach path): returns the total
// norm_type-norm (2 or inf) of all their elements, a 0-d tensor of their dtype, and scales
// each grad in place by min(1, max_norm / (total + 1e-6)). grads: contiguous, floating, one
// device and dtype. Three kernel launches on CUDA, whatever their number; the host does not
// wait for the total.
Tensor clip_grad_norm_foreach(const std::vector<Tensor>& grads, double max_norm, double norm_type);
// GradScaler's unscale (PyTorch's _amp_foreach_non_finite_check_and_unscale_): each grad
// *= inv_scale in place, found_inf set to 1 if any of them held inf or NaN; one kernel
// launch per grad. found_inf, inv_scale: one-element float32 tensors on the grads' device.
void amp_foreach_non_finite_check_and_unscale_(const std::vector<Tensor>& grads, const Tensor& found_inf,
                                               const Tensor& inv_scale);

// ---- rearranging (ops/shape.cpp): one remap kernel pass each ----
Tensor flip(const Tensor& t, const std::vector<int64_t>& dims);
// dims empty: roll the flattened tensor (then shifts has one entry).
Tensor roll(const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims);
Tensor tril(const Tensor& t, int64_t diagonal);
Tensor triu(const Tensor& t, int64_t diagonal);
Tensor repeat(const Tensor& t, const std::vector<int64_t>& repeats);
// t padded with `value`: pad = (left, right) of the last dim, then of the one before...;
// negative amounts crop. One remap pass; its backward is a view of the gradient.
Tensor constant_pad_nd(const Tensor& t, const std::vector<int64_t>& pad, const Scalar& value);

// ---- statistics (ops/reduce.cpp): one reduce_stats kernel each; dims empty = all ----
Tensor var(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim);
Tensor std_dev(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim);  // torch.std
std::tuple<Tensor, Tensor> var_mean(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim);
std::tuple<Tensor, Tensor> std_mean(const Tensor& t, std::vector<int64_t> dims, double correction, bool keepdim);
Tensor logsumexp(const Tensor& t, std::vector<int64_t> dims, bool keepdim);
// The vector p-norm (p = 2 for 'fro'; +-inf, 0 and any other float).
Tensor norm(const Tensor& t, double p, std::vector<int64_t> dims, bool keepdim);

// ---- top k (ops/sort.cpp): sort's first k along dim (largest: of the descending sort) ----
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest);

// ---- reductions, scans and searches over sorted lines (ops/reduce.cpp, ops/scan.cpp, ops/search.cpp) ----
// The product over dims (empty = all); integers and bools give int64 unless dtype.
Tensor prod(const Tensor& t, std::vector<int64_t> dims, bool keepdim, std::optional<DType> dtype);
// Running max / min along dim and where each was found (the last place for ties; NaN wins).
std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
// For each value, its insertion place in the last dim of sorted (1-D, or leading dims equal
// to the values'): the first i with sorted[i] >= v (right: > v). int64.
Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right);

}  // namespace minitorch
