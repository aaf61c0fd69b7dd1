// autograd.h — reverse-mode automatic differentiation: graph nodes and the engine.
//
// When grad mode is on and an op's input requires grad, the op records a Node: what
// its backward needs (saved tensors, shapes) plus one Edge per input telling where
// that input's gradient goes — the Node that made the input, or an AccumulateGrad
// that adds into a leaf's .grad. backward() walks the nodes from the output in
// topological order. Every backward formula is written with ordinary ops, so it runs
// on any device; the formulas live beside their forward ops in cpp/src/ops/*.cpp.
#pragma once
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "minitorch/tensor.h"

namespace minitorch::autograd {

// ---- grad mode: thread-local on/off switch (no_grad) ----
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

struct NoGradGuard {
    bool prev;
    NoGradGuard() : prev(is_grad_enabled()) { set_grad_enabled(false); }
    ~NoGradGuard() { set_grad_enabled(prev); }
};
struct GradModeGuard {
    bool prev;
    explicit GradModeGuard(bool enabled) : prev(is_grad_enabled()) { set_grad_enabled(enabled); }
    ~GradModeGuard() { set_grad_enabled(prev); }
};

struct Node;

struct Edge {
    std::shared_ptr<Node> fn;  // null: this input needs no gradient
    int input_nr = 0;          // which output of fn the gradient belongs to
};

// Shape, dtype and device of a tensor, enough to make zeros or check a gradient.
struct TensorMeta {
    Shape shape;
    DType dtype = DType::Float32;
    Device device;
};
TensorMeta meta_of(const Tensor& t);

// A saved tensor's storage and its version when saved (weak: checking must not keep
// memory alive), to catch in-place writes between forward and backward.
struct SavedVersion {
    std::weak_ptr<Storage> storage;
    uint64_t version = 0;
    Shape shape;
    DType dtype = DType::Float32;
};

// Hooks backward runs (Tensor.register_hook, register_post_accumulate_grad_hook).
// A gradient hook sees a tensor's gradient as soon as it is complete and may return a
// replacement (null keeps it); the replacement is what flows on. A post-accumulate hook
// runs after a leaf's .grad was updated (how data-parallel training starts sending a
// gradient while backward goes on). Each hook has a process-wide id for removing it.
using GradHook = std::function<Tensor(const Tensor&)>;
using PostAccumulateGradHook = std::function<void(const Tensor&)>;

template <class F>
struct Hook {
    int id;
    F fn;
};

// A leaf's hooks live on the tensor (its AccumulateGrad only lasts as long as a graph);
// a non-leaf's live on the node that computes it, with the output they belong to.
struct LeafHooks {
    std::vector<Hook<GradHook>> grad;
    std::vector<Hook<PostAccumulateGradHook>> post_accumulate;
};

// saved_tensors_hooks: while a pair is active, each tensor saved for backward is handed
// to pack (which returns what stands for it: a copy on the CPU, a file name...) and the
// node keeps only that; backward gets the tensor back from unpack.
struct SavedTensorHooks {
    virtual ~SavedTensorHooks() = default;
    virtual std::shared_ptr<void> pack(const Tensor& t) = 0;
    virtual Tensor unpack(const std::shared_ptr<void>& packed) = 0;
};
struct PackedSaved {
    std::weak_ptr<TensorImpl> alias;  // the saved tensor the formulas read; empty while packed
    std::shared_ptr<SavedTensorHooks> hooks;
    std::shared_ptr<void> packed;
};

struct Node {
    std::vector<Edge> next_edges;                     // one per input
    std::vector<TensorMeta> input_meta;               // one per input
    std::vector<TensorMeta> output_meta;              // one per output
    std::vector<std::weak_ptr<TensorImpl>> retained;  // outputs that called retain_grad()
    bool has_saved = false;                           // set by nodes that save tensors
    bool released = false;                            // saved tensors were freed
    std::vector<SavedVersion> saved_versions;         // filled by autograd::save
    std::vector<std::pair<int, Hook<GradHook>>> grad_hooks;  // (output_nr, hook) of non-leaf outputs
    // Tensors save() was given that may turn out to be this node's outputs (record() then
    // links them to the node): (the saved alias, the tensor it aliases).
    std::vector<std::pair<std::weak_ptr<TensorImpl>, const TensorImpl*>> pending_saved;
    std::vector<PackedSaved> packed;  // saved tensors that went through saved_tensors_hooks

    virtual ~Node() = default;
    virtual std::string name() const = 0;
    // grads: one per output (never null here: the engine fills zeros). Returns one
    // gradient per input; null where the input needs none.
    virtual std::vector<Tensor> apply(std::vector<Tensor>& grads) = 0;
    // Frees saved tensors after a backward without retain_graph.
    virtual void release() {}
    // False for a node whose backward is a fused kernel with no formula written in ops:
    // under create_graph its gradients come out, but differentiating them again raises
    // "double backward is not supported for <name>".
    virtual bool supports_double_backward() const { return true; }

    bool needs_input_grad(size_t i) const { return i < next_edges.size() && next_edges[i].fn != nullptr; }
};

// Adds a gradient into a leaf's .grad.
struct AccumulateGrad : Node {
    Tensor leaf;
    explicit AccumulateGrad(Tensor t) : leaf(std::move(t)) {}
    std::string name() const override { return "AccumulateGrad"; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override;
};

// True when grad mode is on and any input requires grad: the op must record a node.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
inline bool needs_grad(const Tensor& a) { return needs_grad({&a}); }
inline bool needs_grad(const Tensor& a, const Tensor& b) { return needs_grad({&a, &b}); }

// Where the gradient of t goes: its grad_fn, its leaf accumulator, or nowhere.
Edge gradient_edge(const Tensor& t);

// Connects node to its inputs and makes `outputs` its results (requires_grad, grad_fn).
void record(const std::shared_ptr<Node>& node, std::initializer_list<const Tensor*> inputs,
            std::initializer_list<const Tensor*> outputs);
void record(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs);

// The output a node is recorded for: the tensor itself, or the first of (values, indices)
// — max(dim) and max_pool2d also return integer indices, which carry no gradient.
inline const Tensor& differentiable_output(const Tensor& t) { return t; }
inline const Tensor& differentiable_output(const std::tuple<Tensor, Tensor>& r) { return std::get<0>(r); }

// The pattern of every differentiable op, written once: runs `forward` and, when grad
// mode is on and an input requires grad, records a node of type N for its output.
// forward then runs under no_grad (helper ops inside it record nothing of their own),
// and `setup(node, result)` fills in what backward reads (saving tensors with save()).
// An optional input (linear's bias) is passed as a null tensor: its edge is empty and
// the node's needs_input_grad() is false for it.
//     return autograd::record_op<ExpBackward>({&x}, [&] { return exp_forward(x); },
//                                             [&](ExpBackward& n, const Tensor& y) { n.y = save(n, y); });
template <class N, class Forward, class Setup>
auto record_op(std::initializer_list<const Tensor*> inputs, Forward&& forward, Setup&& setup) -> decltype(forward())
{
    if (!needs_grad(inputs)) return forward();
    decltype(forward()) result;
    {
        NoGradGuard guard;
        result = forward();
    }
    auto node = std::make_shared<N>();
    setup(*node, result);
    record(node, inputs, {&differentiable_output(result)});
    return result;
}

// A tensor saved for backward (PyTorch's SavedVariable). The node remembers t's version
// (backward refuses to run if an in-place op changed it) and that it holds saved tensors
// (a second backward without retain_graph is refused). What comes back keeps t's place
// in the graph, so that backward formulas are themselves differentiable (create_graph):
//   - a leaf that requires grad is saved as itself;
//   - another tensor as an alias with t's grad_fn (an input's node: no cycle);
//   - the node's own output as an alias naming the node weakly (saved_output_of): a
//     strong grad_fn would make the cycle node -> saved tensor -> node.
// Active saved_tensors_hooks (pack_hook) see t here; backward sees what unpack returns.
Tensor save(Node& node, const Tensor& t);

// The innermost saved_tensors_hooks (a thread-local stack, as PyTorch's).
void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks);
void pop_saved_tensor_hooks();
bool saved_tensor_hooks_active();
// Packs a saved alias with the active hooks: the node keeps pack's result, the alias
// loses its memory until unpack_saved (run by the engine before the node's backward).
void pack_saved(Node& node, const Tensor& alias);
void unpack_saved(Node& node);

// Called by in-place ops after they write into t's memory.
inline void bump_version(const Tensor& t) { ++t->storage->version; }

// The error backward raises when a saved tensor was modified in place.
void check_saved_versions(const Node& node);

// The error for using saved tensors that backward already freed: `node` was released,
// or is null because its graph is gone.
void check_not_freed(const Node* node);

// Sums a broadcast gradient back to `shape` (the inverse of expand).
Tensor sum_to(const Tensor& grad, const Shape& shape);

// Runs backward from `roots` with `grads` (null = ones for a scalar root). When
// `inputs` is given, their gradients are returned instead of accumulated into .grad.
// With create_graph the formulas run with grad mode on, so the gradients are recorded
// too and can be differentiated again (second derivatives, gradient penalties).
std::vector<Tensor> run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
                                 bool retain_graph, const std::vector<Tensor>* inputs = nullptr,
                                 bool allow_unused = false, bool create_graph = false);

// ---- double backward of fused ops ----
// A tensor with the values `value` (input i's shape) that carries input i's gradient
// edge: a fused op's backward, under create_graph, writes its formula with ordinary ops
// on input_proxy(...) so the result is connected to the input (its saved copy is not).
Tensor input_proxy(const Node& node, size_t i, const Tensor& value);
// The gradients of node's inputs as those of `forward`, the op written with ordinary ops
// (differentiated by the engine with create_graph): the double backward of a fused
// kernel, for ops whose gradient formula is long (conv2d). values[i]: input i's values,
// or null for an input without gradient; forward gets tensors with those values that
// carry the inputs' edges, and returns the op's outputs (one per node output).
std::vector<Tensor> differentiate_composite(
    const Node& node, const std::vector<Tensor>& values, const std::vector<Tensor>& grads,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& forward);

// Makes t keep its .grad after backward (a no-op for leaves).
void retain_grad(const Tensor& t);

// Registers a hook on t (which must require grad) and returns its id. Removing an id that
// is gone already does nothing.
int register_grad_hook(const Tensor& t, GradHook fn);
int register_post_accumulate_grad_hook(const Tensor& t, PostAccumulateGradHook fn);  // leaves only
void remove_hook(const std::weak_ptr<TensorImpl>& leaf, const std::weak_ptr<Node>& node, int id);

// In-place ops inside a graph (x += y, x.relu_() on a tensor that is part of one): the
// op is computed out of place with its gradient recorded, the result is written into x's
// memory, and x's history becomes the op's node (PyTorch calls this rebasing history).
// Anything that saved x's old values for backward sees its version change, and backward
// then raises, as in PyTorch.
//
// True when the in-place op on t with these other operands must be recorded: grad mode
// is on and t or one of them requires grad.
bool inplace_in_graph(const Tensor& t, std::initializer_list<const Tensor*> others);
// Raised before writing into t inside a graph: a leaf that requires grad (or a view of
// one); a tensor with views alive (their history would miss the write); a view while
// other views of its base are alive, or of a non-contiguous base.
void check_rebase(const Tensor& t, const char* op);
// A view whose base is alive: a write into it must reach the base's history too (the general
// rebase path, CopySlices); a view whose base is gone is a tensor like any other.
inline bool live_view(const Tensor& t) { return t->is_view && t->base.lock(); }
// The leaf check alone (x[i] = v, before the write is planned).
void check_inplace(const Tensor& t, const char* op);
// Writes result into t (no gradient recorded for the copy) and makes result's node t's
// history. result must have t's shape; it is cast to t's dtype (a recorded cast). When t
// is a view of a live base, the base's history becomes CopySlices(its old history,
// result) — the region gets result's gradient, the rest the old history's — and t's
// history the view of that (AsStridedBackward0), as in PyTorch.
void rebase_history(const Tensor& t, const Tensor& result, const char* op);

}  // namespace minitorch::autograd
