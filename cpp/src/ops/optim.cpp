// optim.cpp — the fused optimizer steps behind python/minitorch/optim (SGD, Adam, AdamW, RMSprop):
// one kernel pass per parameter reads its gradient and state and writes the parameter and
// state in place, instead of a chain of tensor ops with their temporaries. The formulas
// are in minitorch/optim_math.h; the Python optimizers keep the same steps written with
// tensor ops (fused=False) as the readable reference.
//
// Like every optimizer step, these write under no_grad semantics: they record nothing and
// also update leaves that require grad, but they bump the version of every tensor they
// write, so backward still refuses a graph that saved the parameter before the step.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// The checks both steps share. grad and each state tensor must match the param in shape,
// dtype and device; the param must be floating (16-bit too); the tensors written in place
// (the param and its state) must be contiguous and must not share memory. Returns the
// gradient to read: grad itself, or a contiguous copy when grad is strided or shares
// memory with a tensor the step writes.
Tensor checked_step_inputs(const char* op, const Tensor& param, const Tensor& grad,
                           const std::vector<std::pair<const char*, Tensor>>& state)
{
    MT_CHECK_TYPE(is_floating(param->dtype), op, ": expected a floating-point param, got ", param->dtype);
    MT_CHECK(param->is_contiguous(), op, ": the fused step needs a contiguous param, got shape ", param->shape,
             " with strides ", param->strides, " (the optimizers use fused=False for it)");
    auto check_like_param = [&](const char* what, const Tensor& t) {
        check_same_device(op, param, t);
        MT_CHECK_TYPE(t->dtype == param->dtype, op, ": ", what, " has dtype ", t->dtype, " but the param has dtype ",
                      param->dtype);
        MT_CHECK(t->shape == param->shape, op, ": ", what, " of shape ", t->shape,
                 " does not match the param of shape ", param->shape);
    };
    check_like_param("grad", grad);
    bool grad_aliases = grad->storage == param->storage;
    for (size_t k = 0; k < state.size(); ++k) {
        const auto& [what, t] = state[k];
        check_like_param(what, t);
        MT_CHECK(t->is_contiguous(), op, ": ", what, " must be contiguous, got shape ", t->shape, " with strides ",
                 t->strides);
        MT_CHECK(t->storage != param->storage, op, ": ", what, " shares memory with the param");
        for (size_t j = 0; j < k; ++j)
            MT_CHECK(t->storage != state[j].second->storage, op, ": ", what, " shares memory with ", state[j].first);
        grad_aliases = grad_aliases || grad->storage == t->storage;
    }
    if (grad_aliases) return clone(grad);
    return contiguous(grad);
}

}  // namespace

Tensor sgd_step(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, SgdStep opt)
{
    MT_PROFILE_OP("sgd_step", param, grad, momentum_buffer);
    autograd::NoGradGuard guard;  // the grad copy below, if any, is not part of a graph
    // Without momentum there is no buffer (PyTorch ignores one left from earlier steps).
    const bool has_momentum = opt.momentum != 0;
    Tensor buf = has_momentum ? momentum_buffer : nullptr;
    std::vector<std::pair<const char*, Tensor>> state;
    if (buf) state.emplace_back("momentum_buffer", buf);
    Tensor g = checked_step_inputs("sgd_step", param, grad, state);
    opt.first_step = has_momentum && !buf;
    if (opt.first_step) buf = empty(param->shape, param->dtype, param->device());  // the kernel writes all of it
    if (param->numel()) kernels(param->device()).sgd_step(param, g, buf, opt);
    autograd::bump_version(param);
    if (buf) autograd::bump_version(buf);
    return buf;
}

void adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const AdamStep& opt)
{
    MT_PROFILE_OP(opt.decoupled ? "adamw_step" : "adam_step", param, grad, exp_avg, exp_avg_sq);
    autograd::NoGradGuard guard;
    const char* op = opt.decoupled ? "adamw_step" : "adam_step";
    MT_CHECK(opt.step >= 1, op, ": step counts from 1, got ", opt.step);
    MT_CHECK(!opt.amsgrad, op, ": amsgrad needs max_exp_avg_sq, which only the foreach step takes");
    Tensor g = checked_step_inputs(op, param, grad, {{"exp_avg", exp_avg}, {"exp_avg_sq", exp_avg_sq}});
    if (param->numel()) kernels(param->device()).adam_step(param, g, exp_avg, exp_avg_sq, opt);
    autograd::bump_version(param);
    autograd::bump_version(exp_avg);
    autograd::bump_version(exp_avg_sq);
}

namespace {

// The checks every foreach step shares: the lists have one length, all params lie on one
// device with one dtype, and no param is listed twice.
void check_foreach_lists(const char* op, const std::vector<Tensor>& params,
                         const std::vector<std::pair<const char*, const std::vector<Tensor>*>>& lists)
{
    for (const auto& [what, list] : lists)
        MT_CHECK(list->size() == params.size(), op, ": got ", params.size(), " params but ", list->size(), " ", what);
    std::vector<const Storage*> seen;
    for (const Tensor& p : params) {
        check_same_device(op, params[0], p);
        MT_CHECK_TYPE(p->dtype == params[0]->dtype, op, ": all params must have one dtype, got ", params[0]->dtype,
                      " and ", p->dtype, " (the optimizers group them by dtype)");
        seen.push_back(p->storage.get());
    }
    std::sort(seen.begin(), seen.end());
    MT_CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end(), op,
             ": two params share memory (a parameter listed twice?)");
}

// One bucket of a foreach step: entry k of every list belongs to params[k].
struct StepLists {
    std::vector<Tensor> params, grads, state1, state2, state3;

    void add(const Tensor& p, const Tensor& g, const Tensor& s1 = nullptr, const Tensor& s2 = nullptr,
             const Tensor& s3 = nullptr)
    {
        params.push_back(p), grads.push_back(g), state1.push_back(s1), state2.push_back(s2), state3.push_back(s3);
    }
};

}  // namespace

std::vector<Tensor> sgd_step_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                     const std::vector<Tensor>& momentum_buffers, SgdStep opt)
{
    const char* op = "sgd_step_foreach";
    MT_PROFILE_OP(op);
    autograd::NoGradGuard guard;
    check_foreach_lists(op, params, {{"grads", &grads}, {"momentum_buffers", &momentum_buffers}});
    // Without momentum there are no buffers; with it, a param without one yet takes its
    // first momentum step (the buffer becomes d), which is a bucket of its own.
    const bool has_momentum = opt.momentum != 0;
    std::vector<Tensor> bufs(params.size());
    StepLists later, first;
    for (size_t k = 0; k < params.size(); ++k) {
        const Tensor& buf = has_momentum ? momentum_buffers[k] : nullptr;
        std::vector<std::pair<const char*, Tensor>> state;
        if (buf) state.emplace_back("momentum_buffer", buf);
        const Tensor g = checked_step_inputs(op, params[k], grads[k], state);
        if (buf || !has_momentum) {
            bufs[k] = buf;
            if (params[k]->numel()) later.add(params[k], g, buf);
        } else {
            bufs[k] = empty(params[k]->shape, params[k]->dtype, params[k]->device());  // the kernel writes all of it
            if (params[k]->numel()) first.add(params[k], g, bufs[k]);
        }
    }
    for (StepLists* lists : {&later, &first}) {
        if (lists->params.empty()) continue;
        opt.first_step = lists == &first;
        kernels(params[0]->device())
            .sgd_multi_step(lists->params, lists->grads, has_momentum ? lists->state1 : std::vector<Tensor>{}, opt);
    }
    for (size_t k = 0; k < params.size(); ++k) {
        autograd::bump_version(params[k]);
        if (bufs[k]) autograd::bump_version(bufs[k]);
    }
    return bufs;
}

void adam_step_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                       const std::vector<Tensor>& max_exp_avg_sqs, const AdamStep& opt)
{
    const char* op = opt.decoupled ? "adamw_step_foreach" : "adam_step_foreach";
    MT_PROFILE_OP(op);
    autograd::NoGradGuard guard;
    MT_CHECK(opt.step >= 1, op, ": step counts from 1, got ", opt.step);
    std::vector<std::pair<const char*, const std::vector<Tensor>*>> lists{
        {"grads", &grads}, {"exp_avgs", &exp_avgs}, {"exp_avg_sqs", &exp_avg_sqs}};
    if (opt.amsgrad) lists.emplace_back("max_exp_avg_sqs", &max_exp_avg_sqs);
    check_foreach_lists(op, params, lists);
    StepLists step;
    for (size_t k = 0; k < params.size(); ++k) {
        std::vector<std::pair<const char*, Tensor>> state{{"exp_avg", exp_avgs[k]}, {"exp_avg_sq", exp_avg_sqs[k]}};
        if (opt.amsgrad) state.emplace_back("max_exp_avg_sq", max_exp_avg_sqs[k]);
        for (const auto& [what, t] : state) MT_CHECK(t != nullptr, op, ": ", what, " of param ", k, " is None");
        const Tensor g = checked_step_inputs(op, params[k], grads[k], state);
        if (params[k]->numel())
            step.add(params[k], g, exp_avgs[k], exp_avg_sqs[k], opt.amsgrad ? max_exp_avg_sqs[k] : nullptr);
    }
    if (!step.params.empty())
        kernels(params[0]->device())
            .adam_multi_step(step.params, step.grads, step.state1, step.state2,
                             opt.amsgrad ? step.state3 : std::vector<Tensor>{}, opt);
    for (size_t k = 0; k < params.size(); ++k) {
        autograd::bump_version(params[k]);
        autograd::bump_version(exp_avgs[k]);
        autograd::bump_version(exp_avg_sqs[k]);
        if (opt.amsgrad) autograd::bump_version(max_exp_avg_sqs[k]);
    }
}

void rmsprop_step_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& momentum_buffers,
                          const std::vector<Tensor>& grad_avgs, const RmspropStep& opt)
{
    const char* op = "rmsprop_step_foreach";
    MT_PROFILE_OP(op);
    autograd::NoGradGuard guard;
    const bool momentum = opt.momentum > 0, centered = opt.centered;
    std::vector<std::pair<const char*, const std::vector<Tensor>*>> lists{{"grads", &grads},
                                                                          {"square_avgs", &square_avgs}};
    if (momentum) lists.emplace_back("momentum_buffers", &momentum_buffers);
    if (centered) lists.emplace_back("grad_avgs", &grad_avgs);
    check_foreach_lists(op, params, lists);
    StepLists step;
    for (size_t k = 0; k < params.size(); ++k) {
        std::vector<std::pair<const char*, Tensor>> state{{"square_avg", square_avgs[k]}};
        if (momentum) state.emplace_back("momentum_buffer", momentum_buffers[k]);
        if (centered) state.emplace_back("grad_avg", grad_avgs[k]);
        for (const auto& [what, t] : state) MT_CHECK(t != nullptr, op, ": ", what, " of param ", k, " is None");
        const Tensor g = checked_step_inputs(op, params[k], grads[k], state);
        if (params[k]->numel())
            step.add(params[k], g, square_avgs[k], momentum ? momentum_buffers[k] : nullptr,
                     centered ? grad_avgs[k] : nullptr);
    }
    if (!step.params.empty())
        kernels(params[0]->device())
            .rmsprop_multi_step(step.params, step.grads, step.state1,
                                momentum ? step.state2 : std::vector<Tensor>{},
                                centered ? step.state3 : std::vector<Tensor>{}, opt);
    for (size_t k = 0; k < params.size(); ++k) {
        autograd::bump_version(params[k]);
        autograd::bump_version(square_avgs[k]);
        if (momentum) autograd::bump_version(momentum_buffers[k]);
        if (centered) autograd::bump_version(grad_avgs[k]);
    }
}

Tensor clip_grad_norm_foreach(const std::vector<Tensor>& grads, double max_norm, double norm_type)
{
    const char* op = "clip_grad_norm_";
    MT_PROFILE_OP(op);
    autograd::NoGradGuard guard;
    MT_CHECK(!grads.empty(), op, ": expected at least one gradient");
    const bool inf_norm = std::isinf(norm_type) && norm_type > 0;
    MT_CHECK(inf_norm || norm_type == 2, op, ": the foreach path takes norm_type 2 or inf, got ", norm_type);
    std::vector<Tensor> measured;
    for (const Tensor& g : grads) {
        MT_CHECK(g != nullptr, op, ": a gradient is None");
        check_same_device(op, grads[0], g);
        MT_CHECK_TYPE(is_floating(g->dtype), op, ": expected floating-point gradients, got ", g->dtype);
        MT_CHECK_TYPE(g->dtype == grads[0]->dtype, op, ": all gradients must have one dtype, got ", grads[0]->dtype,
                      " and ", g->dtype);
        MT_CHECK(g->is_contiguous(), op, ": the foreach path needs contiguous gradients, got shape ", g->shape,
                 " with strides ", g->strides);
        if (g->numel()) measured.push_back(g);
    }
    Tensor total = empty({}, grads[0]->dtype, grads[0]->device());
    if (measured.empty()) {
        fill_(total, 0.0);
    } else {
        kernels(total->device()).clip_grad_multi(measured, total, max_norm, inf_norm);
        for (const Tensor& g : measured) autograd::bump_version(g);
    }
    return total;
}

void amp_foreach_non_finite_check_and_unscale_(const std::vector<Tensor>& grads, const Tensor& found_inf,
                                               const Tensor& inv_scale)
{
    const char* op = "_amp_foreach_non_finite_check_and_unscale_";
    MT_PROFILE_OP("amp_unscale", found_inf, inv_scale);
    autograd::NoGradGuard guard;
    auto check_scalar = [&](const char* what, const Tensor& t) {
        MT_CHECK(t->numel() == 1, op, ": ", what, " must be a 1-element tensor, got shape ", t->shape);
        MT_CHECK_TYPE(t->dtype == DType::Float32, op, ": ", what, " must be a float32 tensor, got ", t->dtype);
    };
    check_scalar("found_inf", found_inf);
    check_scalar("inv_scale", inv_scale);
    check_same_device(op, found_inf, inv_scale);
    for (const Tensor& g : grads) {
        check_same_device(op, g, found_inf);
        MT_CHECK_TYPE(is_floating(g->dtype), op, ": expected floating-point gradients, got ", g->dtype);
        MT_CHECK(g->storage != found_inf->storage && g->storage != inv_scale->storage, op,
                 ": a gradient shares memory with found_inf or inv_scale");
    }
    // The scalars are read by the kernel where they lie; a strided one-element view is made
    // contiguous (a copy only for inv_scale, which is only read).
    Tensor inv = contiguous(inv_scale);
    Tensor flag = found_inf->is_contiguous() ? found_inf : contiguous(found_inf);
    // One kernel call per dtype for all its gradients (the CUDA one: one launch). A strided
    // gradient (rare) is scaled as a packed copy, written back after. A gradient listed twice
    // (a parameter given twice) is scaled once: in one launch its two entries would race.
    std::vector<DType> dtypes;
    for (const Tensor& g : grads)
        if (g->numel() && std::find(dtypes.begin(), dtypes.end(), g->dtype) == dtypes.end()) dtypes.push_back(g->dtype);
    for (DType dtype : dtypes) {
        std::vector<Tensor> listed;
        std::vector<const TensorImpl*> seen;
        std::vector<std::pair<Tensor, Tensor>> write_back;  // (gradient, its packed copy)
        for (const Tensor& g : grads) {
            if (!g->numel() || g->dtype != dtype) continue;
            if (std::find(seen.begin(), seen.end(), g.get()) != seen.end()) continue;
            seen.push_back(g.get());
            if (g->is_contiguous()) {
                listed.push_back(g);
            } else {
                write_back.emplace_back(g, contiguous(g));
                listed.push_back(write_back.back().second);
            }
        }
        kernels(flag->device()).amp_unscale(listed, flag, inv);
        for (auto& [g, packed] : write_back) copy_(g, packed);
    }
    for (const Tensor& g : grads)
        if (g->numel()) autograd::bump_version(g);
    if (flag != found_inf) copy_(found_inf, flag);
    autograd::bump_version(found_inf);
}

}  // namespace minitorch
