// autograd_bindings.cpp — grad_fn, backward, no_grad, and custom Python Functions.
#include "bindings.h"
#include "minitorch/autograd.h"

namespace minitorch::python {

namespace {

using autograd::Node;

// A node whose backward is a Python callable (minitorch.autograd.Function). The
// callable receives the output gradients and returns one gradient (or None) per
// tensor input; minitorch/autograd/function.py checks counts and shapes.
//
// Who owns what: the outputs own this node (grad_fn); the node owns backward_fn, a
// Python closure over the Function's ctx, and the tensors ctx.save_for_backward named,
// saved with autograd::save like any built-in op's (aliases without grad_fn, so saving
// an output makes no cycle; the engine checks their versions and refuses a second
// backward once release() freed them). ctx reads them through saved_tensors_reader,
// which holds the node weakly: nothing Python owns leads back to the node, so no cycle
// passes through C++ where Python's garbage collector cannot see it.
struct PyNode : Node {
    py::object backward_fn;     // callable(list of grads) -> list of grads
    std::vector<Tensor> saved;  // null where None was saved
    std::string fn_name;

    ~PyNode() override
    {
        py::gil_scoped_acquire gil;
        backward_fn = py::object();
    }
    std::string name() const override { return fn_name; }
    std::vector<Tensor> apply(std::vector<Tensor>& grads) override
    {
        py::gil_scoped_acquire gil;
        py::list gl;
        for (auto& g : grads) gl.append(py::cast(g));
        py::object result = backward_fn(gl);
        std::vector<Tensor> out;
        for (py::handle h : result) out.push_back(h.is_none() ? nullptr : h.cast<Tensor>());
        MT_CHECK_RUNTIME(out.size() == next_edges.size(), fn_name, ": expected ", next_edges.size(),
                         " gradients, got ", out.size());
        return out;
    }
    void release() override { saved.clear(); }
};

// ctx.saved_tensors: the node's saved tensors as a tuple, with the engine's checks
// (freed by backward or gone with the graph; changed in place since forward).
py::cpp_function saved_tensors_reader(const std::shared_ptr<PyNode>& node)
{
    return py::cpp_function([weak = std::weak_ptr<PyNode>(node)]() {
        std::shared_ptr<PyNode> n = weak.lock();
        autograd::check_not_freed(n.get());
        autograd::check_saved_versions(*n);
        if (!n->packed.empty()) autograd::unpack_saved(*n);
        py::tuple out(n->saved.size());
        for (size_t i = 0; i < n->saved.size(); ++i)
            out[i] = n->saved[i] ? py::cast(n->saved[i]) : py::none();
        return out;
    });
}

std::vector<Tensor> tensor_list(py::handle seq, const char* op)
{
    std::vector<Tensor> out;
    if (py::isinstance<TensorImpl>(seq)) return {seq.cast<Tensor>()};
    for (py::handle h : seq) {
        if (h.is_none()) {
            out.push_back(nullptr);
            continue;
        }
        MT_CHECK_TYPE(py::isinstance<TensorImpl>(h), op, ": expected Tensors, got ", type_name(h));
        out.push_back(h.cast<Tensor>());
    }
    return out;
}

// A Python callable inside a C++ hook: called and released under the GIL, wherever
// the graph or tensor holding it dies.
struct PyCallable {
    py::object fn;
    explicit PyCallable(py::object f) : fn(std::move(f)) {}
    ~PyCallable()
    {
        py::gil_scoped_acquire gil;
        fn = py::object();
    }
};

// What Tensor.register_hook returns (PyTorch's RemovableHandle): remove() unregisters
// the hook; it holds the tensor and node weakly, so it keeps nothing alive.
struct HookHandle {
    std::weak_ptr<TensorImpl> leaf;
    std::weak_ptr<Node> node;
    int id = 0;
    void remove() const { autograd::remove_hook(leaf, node, id); }
};

HookHandle handle_for(const Tensor& t, int id)
{
    HookHandle h;
    if (t->is_leaf()) h.leaf = t;
    else h.node = t->grad_fn;
    h.id = id;
    return h;
}

void check_callable(py::handle fn, const char* op)
{
    MT_CHECK_TYPE(PyCallable_Check(fn.ptr()), op, ": expected a callable, got ", type_name(fn));
}

// saved_tensors_hooks with Python callables: the node keeps pack's result (any Python
// object) until backward hands it to unpack.
struct PySavedTensorHooks : autograd::SavedTensorHooks {
    std::shared_ptr<PyCallable> pack_fn, unpack_fn;
    std::shared_ptr<void> pack(const Tensor& t) override
    {
        py::gil_scoped_acquire gil;
        return std::make_shared<PyCallable>(pack_fn->fn(t));
    }
    Tensor unpack(const std::shared_ptr<void>& packed) override
    {
        py::gil_scoped_acquire gil;
        py::object r = unpack_fn->fn(static_cast<PyCallable*>(packed.get())->fn);
        MT_CHECK_TYPE(py::isinstance<TensorImpl>(r), "saved_tensors_hooks: unpack_hook must return a Tensor, got ",
                      type_name(r));
        return r.cast<Tensor>();
    }
};

}  // namespace

void bind_autograd(py::module_& m)
{
    m.def("_push_saved_tensors_hooks", [](py::object pack, py::object unpack) {
        check_callable(pack, "saved_tensors_hooks");
        check_callable(unpack, "saved_tensors_hooks");
        auto h = std::make_shared<PySavedTensorHooks>();
        h->pack_fn = std::make_shared<PyCallable>(std::move(pack));
        h->unpack_fn = std::make_shared<PyCallable>(std::move(unpack));
        autograd::push_saved_tensor_hooks(std::move(h));
    });
    m.def("_pop_saved_tensors_hooks", &autograd::pop_saved_tensor_hooks);
    py::class_<Node, std::shared_ptr<Node>>(m, "Node")
        .def("name", &Node::name)
        .def_property_readonly("next_functions", [](const Node& n) {
            py::list out;
            for (const auto& e : n.next_edges)
                out.append(py::make_tuple(e.fn ? py::cast(e.fn) : py::none(), e.input_nr));
            return py::tuple(out);
        })
        .def("__repr__", [](py::handle self) {
            return "<" + self.cast<Node&>().name() + " object at " +
                   std::string(py::str(py::int_(reinterpret_cast<uintptr_t>(self.ptr())).attr("__format__")("#x"))) +
                   ">";
        });

    m.def("is_grad_enabled", &autograd::is_grad_enabled);
    m.def("_set_grad_enabled", &autograd::set_grad_enabled);
    // In-place ops inside a graph, for the generic Python forms (ops/inplace.py); the C++
    // ones (add_ ...) call the same functions (autograd.h explains the scheme).
    m.def("_check_rebase", [](const Tensor& t, const std::string& op) { autograd::check_rebase(t, op.c_str()); });
    m.def("_rebase_history", [](const Tensor& t, const Tensor& result, const std::string& op) {
        autograd::rebase_history(t, result, op.c_str());
    });
    m.def("_run_backward",
          [](py::handle roots, py::handle grads, bool retain_graph, py::handle inputs, bool allow_unused,
             bool create_graph) {
              std::vector<Tensor> r = tensor_list(roots, "backward");
              std::vector<Tensor> g = grads.is_none() ? std::vector<Tensor>(r.size()) : tensor_list(grads, "backward");
              MT_CHECK(g.size() == r.size(), "backward: got ", r.size(), " tensors and ", g.size(), " gradients");
              if (inputs.is_none()) {
                  autograd::run_backward(r, g, retain_graph, nullptr, false, create_graph);
                  return py::object(py::none());
              }
              std::vector<Tensor> in = tensor_list(inputs, "grad");
              auto out = autograd::run_backward(r, g, retain_graph, &in, allow_unused, create_graph);
              py::list res;
              for (auto& t : out) res.append(t ? py::cast(t) : py::none());
              return py::object(py::tuple(res));
          },
          py::arg("roots"), py::arg("grads"), py::arg("retain_graph"), py::arg("inputs"), py::arg("allow_unused"),
          py::arg("create_graph") = false);
    // Called by Function.apply after forward ran under no_grad; returns ctx's reader
    // of the saved tensors.
    m.def("_record_function", [](py::object backward_fn, std::string name, py::handle inputs, py::handle outputs,
                                 py::handle saved) {
        auto node = std::make_shared<PyNode>();
        node->backward_fn = std::move(backward_fn);
        node->fn_name = std::move(name);
        autograd::record(node, tensor_list(inputs, "Function.apply"), tensor_list(outputs, "Function.apply"));
        for (const Tensor& t : tensor_list(saved, "save_for_backward")) node->saved.push_back(autograd::save(*node, t));
        node->has_saved = !node->saved.empty();
        return saved_tensors_reader(node);
    });

    py::class_<HookHandle>(m, "RemovableHandle")
        .def("remove", &HookHandle::remove)
        .def_readonly("id", &HookHandle::id)
        .def("__enter__", [](const HookHandle& h) { return h; })
        .def("__exit__", [](const HookHandle& h, py::args) { h.remove(); });

    py::class_<TensorImpl, std::shared_ptr<TensorImpl>> cls = m.attr("Tensor");
    cls.def_property_readonly("grad_fn", [](const Tensor& t) { return t->grad_fn; })
        .def_property_readonly("is_leaf", [](const Tensor& t) { return t->is_leaf(); })
        // How many in-place writes the tensor's memory has seen (shared by its views).
        .def_property_readonly("_version", [](const Tensor& t) { return t->storage->version; })
        .def_property_readonly("retains_grad", [](const Tensor& t) { return t->retains_grad; })
        .def("retain_grad", [](const Tensor& t) { autograd::retain_grad(t); })
        // hook(grad) -> None or a replacement gradient, each time t's gradient is computed.
        .def("register_hook",
             [](const Tensor& t, py::object fn) {
                 check_callable(fn, "register_hook");
                 auto held = std::make_shared<PyCallable>(std::move(fn));
                 const int id = autograd::register_grad_hook(t, [held](const Tensor& g) -> Tensor {
                     py::gil_scoped_acquire gil;
                     py::object r = held->fn(g);
                     if (r.is_none()) return nullptr;
                     MT_CHECK_TYPE(py::isinstance<TensorImpl>(r), "register_hook: a hook must return None or a ",
                                   "Tensor, got ", type_name(r));
                     return r.cast<Tensor>();
                 });
                 return handle_for(t, id);
             },
             py::arg("hook"),
             "Calls hook(grad) each time this tensor's gradient is computed; a returned tensor "
             "replaces the gradient. Returns a handle whose remove() unregisters it. A hook on a leaf "
             "that refers to the leaf itself keeps it alive until removed (use a weakref).")
        // hook(tensor) after backward has added into this leaf's .grad.
        .def("register_post_accumulate_grad_hook",
             [](const Tensor& t, py::object fn) {
                 check_callable(fn, "register_post_accumulate_grad_hook");
                 auto held = std::make_shared<PyCallable>(std::move(fn));
                 const int id = autograd::register_post_accumulate_grad_hook(t, [held](const Tensor& leaf) {
                     py::gil_scoped_acquire gil;
                     held->fn(leaf);
                 });
                 return handle_for(t, id);
             },
             py::arg("hook"),
             "Calls hook(tensor) after backward has added into this leaf's .grad (how DDP starts "
             "sending a gradient while backward goes on). Returns a removable handle.")
        .def("detach_", [](const Tensor& t) {
            t->grad_fn.reset();
            t->requires_grad = false;
            return t;
        });
}

}  // namespace minitorch::python
