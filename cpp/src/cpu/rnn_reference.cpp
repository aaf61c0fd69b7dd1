// rnn_reference.cpp — a reference RnnLibrary (kernels.h): the contract of cuDNN's recurrent
// layers (cuda/cudnn_rnn.cu) kept with minitorch's own layer ops, so that cudnn_rnn_layer
// (ops/rnn.cpp), its graph node and nn's library path run, and are tested, on a machine
// without a GPU. It is never registered on its own: tests register it for the CPU through
// _C._set_reference_rnn_library. Like cuDNN it hands back the weights' gradients as views
// of one flat buffer, and it declines a case (bfloat16, which some cuDNN versions decline),
// so that the fallback to the layers' own ops is tested too.
#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// What the forward keeps: leaf aliases of its inputs and the outputs computed from them,
// with their graph; the backward runs that graph.
struct Saved : RnnSaved {
    std::vector<Tensor> leaves;   // x, hx, cx (null but for an LSTM), the weights
    std::vector<Tensor> outputs;  // y, hy and (LSTM) cy
};

// While one lives, grad mode is `on` (the caller runs the library under no_grad).
struct GradMode {
    bool prev;
    explicit GradMode(bool on) : prev(autograd::is_grad_enabled()) { autograd::set_grad_enabled(on); }
    ~GradMode() { autograd::set_grad_enabled(prev); }
    GradMode(const GradMode&) = delete;
    GradMode& operator=(const GradMode&) = delete;
};

// The layer from in = {x, hx, cx, weights...}, each direction with the ops nn's layers use
// (input projection + lstm_layer / gru_layer / rnn_layer): {y, hy, cy or null}.
std::vector<Tensor> run(const RnnShape& s, const std::vector<Tensor>& in)
{
    const size_t per = s.bias ? 4 : 2;
    std::vector<Tensor> ys, hs, cs;
    for (int64_t d = 0; d < s.directions(); ++d) {
        const Tensor& w_ih = in[3 + d * per];
        const Tensor& w_hh = in[4 + d * per];
        const Tensor b_ih = s.bias ? in[5 + d * per] : nullptr, b_hh = s.bias ? in[6 + d * per] : nullptr;
        const bool reverse = d == 1;
        const Tensor h0 = select(in[1], 0, d);
        Tensor xw = matmul(in[0], transpose(w_ih, 0, 1));
        if (b_ih) xw = binary(BinaryOp::Add, xw, b_ih);
        if (s.mode == RnnMode::Gru) {
            auto [out, h] = gru_layer(xw, h0, w_hh, b_hh, reverse);
            ys.push_back(out), hs.push_back(h);
            continue;
        }
        if (b_hh) xw = binary(BinaryOp::Add, xw, b_hh);
        if (s.mode == RnnMode::Lstm) {
            auto [out, h, c] = lstm_layer(xw, h0, select(in[2], 0, d), w_hh, reverse);
            ys.push_back(out), hs.push_back(h), cs.push_back(c);
        } else {
            auto [out, h] = rnn_layer(xw, h0, w_hh, s.mode == RnnMode::RnnRelu, reverse);
            ys.push_back(out), hs.push_back(h);
        }
    }
    return {cat(ys, 2), stack(hs, 0), cs.empty() ? nullptr : stack(cs, 0)};
}

std::shared_ptr<RnnSaved> forward(const RnnShape& s, const Tensor& y, const Tensor& hy, const Tensor& cy,
                                  const Tensor& x, const Tensor& hx, const Tensor& cx,
                                  const std::vector<Tensor>& weights, bool training)
{
    if (s.dtype == DType::BFloat16) return nullptr;  // declined: the layer runs its own ops
    auto saved = std::make_shared<Saved>();
    std::vector<Tensor> in{x, hx, cx};
    in.insert(in.end(), weights.begin(), weights.end());
    for (Tensor& t : in)
        if (t) {
            t = make_alias(t);  // a leaf of the graph below, apart from the caller's
            t->requires_grad = training;
        }
    {
        GradMode mode(training);
        saved->outputs = run(s, in);
    }
    copy_(y, saved->outputs[0]);
    copy_(hy, saved->outputs[1]);
    if (cy) copy_(cy, saved->outputs[2]);
    saved->leaves = std::move(in);
    return saved;
}

std::vector<Tensor> backward(const RnnShape& s, RnnSaved& base, const Tensor& dx, const Tensor& dhx, const Tensor& dcx,
                             const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor& dy,
                             const Tensor& dhy, const Tensor& dcy, bool weights_needed)
{
    Saved& saved = static_cast<Saved&>(base);
    std::vector<Tensor> roots{saved.outputs[0], saved.outputs[1]}, grads{dy, dhy};
    if (s.mode == RnnMode::Lstm) roots.push_back(saved.outputs[2]), grads.push_back(dcy);
    std::vector<Tensor> inputs;
    for (const Tensor& t : saved.leaves)
        if (t) inputs.push_back(t);
    // retain_graph: the outer node may run twice (backward(retain_graph=True)), as cuDNN's can;
    // the inner graph goes when the node releases its saved state.
    std::vector<Tensor> g = autograd::run_backward(roots, grads, true, &inputs, true);
    size_t k = 0;
    auto write = [&](const Tensor& dst) {  // the next gradient into dst (zeros when unused)
        const Tensor& src = g[k++];
        if (src) copy_(dst, src);
        else copy_(dst, zeros({}, dst->dtype, dst->device()));
    };
    write(dx);
    write(dhx);
    if (s.mode == RnnMode::Lstm) write(dcx);
    if (!weights_needed) return {};
    // One flat buffer, as cuDNN's weight space: the gradients are views of it.
    int64_t total = 0;
    for (size_t i = k; i < inputs.size(); ++i) total += inputs[i]->numel();
    const Tensor flat = zeros({total}, s.dtype, dx->device());
    std::vector<Tensor> out;
    int64_t offset = 0;
    for (size_t i = k; i < inputs.size(); ++i) {
        const Shape& shape = inputs[i]->shape;
        Tensor view = as_strided(flat, shape, contiguous_strides(shape), offset);
        if (g[i]) copy_(view, g[i]);
        out.push_back(view);
        offset += inputs[i]->numel();
    }
    return out;
}

}  // namespace

const RnnLibrary* reference_rnn_library()
{
    static const RnnLibrary lib{&forward, &backward};
    return &lib;
}

}  // namespace minitorch
