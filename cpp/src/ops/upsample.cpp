// upsample.cpp — F.interpolate / nn.Upsample on (N, C, H, W) input in the modes nearest,
// nearest-exact and bilinear: one kernel forward (upsample2d), one backward
// (upsample2d_backward), where composing index_select, mul and add took up to a dozen.
// The index rule is minitorch/upsample_math.h's (PyTorch's); the other modes and ranks stay
// composed in python/minitorch/nn/_sampling_functional.py, which is also the reference the
// tests compare this op with.
//
// The forward is linear in x: y = A x for a fixed sparse A. Its backward is A^T g, linear in
// g, so the backward's own gradient (double backward) is A gg: the forward again.
#include "minitorch/autograd.h"
#include "minitorch/kernel_work.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

// PyTorch's node names: UpsampleBilinear2DBackward0, and UpsampleBilinear2DBackwardBackward0
// for the backward's own.
std::string node_name(UpsampleMode mode, bool of_backward)
{
    const char* kind = mode == UpsampleMode::Nearest        ? "Nearest"
                       : mode == UpsampleMode::NearestExact ? "NearestExact"
                                                            : "Bilinear";
    return std::string("Upsample") + kind + (of_backward ? "2DBackwardBackward0" : "2DBackward0");
}

Tensor upsample_forward(const Tensor& x, const Upsample2d& s)
{
    Tensor out = empty({s.N, s.C, s.OH, s.OW}, x->dtype, x->device());
    if (out->numel()) kernels(x->device()).upsample2d(out, contiguous(x), s);
    return out;
}

// derivative of upsample2d_backward, input grad_output: upsample2d(gg) with the same sizes and mode
struct Upsample2dBackwardBackward : Node {
    Upsample2d s;
    std::string name() const override { return node_name(s.mode, true); }
    std::vector<Tensor> apply(std::vector<Tensor>& gg) override;
};

// derivative of upsample2d, input input: each output pixel's gradient back to the input pixels its taps read, times the tap weights
struct Upsample2dBackward : Node {
    Upsample2d s;
    std::string name() const override { return node_name(s.mode, false); }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        Tensor gx = empty(input_meta[0].shape, g[0]->dtype, input_meta[0].device);  // the kernel writes every element
        if (gx->numel()) kernels(gx->device()).upsample2d_backward(gx, contiguous(g[0]), s);
        if (autograd::needs_grad(g[0])) {  // create_graph, and g has a graph
            auto n = std::make_shared<Upsample2dBackwardBackward>();
            n->s = s;
            autograd::record(n, {&g[0]}, {&gx});
        }
        return {gx};
    }
};

Tensor upsample_op(const Tensor& x, const Upsample2d& s)
{
    return autograd::record_op<Upsample2dBackward>({&x}, [&] { return upsample_forward(x, s); },
                                                   [&](Upsample2dBackward& n, const Tensor&) { n.s = s; });
}

std::vector<Tensor> Upsample2dBackwardBackward::apply(std::vector<Tensor>& gg) { return {upsample_op(gg[0], s)}; }

}  // namespace

Tensor upsample2d(const Tensor& x, std::array<int64_t, 2> size, const std::string& mode, bool align_corners,
                  std::array<double, 2> scales)
{
    MT_PROFILE_OP("upsample2d", x);
    MT_CHECK(x->dim() == 4, "upsample2d: expected a 4-D (N, C, H, W) input, got ", x->dim(), "-D");
    MT_CHECK_TYPE(is_floating(x->dtype), "upsample2d: expected a floating-point input, got ", x->dtype);
    Upsample2d s;
    if (mode == "nearest") s.mode = UpsampleMode::Nearest;
    else if (mode == "nearest-exact") s.mode = UpsampleMode::NearestExact;
    else if (mode == "bilinear") s.mode = UpsampleMode::Bilinear;
    else MT_CHECK(false, "upsample2d: mode must be nearest, nearest-exact or bilinear, got '", mode, "'");
    s.N = x->size(0), s.C = x->size(1), s.H = x->size(2), s.W = x->size(3);
    s.OH = size[0], s.OW = size[1];
    MT_CHECK(s.H > 0 && s.W > 0 && s.OH > 0 && s.OW > 0,
             "upsample2d: input and output sizes should be greater than 0, but got input (spatial) size (", s.H,
             ", ", s.W, ") and output size (", s.OH, ", ", s.OW, ")");
    s.align_corners = align_corners && s.mode == UpsampleMode::Bilinear;
    s.scale_h = scales[0] > 0 ? scales[0] : 0.0;
    s.scale_w = scales[1] > 0 ? scales[1] : 0.0;
    return upsample_op(x, s);
}

}  // namespace minitorch
