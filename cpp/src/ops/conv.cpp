// conv.cpp — conv2d and conv_transpose2d as im2col + GEMMs, F.unfold / F.fold (im2col and
// col2im themselves), and max/avg pooling, with their backward.
//
// Per sample n, with cols[n] = im2col(x[n]) of shape (C*KH*KW, OH*OW) and W seen as a
// (O, C*KH*KW) matrix:
//   forward:  y[n] = W @ cols[n] (+ b)               (O, OH*OW): y's own NCHW layout
//   backward: dW = sum over n of G[n] @ cols[n]^T,   db = sum of G over n and pixels,
//             dx[n] = col2im(W^T @ G[n])             (G[n]: the gradient of y[n])
// With groups, each group is the same on its slice of channels: rows of cols[n] and of
// W, one GEMM batched over (sample, group).
// conv_transpose2d is the dx line run as a forward: y[n] = col2im(W^T @ x[n]); its
// gradients are the conv's forward (for x) and the dW line with x and G swapped.
// The batch is walked in chunks of samples with one reused column buffer, so memory
// stays bounded whatever the batch; W^T and cols^T are transposed views (BLAS flags).
// The columns are not saved for backward: x is, and backward runs im2col again.
// On a GPU with cuDNN (backends.cudnn.enabled, the default) cuDNN's own algorithms run
// instead (cuda/cudnn_conv.cu), and on the CPU narrow layers run a direct convolution
// (cpu/conv_direct.cpp, backends.cpu.conv_algorithm); im2col stays the path to read, and
// the fallback.
// conv1d is conv2d with H = 1 (see python/minitorch/nn/functional.py).
#include <algorithm>

#include "minitorch/autograd.h"
#include "minitorch/kernel_work.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

void check_params(const char* op, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad, std::array<int64_t, 2> dil)
{
    for (int i = 0; i < 2; ++i) {
        MT_CHECK(stride[i] > 0, op, ": stride must be positive, got (", stride[0], ", ", stride[1], ")");
        MT_CHECK(pad[i] >= 0, op, ": padding must be non-negative, got (", pad[0], ", ", pad[1], ")");
        MT_CHECK(dil[i] > 0, op, ": dilation must be positive, got (", dil[0], ", ", dil[1], ")");
    }
}

// Samples [n0, n0 + m) of a contiguous (N, ...) tensor, each seen as a (rows, cols) matrix.
Tensor per_sample(const Tensor& t, int64_t n0, int64_t m, int64_t rows, int64_t cols)
{
    return make_view(t, {m, rows, cols}, {rows * cols, cols, 1}, t->offset + n0 * rows * cols);
}

// t (m, G * rows, cols), each sample's rows contiguous, as (m, G, rows, cols): one matrix
// per sample and group, for a GEMM batched over both.
Tensor by_group(const Tensor& t, int64_t m, int64_t G, int64_t rows, int64_t cols)
{
    return make_view(t, {m, G, rows, cols}, {t->strides[0], rows * cols, cols, 1}, t->offset);
}

// How a convolution walks its batch: chunks of `chunk` samples, one column buffer each.
// With groups, input channels [g*C/G, (g+1)*C/G) feed output channels [g*O/G, (g+1)*O/G):
// the column rows of group g are a contiguous block of cols[n] (rows are ordered by
// channel), and W (O, C/G*KH*KW) is G stacked (O/G, gpatch) matrices, so each group is
// its own GEMM on slices of the same buffers (batched: one call per chunk).
struct ConvPlan {
    Window2d w;
    int64_t O = 0, G = 1, Og = 0, patch = 0, gpatch = 0, pixels = 0;  // gpatch: a group's C/G*KH*KW
    int64_t chunk = 1;
    // A 1x1 kernel with stride 1 and no padding needs no im2col: x[n] is already its
    // own columns, (C, H*W).
    bool direct = false;

    ConvPlan(const Window2d& window, int64_t out_channels, DType dtype, Device device)
        : w(window), O(out_channels), G(window.groups), Og(out_channels / window.groups),
          patch(window.C * window.KH * window.KW), gpatch(patch / window.groups), pixels(window.OH * window.OW)
    {
        direct = w.KH == 1 && w.KW == 1 && w.stride_h == 1 && w.stride_w == 1 && w.pad_h == 0 && w.pad_w == 0 &&
                 w.OH == w.H && w.OW == w.W;
        // The CPU takes chunks whose columns stay in its L2 cache while the GEMM reads
        // them (256 KiB measured best for the MNIST CNN's layers, against 1 MiB and
        // more); a GPU takes big ones, so each launch has work for all its multiprocessors.
        const int64_t budget = device.is_cpu() ? (int64_t(256) << 10) : (int64_t(64) << 20);
        const int64_t per_sample_bytes = std::max<int64_t>(1, patch * pixels * int64_t(itemsize(dtype)));
        chunk = std::clamp<int64_t>(budget / per_sample_bytes, 1, std::max<int64_t>(w.N, 1));
    }
    Tensor buffer(DType dtype, Device device) const
    {
        return direct ? Tensor() : empty({chunk, patch, pixels}, dtype, device);
    }
    // The columns of samples [n0, n0 + m) of the contiguous input xc, as (m, patch, pixels):
    // im2col into `buffer`, or xc itself when direct.
    Tensor columns(const Tensor& xc, const Tensor& buffer, int64_t n0, int64_t m) const
    {
        if (direct) return per_sample(xc, n0, m, patch, pixels);
        Window2d wc = w;
        wc.N = m;
        Tensor cols = per_sample(buffer, 0, m, patch, pixels);
        kernels(xc->device()).im2col(cols, per_sample(xc, n0, m, w.C, w.H * w.W), wc);
        return cols;
    }
    // W (O, patch), contiguous, as the same matrix for each of m samples (batch stride 0),
    // or its transpose (patch, O) as a view. groups == 1 only.
    Tensor weights(const Tensor& wc, int64_t m, bool transposed) const
    {
        return transposed ? make_view(wc, {m, patch, O}, {0, 1, patch}, wc->offset)
                          : make_view(wc, {m, O, patch}, {0, patch, 1}, wc->offset);
    }
    // W as G matrices (Og, gpatch), the same for each of m samples, or their transposes
    // (gpatch, Og), as views.
    Tensor group_weights(const Tensor& wc, int64_t m, bool transposed) const
    {
        return transposed ? make_view(wc, {m, G, gpatch, Og}, {0, Og * gpatch, 1, gpatch}, wc->offset)
                          : make_view(wc, {m, G, Og, gpatch}, {0, Og * gpatch, gpatch, 1}, wc->offset);
    }
};

// cuDNN describes a convolution by its input; a window whose output is smaller than the
// input gives (conv_transpose2d with output_padding >= stride) is left to im2col.
bool natural(const Window2d& w)
{
    return w.OH == window_out_size(w.H, w.KH, w.stride_h, w.pad_h, w.dil_h) &&
           w.OW == window_out_size(w.W, w.KW, w.stride_w, w.pad_w, w.dil_w);
}

bool all_nonempty(std::initializer_list<const Tensor*> ts)
{
    for (const Tensor* t : ts)
        if (!(*t)->numel()) return false;
    return true;
}

// A convolution library call (cuDNN), its FLOPs and bytes counted for the profiler when it
// ran (false: it declined, and the im2col kernels that run instead count themselves).
template <class Fn, class Count, class... Args>
bool library_call(Fn fn, Count count, const Args&... args)
{
    profiler::KernelCall call;
    const bool done = fn(args...);
    if (done && call.counting()) call.set(count(args...));
    return done;
}

// The three products of a convolution, shared by conv2d, conv_transpose2d and their
// backward nodes. Window w describes the convolution x (N, C, H, W) -> y (N, O, OH, OW)
// with weight (O, C/groups, KH, KW); every tensor is contiguous and results are written
// whole. cuDNN is asked first where the device has it.

// y = conv(x, W) (no bias): y[n] = W @ cols[n], per group.
void conv_forward_into(const Tensor& y, const Tensor& xc, const Tensor& wc, const Window2d& w)
{
    const Device device = y->device();
    const ConvPlan plan(w, wc->shape[0], y->dtype, device);
    if (!y->numel()) return;
    const auto& k = kernels(device);
    if (!xc->numel() || !plan.gpatch) return k.fill(y, Scalar(0.0));  // a sum of nothing
    if (const ConvLibrary* lib = conv_library(device);
        lib && natural(w) && library_call(lib->forward, work::conv_forward, y, xc, wc, w))
        return;
    Tensor cols = plan.buffer(y->dtype, device);
    ConvGemmScope conv_gemms;  // these GEMMs follow backends.cudnn.allow_tf32
    for (int64_t n0 = 0; n0 < w.N; n0 += plan.chunk) {
        const int64_t m = std::min(plan.chunk, w.N - n0);
        Tensor c = plan.columns(xc, cols, n0, m);
        Tensor ym = per_sample(y, n0, m, plan.O, plan.pixels);
        if (plan.G == 1)
            k.matmul(ym, plan.weights(wc, m, false), c, false);
        else  // one GEMM batched over (sample, group)
            k.matmul(by_group(ym, m, plan.G, plan.Og, plan.pixels), plan.group_weights(wc, m, false),
                     by_group(c, m, plan.G, plan.gpatch, plan.pixels), false);
    }
}

// gx = the adjoint of conv(., W) applied to g (N, O, OH, OW): gx[n] = col2im(W^T @ g[n]).
// This is conv2d's input gradient and conv_transpose2d's forward.
void conv_input_grad_into(const Tensor& gx, const Tensor& g, const Tensor& wc, const Window2d& w)
{
    const Device device = gx->device();
    const ConvPlan plan(w, wc->shape[0], gx->dtype, device);
    if (!gx->numel()) return;
    const auto& k = kernels(device);
    if (const ConvLibrary* lib = conv_library(device); lib && natural(w) && all_nonempty({&g, &wc}) &&
                                                       library_call(lib->backward_input, work::conv_backward_input, gx, g, wc, w))
        return;
    k.fill(gx, Scalar(0.0));  // col2im adds into it
    if (!g->numel() || !plan.gpatch) return;
    Tensor dcols = plan.buffer(gx->dtype, device);
    ConvGemmScope conv_gemms;
    for (int64_t n0 = 0; n0 < w.N; n0 += plan.chunk) {
        const int64_t m = std::min(plan.chunk, w.N - n0);
        Tensor gm = per_sample(g, n0, m, plan.O, plan.pixels);
        Tensor gx_m = per_sample(gx, n0, m, w.C, w.H * w.W);
        Tensor d = plan.direct ? gx_m : per_sample(dcols, 0, m, plan.patch, plan.pixels);
        if (plan.G == 1)
            k.matmul(d, plan.weights(wc, m, true), gm, false);
        else
            k.matmul(by_group(d, m, plan.G, plan.gpatch, plan.pixels), plan.group_weights(wc, m, true),
                     by_group(gm, m, plan.G, plan.Og, plan.pixels), false);
        if (!plan.direct) {
            Window2d wm = w;
            wm.N = m;
            k.col2im(gx_m, d, wm);
        }
    }
}

// gw = sum over n of g[n] @ cols[n]^T, per group: conv2d's weight gradient (and
// conv_transpose2d's, with the roles of x and g swapped).
void conv_weight_grad_into(const Tensor& gw, const Tensor& g, const Tensor& xc, const Window2d& w)
{
    const Device device = gw->device();
    const ConvPlan plan(w, gw->shape[0], gw->dtype, device);
    if (!gw->numel()) return;
    const auto& k = kernels(device);
    if (const ConvLibrary* lib = conv_library(device); lib && natural(w) && all_nonempty({&g, &xc}) &&
                                                       library_call(lib->backward_weight, work::conv_backward_weight, gw, g, xc, w))
        return;
    k.fill(gw, Scalar(0.0));  // the GEMMs add into it
    if (!g->numel() || !plan.gpatch) return;
    Tensor cols = plan.buffer(gw->dtype, device);
    ConvGemmScope conv_gemms;
    for (int64_t n0 = 0; n0 < w.N; n0 += plan.chunk) {
        const int64_t m = std::min(plan.chunk, w.N - n0);
        Tensor c = plan.columns(xc, cols, n0, m);  // (m, patch, pixels)
        for (int64_t gi = 0; gi < plan.G; ++gi) {
            // group gi: (Og, gpatch) += sum over the m samples of (Og, pixels) @ (pixels, gpatch)
            Tensor out =
                make_view(gw, {plan.Og, plan.gpatch}, {plan.gpatch, 1}, gw->offset + gi * plan.Og * plan.gpatch);
            Tensor a = make_view(g, {m, plan.Og, plan.pixels}, {plan.O * plan.pixels, plan.pixels, 1},
                                 g->offset + (n0 * plan.O + gi * plan.Og) * plan.pixels);
            Tensor b = make_view(c, {m, plan.pixels, plan.gpatch}, {c->strides[0], 1, plan.pixels},
                                 c->offset + gi * plan.gpatch * plan.pixels);
            k.matmul(out, a, b, /*sum_batches=*/true);
        }
    }
}

// conv2d written with ordinary ops, for its double backward (create_graph): the padded
// input by cat, its columns (im2col) by one index_select of each window's positions in
// the padded plane, then one matmul per group with W as (groups, O/groups, C/groups*KH*KW).
Tensor conv2d_ops(const Tensor& x, const Tensor& weight, const Tensor& bias, const Window2d& w)
{
    const Device dev = x->device();
    const int64_t O = weight->shape[0], G = w.groups, Hp = w.H + 2 * w.pad_h, Wp = w.W + 2 * w.pad_w;
    Tensor xp = x;
    auto pad_dim = [&](int64_t dim, int64_t p) {
        if (!p) return;
        Shape side = xp->shape;
        side[dim] = p;
        Tensor z = zeros(side, xp->dtype, dev);
        xp = cat({z, xp, z}, dim);
    };
    pad_dim(2, w.pad_h);
    pad_dim(3, w.pad_w);
    auto axis = [&](int64_t n, int64_t step, int64_t at) {  // arange(n) * step, shaped along axis `at` of 4
        Shape s(4, 1);
        s[at] = n;
        Tensor a = arange(0, double(n), 1, DType::Int64, dev);
        return reshape(binary(BinaryOp::Mul, a, scalar_tensor(Scalar(step), Device{})), s);
    };
    // (KH, KW, OH, OW): where each window element sits in the padded plane
    Tensor idx = binary(BinaryOp::Add,
                        binary(BinaryOp::Add, axis(w.KH, w.dil_h * Wp, 0), axis(w.KW, w.dil_w, 1)),
                        binary(BinaryOp::Add, axis(w.OH, w.stride_h * Wp, 2), axis(w.OW, w.stride_w, 3)));
    Tensor cols = index_select(reshape(xp, {w.N, w.C, Hp * Wp}), 2, reshape(contiguous(idx), {idx->numel()}));
    const int64_t gpatch = (w.C / G) * w.KH * w.KW, pixels = w.OH * w.OW;
    cols = reshape(cols, {w.N, G, gpatch, pixels});  // channels are grouped in order
    Tensor y = reshape(matmul(reshape(weight, {G, O / G, gpatch}), cols), {w.N, O, w.OH, w.OW});
    if (bias) y = binary(BinaryOp::Add, y, reshape(bias, {1, O, 1, 1}));
    return y;
}

// derivative of conv2d, input input: dx[n] = col2im(W^T @ g[n]), W as a (O, C/groups*KH*KW) matrix per group
// derivative of conv2d, input weight: sum over n of g[n] @ im2col(input[n])^T, per group
// derivative of conv2d, input bias: sum of g over batch and pixels
struct Conv2dBackward : Node {
    Tensor input, weight;  // input: contiguous, saved when weight needs a gradient
    Window2d w;
    std::string name() const override { return "ConvolutionBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        if (autograd::is_grad_enabled()) {
            // create_graph: differentiate conv2d_ops. The gradient of x does not depend on
            // x (nor W's on W), so an input that was not saved can be zeros.
            auto value = [&](const Tensor& saved, size_t i) {
                const auto& m = input_meta[i];
                return saved ? saved : zeros(m.shape, m.dtype, m.device);
            };
            Tensor bias_value = needs_input_grad(2) ? value(nullptr, 2) : nullptr;
            const Window2d win = w;
            return autograd::differentiate_composite(
                *this, {value(input, 0), value(weight, 1), bias_value}, grads,
                [win](const std::vector<Tensor>& p) { return std::vector<Tensor>{conv2d_ops(p[0], p[1], p[2], win)}; });
        }
        Tensor G = contiguous(grads[0]);  // (N, O, OH, OW): g[n] is the (O, OH*OW) matrix of sample n
        const Device device = G->device();
        const DType dt = G->dtype;
        Tensor gx, gw;
        if (needs_input_grad(0)) {
            gx = empty(input_meta[0].shape, dt, device);
            conv_input_grad_into(gx, G, contiguous(weight), w);
        }
        if (needs_input_grad(1)) {
            gw = empty(input_meta[1].shape, dt, device);
            conv_weight_grad_into(gw, G, input, w);
        }
        Tensor gb = needs_input_grad(2) ? sum(G, {0, 2, 3}, false, std::nullopt) : Tensor();
        return {gx, gw, gb};
    }
    void release() override { input.reset(), weight.reset(); }
};

// derivative of conv_transpose2d, input input: conv2d(g, W) (the transpose of the transpose)
// derivative of conv_transpose2d, input weight: sum over n of input[n] @ im2col(g[n])^T, per group
// derivative of conv_transpose2d, input bias: sum of g over batch and pixels
struct ConvTranspose2dBackward : Node {
    Tensor input, weight;  // input: contiguous, saved when weight needs a gradient
    Window2d w;            // the convolution this op is the transpose of: y -> x
    std::string name() const override { return "ConvolutionBackward0"; }
    bool supports_double_backward() const override { return false; }  // a fused kernel (create_graph refuses)
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        Tensor G = contiguous(grads[0]);  // (N, Cout, OH, OW): the "input" of the convolution w
        const Device device = G->device();
        const DType dt = G->dtype;
        Tensor gx, gw;
        if (needs_input_grad(0)) {
            gx = empty(input_meta[0].shape, dt, device);
            conv_forward_into(gx, G, contiguous(weight), w);
        }
        if (needs_input_grad(1)) {
            gw = empty(input_meta[1].shape, dt, device);
            conv_weight_grad_into(gw, input, G, w);
        }
        Tensor gb = needs_input_grad(2) ? sum(G, {0, 2, 3}, false, std::nullopt) : Tensor();
        return {gx, gw, gb};
    }
    void release() override { input.reset(), weight.reset(); }
};

// derivative of unfold, input input: col2im(g) (adds each column entry back onto the pixel it read)
struct Im2ColBackward : Node {
    Window2d w;
    std::string name() const override { return "Im2ColBackward0"; }
    bool supports_double_backward() const override { return false; }  // a fused kernel (create_graph refuses)
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx = zeros(input_meta[0].shape, g[0]->dtype, input_meta[0].device);
        if (gx->numel()) kernels(gx->device()).col2im(gx, contiguous(g[0]), w);
        return {gx};
    }
};

// derivative of fold, input input: im2col(g) (each column entry reads the pixel it was added to)
struct Col2ImBackward : Node {
    Window2d w;
    std::string name() const override { return "Col2ImBackward0"; }
    bool supports_double_backward() const override { return false; }  // a fused kernel (create_graph refuses)
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gc = empty(input_meta[0].shape, g[0]->dtype, input_meta[0].device);
        if (gc->numel()) kernels(gc->device()).im2col(gc, contiguous(g[0]), w);
        return {gc};
    }
};

// derivative of max_pool2d, input input: g added at the position that won each window (the saved indices)
struct MaxPool2dBackward : Node {
    Tensor indices;
    Window2d w;
    std::string name() const override { return "MaxPool2DWithIndicesBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        if (autograd::is_grad_enabled()) {
            // create_graph: the same scatter-add as an op (indices are flat in each plane).
            const auto& m = input_meta[0];
            Tensor plane = zeros({w.N, w.C, w.H * w.W}, g[0]->dtype, m.device);
            Tensor gx = scatter(plane, 2, reshape(indices, {w.N, w.C, w.OH * w.OW}),
                                reshape(g[0], {w.N, w.C, w.OH * w.OW}), true);
            return {reshape(gx, m.shape)};
        }
        Tensor gx = empty(input_meta[0].shape, g[0]->dtype, input_meta[0].device);  // the kernel writes it all
        kernels(gx->device()).max_pool2d_backward(gx, contiguous(g[0]), indices, w);
        return {gx};
    }
    void release() override { indices.reset(); }
};

// gx = A^T g, avg_pool2d's backward, is linear in g: its own gradient (create_graph) is
// A gg = avg_pool2d(gg) with the same window.
// derivative of avg_pool2d_backward, input grad_output: avg_pool2d(gg) with the same window
struct AvgPool2dBackwardBackward : Node {
    Window2d w;
    bool ceil_mode = false;
    std::string name() const override { return "AvgPool2DBackwardBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& gg) override
    {
        return {avg_pool2d(gg[0], {w.KH, w.KW}, {w.stride_h, w.stride_w}, {w.pad_h, w.pad_w}, ceil_mode)};
    }
};

// derivative of avg_pool2d, input input: g / window size, spread over each window
struct AvgPool2dBackward : Node {
    Window2d w;
    bool ceil_mode = false;
    std::string name() const override { return "AvgPool2DBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx = empty(input_meta[0].shape, g[0]->dtype, input_meta[0].device);  // the kernel writes it all
        kernels(gx->device()).avg_pool2d_backward(gx, contiguous(g[0]), w);
        if (autograd::needs_grad(g[0])) {  // create_graph, and g has a graph
            auto n = std::make_shared<AvgPool2dBackwardBackward>();
            n->w = w;
            n->ceil_mode = ceil_mode;
            autograd::record(n, {&g[0]}, {&gx});
        }
        return {gx};
    }
};

}  // namespace

// Geometry of a pooling window over x (N, C, H, W), its arguments checked; any dtype (the
// quantized max pool, ops/quantized.cpp, uses it too).
Window2d pool_geometry(const char* op, const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                       std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode)
{
    MT_CHECK(x->dim() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", x->shape);
    MT_CHECK(k[0] > 0 && k[1] > 0, op, ": kernel_size must be positive, got (", k[0], ", ", k[1], ")");
    check_params(op, stride, pad, dil);
    MT_CHECK(pad[0] * 2 <= k[0] && pad[1] * 2 <= k[1], op, ": padding should be at most half of the kernel size, got "
             "padding (", pad[0], ", ", pad[1], ") for kernel (", k[0], ", ", k[1], ")");
    Window2d w;
    w.N = x->shape[0], w.C = x->shape[1], w.H = x->shape[2], w.W = x->shape[3];
    w.KH = k[0], w.KW = k[1], w.stride_h = stride[0], w.stride_w = stride[1];
    w.pad_h = pad[0], w.pad_w = pad[1], w.dil_h = dil[0], w.dil_w = dil[1];
    w.OH = window_out_size(w.H, w.KH, w.stride_h, w.pad_h, w.dil_h, ceil_mode);
    w.OW = window_out_size(w.W, w.KW, w.stride_w, w.pad_w, w.dil_w, ceil_mode);
    MT_CHECK(w.OH > 0 && w.OW > 0, op, ": kernel (", k[0], ", ", k[1], ") is larger than the padded input of shape ",
             x->shape, " (padding (", pad[0], ", ", pad[1], "))");
    return w;
}

namespace {

// pool_geometry for the floating pools; 3-D (C, H, W) input is taken as N = 1.
Window2d pool_window(const char* op, const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                     std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode)
{
    MT_CHECK_TYPE(x->dim() != 4 || is_floating(x->dtype), op, ": expected a floating input, got ", x->dtype);
    return pool_geometry(op, x, k, stride, pad, dil, ceil_mode);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
              std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, int64_t groups)
{
    MT_PROFILE_OP("conv2d", x, weight, bias);
    MT_CHECK(x->dim() == 4, "conv2d: expected a 4-D input (N, C, H, W), got shape ", x->shape);
    MT_CHECK(weight->dim() == 4, "conv2d: expected a 4-D weight (out_channels, in_channels/groups, KH, KW), got shape ",
             weight->shape);
    MT_CHECK_TYPE(is_floating(x->dtype), "conv2d: expected a floating input, got ", x->dtype);
    check_layer_dtypes("conv2d", x, weight, bias);
    check_same_device("conv2d", x, weight);
    if (bias) check_same_device("conv2d", x, bias);
    MT_CHECK(groups > 0, "conv2d: groups must be a positive integer, got ", groups);
    MT_CHECK(weight->shape[0] % groups == 0, "conv2d: weight of shape ", weight->shape, " has ", weight->shape[0],
             " output channels, which is not divisible by groups=", groups);
    MT_CHECK(x->shape[1] == weight->shape[1] * groups, "conv2d: input of shape ", x->shape, " has ", x->shape[1],
             " channels, but weight of shape ", weight->shape, " with groups=", groups, " expects ",
             weight->shape[1] * groups, " input channels");
    if (bias)
        MT_CHECK(bias->dim() == 1 && bias->shape[0] == weight->shape[0], "conv2d: bias of shape ", bias->shape,
                 " does not match ", weight->shape[0], " output channels");
    check_params("conv2d", stride, pad, dil);

    Window2d w;
    w.N = x->shape[0], w.C = x->shape[1], w.H = x->shape[2], w.W = x->shape[3];
    w.KH = weight->shape[2], w.KW = weight->shape[3], w.groups = groups;
    w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1];
    w.dil_h = dil[0], w.dil_w = dil[1];
    MT_CHECK(w.H + 2 * w.pad_h >= w.dil_h * (w.KH - 1) + 1 && w.W + 2 * w.pad_w >= w.dil_w * (w.KW - 1) + 1,
             "conv2d: kernel of size (", w.KH, ", ", w.KW, ") (dilation (", w.dil_h, ", ", w.dil_w,
             ")) is larger than the padded input of size (", w.H + 2 * w.pad_h, ", ", w.W + 2 * w.pad_w,
             ") for input shape ", x->shape);
    w.OH = window_out_size(w.H, w.KH, w.stride_h, w.pad_h, w.dil_h);
    w.OW = window_out_size(w.W, w.KW, w.stride_w, w.pad_w, w.dil_w);
    const int64_t O = weight->shape[0];

    Tensor xc;  // set by forward; weight's gradient reads it
    auto forward = [&] {
        xc = contiguous(x);
        Tensor y = empty({w.N, O, w.OH, w.OW}, x->dtype, x->device());
        conv_forward_into(y, xc, contiguous(weight), w);
        if (bias && y->numel()) binary_(BinaryOp::Add, y, view(bias, {O, 1, 1}));
        return y;
    };
    // A missing bias is a null input: no edge, needs_input_grad(2) is false.
    return autograd::record_op<Conv2dBackward>({&x, &weight, &bias}, forward, [&](Conv2dBackward& n, const Tensor&) {
        n.w = w;
        if (weight->requires_grad) n.input = autograd::save(n, xc);
        if (x->requires_grad) n.weight = autograd::save(n, weight);
        n.has_saved = true;
    });
}

// conv_transpose2d is the input gradient of the convolution w that maps its output
// y (N, Cout, OH, OW) back to the shape of its input x (N, Cin, H, W), with weight
// (Cin, Cout/groups, KH, KW) -- exactly conv2d's weight layout for that convolution
// (its "out channels" are Cin). So forward = col2im(W^T @ x[n]) per group, and the
// backward is that convolution's forward (for x) and its weight gradient (for W).
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
                        std::array<int64_t, 2> pad, std::array<int64_t, 2> output_padding, int64_t groups,
                        std::array<int64_t, 2> dil)
{
    MT_PROFILE_OP("conv_transpose2d", x, weight, bias);
    const char* op = "conv_transpose2d";
    MT_CHECK(x->dim() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", x->shape);
    MT_CHECK(weight->dim() == 4, op, ": expected a 4-D weight (in_channels, out_channels/groups, KH, KW), got shape ",
             weight->shape);
    MT_CHECK_TYPE(is_floating(x->dtype), op, ": expected a floating input, got ", x->dtype);
    check_layer_dtypes(op, x, weight, bias);
    check_same_device(op, x, weight);
    if (bias) check_same_device(op, x, bias);
    MT_CHECK(groups > 0, op, ": groups must be a positive integer, got ", groups);
    MT_CHECK(x->shape[1] == weight->shape[0], op, ": input of shape ", x->shape, " has ", x->shape[1],
             " channels, but weight of shape ", weight->shape, " expects ", weight->shape[0], " input channels");
    MT_CHECK(weight->shape[0] % groups == 0, op, ": weight of shape ", weight->shape, " has ", weight->shape[0],
             " input channels, which is not divisible by groups=", groups);
    const int64_t Cout = weight->shape[1] * groups;
    if (bias)
        MT_CHECK(bias->dim() == 1 && bias->shape[0] == Cout, op, ": bias of shape ", bias->shape, " does not match ",
                 Cout, " output channels");
    check_params(op, stride, pad, dil);
    for (int i = 0; i < 2; ++i)
        MT_CHECK(output_padding[i] >= 0 && (output_padding[i] < stride[i] || output_padding[i] < dil[i]), op,
                 ": output padding must be smaller than either stride or dilation, got output_padding (",
                 output_padding[0], ", ", output_padding[1], "), stride (", stride[0], ", ", stride[1],
                 "), dilation (", dil[0], ", ", dil[1], ")");
    Window2d w;  // the convolution y -> x
    w.N = x->shape[0], w.C = Cout, w.OH = x->shape[2], w.OW = x->shape[3];
    w.KH = weight->shape[2], w.KW = weight->shape[3], w.groups = groups;
    w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1];
    w.dil_h = dil[0], w.dil_w = dil[1];
    w.H = (w.OH - 1) * w.stride_h - 2 * w.pad_h + w.dil_h * (w.KH - 1) + output_padding[0] + 1;
    w.W = (w.OW - 1) * w.stride_w - 2 * w.pad_w + w.dil_w * (w.KW - 1) + output_padding[1] + 1;
    MT_CHECK(w.H > 0 && w.W > 0, op, ": input of shape ", x->shape, " gives an output of size (", w.H, ", ", w.W,
             ") per channel, which is too small (padding (", pad[0], ", ", pad[1], "))");

    Tensor xc;  // set by forward; weight's gradient reads it
    auto forward = [&] {
        xc = contiguous(x);
        Tensor y = empty({w.N, Cout, w.H, w.W}, x->dtype, x->device());
        conv_input_grad_into(y, xc, contiguous(weight), w);
        if (bias && y->numel()) binary_(BinaryOp::Add, y, view(bias, {Cout, 1, 1}));
        return y;
    };
    return autograd::record_op<ConvTranspose2dBackward>(
        {&x, &weight, &bias}, forward, [&](ConvTranspose2dBackward& n, const Tensor&) {
            n.w = w;
            if (weight->requires_grad) n.input = autograd::save(n, xc);
            if (x->requires_grad) n.weight = autograd::save(n, weight);
            n.has_saved = true;
        });
}

namespace {

// The sliding-block geometry of F.unfold / F.fold over a (N, C, H, W) image.
Window2d block_window(const char* op, int64_t N, int64_t C, int64_t H, int64_t W, std::array<int64_t, 2> k,
                      std::array<int64_t, 2> dil, std::array<int64_t, 2> pad, std::array<int64_t, 2> stride)
{
    MT_CHECK(k[0] > 0 && k[1] > 0, op, ": kernel_size must be positive, got (", k[0], ", ", k[1], ")");
    check_params(op, stride, pad, dil);
    Window2d w;
    w.N = N, w.C = C, w.H = H, w.W = W, w.KH = k[0], w.KW = k[1];
    w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1];
    w.dil_h = dil[0], w.dil_w = dil[1];
    w.OH = window_out_size(H, w.KH, w.stride_h, w.pad_h, w.dil_h);
    w.OW = window_out_size(W, w.KW, w.stride_w, w.pad_w, w.dil_w);
    MT_CHECK_RUNTIME(w.OH > 0 && w.OW > 0, op, ": spatial size (", H, ", ", W, ") with kernel_size (", k[0], ", ", k[1],
                     "), dilation (", dil[0], ", ", dil[1], "), padding (", pad[0], ", ", pad[1], ") and stride (",
                     stride[0], ", ", stride[1], ") gives (", w.OH, ", ", w.OW,
                     ") sliding blocks, but each must be at least one");
    return w;
}

}  // namespace

Tensor im2col(const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> dil, std::array<int64_t, 2> pad,
              std::array<int64_t, 2> stride)
{
    MT_PROFILE_OP("im2col", x);
    MT_CHECK(x->dim() == 4, "unfold: expected a 4-D input (N, C, H, W), got shape ", x->shape);
    MT_CHECK_TYPE(is_floating(x->dtype), "unfold: expected a floating input, got ", x->dtype);
    const Window2d w = block_window("unfold", x->shape[0], x->shape[1], x->shape[2], x->shape[3], k, dil, pad, stride);
    auto forward = [&] {
        Tensor cols = empty({w.N, w.C * w.KH * w.KW, w.OH * w.OW}, x->dtype, x->device());
        if (cols->numel()) kernels(x->device()).im2col(cols, contiguous(x), w);
        return cols;
    };
    return autograd::record_op<Im2ColBackward>({&x}, forward, [&](Im2ColBackward& n, const Tensor&) { n.w = w; });
}

Tensor col2im(const Tensor& cols, std::array<int64_t, 2> output_size, std::array<int64_t, 2> k,
              std::array<int64_t, 2> dil, std::array<int64_t, 2> pad, std::array<int64_t, 2> stride)
{
    MT_PROFILE_OP("col2im", cols);
    MT_CHECK(cols->dim() == 3, "fold: expected a 3-D input (N, C*KH*KW, L), got shape ", cols->shape);
    MT_CHECK_TYPE(is_floating(cols->dtype), "fold: expected a floating input, got ", cols->dtype);
    MT_CHECK(k[0] > 0 && k[1] > 0, "fold: kernel_size must be positive, got (", k[0], ", ", k[1], ")");
    MT_CHECK_RUNTIME(cols->shape[1] % (k[0] * k[1]) == 0, "fold: expected size of input's dimension 1 to be divisible "
                     "by the product of kernel_size, but got input.size(1)=", cols->shape[1], " and kernel_size=(",
                     k[0], ", ", k[1], ")");
    const Window2d w = block_window("fold", cols->shape[0], cols->shape[1] / (k[0] * k[1]), output_size[0],
                                    output_size[1], k, dil, pad, stride);
    MT_CHECK_RUNTIME(cols->shape[2] == w.OH * w.OW, "fold: output_size=(", output_size[0], ", ", output_size[1],
                     "), kernel_size=(", k[0], ", ", k[1], "), dilation=(", dil[0], ", ", dil[1], "), padding=(",
                     pad[0], ", ", pad[1], "), stride=(", stride[0], ", ", stride[1], ") give ", w.OH, " * ", w.OW,
                     " = ", w.OH * w.OW, " sliding blocks, but input.size(2)=", cols->shape[2]);
    auto forward = [&] {
        Tensor out = zeros({w.N, w.C, w.H, w.W}, cols->dtype, cols->device());
        if (out->numel() && cols->numel()) kernels(cols->device()).col2im(out, contiguous(cols), w);
        return out;
    };
    return autograd::record_op<Col2ImBackward>({&cols}, forward, [&](Col2ImBackward& n, const Tensor&) { n.w = w; });
}

std::tuple<Tensor, Tensor> max_pool2d(const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                                      std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode)
{
    MT_PROFILE_OP("max_pool2d", x);
    Window2d w = pool_window("max_pool2d", x, k, stride, pad, dil, ceil_mode);
    auto forward = [&] {
        Tensor xc = contiguous(x);
        Tensor out = empty({w.N, w.C, w.OH, w.OW}, x->dtype, x->device());
        Tensor idx = empty({w.N, w.C, w.OH, w.OW}, DType::Int64, x->device());
        if (out->numel()) kernels(x->device()).max_pool2d(out, idx, xc, w);
        return std::tuple<Tensor, Tensor>{out, idx};
    };
    return autograd::record_op<MaxPool2dBackward>(
        {&x}, forward, [&](MaxPool2dBackward& n, const std::tuple<Tensor, Tensor>& result) {
            n.indices = autograd::save(n, std::get<1>(result));  // the caller may get idx back and change it
            n.w = w;
        });
}

Tensor avg_pool2d(const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                  bool ceil_mode)
{
    MT_PROFILE_OP("avg_pool2d", x);
    Window2d w = pool_window("avg_pool2d", x, k, stride, pad, {1, 1}, ceil_mode);
    auto forward = [&] {
        Tensor out = empty({w.N, w.C, w.OH, w.OW}, x->dtype, x->device());
        if (out->numel()) kernels(x->device()).avg_pool2d(out, contiguous(x), w);
        return out;
    };
    return autograd::record_op<AvgPool2dBackward>({&x}, forward, [&](AvgPool2dBackward& n, const Tensor&) {
        n.w = w;
        n.ceil_mode = ceil_mode;
    });
}

}  // namespace minitorch
