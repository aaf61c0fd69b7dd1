// conv.cpp — conv2d as im2col + GEMMs, and max/avg pooling, with their backward.
//
// Per sample n, with cols[n] = im2col(x[n]) of shape (C*KH*KW, OH*OW) and W seen as a
// (O, C*KH*KW) matrix:
//   forward:  y[n] = W @ cols[n] (+ b)               (O, OH*OW): y's own NCHW layout
//   backward: dW = sum over n of G[n] @ cols[n]^T,   db = sum of G over n and pixels,
//             dx[n] = col2im(W^T @ G[n])             (G[n]: the gradient of y[n])
// The batch is walked in chunks of samples with one reused column buffer, so memory
// stays bounded whatever the batch; W^T and cols^T are transposed views (BLAS flags).
// The columns are not saved for backward: x is, and backward runs im2col again.
// On a GPU with cuDNN (backends.cudnn.enabled, the default) cuDNN's own algorithms run
// instead (cuda/cudnn_conv.cu); im2col stays the path to read, and the fallback.
// conv1d is conv2d with H = 1 (see python/minitorch/nn/functional.py).
#include <algorithm>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, bool ceil_mode = false)
{
    int64_t span = in + 2 * pad - dil * (k - 1) - 1;
    if (span < 0) return 0;
    int64_t o = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // ceil_mode: the last window must start inside the input or left padding
    if (ceil_mode && (o - 1) * stride >= in + pad) --o;
    return o;
}

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

// How a conv2d walks its batch: chunks of `chunk` samples, one column buffer each.
struct ConvPlan {
    Window2d w;
    int64_t O = 0, patch = 0, pixels = 0;  // out channels, C*KH*KW, OH*OW
    int64_t chunk = 1;
    // A 1x1 kernel with stride 1 and no padding needs no im2col: x[n] is already its
    // own columns, (C, H*W).
    bool direct = false;

    ConvPlan(const Window2d& window, int64_t out_channels, DType dtype, Device device)
        : w(window), O(out_channels), patch(window.C * window.KH * window.KW), pixels(window.OH * window.OW)
    {
        direct = w.KH == 1 && w.KW == 1 && w.stride_h == 1 && w.stride_w == 1 && w.pad_h == 0 && w.pad_w == 0;
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
    // or its transpose (patch, O) as a view.
    Tensor weights(const Tensor& wc, int64_t m, bool transposed) const
    {
        return transposed ? make_view(wc, {m, patch, O}, {0, 1, patch}, wc->offset)
                          : make_view(wc, {m, O, patch}, {0, patch, 1}, wc->offset);
    }
};

// conv2d written with ordinary ops, for its double backward (create_graph): the padded
// input by cat, its columns (im2col) by one index_select of each window's positions in
// the padded plane, then one matmul with W as a (O, C*KH*KW) matrix.
Tensor conv2d_ops(const Tensor& x, const Tensor& weight, const Tensor& bias, const Window2d& w)
{
    const Device dev = x->device();
    const int64_t O = weight->shape[0], Hp = w.H + 2 * w.pad_h, Wp = w.W + 2 * w.pad_w;
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
        return reshape(binary(BinaryOp::Mul, a, scalar_tensor(Scalar(step), dev)), s);
    };
    // (KH, KW, OH, OW): where each window element sits in the padded plane
    Tensor idx = binary(BinaryOp::Add,
                        binary(BinaryOp::Add, axis(w.KH, w.dil_h * Wp, 0), axis(w.KW, w.dil_w, 1)),
                        binary(BinaryOp::Add, axis(w.OH, w.stride_h * Wp, 2), axis(w.OW, w.stride_w, 3)));
    Tensor cols = index_select(reshape(xp, {w.N, w.C, Hp * Wp}), 2, reshape(contiguous(idx), {idx->numel()}));
    cols = reshape(cols, {w.N, w.C * w.KH * w.KW, w.OH * w.OW});
    Tensor y = reshape(matmul(reshape(weight, {O, w.C * w.KH * w.KW}), cols), {w.N, O, w.OH, w.OW});
    if (bias) y = binary(BinaryOp::Add, y, reshape(bias, {1, O, 1, 1}));
    return y;
}

// derivative of conv2d, input input: dx[n] = col2im(W^T @ g[n]), W as a (O, C*KH*KW) matrix
// derivative of conv2d, input weight: sum over n of g[n] @ im2col(input[n])^T
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
        const Shape& ws = input_meta[1].shape;
        const ConvPlan plan(w, ws[0], dt, device);
        bool need_x = needs_input_grad(0), need_w = needs_input_grad(1);
        Tensor gx = need_x ? empty(input_meta[0].shape, dt, device) : Tensor();
        Tensor gw = need_w ? empty(ws, dt, device) : Tensor();
        const Tensor wc = need_x ? contiguous(weight) : Tensor();  // read by cuDNN or the GEMMs
        // cuDNN first where the device has it: a gradient it wrote is done.
        if (const ConvLibrary* lib = conv_library(device); lib && G->numel() && plan.patch) {
            if (need_x && lib->backward_input(gx, G, wc, w)) need_x = false;
            if (need_w && lib->backward_weight(gw, G, input, w)) need_w = false;
        }
        // The GEMMs below add into their gradients.
        if (need_x && gx->numel()) kernels(device).fill(gx, Scalar(0.0));
        if (need_w && gw->numel()) kernels(device).fill(gw, Scalar(0.0));
        if ((need_x || need_w) && G->numel() && plan.patch) {
            const auto& k = kernels(device);
            ConvGemmScope conv_gemms;  // these GEMMs follow backends.cudnn.allow_tf32
            Tensor cols = need_w ? plan.buffer(dt, device) : Tensor();
            Tensor dcols = need_x ? plan.buffer(dt, device) : Tensor();
            Tensor gw_matrix = need_w ? make_view(gw, {plan.O, plan.patch}, {plan.patch, 1}, gw->offset) : Tensor();
            for (int64_t n0 = 0; n0 < w.N; n0 += plan.chunk) {
                const int64_t m = std::min(plan.chunk, w.N - n0);
                Tensor g = per_sample(G, n0, m, plan.O, plan.pixels);
                if (need_w) {
                    Tensor c = plan.columns(input, cols, n0, m);  // (m, patch, pixels)
                    Tensor c_t = make_view(c, {m, plan.pixels, plan.patch}, {plan.patch * plan.pixels, 1, plan.pixels},
                                           c->offset);
                    k.matmul(gw_matrix, g, c_t, /*sum_batches=*/true);
                }
                if (need_x) {
                    Tensor gx_m = per_sample(gx, n0, m, w.C, w.H * w.W);
                    if (plan.direct) {
                        k.matmul(gx_m, plan.weights(wc, m, true), g, false);
                    } else {
                        Tensor d = per_sample(dcols, 0, m, plan.patch, plan.pixels);
                        k.matmul(d, plan.weights(wc, m, true), g, false);
                        Window2d wm = w;
                        wm.N = m;
                        k.col2im(gx_m, d, wm);
                    }
                }
            }
        }
        Tensor gb = needs_input_grad(2) ? sum(G, {0, 2, 3}, false, std::nullopt) : Tensor();
        return {gx, gw, gb};
    }
    void release() override { input.reset(), weight.reset(); }
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
        Tensor gx = zeros(input_meta[0].shape, g[0]->dtype, input_meta[0].device);
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
        Tensor gx = zeros(input_meta[0].shape, g[0]->dtype, input_meta[0].device);
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

// Geometry of a pooling window over x (N, C, H, W); 3-D (C, H, W) input is taken as N = 1.
Window2d pool_window(const char* op, const Tensor& x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                     std::array<int64_t, 2> pad, std::array<int64_t, 2> dil, bool ceil_mode)
{
    MT_CHECK(x->dim() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", x->shape);
    MT_CHECK_TYPE(is_floating(x->dtype), op, ": expected a floating input, got ", x->dtype);
    MT_CHECK(k[0] > 0 && k[1] > 0, op, ": kernel_size must be positive, got (", k[0], ", ", k[1], ")");
    check_params(op, stride, pad, dil);
    MT_CHECK(pad[0] * 2 <= k[0] && pad[1] * 2 <= k[1], op, ": padding should be at most half of the kernel size, got "
             "padding (", pad[0], ", ", pad[1], ") for kernel (", k[0], ", ", k[1], ")");
    Window2d w;
    w.N = x->shape[0], w.C = x->shape[1], w.H = x->shape[2], w.W = x->shape[3];
    w.KH = k[0], w.KW = k[1], w.stride_h = stride[0], w.stride_w = stride[1];
    w.pad_h = pad[0], w.pad_w = pad[1], w.dil_h = dil[0], w.dil_w = dil[1];
    w.OH = out_size(w.H, w.KH, w.stride_h, w.pad_h, w.dil_h, ceil_mode);
    w.OW = out_size(w.W, w.KW, w.stride_w, w.pad_w, w.dil_w, ceil_mode);
    MT_CHECK(w.OH > 0 && w.OW > 0, op, ": kernel (", k[0], ", ", k[1], ") is larger than the padded input of shape ",
             x->shape, " (padding (", pad[0], ", ", pad[1], "))");
    return w;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::array<int64_t, 2> stride,
              std::array<int64_t, 2> pad, std::array<int64_t, 2> dil)
{
    MT_PROFILE_OP("conv2d", x, weight, bias);
    MT_CHECK(x->dim() == 4, "conv2d: expected a 4-D input (N, C, H, W), got shape ", x->shape);
    MT_CHECK(weight->dim() == 4, "conv2d: expected a 4-D weight (out_channels, in_channels, KH, KW), got shape ",
             weight->shape);
    MT_CHECK_TYPE(is_floating(x->dtype), "conv2d: expected a floating input, got ", x->dtype);
    check_layer_dtypes("conv2d", x, weight, bias);
    check_same_device("conv2d", x, weight);
    if (bias) check_same_device("conv2d", x, bias);
    MT_CHECK(x->shape[1] == weight->shape[1], "conv2d: input of shape ", x->shape, " has ", x->shape[1],
             " channels, but weight of shape ", weight->shape, " expects ", weight->shape[1], " input channels");
    if (bias)
        MT_CHECK(bias->dim() == 1 && bias->shape[0] == weight->shape[0], "conv2d: bias of shape ", bias->shape,
                 " does not match ", weight->shape[0], " output channels");
    check_params("conv2d", stride, pad, dil);

    Window2d w;
    w.N = x->shape[0], w.C = x->shape[1], w.H = x->shape[2], w.W = x->shape[3];
    w.KH = weight->shape[2], w.KW = weight->shape[3];
    w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1], w.dil_h = dil[0], w.dil_w = dil[1];
    MT_CHECK(w.H + 2 * w.pad_h >= w.dil_h * (w.KH - 1) + 1 && w.W + 2 * w.pad_w >= w.dil_w * (w.KW - 1) + 1,
             "conv2d: kernel of size (", w.KH, ", ", w.KW, ") (dilation (", w.dil_h, ", ", w.dil_w,
             ")) is larger than the padded input of size (", w.H + 2 * w.pad_h, ", ", w.W + 2 * w.pad_w,
             ") for input shape ", x->shape);
    w.OH = out_size(w.H, w.KH, w.stride_h, w.pad_h, w.dil_h);
    w.OW = out_size(w.W, w.KW, w.stride_w, w.pad_w, w.dil_w);
    const int64_t O = weight->shape[0];

    Tensor xc;  // set by forward; weight's gradient reads it
    auto forward = [&] {
        const Device device = x->device();
        const ConvPlan plan(w, O, x->dtype, device);
        xc = contiguous(x);
        Tensor y = empty({w.N, O, w.OH, w.OW}, x->dtype, device);
        if (!y->numel()) return y;
        const auto& k = kernels(device);
        const Tensor wc = contiguous(weight);  // read by cuDNN or the GEMMs
        if (!plan.patch) {
            k.fill(y, Scalar(0.0));  // no input channels: a sum of nothing
        } else if (const ConvLibrary* lib = conv_library(device); lib && lib->forward(y, xc, wc, w)) {
            // cuDNN did it
        } else {
            Tensor cols = plan.buffer(x->dtype, device);
            ConvGemmScope conv_gemms;  // these GEMMs follow backends.cudnn.allow_tf32
            for (int64_t n0 = 0; n0 < w.N; n0 += plan.chunk) {
                const int64_t m = std::min(plan.chunk, w.N - n0);
                k.matmul(per_sample(y, n0, m, O, plan.pixels), plan.weights(wc, m, false),
                         plan.columns(xc, cols, n0, m), false);
            }
        }
        if (bias) binary_(BinaryOp::Add, y, view(bias, {O, 1, 1}));
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
