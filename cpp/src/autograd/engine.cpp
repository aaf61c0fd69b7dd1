// engine.cpp — recording nodes and running backward.
#include <algorithm>
#include <atomic>
#include <unordered_map>

#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch::autograd {

namespace {
thread_local bool g_grad_enabled = true;
}

bool is_grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool enabled) { g_grad_enabled = enabled; }

TensorMeta meta_of(const Tensor& t) { return {t->shape, t->dtype, t->device()}; }

bool needs_grad(std::initializer_list<const Tensor*> inputs)
{
    if (!g_grad_enabled) return false;
    for (const Tensor* t : inputs)
        if (t && *t && (*t)->requires_grad) return true;
    return false;
}

Edge gradient_edge(const Tensor& t)
{
    if (!t || !t->requires_grad) return {};
    if (t->grad_fn) return {t->grad_fn, t->output_nr};
    // A leaf: share one AccumulateGrad while any graph holds it.
    std::shared_ptr<Node> acc = t->grad_accumulator.lock();
    if (!acc) {
        auto a = std::make_shared<AccumulateGrad>(t);
        a->input_meta = {meta_of(t)};
        a->output_meta = {meta_of(t)};
        acc = a;
        t->grad_accumulator = acc;
    }
    return {acc, 0};
}

void record(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs)
{
    node->next_edges.clear();
    node->input_meta.clear();
    for (const Tensor& t : inputs) {
        node->next_edges.push_back(gradient_edge(t));
        node->input_meta.push_back(t ? meta_of(t) : TensorMeta{});
    }
    node->output_meta.clear();
    node->retained.assign(outputs.size(), {});
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Tensor& out = outputs[i];
        node->output_meta.push_back(meta_of(out));
        out->requires_grad = true;
        out->grad_fn = node;
        out->output_nr = int(i);
    }
}

void record(const std::shared_ptr<Node>& node, std::initializer_list<const Tensor*> inputs,
            std::initializer_list<const Tensor*> outputs)
{
    std::vector<Tensor> in, out;
    for (const Tensor* t : inputs) in.push_back(t ? *t : nullptr);
    for (const Tensor* t : outputs) out.push_back(*t);
    record(node, in, out);
}

Tensor save(Node& node, const Tensor& t)
{
    if (!t) return nullptr;
    node.has_saved = true;
    node.saved_versions.push_back({t->storage, t->storage->version, t->shape, t->dtype});
    return make_alias(t);
}

void check_saved_versions(const Node& node)
{
    for (const SavedVersion& v : node.saved_versions) {
        auto storage = v.storage.lock();
        MT_CHECK_RUNTIME(!storage || storage->version == v.version,
                         "one of the variables needed for gradient computation has been modified by an inplace "
                         "operation: [", v.dtype, " of shape ", v.shape, "], saved by ", node.name(), ", is at version ",
                         storage ? storage->version : 0, "; expected version ", v.version,
                         " instead. Hint: do not change tensors in place (+=, copy_, x[...] = ..., an optimizer step) "
                         "between the forward pass and backward()");
    }
}

void check_not_freed(const Node* node)
{
    MT_CHECK_RUNTIME(node && !node->released,
                     "Trying to backward through the graph a second time (or directly access saved tensors after they "
                     "have already been freed). Saved intermediate values of the graph are freed when you call "
                     ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                     "graph a second time or to access saved tensors after calling backward.");
}

Tensor sum_to(const Tensor& grad, const Shape& shape)
{
    if (grad->shape == shape) return grad;
    const int64_t lead = grad->dim() - int64_t(shape.size());
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < grad->dim(); ++d)
        if (d < lead || (shape[d - lead] == 1 && grad->shape[d] != 1)) dims.push_back(d);
    Tensor s = dims.empty() ? grad : sum(grad, dims, true, std::nullopt);
    return reshape(s, shape);
}

void retain_grad(const Tensor& t)
{
    MT_CHECK_RUNTIME(t->requires_grad, "retain_grad: can't retain_grad on a Tensor that has requires_grad=False");
    if (t->is_leaf()) return;
    t->retains_grad = true;
    t->grad_fn->retained[t->output_nr] = t;
}

bool inplace_in_graph(const Tensor& t, std::initializer_list<const Tensor*> others)
{
    if (!g_grad_enabled) return false;
    if (t->requires_grad) return true;
    for (const Tensor* o : others)
        if (o && *o && (*o)->requires_grad) return true;
    return false;
}

void check_inplace(const Tensor& t, const char* op)
{
    if (!g_grad_enabled || !t->requires_grad) return;
    MT_CHECK_RUNTIME(!t->is_leaf(), op, ": a leaf Tensor that requires grad is being used in an in-place operation; "
                                        "wrap the update in `with minitorch.no_grad():`");
    throw std::runtime_error(detail::str(op, ": in-place writes of this kind into a tensor that is part of a graph "
                                             "are not supported (the tensor was made by ", t->grad_fn->name(),
                                             "); use the out-of-place form"));
}

void check_rebase(const Tensor& t, const char* op)
{
    MT_CHECK_RUNTIME(!(t->requires_grad && t->is_leaf()), op, ": a leaf Tensor that requires grad is being used in "
                     "an in-place operation; wrap the update in `with minitorch.no_grad():`");
    // PyTorch also rewrites the history of a view's base and of the other views of the
    // same memory (CopySlices); minitorch does not yet, so it refuses rather than leave
    // them with a wrong gradient.
    MT_CHECK_RUNTIME(!(t->is_view && !t->base.expired()), op, ": in-place operations inside a graph on a view "
                     "(x[i], x.view(...), x.t()...) are not supported yet: its base would keep the old history; "
                     "use the out-of-place form, e.g. y = y + z instead of y += z");
    MT_CHECK_RUNTIME(t->storage->views.load() - (t->is_view ? 1 : 0) == 0, op, ": in-place operations inside a "
                     "graph on a tensor whose views are alive (x[i], x.view(...), x.t()...) are not supported yet: "
                     "the views would keep the old history; use the out-of-place form, or make the views after "
                     "the in-place op");
}

void rebase_history(const Tensor& t, const Tensor& result, const char* op)
{
    MT_CHECK(result->shape == t->shape, op, ": output with shape ", t->shape, " doesn't match the broadcast shape ",
             result->shape);
    Tensor r = result->dtype == t->dtype ? result : to_dtype(result, t->dtype);
    {
        NoGradGuard guard;
        copy_(t, r);  // bumps t's version: whatever saved the old values now refuses to run
    }
    t->grad_fn = r->grad_fn;
    t->output_nr = r->output_nr;
    t->requires_grad = r->requires_grad;
}

void check_inplace_source(const Tensor& src, const char* op)
{
    if (!g_grad_enabled || !src->requires_grad) return;
    throw std::runtime_error(detail::str(op, ": the other operand requires grad, but in-place operations do not "
                                             "record gradients here, so its gradient would be lost; use the "
                                             "out-of-place form (z = z + w instead of z.add_(w)), or wrap the "
                                             "update in `with minitorch.no_grad():` if no gradient is wanted"));
}

namespace {
std::atomic<int> g_next_hook_id{1};

LeafHooks& leaf_hooks(const Tensor& t)
{
    if (!t->hooks) t->hooks = std::make_shared<LeafHooks>();
    return *t->hooks;
}

template <class H>
void erase_id(std::vector<H>& hooks, int id)
{
    hooks.erase(std::remove_if(hooks.begin(), hooks.end(), [id](const H& h) { return h.id == id; }), hooks.end());
}

// Runs the gradient hooks of one output in registration order; a hook's replacement must
// look like the gradient it replaces.
void run_grad_hook(const GradHook& fn, Tensor& grad, const std::string& where)
{
    Tensor r = fn(grad);
    if (!r) return;
    MT_CHECK_RUNTIME(r->shape == grad->shape && r->dtype == grad->dtype && r->device() == grad->device(),
                     "hook of ", where, " returned a gradient of shape ", r->shape, ", ", r->dtype, " on ", r->device(),
                     " for a gradient of shape ", grad->shape, ", ", grad->dtype, " on ", grad->device(),
                     "; a hook may change the values only");
    grad = r;
}

// The gradient hooks that apply to `node`'s incoming gradients: the leaf's own for an
// AccumulateGrad, the registered outputs' for any other node.
void run_grad_hooks(Node& node, std::vector<Tensor>& grads)
{
    if (auto* acc = dynamic_cast<AccumulateGrad*>(&node)) {
        if (!acc->leaf->hooks || !grads[0]) return;
        const std::vector<Hook<GradHook>> hooks = acc->leaf->hooks->grad;  // a hook may remove hooks
        for (const auto& h : hooks) run_grad_hook(h.fn, grads[0], "a leaf tensor");
        return;
    }
    const auto hooks = node.grad_hooks;
    for (const auto& [out, h] : hooks)
        if (grads[out]) run_grad_hook(h.fn, grads[out], detail::str("an output of ", node.name()));
}
}  // namespace

int register_grad_hook(const Tensor& t, GradHook fn)
{
    MT_CHECK_RUNTIME(t->requires_grad, "register_hook: cannot register a hook on a tensor that doesn't require gradient");
    const int id = g_next_hook_id++;
    if (t->is_leaf()) leaf_hooks(t).grad.push_back({id, std::move(fn)});
    else t->grad_fn->grad_hooks.push_back({t->output_nr, {id, std::move(fn)}});
    return id;
}

int register_post_accumulate_grad_hook(const Tensor& t, PostAccumulateGradHook fn)
{
    MT_CHECK_RUNTIME(t->requires_grad, "register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                                       "doesn't require gradient");
    MT_CHECK_RUNTIME(t->is_leaf(), "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                                   "registered on non-leaf tensors");
    const int id = g_next_hook_id++;
    leaf_hooks(t).post_accumulate.push_back({id, std::move(fn)});
    return id;
}

void remove_hook(const std::weak_ptr<TensorImpl>& leaf, const std::weak_ptr<Node>& node, int id)
{
    if (Tensor t = leaf.lock(); t && t->hooks) {
        erase_id(t->hooks->grad, id);
        erase_id(t->hooks->post_accumulate, id);
    }
    if (std::shared_ptr<Node> n = node.lock()) {
        auto& hooks = n->grad_hooks;
        hooks.erase(std::remove_if(hooks.begin(), hooks.end(), [id](const auto& h) { return h.second.id == id; }),
                    hooks.end());
    }
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>& grads)
{
    Tensor g = grads[0];
    if (!leaf->grad) {
        // Keep the engine's tensor only if nobody else can see or write it.
        bool exclusive = g.use_count() <= 2 && g->storage.use_count() == 1 && g->is_contiguous();
        leaf->grad = exclusive ? g : clone(g);
    } else if (leaf->grad->shape == g->shape && leaf->grad->dtype == g->dtype && !g->requires_grad) {
        binary_(BinaryOp::Add, leaf->grad, g);  // in place: `g = x.grad` sees later backward passes
    } else {
        leaf->grad = binary(BinaryOp::Add, leaf->grad, g);
    }
    if (leaf->hooks) {
        const auto hooks = leaf->hooks->post_accumulate;  // a hook may remove hooks
        for (const auto& h : hooks) h.fn(leaf);
    }
    return {};
}

namespace {

void add_into(Tensor& slot, const Tensor& g)
{
    slot = slot ? binary(BinaryOp::Add, slot, g) : g;
}

}  // namespace

std::vector<Tensor> run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                                 const std::vector<Tensor>* inputs, bool allow_unused)
{
    NoGradGuard no_grad;  // backward formulas must not record (no create_graph)

    // 1. Where the roots' gradients enter the graph.
    std::vector<Edge> root_edges;
    std::vector<Tensor> root_grads;
    for (size_t i = 0; i < roots.size(); ++i) {
        const Tensor& r = roots[i];
        MT_CHECK_RUNTIME(r->requires_grad, "backward: element ", i,
                         " of tensors does not require grad and does not have a grad_fn");
        Tensor g = i < grads.size() ? grads[i] : nullptr;
        if (!g) {
            MT_CHECK_RUNTIME(r->numel() == 1, "backward: grad can be implicitly created only for scalar outputs (got shape ",
                             r->shape, "); pass gradient=");
            g = full(r->shape, Scalar(1.0), r->dtype, r->device());
        } else {
            MT_CHECK(g->shape == r->shape, "backward: gradient of shape ", g->shape, " does not match output shape ",
                     r->shape);
            MT_CHECK_RUNTIME(g->device() == r->device(), "backward: invalid gradient at index ", i, " - expected device ",
                             r->device(), " but got ", g->device());
            g = to_dtype(g, r->dtype);
        }
        root_edges.push_back(gradient_edge(r));
        root_grads.push_back(g);
    }

    // 2. Count, for every node, how many edges point at it (iterative DFS: no recursion,
    //    so a 100,000-op chain cannot overflow the stack).
    std::unordered_map<Node*, int> deps;
    std::vector<Node*> stack;
    std::unordered_map<Node*, bool> seen;
    for (const Edge& e : root_edges)
        if (!seen[e.fn.get()]) {
            seen[e.fn.get()] = true;
            stack.push_back(e.fn.get());
        }
    while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        for (const Edge& e : n->next_edges) {
            if (!e.fn) continue;
            ++deps[e.fn.get()];
            if (!seen[e.fn.get()]) {
                seen[e.fn.get()] = true;
                stack.push_back(e.fn.get());
            }
        }
    }

    // 3. Gradients asked for by autograd.grad(): captured where they would enter a node.
    std::vector<Edge> capture_edges;
    std::vector<Tensor> captured;
    if (inputs) {
        for (const Tensor& t : *inputs) {
            MT_CHECK_RUNTIME(t->requires_grad, "grad: one of the differentiated Tensors does not require grad");
            capture_edges.push_back(gradient_edge(t));
        }
        captured.resize(inputs->size());
    }

    // 4. Kahn's algorithm: a node runs once every edge into it has delivered.
    std::unordered_map<Node*, std::vector<Tensor>> buffers;
    std::unordered_map<Node*, std::shared_ptr<Node>> owners;  // keeps nodes alive while queued
    std::vector<Node*> ready;
    for (size_t i = 0; i < root_edges.size(); ++i) {
        Node* n = root_edges[i].fn.get();
        auto& buf = buffers[n];
        buf.resize(n->output_meta.size());
        add_into(buf[root_edges[i].input_nr], root_grads[i]);
        owners[n] = root_edges[i].fn;
    }
    for (auto& [n, _] : buffers)
        if (deps[n] == 0 && std::find(ready.begin(), ready.end(), n) == ready.end()) ready.push_back(n);

    while (!ready.empty()) {
        Node* node = ready.back();
        ready.pop_back();
        std::shared_ptr<Node> keep = owners[node];
        owners.erase(node);
        std::vector<Tensor> in_grads = std::move(buffers[node]);
        buffers.erase(node);
        in_grads.resize(node->output_meta.size());

        // Under autograd.grad, a leaf's hooks run only for the inputs asked about (no other
        // leaf's gradient is being computed), as in PyTorch.
        const bool is_acc = dynamic_cast<AccumulateGrad*>(node) != nullptr;
        bool asked = !inputs || !is_acc;
        for (const Edge& e : capture_edges) asked = asked || e.fn.get() == node;
        if (asked) run_grad_hooks(*node, in_grads);
        bool any = false;
        for (auto& g : in_grads) any = any || g != nullptr;
        for (size_t c = 0; c < capture_edges.size(); ++c)
            if (capture_edges[c].fn.get() == node && in_grads[capture_edges[c].input_nr])
                add_into(captured[c], in_grads[capture_edges[c].input_nr]);
        // Non-leaf tensors that asked to keep their gradient.
        for (size_t i = 0; i < node->retained.size(); ++i)
            if (auto t = node->retained[i].lock(); t && in_grads[i] && !inputs)
                t->grad = t->grad ? binary(BinaryOp::Add, t->grad, in_grads[i]) : clone(in_grads[i]);

        std::vector<Tensor> out_grads;
        if (any && !(is_acc && inputs)) {
            // One profiler event per node run, named as PyTorch's autograd events ("MmBackward0").
            MT_PROFILE_OP(profiler::enabled() ? node->name() : std::string(), in_grads);
            if (node->has_saved) check_not_freed(node);
            for (size_t i = 0; i < in_grads.size(); ++i)
                if (!in_grads[i]) {
                    const TensorMeta& m = node->output_meta[i];
                    in_grads[i] = zeros(m.shape, m.dtype, m.device);
                }
            check_saved_versions(*node);
            out_grads = node->apply(in_grads);
            if (!retain_graph) {
                node->release();
                node->released = true;
                node->saved_versions.clear();
                node->grad_hooks.clear();  // a hook may refer to its own tensor: no cycle through the graph
            }
        }
        out_grads.resize(node->next_edges.size());
        for (size_t j = 0; j < node->next_edges.size(); ++j) {
            const Edge& e = node->next_edges[j];
            if (!e.fn) continue;
            Node* next = e.fn.get();
            if (out_grads[j]) {
                auto& buf = buffers[next];
                buf.resize(next->output_meta.size());
                add_into(buf[e.input_nr], out_grads[j]);
                owners[next] = e.fn;
            }
            if (--deps[next] == 0) {
                if (!owners.count(next)) owners[next] = e.fn;
                ready.push_back(next);
            }
        }
    }

    if (inputs)
        for (size_t c = 0; c < captured.size(); ++c)
            MT_CHECK_RUNTIME(captured[c] || allow_unused, "grad: one of the differentiated Tensors (input ", c,
                             ") appears to not have been used in the graph; set allow_unused=True if this is the "
                             "desired behavior");
    return captured;
}

}  // namespace minitorch::autograd
