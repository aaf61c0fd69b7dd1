// rnn.cpp — the recurrent ops, each one graph node:
//   lstm_cell    one LSTM step: gates, c and h from the gate pre-activations, one kernel
//                each way (kernels lstm_cell, lstm_cell_backward; formulas in rnn_math.h)
//   lstm_layer   a whole LSTM layer over a sequence, given its input projection
//                xw = x W_ih^T + b for every step at once (nn.LSTM computes it with one GEMM)
//   gru_layer    the same for a GRU layer (nn.GRU), with the cell kernels gru_cell and
//                gru_cell_backward; b_hh goes to the cell kernel, as b_hn must stay inside
//                r * (h W_hn^T + b_hn)
//   rnn_layer    the same for an Elman layer (nn.RNN, tanh or relu): no cell kernel of its
//                own, as h' = act(xw + h W_hh^T) is a GEMM that adds into xw's step (the
//                matmul kernel's accumulate) and one map; its backward is one zip
//                (_tanh_backward or _threshold_backward) and one accumulating GEMM per step
//   cudnn_rnn_layer  a whole layer of any of the three, both directions, on the device's
//                RnnLibrary (cuDNN's RNN API on a GPU, cuda/cudnn_rnn.cu), as PyTorch runs
//                its RNNs on a GPU; nn's layers try it first and fall back to the ops above
//
// Why a whole layer is one op: written step by step, autograd records a matmul node and a
// cell node per step, and backward then runs, per step, the cell's backward, two GEMMs (dh
// and dW_hh), an add accumulating dW_hh and one joining the two gradients that reach h. The
// layer's own backward knows the structure:
//   - the step's dh = (gradient from the output at t) + (gradient from step t+1) is added
//     inside the cell's backward kernel (its second dh input), and the forward's
//     xw[t] + h W_hh^T inside the cell's forward kernel (its second gates input);
//   - dW_hh = sum over t of dgates[t]^T h[t-1] is ONE GEMM over all steps at the end:
//     dgates of every step are stacked (T N, 4H) and the previous hidden states are one
//     contiguous (T N, H) block of the buffer the forward wrote them into;
//   - the gradient of xw is dgates itself (no copy).
// So per step: forward one GEMM and one cell kernel, backward one cell kernel and one GEMM.
// (cuDNN's RNN API goes further: the whole recurrence in a few persistent kernels.)

#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

using autograd::Node;

// derivative of lstm_cell, input gates: see rnn_math.h (di = dc_total * g * i(1-i), df = dc_total * c_prev * f(1-f), dg = dc_total * i(1-g^2), do = dh * tanh(c) * o(1-o); dc_total = dc + dh * o * (1 - tanh(c)^2))
// derivative of lstm_cell, input c_prev: dc_total * f
struct LstmCellBackward : Node {
    Tensor act, c_prev, c;
    std::string name() const override { return "LstmCellBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Device dev = c->device();
        Tensor dh = contiguous(grads[0]), dc = contiguous(grads[1]);
        Tensor dg = empty(act->shape, act->dtype, dev);
        Tensor dcp = needs_input_grad(1) ? empty(c->shape, c->dtype, dev) : nullptr;
        if (c->numel()) kernels(dev).lstm_cell_backward(dg, dcp, dh, nullptr, dc, act, c_prev, c);
        return {needs_input_grad(0) ? dg : nullptr, dcp};
    }
    void release() override { act.reset(), c_prev.reset(), c.reset(); }
};

// Where lstm_layer and gru_layer keep the states. Step k runs time t = k (forward) or T-1-k (reverse).
//   hs (T+1, N, H): h at time t in slot t+1 (forward) or t (reverse); h0 in slot 0 (forward)
//                   or T (reverse). So the output is slots [1, T+1) or [0, T), and the
//                   states each step reads, h[t-1] (h[t+1] reversed), are slots [0, T) or
//                   [1, T+1): both one contiguous block.
//   cs (T, N, H):   the LSTM's c at time t in slot t; c0 is kept apart.
struct RnnSlots {
    int64_t T;
    bool reverse;
    int64_t time(int64_t k) const { return reverse ? T - 1 - k : k; }
    int64_t h_out(int64_t t) const { return reverse ? t : t + 1; }
    int64_t h_prev(int64_t t) const { return reverse ? t + 1 : t; }
    int64_t h0() const { return reverse ? T : 0; }
    // The outputs h[0..T-1] in time order, and the states the steps read, as (T, N, H) views of hs.
    Tensor outputs(const Tensor& hs) const { return slice(hs, 0, reverse ? 0 : 1, reverse ? T : T + 1, 1); }
    Tensor prevs(const Tensor& hs) const { return slice(hs, 0, reverse ? 1 : 0, reverse ? T + 1 : T, 1); }
    int64_t c_prev(int64_t t) const { return reverse ? t + 1 : t - 1; }  // for k > 0
};

// The forward loop of the layers: h0 into its slot of hs (N, H > 0), then per step k (time t)
// step(k, t, h_prev, w_t): the step's GEMM h[prev] W_hh^T and the layer's cell. W_hh^T is a
// view: cuBLAS reads it transposed, no copy. Runs under no_grad: the GEMMs are the node's own work.
template <class Step>
void run_steps(const RnnSlots& slot, const Tensor& hs, const Tensor& h0, const Tensor& w_hh, Step&& step)
{
    autograd::NoGradGuard guard;
    copy_(select(hs, 0, slot.h0()), h0);
    const Tensor w_t = transpose(w_hh, 0, 1);
    for (int64_t k = 0; k < slot.T; ++k) {
        const int64_t t = slot.time(k);
        step(k, t, select(hs, 0, slot.h_prev(t)), w_t);
    }
}

// derivative of lstm_layer, input xw: dgates of every step, stacked (each step's from rnn_math.h, with dh = dy[t] + dgates[next] W_hh and dc carried from the next step)
// derivative of lstm_layer, input h0: dgates[first step] W_hh
// derivative of lstm_layer, input c0: dc_total * f at the first step
// derivative of lstm_layer, input w_hh: sum over steps of dgates[t]^T h[t-1], one GEMM over the stacked steps
struct LstmLayerBackward : Node {
    Tensor act, hs, cs, c0, w_hh;
    bool reverse = false;
    std::string name() const override { return "LstmLayerBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const int64_t T = act->shape[0], N = act->shape[1], H4 = act->shape[2], H = H4 / 4;
        const Device dev = act->device();
        const RnnSlots slot{T, reverse};
        Tensor dy = contiguous(grads[0]), dh = contiguous(grads[1]);
        Tensor dc = clone(grads[2]);  // carried from step to step, updated in place by the kernel
        Tensor dgates = empty(act->shape, act->dtype, dev);
        Tensor dh0, dw;
        if (N * H > 0) {
            for (int64_t k = T - 1; k >= 0; --k) {
                const int64_t t = slot.time(k);
                const Tensor c_prev = k == 0 ? c0 : select(cs, 0, slot.c_prev(t));
                const Tensor dg = select(dgates, 0, t);
                kernels(dev).lstm_cell_backward(dg, dc, select(dy, 0, t), dh, dc, select(act, 0, t), c_prev,
                                                select(cs, 0, t));
                if (k > 0 || needs_input_grad(1)) dh = matmul(dg, w_hh);  // what reaches h[t-1] through W_hh
            }
            dh0 = dh;
            if (needs_input_grad(3)) {
                dw = matmul(transpose(reshape(dgates, {T * N, H4}), 0, 1), reshape(slot.prevs(hs), {T * N, H}));
            }
        } else {
            dh0 = zeros({N, H}, act->dtype, dev);
            dw = zeros(w_hh->shape, w_hh->dtype, dev);
        }
        return {needs_input_grad(0) ? dgates : nullptr, needs_input_grad(1) ? dh0 : nullptr,
                needs_input_grad(2) ? dc : nullptr, needs_input_grad(3) ? dw : nullptr};
    }
    void release() override { act.reset(), hs.reset(), cs.reset(), c0.reset(), w_hh.reset(); }
};

// derivative of gru_layer, input xw: (dr, dz, dn) of every step, stacked (rnn_math.h; each step's dh' = dy[t] + dhw[next] W_hh + dh' z from the next step)
// derivative of gru_layer, input h0: dhw[first step] W_hh + dh' z at the first step
// derivative of gru_layer, input w_hh: sum over steps of dhw[t]^T h[t-1], one GEMM over the stacked steps (dhw = (dr, dz, dn r))
// derivative of gru_layer, input b_hh: sum of dhw over steps and samples
struct GruLayerBackward : Node {
    Tensor act, hs, w_hh;
    bool reverse = false;
    std::string name() const override { return "GruLayerBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const int64_t T = act->shape[0], N = act->shape[1], H = act->shape[2] / 4;
        const Device dev = act->device();
        const DType dt = act->dtype;
        const RnnSlots slot{T, reverse};
        Tensor dy = contiguous(grads[0]);
        Tensor dh = contiguous(grads[1]);       // what reaches h through W_hh (first: h_n's gradient)
        Tensor direct = empty({N, H}, dt, dev);  // what reaches h directly (dh' z), updated in place
        Tensor dxw = empty({T, N, 3 * H}, dt, dev), dhw = empty({T, N, 3 * H}, dt, dev);
        Tensor dh0, dw, db;
        if (N * H > 0) {
            for (int64_t k = T - 1; k >= 0; --k) {
                const int64_t t = slot.time(k);
                const Tensor dhw_t = select(dhw, 0, t);
                kernels(dev).gru_cell_backward(select(dxw, 0, t), dhw_t, direct, select(dy, 0, t), dh,
                                               k == T - 1 ? nullptr : direct, select(act, 0, t),
                                               select(hs, 0, slot.h_prev(t)));
                if (k > 0 || needs_input_grad(1)) dh = matmul(dhw_t, w_hh);
            }
            if (needs_input_grad(1)) dh0 = binary(BinaryOp::Add, dh, direct);
            const Tensor rows = reshape(dhw, {T * N, 3 * H});
            if (needs_input_grad(2)) {
                dw = matmul(transpose(rows, 0, 1), reshape(slot.prevs(hs), {T * N, H}));
            }
            if (needs_input_grad(3)) db = sum(rows, {0}, false, std::nullopt);
        } else {
            dh0 = zeros({N, H}, dt, dev);
            dw = zeros(w_hh->shape, dt, dev);
            db = zeros({3 * H}, dt, dev);
        }
        return {needs_input_grad(0) ? dxw : nullptr, needs_input_grad(1) ? dh0 : nullptr,
                needs_input_grad(2) ? dw : nullptr, needs_input_grad(3) ? db : nullptr};
    }
    void release() override { act.reset(), hs.reset(), w_hh.reset(); }
};

// derivative of rnn_layer, input xw: dpre of every step, stacked: dpre[t] = (dy[t] + dpre[next] W_hh) * act'(h[t]), act' = 1 - h^2 (tanh) or h > 0 (relu)
// derivative of rnn_layer, input h0: dpre[first step] W_hh
// derivative of rnn_layer, input w_hh: sum over steps of dpre[t]^T h[t-1], one GEMM over the stacked steps
struct RnnLayerBackward : Node {
    Tensor hs, w_hh;
    bool relu = false, reverse = false;
    std::string name() const override { return "RnnLayerBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const int64_t T = hs->shape[0] - 1, N = hs->shape[1], H = hs->shape[2];
        const Device dev = hs->device();
        const DType dt = hs->dtype;
        const RnnSlots slot{T, reverse};
        const BinaryOp act_backward = relu ? BinaryOp::ThresholdBackward : BinaryOp::TanhBackward;
        // g[t]: the gradient reaching h[t], first dy[t]; the GEMM of the step after t (in the
        // walk's order) adds what comes back through W_hh, then one zip turns it, in place,
        // into dpre[t], the gradient of the pre-activation, which is also xw[t]'s.
        Tensor g = empty({T, N, H}, dt, dev);
        Tensor dh0, dw;
        if (N * H > 0) {
            copy_(g, grads[0]);
            const Tensor g_last = select(g, 0, slot.time(T - 1));
            kernels(dev).zip(BinaryOp::Add, g_last, g_last, contiguous(grads[1]));  // h_n's gradient
            for (int64_t k = T - 1; k >= 0; --k) {
                const int64_t t = slot.time(k);
                const Tensor g_t = select(g, 0, t);
                kernels(dev).zip(act_backward, g_t, g_t, select(hs, 0, slot.h_out(t)));
                if (k > 0) kernels(dev).matmul(select(g, 0, slot.time(k - 1)), g_t, w_hh, true);
            }
            if (needs_input_grad(1)) dh0 = matmul(select(g, 0, slot.time(0)), w_hh);
            if (needs_input_grad(2)) {
                dw = matmul(transpose(reshape(g, {T * N, H}), 0, 1), reshape(slot.prevs(hs), {T * N, H}));
            }
        } else {
            g = zeros({T, N, H}, dt, dev);
            dh0 = zeros({N, H}, dt, dev);
            dw = zeros(w_hh->shape, dt, dev);
        }
        return {needs_input_grad(0) ? g : nullptr, needs_input_grad(1) ? dh0 : nullptr,
                needs_input_grad(2) ? dw : nullptr};
    }
    void release() override { hs.reset(), w_hh.reset(); }
};

// The backward of cudnn_rnn_layer is the library's (cuDNN's, cuda/cudnn_rnn.cu):
// derivative of cudnn_rnn_layer, input x: cudnnRNNBackwardData_v8's dx
// derivative of cudnn_rnn_layer, input hx: cudnnRNNBackwardData_v8's dhx
// derivative of cudnn_rnn_layer, input cx: cudnnRNNBackwardData_v8's dcx
// derivative of cudnn_rnn_layer, input weights: cudnnRNNBackwardWeights_v8, added into a zeroed buffer of cuDNN's weight-space layout (after the data pass); each weight's gradient is a view of it
struct CudnnRnnBackward : Node {
    RnnShape shape;
    const RnnLibrary* library = nullptr;
    std::shared_ptr<RnnSaved> saved;  // the library's weight space and reserve space
    Tensor x, hx, cx, y;
    std::vector<Tensor> weights;  // not read (the library keeps its copy): saved so that an
                                  // in-place change before backward is reported, as elsewhere
    size_t n_weights = 0;
    std::string name() const override { return "CudnnRnnBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        const Device dev = x->device();
        const bool lstm = shape.mode == RnnMode::Lstm;
        Tensor dy = contiguous(grads[0]), dhy = contiguous(grads[1]);
        Tensor dcy = lstm ? contiguous(grads[2]) : nullptr;
        Tensor dx = empty(x->shape, x->dtype, dev), dhx = empty(hx->shape, hx->dtype, dev);
        Tensor dcx = lstm ? empty(cx->shape, cx->dtype, dev) : nullptr;
        bool weights_needed = false;
        for (size_t k = 0; k < n_weights; ++k) weights_needed = weights_needed || needs_input_grad(3 + k);
        std::vector<Tensor> dw =
            library->backward(shape, *saved, dx, dhx, dcx, x, hx, cx, y, dy, dhy, dcy, weights_needed);
        std::vector<Tensor> out{needs_input_grad(0) ? dx : nullptr, needs_input_grad(1) ? dhx : nullptr,
                                lstm && needs_input_grad(2) ? dcx : nullptr};
        for (size_t k = 0; k < n_weights; ++k) out.push_back(weights_needed && needs_input_grad(3 + k) ? dw[k] : nullptr);
        return out;
    }
    void release() override { saved.reset(), x.reset(), hx.reset(), cx.reset(), y.reset(), weights.clear(); }
};

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& gates, const Tensor& c_prev)
{
    MT_PROFILE_OP("lstm_cell", gates, c_prev);
    MT_CHECK_TYPE(is_floating(gates->dtype) && gates->dtype == c_prev->dtype, "lstm_cell: expected gates and c of one "
                  "floating dtype, got ", gates->dtype, " and ", c_prev->dtype);
    MT_CHECK(gates->dim() == 2 && c_prev->dim() == 2 && gates->shape[0] == c_prev->shape[0] &&
                 gates->shape[1] == 4 * c_prev->shape[1],
             "lstm_cell: expected gates (N, 4H) and c (N, H), got ", gates->shape, " and ", c_prev->shape);
    check_same_device("lstm_cell", gates, c_prev);
    const Device dev = gates->device();
    Tensor g = contiguous(gates), cp = contiguous(c_prev);
    Tensor h = empty(cp->shape, cp->dtype, dev), c = empty(cp->shape, cp->dtype, dev);
    Tensor act = empty(g->shape, g->dtype, dev);
    if (h->numel()) kernels(dev).lstm_cell(h, c, act, g, nullptr, cp);
    if (autograd::needs_grad(gates, c_prev)) {
        auto node = std::make_shared<LstmCellBackward>();
        node->act = autograd::save(*node, act);
        node->c_prev = autograd::save(*node, cp);
        node->c = autograd::save(*node, c);
        autograd::record(node, std::vector<Tensor>{gates, c_prev}, {h, c});
    }
    return {h, c};
}

std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& xw, const Tensor& h0, const Tensor& c0,
                                              const Tensor& w_hh, bool reverse)
{
    MT_PROFILE_OP("lstm_layer", xw, h0, c0, w_hh);
    MT_CHECK_TYPE(is_floating(xw->dtype) && h0->dtype == xw->dtype && c0->dtype == xw->dtype &&
                      w_hh->dtype == xw->dtype,
                  "lstm_layer: expected input projection, h0, c0 and weight_hh of one floating dtype, got ", xw->dtype,
                  ", ", h0->dtype, ", ", c0->dtype, " and ", w_hh->dtype);
    MT_CHECK(xw->dim() == 3 && xw->shape[2] % 4 == 0,
             "lstm_layer: expected the input projection of shape (T, N, 4H), got ", xw->shape);
    const int64_t T = xw->shape[0], N = xw->shape[1], H4 = xw->shape[2], H = H4 / 4;
    MT_CHECK(T > 0, "lstm_layer: expected a sequence of at least one step, got input projection of shape ", xw->shape);
    MT_CHECK(h0->shape == Shape({N, H}) && c0->shape == Shape({N, H}) && w_hh->shape == Shape({H4, H}),
             "lstm_layer: with input projection of shape ", xw->shape, " expected h0 and c0 of shape (", N, ", ", H,
             ") and weight_hh of shape (", H4, ", ", H, "), got ", h0->shape, ", ", c0->shape, " and ", w_hh->shape);
    for (const Tensor* t : {&h0, &c0, &w_hh}) check_same_device("lstm_layer", xw, *t);
    const Device dev = xw->device();
    const DType dt = xw->dtype;
    const RnnSlots slot{T, reverse};
    Tensor x, c0c;
    {
        autograd::NoGradGuard guard;  // layouts only: the node below records xw and c0 themselves
        x = contiguous(xw), c0c = contiguous(c0);
    }
    const Tensor hs = empty({T + 1, N, H}, dt, dev), cs = empty({T, N, H}, dt, dev), act = empty({T, N, H4}, dt, dev);
    if (N * H > 0)
        run_steps(slot, hs, h0, w_hh, [&](int64_t k, int64_t t, const Tensor& h_prev, const Tensor& w_t) {
            const Tensor c_prev = k == 0 ? c0c : select(cs, 0, slot.c_prev(t));
            kernels(dev).lstm_cell(select(hs, 0, slot.h_out(t)), select(cs, 0, t), select(act, 0, t), select(x, 0, t),
                                   matmul(h_prev, w_t), c_prev);
        });
    const int64_t last = slot.time(T - 1);
    Tensor out = slot.outputs(hs);
    Tensor h_n = select(hs, 0, slot.h_out(last)), c_n = select(cs, 0, last);
    if (autograd::needs_grad({&xw, &h0, &c0, &w_hh})) {
        auto node = std::make_shared<LstmLayerBackward>();
        node->act = autograd::save(*node, act);
        node->hs = autograd::save(*node, hs);
        node->cs = autograd::save(*node, cs);
        node->c0 = autograd::save(*node, c0c);
        node->w_hh = autograd::save(*node, w_hh);
        node->reverse = reverse;
        autograd::record(node, std::vector<Tensor>{xw, h0, c0, w_hh}, {out, h_n, c_n});
    }
    return {out, h_n, c_n};
}

std::tuple<Tensor, Tensor> gru_layer(const Tensor& xw, const Tensor& h0, const Tensor& w_hh, const Tensor& b_hh,
                                     bool reverse)
{
    MT_PROFILE_OP("gru_layer", xw, h0, w_hh, b_hh);
    MT_CHECK_TYPE(is_floating(xw->dtype) && h0->dtype == xw->dtype && w_hh->dtype == xw->dtype &&
                      (!b_hh || b_hh->dtype == xw->dtype),
                  "gru_layer: expected input projection, h0, weight_hh and bias_hh of one floating dtype, got ",
                  xw->dtype, ", ", h0->dtype, ", ", w_hh->dtype, " and ", b_hh ? b_hh->dtype : xw->dtype);
    MT_CHECK(xw->dim() == 3 && xw->shape[2] % 3 == 0,
             "gru_layer: expected the input projection of shape (T, N, 3H), got ", xw->shape);
    const int64_t T = xw->shape[0], N = xw->shape[1], H3 = xw->shape[2], H = H3 / 3;
    MT_CHECK(T > 0, "gru_layer: expected a sequence of at least one step, got input projection of shape ", xw->shape);
    MT_CHECK(h0->shape == Shape({N, H}) && w_hh->shape == Shape({H3, H}) && (!b_hh || b_hh->shape == Shape({H3})),
             "gru_layer: with input projection of shape ", xw->shape, " expected h0 of shape (", N, ", ", H,
             "), weight_hh of shape (", H3, ", ", H, ") and bias_hh of shape (", H3, ",), got ", h0->shape, ", ",
             w_hh->shape, " and ", b_hh ? b_hh->shape : Shape{H3});
    check_same_device("gru_layer", xw, h0);
    check_same_device("gru_layer", xw, w_hh);
    if (b_hh) check_same_device("gru_layer", xw, b_hh);
    const Device dev = xw->device();
    const DType dt = xw->dtype;
    const RnnSlots slot{T, reverse};
    Tensor x, b;
    {
        autograd::NoGradGuard guard;  // layouts only: the node below records xw and b_hh themselves
        x = contiguous(xw), b = b_hh ? contiguous(b_hh) : nullptr;
    }
    const Tensor hs = empty({T + 1, N, H}, dt, dev), act = empty({T, N, 4 * H}, dt, dev);
    if (N * H > 0)
        run_steps(slot, hs, h0, w_hh, [&](int64_t, int64_t t, const Tensor& h_prev, const Tensor& w_t) {
            kernels(dev).gru_cell(select(hs, 0, slot.h_out(t)), select(act, 0, t), select(x, 0, t),
                                  matmul(h_prev, w_t), b, h_prev);
        });
    Tensor out = slot.outputs(hs);
    Tensor h_n = select(hs, 0, slot.h_out(slot.time(T - 1)));
    if (autograd::needs_grad({&xw, &h0, &w_hh, &b_hh})) {
        auto node = std::make_shared<GruLayerBackward>();
        node->act = autograd::save(*node, act);
        node->hs = autograd::save(*node, hs);
        node->w_hh = autograd::save(*node, w_hh);
        node->reverse = reverse;
        autograd::record(node, std::vector<Tensor>{xw, h0, w_hh, b_hh}, {out, h_n});
    }
    return {out, h_n};
}

std::tuple<Tensor, Tensor> rnn_layer(const Tensor& xw, const Tensor& h0, const Tensor& w_hh, bool relu, bool reverse)
{
    MT_PROFILE_OP("rnn_layer", xw, h0, w_hh);
    MT_CHECK_TYPE(is_floating(xw->dtype) && h0->dtype == xw->dtype && w_hh->dtype == xw->dtype,
                  "rnn_layer: expected input projection, h0 and weight_hh of one floating dtype, got ", xw->dtype, ", ",
                  h0->dtype, " and ", w_hh->dtype);
    MT_CHECK(xw->dim() == 3, "rnn_layer: expected the input projection of shape (T, N, H), got ", xw->shape);
    const int64_t T = xw->shape[0], N = xw->shape[1], H = xw->shape[2];
    MT_CHECK(T > 0, "rnn_layer: expected a sequence of at least one step, got input projection of shape ", xw->shape);
    MT_CHECK(h0->shape == Shape({N, H}) && w_hh->shape == Shape({H, H}), "rnn_layer: with input projection of shape ",
             xw->shape, " expected h0 of shape (", N, ", ", H, ") and weight_hh of shape (", H, ", ", H, "), got ",
             h0->shape, " and ", w_hh->shape);
    check_same_device("rnn_layer", xw, h0);
    check_same_device("rnn_layer", xw, w_hh);
    const Device dev = xw->device();
    const DType dt = xw->dtype;
    const RnnSlots slot{T, reverse};
    // pre[t] starts as xw[t]; the step's GEMM adds h[prev] W_hh^T into it, and a map writes
    // act(pre[t]) into h's slot: two launches a step. pre is the op's own scratch (xw is not
    // written), and the backward needs only the outputs (tanh' and relu' read h, not pre).
    const Tensor pre = empty({T, N, H}, dt, dev), hs = empty({T + 1, N, H}, dt, dev);
    const UnaryOp act = relu ? UnaryOp::Relu : UnaryOp::Tanh;
    if (N * H > 0) {
        {
            autograd::NoGradGuard guard;
            copy_(pre, xw);
        }
        run_steps(slot, hs, h0, w_hh, [&](int64_t, int64_t t, const Tensor& h_prev, const Tensor& w_t) {
            const Tensor pre_t = select(pre, 0, t);
            kernels(dev).matmul(pre_t, h_prev, w_t, true);
            kernels(dev).map(act, select(hs, 0, slot.h_out(t)), pre_t);
        });
    }
    Tensor out = slot.outputs(hs);
    Tensor h_n = select(hs, 0, slot.h_out(slot.time(T - 1)));
    if (autograd::needs_grad({&xw, &h0, &w_hh})) {
        auto node = std::make_shared<RnnLayerBackward>();
        node->hs = autograd::save(*node, hs);
        node->w_hh = autograd::save(*node, w_hh);
        node->relu = relu;
        node->reverse = reverse;
        autograd::record(node, std::vector<Tensor>{xw, h0, w_hh}, {out, h_n});
    }
    return {out, h_n};
}

std::optional<std::vector<Tensor>> cudnn_rnn_layer(const Tensor& x, const Tensor& hx, const Tensor& cx,
                                                   const std::vector<Tensor>& weights, RnnMode mode, bool bidirectional)
{
    MT_PROFILE_OP("cudnn_rnn_layer", x, hx, cx);
    const bool lstm = mode == RnnMode::Lstm;
    RnnShape s;
    s.mode = mode;
    s.bidirectional = bidirectional;
    const int64_t D = s.directions(), G = s.gates();
    MT_CHECK(x->dim() == 3 && x->shape[0] > 0, "cudnn_rnn_layer: expected input of shape (T, N, I) with T > 0, got ",
             x->shape);
    MT_CHECK(hx->dim() == 3 && hx->shape[0] == D && hx->shape[1] == x->shape[1],
             "cudnn_rnn_layer: with input of shape ", x->shape, " expected hx of shape (", D, ", ", x->shape[1],
             ", H), got ", hx->shape);
    s.T = x->shape[0], s.N = x->shape[1], s.I = x->shape[2], s.H = hx->shape[2], s.dtype = x->dtype;
    MT_CHECK(lstm == bool(cx) && (!cx || cx->shape == hx->shape), "cudnn_rnn_layer: expected cx ",
             lstm ? "of hx's shape, " : "to be None (only an LSTM has a cell state), ", "got ",
             cx ? cx->shape : Shape{});
    MT_CHECK(weights.size() == size_t(2 * D) || weights.size() == size_t(4 * D), "cudnn_rnn_layer: expected ", 2 * D,
             " or ", 4 * D, " weights (w_ih, w_hh[, b_ih, b_hh] per direction), got ", weights.size());
    s.bias = weights.size() == size_t(4 * D);
    const size_t per = s.bias ? 4 : 2;
    for (size_t k = 0; k < weights.size(); ++k) {
        const Tensor& w = weights[k];
        const Shape want = k % per == 0 ? Shape{G * s.H, s.I} : k % per == 1 ? Shape{G * s.H, s.H} : Shape{G * s.H};
        MT_CHECK(w->shape == want, "cudnn_rnn_layer: expected weight ", k, " of shape ", want, ", got ", w->shape);
    }
    std::vector<const Tensor*> all{&x, &hx};
    if (cx) all.push_back(&cx);
    for (const Tensor& w : weights) all.push_back(&w);
    for (const Tensor* t : all) {
        MT_CHECK_TYPE((*t)->dtype == x->dtype && is_floating(x->dtype),
                      "cudnn_rnn_layer: expected tensors of one floating dtype, got ", x->dtype, " and ", (*t)->dtype);
        check_same_device("cudnn_rnn_layer", x, *t);
    }
    const Device dev = x->device();
    const RnnLibrary* library = rnn_library(dev);
    if (!library || s.N * s.H == 0) return std::nullopt;
    bool training = false;  // a node to record: cuDNN then keeps its reserve space
    if (autograd::is_grad_enabled())
        for (const Tensor* t : all) training = training || (*t)->requires_grad;
    Tensor xc, hxc, cxc;
    const Tensor y = empty({s.T, s.N, D * s.H}, s.dtype, dev), hy = empty(hx->shape, s.dtype, dev);
    const Tensor cy = lstm ? empty(cx->shape, s.dtype, dev) : nullptr;
    std::shared_ptr<RnnSaved> saved;
    {
        autograd::NoGradGuard guard;  // layouts and the library's own copies: the node records the inputs
        xc = contiguous(x), hxc = contiguous(hx), cxc = cx ? contiguous(cx) : nullptr;
        saved = library->forward(s, y, hy, cy, xc, hxc, cxc, weights, training);
    }
    if (!saved) return std::nullopt;
    std::vector<Tensor> outputs{y, hy};
    if (lstm) outputs.push_back(cy);
    if (training) {
        auto node = std::make_shared<CudnnRnnBackward>();
        node->shape = s;
        node->library = library;
        node->saved = saved;
        node->x = autograd::save(*node, xc);
        node->hx = autograd::save(*node, hxc);
        node->cx = autograd::save(*node, cxc);
        node->y = autograd::save(*node, y);
        node->n_weights = weights.size();
        for (const Tensor& w : weights) node->weights.push_back(autograd::save(*node, w));
        std::vector<Tensor> inputs{x, hx, cx};
        inputs.insert(inputs.end(), weights.begin(), weights.end());
        autograd::record(node, inputs, outputs);
    }
    return outputs;
}

}  // namespace minitorch
