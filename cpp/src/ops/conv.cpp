// conv.cpp — conv2d as im2col + one GEMM, and max/avg pooling, with their backward.
//
//   forward:  cols = im2col(x)                     (C*KH*KW, N*OH*OW)
//             Y = W @ cols (+ b)                   (O, N*OH*OW)  -> (N, O, OH, OW)
//   backward: G = grad as (O, N*OH*OW)
//             dW = G @ cols^T,  db = sum over G's columns,  dx = col2im(W^T @ G)
// conv1d is conv2d with H = 1 (see python/minitorch/nn/functional.py).
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

Tensor channels_first(const Tensor& g)  // (N, O, OH, OW) -> (O, N*OH*OW)
{
    Tensor p = contiguous(permute(g, {1, 0, 2, 3}));
    return view(p, {p->shape[0], p->numel() / std::max<int64_t>(p->shape[0], 1)});
}

// derivative of conv2d, input input: col2im(W^T @ g), W as a (O, C*KH*KW) matrix and g as (O, N*OH*OW)
// derivative of conv2d, input weight: g @ cols^T, cols = im2col(input)
// derivative of conv2d, input bias: sum of g over batch and pixels
struct Conv2dBackward : Node {
    Tensor cols, weight;
    Window2d w;
    std::string name() const override { return "ConvolutionBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        Tensor G = channels_first(grads[0]);  // (O, N*OH*OW)
        const Shape& ws = input_meta[1].shape;
        Tensor gx, gw, gb;
        if (needs_input_grad(0)) {
            Tensor wm = view(contiguous(weight), {ws[0], ws[1] * ws[2] * ws[3]});
            Tensor dcols = contiguous(matmul(transpose(wm, 0, 1), G));  // (C*KH*KW, N*OH*OW)
            gx = zeros(input_meta[0].shape, G->dtype, input_meta[0].device);
            kernels(gx->device()).col2im(gx, dcols, w);
        }
        if (needs_input_grad(1)) gw = reshape(matmul(G, transpose(cols, 0, 1)), ws);
        if (needs_input_grad(2)) gb = sum(G, {1}, false, std::nullopt);
        return {gx, gw, gb};
    }
    void release() override { cols.reset(), weight.reset(); }
};

// derivative of max_pool2d, input input: g added at the position that won each window (the saved indices)
struct MaxPool2dBackward : Node {
    Tensor indices;
    Window2d w;
    std::string name() const override { return "MaxPool2DWithIndicesBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx = zeros(input_meta[0].shape, g[0]->dtype, input_meta[0].device);
        kernels(gx->device()).max_pool2d_backward(gx, contiguous(g[0]), indices, w);
        return {gx};
    }
    void release() override { indices.reset(); }
};

// derivative of avg_pool2d, input input: g / window size, spread over each window
struct AvgPool2dBackward : Node {
    Window2d w;
    std::string name() const override { return "AvgPool2DBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx = zeros(input_meta[0].shape, g[0]->dtype, input_meta[0].device);
        kernels(gx->device()).avg_pool2d_backward(gx, contiguous(g[0]), w);
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
    const int64_t O = weight->shape[0], patch = w.C * w.KH * w.KW;

    Tensor cols;  // set by forward; weight's gradient reads it
    auto forward = [&] {
        Tensor xc = contiguous(x);
        cols = empty({patch, w.N * w.OH * w.OW}, x->dtype, x->device());
        if (cols->numel()) kernels(x->device()).im2col(cols, xc, w);
        Tensor y = matmul(view(contiguous(weight), {O, patch}), cols);  // (O, N*OH*OW)
        if (bias) binary_(BinaryOp::Add, y, unsqueeze(bias, 1));
        return contiguous(permute(view(y, {O, w.N, w.OH, w.OW}), {1, 0, 2, 3}));
    };
    // A missing bias is a null input: no edge, needs_input_grad(2) is false.
    return autograd::record_op<Conv2dBackward>({&x, &weight, &bias}, forward, [&](Conv2dBackward& n, const Tensor&) {
        n.w = w;
        if (weight->requires_grad) n.cols = cols;
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
    return autograd::record_op<AvgPool2dBackward>({&x}, forward, [&](AvgPool2dBackward& n, const Tensor&) { n.w = w; });
}

}  // namespace minitorch
