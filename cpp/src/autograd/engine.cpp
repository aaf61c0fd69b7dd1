// engine.cpp — recording nodes and running backward.
#include <algorithm>
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "minitorch/autograd.h"
#include "minitorch/kernels.h"
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
    if (std::shared_ptr<Node> n = t->saved_output_of.lock()) return {n, t->output_nr};
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

namespace {
thread_local std::vector<std::shared_ptr<SavedTensorHooks>> g_saved_hooks;
}

void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks) { g_saved_hooks.push_back(std::move(hooks)); }
void pop_saved_tensor_hooks()
{
    if (!g_saved_hooks.empty()) g_saved_hooks.pop_back();
}
bool saved_tensor_hooks_active() { return !g_saved_hooks.empty(); }

void pack_saved(Node& node, const Tensor& alias)
{
    std::shared_ptr<SavedTensorHooks> hooks = g_saved_hooks.back();
    // pack sees a plain alias of the memory (if it keeps it, the memory stays alive, as
    // with PyTorch's identity hooks); the node's own alias lets go of it.
    Tensor plain = make_alias(alias);
    std::shared_ptr<void> packed;
    {
        NoGradGuard no_grad;  // a hook that copies must not record
        packed = hooks->pack(plain);
    }
    plain.reset();
    auto empty = std::make_shared<Storage>();
    empty->device = alias->device();
    alias->storage = empty;
    node.packed.push_back({alias, std::move(hooks), std::move(packed)});
}

void unpack_saved(Node& node)
{
    for (PackedSaved& p : node.packed) {
        Tensor a = p.alias.lock();
        if (!a || a->storage->data || a->numel() == 0) continue;  // freed, or already unpacked
        Tensor u;
        {
            NoGradGuard no_grad;
            u = p.hooks->unpack(p.packed);
        }
        MT_CHECK_RUNTIME(u && u->shape == a->shape && u->dtype == a->dtype && u->device() == a->device(),
                         "saved_tensors_hooks: unpack_hook must return a tensor of the shape, dtype and device "
                         "of the one pack_hook got (", a->dtype, " of shape ", a->shape, " on ", a->device(),
                         "), got ", u ? detail::str(u->dtype, " of shape ", u->shape, " on ", u->device())
                                      : std::string("None"));
        a->storage = u->storage;
        a->strides = u->strides;
        a->offset = u->offset;
    }
}

namespace {
void link_saved_output(const Tensor& alias, const std::shared_ptr<Node>& node, int output_nr)
{
    alias->requires_grad = true;
    alias->saved_output_of = node;
    alias->output_nr = output_nr;
}
}  // namespace

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
        // An output saved before it was recorded (record_op's setup): its saved alias
        // learns whose output it is, so create_graph can differentiate through it.
        for (auto& [alias, src] : node->pending_saved)
            if (src == out.get())
                if (Tensor a = alias.lock()) link_saved_output(a, node, int(i));
    }
    node->pending_saved.clear();
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
    const bool hooked = saved_tensor_hooks_active();
    if (t->requires_grad && t->is_leaf() && !hooked) return t;
    Tensor a = make_alias(t);
    if (t->grad_fn.get() == &node) {
        link_saved_output(a, t->grad_fn, t->output_nr);
    } else if (t->requires_grad) {
        a->requires_grad = true;
        a->grad_fn = t->is_leaf() ? gradient_edge(t).fn : t->grad_fn;  // a leaf's: its AccumulateGrad
        a->output_nr = t->output_nr;
    } else {
        node.pending_saved.push_back({a, t.get()});
    }
    if (hooked) pack_saved(node, a);
    return a;
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
    MT_CHECK_RUNTIME(!t->is_leaf(), op, ": a leaf Variable that requires grad is being used in an in-place "
                                        "operation. (wrap the update in `with minitorch.no_grad():`)");
}

void check_rebase(const Tensor& t, const char* op)
{
    MT_CHECK_RUNTIME(!(t->requires_grad && t->is_leaf()), op, ": a leaf Variable that requires grad is being used in "
                     "an in-place operation. (wrap the update in `with minitorch.no_grad():`)");
    if (t->is_view) {
        Tensor base = t->base.lock();
        if (!base) return;  // the base is gone (an op's temporary): only this tensor's history matters
        // The write goes into the base's history too (CopySlices, in rebase_history).
        MT_CHECK_RUNTIME(!(base->requires_grad && base->is_leaf()), op, ": a view of a leaf Variable that requires "
                         "grad is being used in an in-place operation.");
        MT_CHECK_RUNTIME(base->is_contiguous(), op, ": in-place operations inside a graph on a view of a "
                         "non-contiguous tensor are not supported; use the out-of-place form");
        // Other views of the base would keep the old history (PyTorch regenerates theirs).
        MT_CHECK_RUNTIME(t->storage->views.load() == 1, op, ": in-place operations inside a graph on a view "
                         "(x[i], x.view(...), x.t()...) while other views of its base are alive are not supported; "
                         "use the out-of-place form, or make the other views after the in-place op");
        return;
    }
    MT_CHECK_RUNTIME(t->storage->views.load() == 0, op, ": in-place operations inside a "
                     "graph on a tensor whose views are alive (x[i], x.view(...), x.t()...) are not supported yet: "
                     "the views would keep the old history; use the out-of-place form, or make the views after "
                     "the in-place op");
}

namespace {

// Where a view sits in a contiguous tensor of its base's shape (offset from the base's).
struct ViewGeometry {
    Shape shape;
    Strides strides;
    int64_t offset = 0;
    Tensor in(const Tensor& base_shaped) const { return make_view(base_shaped, shape, strides, offset); }
};

// PyTorch's CopySlices: the history of a base after an in-place write through a view of
// it. Input 0 is the base's old history, input 1 the written result. The base's gradient
// goes to the old history with the view's region zeroed (those values were overwritten),
// and the region itself to the result.
struct CopySlices : Node {
    ViewGeometry view;
    std::string name() const override { return "CopySlices"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        NoGradGuard no_grad;
        Tensor gb = clone(grads[0]);  // contiguous, fresh: the region is zeroed in place below
        Tensor region = view.in(gb);
        Tensor gr = needs_input_grad(1) ? clone(region) : nullptr;
        if (region->numel()) kernels(gb->device()).fill(region, Scalar(0.0));
        return {needs_input_grad(0) ? gb : nullptr, gr};
    }
};

// The history of the written view itself: its gradient, placed in zeros of the base's
// shape, goes to the base's (new) history (PyTorch's AsStridedBackward0).
struct ViewOfBase : Node {
    ViewGeometry view;
    std::string name() const override { return "AsStridedBackward0"; }
    bool supports_double_backward() const override { return false; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        NoGradGuard no_grad;
        const TensorMeta& m = input_meta[0];
        Tensor gb = zeros(m.shape, grads[0]->dtype, m.device);
        Tensor region = view.in(gb);
        if (region->numel()) kernels(gb->device()).copy(region, grads[0]);
        return {gb};
    }
};

}  // namespace

void rebase_history(const Tensor& t, const Tensor& result, const char* op)
{
    MT_CHECK(result->shape == t->shape, op, ": output with shape ", t->shape, " doesn't match the broadcast shape ",
             result->shape);
    Tensor r = result->dtype == t->dtype ? result : to_dtype(result, t->dtype);
    {
        NoGradGuard guard;
        copy_(t, r);  // bumps t's version: whatever saved the old values now refuses to run
    }
    Tensor base = t->is_view ? t->base.lock() : nullptr;
    if (base) {
        // A write through a view: the base's history becomes CopySlices(old history, r),
        // and the view's history the view of that.
        const ViewGeometry g{t->shape, t->strides, t->offset - base->offset};
        auto copy_slices = std::make_shared<CopySlices>();
        copy_slices->view = g;
        record(copy_slices, std::vector<Tensor>{base, r}, std::vector<Tensor>{base});
        auto of_base = std::make_shared<ViewOfBase>();
        of_base->view = g;
        record(of_base, std::vector<Tensor>{base}, std::vector<Tensor>{t});
        return;
    }
    t->grad_fn = r->grad_fn;
    t->output_nr = r->output_nr;
    t->requires_grad = r->requires_grad;
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

namespace {

// Passes its gradient through unchanged (input_proxy's node).
struct AliasBackward : Node {
    std::string name() const override { return "AliasBackward0"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override { return {grads[0]}; }
};

// Stands for the gradients of a node without a differentiable formula under create_graph:
// they were computed, but differentiating them again raises (PyTorch's DelayedError).
struct DelayedError : Node {
    std::string what;
    std::string name() const override { return "DelayedError"; }
    std::vector<Tensor> apply(std::vector<Tensor>&) override
    {
        throw std::runtime_error("double backward is not supported for " + what +
                                 " (create_graph=True gave its first derivative, which cannot be differentiated again)");
    }
};

// out_grads of `node`, made to lead to a DelayedError that depends on in_grads.
void delay_error(const Node& node, const std::vector<Tensor>& in_grads, std::vector<Tensor>& out_grads)
{
    auto err = std::make_shared<DelayedError>();
    err->what = node.name();
    std::vector<Tensor> outs;
    for (Tensor& g : out_grads)
        if (g) {
            g = make_alias(g);
            outs.push_back(g);
        }
    if (!outs.empty()) record(err, in_grads, outs);
}

}  // namespace

Tensor input_proxy(const Node& node, size_t i, const Tensor& value)
{
    MT_CHECK_RUNTIME(value->shape == node.input_meta[i].shape, "internal error: input_proxy of ", node.name(),
                     " got shape ", value->shape, " for input of shape ", node.input_meta[i].shape);
    Tensor p = make_alias(value);
    if (!node.needs_input_grad(i)) return p;
    auto n = std::make_shared<AliasBackward>();
    n->next_edges = {node.next_edges[i]};
    n->input_meta = {node.input_meta[i]};
    n->output_meta = {meta_of(p)};
    n->retained.assign(1, {});
    p->requires_grad = true;
    p->grad_fn = n;
    return p;
}

std::vector<Tensor> differentiate_composite(
    const Node& node, const std::vector<Tensor>& values, const std::vector<Tensor>& grads,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& forward)
{
    // The proxies' nodes have no edges while the composite is differentiated, so that
    // backward stops at them (it must not run the rest of the graph); then they are
    // connected to the inputs, and the gradients computed from them lead there.
    std::vector<Tensor> proxies(values.size()), wanted;
    std::vector<std::shared_ptr<AliasBackward>> nodes(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        if (!values[i]) continue;
        proxies[i] = make_alias(values[i]);
        if (!node.needs_input_grad(i)) continue;
        nodes[i] = std::make_shared<AliasBackward>();
        nodes[i]->output_meta = {meta_of(proxies[i])};
        nodes[i]->retained.assign(1, {});
        proxies[i]->requires_grad = true;
        proxies[i]->grad_fn = nodes[i];
        wanted.push_back(proxies[i]);
    }
    std::vector<Tensor> outs;
    {
        GradModeGuard grad_on(true);
        outs = forward(proxies);
    }
    std::vector<Tensor> roots, seeds;
    for (size_t k = 0; k < outs.size() && k < grads.size(); ++k)
        if (outs[k] && outs[k]->requires_grad && grads[k]) roots.push_back(outs[k]), seeds.push_back(grads[k]);
    std::vector<Tensor> result(values.size());
    if (roots.empty() || wanted.empty()) return result;
    std::vector<Tensor> got = run_backward(roots, seeds, true, &wanted, true, true);
    for (size_t i = 0, k = 0; i < values.size(); ++i) {
        if (!nodes[i]) continue;
        nodes[i]->next_edges = {node.next_edges[i]};
        nodes[i]->input_meta = {node.input_meta[i]};
        result[i] = got[k++];
    }
    return result;
}

std::vector<Tensor> run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
                                 const std::vector<Tensor>* inputs, bool allow_unused, bool create_graph)
{
    // Backward formulas record only under create_graph (then the gradients have a graph).
    GradModeGuard grad_mode(create_graph);

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
    std::unordered_map<Node*, std::vector<Node*>> parents;  // under autograd.grad only (step 3)
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
            if (inputs) parents[e.fn.get()].push_back(n);
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
    // Under autograd.grad a node runs only when an input asked about lies beyond it (as in
    // PyTorch): the ancestors of the capture points. An input's own node (h's MulBackward for
    // grad(y, h)) only hands over its gradient; it runs, and frees what it saved, only when
    // another input lies beyond it.
    // A DelayedError (a backward without double backward, differentiated again) counts as
    // asked about too: reaching it raises "double backward is not supported", which must not
    // turn into "input not used in the graph".
    std::unordered_set<Node*> needed;
    if (inputs) {
        std::vector<Node*> todo;
        for (const Edge& e : capture_edges) todo.push_back(e.fn.get());
        for (const auto& [n, _] : seen)
            if (dynamic_cast<DelayedError*>(n)) needed.insert(n), todo.push_back(n);
        while (!todo.empty()) {
            Node* n = todo.back();
            todo.pop_back();
            for (Node* p : parents[n])
                if (needed.insert(p).second) todo.push_back(p);
        }
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
        const bool runs = !inputs || (!is_acc && needed.count(node));
        bool asked = runs;
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
        if (any && runs) {
            // One profiler event per node run, named as PyTorch's autograd events ("MmBackward0").
            MT_PROFILE_OP(profiler::enabled() ? node->name() : std::string(), in_grads);
            if (node->has_saved) check_not_freed(node);
            for (size_t i = 0; i < in_grads.size(); ++i)
                if (!in_grads[i]) {
                    const TensorMeta& m = node->output_meta[i];
                    in_grads[i] = zeros(m.shape, m.dtype, m.device);
                }
            check_saved_versions(*node);
            if (!node->packed.empty()) unpack_saved(*node);
            out_grads = node->apply(in_grads);
            if (create_graph && !node->supports_double_backward()) delay_error(*node, in_grads, out_grads);
            if (!retain_graph) {
                node->release();
                node->released = true;
                node->saved_versions.clear();
                node->packed.clear();  // what saved_tensors_hooks' pack returned
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
