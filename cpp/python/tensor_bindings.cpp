// tensor_bindings.cpp — the Tensor class as Python sees it: properties, views,
// operators and methods. Each method converts its arguments and calls one op.
// (Pure-Python conveniences such as repr and tolist live in python/minitorch.)
#include "bindings.h"
#include "minitorch/autograd.h"

namespace minitorch::python {

namespace {

// pybind11 turns None into an empty shared_ptr for Tensor arguments: refuse it here,
// before any op dereferences it.
const Tensor& not_none(const Tensor& t, const char* op, const char* what)
{
    MT_CHECK_TYPE(t != nullptr, op, ": argument '", what, "' must be a Tensor, not None");
    return t;
}

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// a <op> b for Python operators: NotImplemented for operands we don't know, so Python
// can try the other side.
py::object binop(BinaryOp op, const Tensor& self, py::handle other, bool reflected)
{
    // A number operand becomes a 0-dim CPU tensor here (on a GPU too: the kernel takes its
    // value as an argument), inside the op's profiler event: `x * 2` is one event "mul".
    const Tensor other_t = tensor_or_null(other);
    MT_PROFILE_OP(op_name(op), reflected ? other_t : self, reflected ? self : other_t);
    auto o = operand_like(other, self);
    if (!o) return not_implemented();
    return py::cast(reflected ? binary(op, *o, self) : binary(op, self, *o));
}

// a <op>= b: in place, returns a.
Tensor inplace(BinaryOp op, const Tensor& self, py::handle other)
{
    MT_PROFILE_OP(profiler::inplace(op_name(op)), self, tensor_or_null(other));
    binary_(op, self, operand_or_throw(other, Device{}, op_name(op), "other"));  // a number stays on the host
    return self;
}

// a.add_(b, alpha=s): a += s * b (what optimizers use).
Tensor inplace_alpha(BinaryOp op, const Tensor& self, py::handle other, py::handle alpha)
{
    MT_PROFILE_OP(profiler::inplace(op_name(op)), self, tensor_or_null(other));  // the scaling by alpha too
    const std::string name = std::string(op_name(op)) + "_";
    Tensor b = operand_or_throw(other, Device{}, name.c_str(), "other");  // a number stays on the host
    // p.add_(g, alpha=-lr) outside a graph (a hand-written SGD step, an EMA): one kernel,
    // self + alpha * g as addcmul_(g, 1, value=alpha), not alpha * g into a temporary first.
    // The same arithmetic; in float16 / bfloat16 alpha * g is no longer rounded on its own.
    const auto s = alpha.is_none() ? std::nullopt : scalar_arg(alpha);
    if (s && (op == BinaryOp::Add || op == BinaryOp::Sub) && is_floating(self->dtype) && !b->wrapped_number &&
        b->dtype == self->dtype && b->device() == self->device() && b->storage != self->storage &&
        !autograd::inplace_in_graph(self, {&b})) {
        const double a = s->to<double>();
        ternary_(TernaryOp::Addcmul, self, b, scalar_tensor(Scalar(1.0), Device{}), Scalar(op == BinaryOp::Sub ? -a : a));
        return self;
    }
    binary_(op, self, times_alpha(b, alpha, name.c_str()));
    return self;
}

py::object item(const Tensor& t)
{
    MT_PROFILE_OP("item", t);  // on a GPU: a copy to the host, which waits for the kernels before it
    MT_CHECK_RUNTIME(t->numel() == 1, "item: a Tensor with ", t->numel(), " elements cannot be converted to Scalar");
    Tensor c = to_device(t, Device{});
    return dispatch_storage(c->dtype, [&](auto tag) -> py::object {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return py::float_(float(*c->data_as<T>()));
        else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return py::int_(int64_t(*c->data_as<T>()));
        else return py::cast(*c->data_as<T>());
    });
}

// max() / max(dim) / max(other) share one name in PyTorch.
py::object max_or_min(bool is_max, const Tensor& t, py::handle dim, bool keepdim)
{
    static py::object max_type = py::module_::import("collections").attr("namedtuple")("max", "values indices");
    static py::object min_type = py::module_::import("collections").attr("namedtuple")("min", "values indices");
    if (dim.is_none()) return py::cast(is_max ? max_all(t) : min_all(t));
    if (py::isinstance<TensorImpl>(dim))
        return py::cast(binary(is_max ? BinaryOp::Maximum : BinaryOp::Minimum, t, dim.cast<Tensor>()));
    int64_t d = int_arg(dim, is_max ? "max" : "min", "dim");
    auto [v, i] = is_max ? max_dim(t, d, keepdim) : min_dim(t, d, keepdim);
    return (is_max ? max_type : min_type)(v, i);
}

std::optional<int64_t> optional_dim(py::handle h, const char* op)
{
    if (h.is_none()) return std::nullopt;
    return int_arg(h, op, "dim");
}

// PyTorch's argument parser also takes NumPy's names: ``axis=`` for ``dim=`` and ``keepdims=``
// for ``keepdim=`` (``x.sum(axis=0, keepdims=True)``). The methods that have a dim take the
// other keywords in ``kw``; this moves those two into ``dim`` / ``keepdim`` (null: the op has
// none) and rejects the rest.
void numpy_names(const char* op, py::object& dim, bool* keepdim, const py::kwargs& kw)
{
    for (auto [key, value] : kw) {
        std::string k = py::str(key);
        if (k == "axis") {
            MT_CHECK_TYPE(dim.is_none(), op, "(): got multiple values for argument 'dim' (axis is its alias)");
            dim = py::reinterpret_borrow<py::object>(value);
        } else if (k == "keepdims" && keepdim) {
            *keepdim = value.cast<bool>();
        } else {
            MT_CHECK_TYPE(false, op, "() got an unexpected keyword argument '", k, "'");
        }
    }
}

void set_requires_grad(const Tensor& t, bool flag)
{
    MT_CHECK_RUNTIME(t->is_leaf() || flag, "you can only change requires_grad flags of leaf variables; use "
                                           "detach() to get a tensor that does not require grad");
    MT_CHECK_RUNTIME(!flag || is_floating(t->dtype), "only Tensors of floating point dtype can require gradients (got ",
                     t->dtype, ")");
    t->requires_grad = flag;
}

}  // namespace

void bind_tensor(py::module_& m)
{
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>> cls(m, "Tensor");
    m.attr("_set_requires_grad") = py::cpp_function(&set_requires_grad);

    // Tensor(other): an alias sharing other's storage (how nn.Parameter wraps data).
    cls.def(py::init([](const Tensor& data, bool requires_grad) {
                not_none(data, "Tensor", "data");
                Tensor t = make_view(data, data->shape, data->strides, data->offset);
                set_requires_grad(t, requires_grad);
                return t;
            }),
            py::arg("data"), py::arg("requires_grad") = false);

    // ---- what a tensor is ----
    cls.def_property(
           "data", [](const Tensor& t) { return make_alias(t); },
           [](const Tensor& t, const Tensor& other) {
               not_none(other, "data", "value");
               MT_CHECK_RUNTIME(other->device() == t->device() || t->is_leaf(), "data: cannot change the device");
               // Swap in other's contents, keeping this object (and its graph identity).
               t->storage = other->storage;
               t->dtype = other->dtype;
               t->shape = other->shape;
               t->strides = other->strides;
               t->offset = other->offset;
           })
        .def_property_readonly("_shape", [](const Tensor& t) { return py::tuple(py::cast(t->shape)); })
        .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t->dtype); })
        .def_property_readonly("device", [](const Tensor& t) { return device_object(t->device()); })
        .def_property_readonly("ndim", [](const Tensor& t) { return t->dim(); })
        .def_property_readonly("is_cuda", [](const Tensor& t) { return !t->device().is_cpu(); })
        .def_property("requires_grad", [](const Tensor& t) { return t->requires_grad; }, &set_requires_grad)
        .def_property(
            "grad", [](const Tensor& t) { return t->grad; },
            [](const Tensor& t, std::optional<Tensor> g) {
                if (g && *g) {
                    MT_CHECK_RUNTIME((*g)->shape == t->shape, "assigned grad has data of a different size: ", (*g)->shape,
                                     " for a tensor of shape ", t->shape);
                    MT_CHECK_RUNTIME((*g)->dtype == t->dtype && (*g)->device() == t->device(),
                                     "assigned grad has a different dtype or device (", (*g)->dtype, ", ", (*g)->device(),
                                     ") than the tensor (", t->dtype, ", ", t->device(), ")");
                }
                t->grad = g ? *g : nullptr;
            })
        .def("dim", [](const Tensor& t) { return t->dim(); })
        .def("numel", [](const Tensor& t) { return t->numel(); })
        .def("element_size", [](const Tensor& t) { return itemsize(t->dtype); })
        .def("stride",
             [](const Tensor& t, py::handle dim) -> py::object {
                 if (dim.is_none()) return py::tuple(py::cast(t->strides));
                 return py::int_(t->stride(int_arg(dim, "stride", "dim")));
             },
             py::arg("dim") = py::none())
        .def("storage_offset", [](const Tensor& t) { return t->offset; })
        .def("data_ptr", [](const Tensor& t) {
            return reinterpret_cast<uintptr_t>(t->storage->data ? t->data() : nullptr);
        })
        .def("is_contiguous", [](const Tensor& t) { return t->is_contiguous(); })
        .def("item", &item)
        .def("numpy", [](const Tensor& t, bool force) { return to_numpy(t, force); }, py::arg("force") = false)
        .def("_storage_id", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t->storage.get()); })
        .def("_to", [](const Tensor& t, py::handle dtype, py::handle device, bool copy) {
            MT_PROFILE_OP("to", t);  // one event for a dtype and device change together
            Tensor out = t;
            if (!dtype.is_none()) out = to_dtype(out, dtype_arg(dtype));
            if (!device.is_none()) out = to_device(out, device_arg(device));
            if (copy && out == t) out = clone(t);
            return out;
        });

    // ---- views ----
    cls.def("view", [](const Tensor& t, py::args s) { return view(t, shape_arg(s, "view")); })
        .def("reshape", [](const Tensor& t, py::args s) { return reshape(t, shape_arg(s, "reshape")); })
        .def("expand", [](const Tensor& t, py::args s) { return expand(t, shape_arg(s, "expand")); })
        .def("permute", [](const Tensor& t, py::args s) { return permute(t, shape_arg(s, "permute")); })
        .def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); }, py::arg("dim0"),
             py::arg("dim1"))
        .def("t", &t_)
        .def_property_readonly("T", [](const Tensor& t) {
            std::vector<int64_t> rev;
            for (int64_t d = t->dim() - 1; d >= 0; --d) rev.push_back(d);
            return permute(t, rev);
        })
        .def_property_readonly("mT", [](const Tensor& t) {
            MT_CHECK(t->dim() >= 2, "mT: tensor must have at least 2 dimensions, got shape ", t->shape);
            return transpose(t, -2, -1);
        })
        .def("unsqueeze",
             [](const Tensor& t, py::object d, const py::kwargs& kw) {
                 numpy_names("unsqueeze", d, nullptr, kw);
                 MT_CHECK_TYPE(!d.is_none(), "unsqueeze() missing required argument 'dim'");
                 return unsqueeze(t, int_arg(d, "unsqueeze", "dim"));
             },
             py::arg("dim") = py::none())
        .def("squeeze",
             [](const Tensor& t, py::object dim, const py::kwargs& kw) {
                 numpy_names("squeeze", dim, nullptr, kw);
                 if (dim.is_none()) return squeeze(t, std::nullopt);
                 return squeeze(t, dims_arg(dim, "squeeze"));
             },
             py::arg("dim") = py::none())
        .def("flatten", &flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
        .def("contiguous", &contiguous)
        .def("clone", &clone)
        .def("detach", [](const Tensor& t) { return make_alias(t); })
        .def("backward",
             [](const Tensor& t, std::optional<Tensor> gradient, std::optional<bool> retain_graph, bool create_graph) {
                 // PyTorch: retain_graph defaults to create_graph (a graph of gradients keeps the old one).
                 autograd::run_backward({t}, {gradient ? *gradient : nullptr}, retain_graph.value_or(create_graph),
                                        nullptr, false, create_graph);
             },
             py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(), py::arg("create_graph") = false)
        .def("__getitem__", &index)
        .def("__setitem__", &index_put);

    // ---- in place ----
    cls.def("copy_", [](const Tensor& t, const Tensor& src) { copy_(t, not_none(src, "copy_", "src")); return t; },
            py::arg("src"))
        .def("fill_",
             [](const Tensor& t, py::handle v) {
                 auto s = scalar_arg(v);
                 MT_CHECK_TYPE(s.has_value(), "fill_: value must be a number");
                 fill_(t, *s);
                 return t;
             })
        .def("zero_", [](const Tensor& t) { fill_(t, Scalar(0.0)); return t; })
        .def("add_", [](const Tensor& t, py::handle o, py::handle alpha) { return inplace_alpha(BinaryOp::Add, t, o, alpha); },
             py::arg("other"), py::kw_only(), py::arg("alpha") = py::none())
        .def("sub_", [](const Tensor& t, py::handle o, py::handle alpha) { return inplace_alpha(BinaryOp::Sub, t, o, alpha); },
             py::arg("other"), py::kw_only(), py::arg("alpha") = py::none())
        .def("mul_", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Mul, t, o); })
        .def("div_", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Div, t, o); })
        .def("__iadd__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Add, t, o); })
        .def("__isub__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Sub, t, o); })
        .def("__imul__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Mul, t, o); })
        .def("__itruediv__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Div, t, o); })
        .def("__imod__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::Remainder, t, o); })
        .def("__ifloordiv__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::FloorDivide, t, o); })
        .def("__iand__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::BitwiseAnd, t, o); })
        .def("__ior__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::BitwiseOr, t, o); })
        .def("__ixor__", [](const Tensor& t, py::handle o) { return inplace(BinaryOp::BitwiseXor, t, o); });

    // ---- operators ----
    struct Op { const char* name; BinaryOp op; bool reflected; };
    static const Op ops[] = {
        {"__add__", BinaryOp::Add, false},      {"__radd__", BinaryOp::Add, true},
        {"__sub__", BinaryOp::Sub, false},      {"__rsub__", BinaryOp::Sub, true},
        {"__mul__", BinaryOp::Mul, false},      {"__rmul__", BinaryOp::Mul, true},
        {"__truediv__", BinaryOp::Div, false},  {"__rtruediv__", BinaryOp::Div, true},
        {"__pow__", BinaryOp::Pow, false},      {"__rpow__", BinaryOp::Pow, true},
        {"__eq__", BinaryOp::Eq, false},        {"__ne__", BinaryOp::Ne, false},
        {"__lt__", BinaryOp::Lt, false},        {"__le__", BinaryOp::Le, false},
        {"__gt__", BinaryOp::Gt, false},        {"__ge__", BinaryOp::Ge, false},
        {"__mod__", BinaryOp::Remainder, false}, {"__rmod__", BinaryOp::Remainder, true},
        {"__floordiv__", BinaryOp::FloorDivide, false}, {"__rfloordiv__", BinaryOp::FloorDivide, true},
        {"__and__", BinaryOp::BitwiseAnd, false}, {"__rand__", BinaryOp::BitwiseAnd, true},
        {"__or__", BinaryOp::BitwiseOr, false},  {"__ror__", BinaryOp::BitwiseOr, true},
        {"__xor__", BinaryOp::BitwiseXor, false}, {"__rxor__", BinaryOp::BitwiseXor, true},
    };
    for (const Op& o : ops) {
        BinaryOp op = o.op;
        bool r = o.reflected;
        cls.def(o.name, [op, r](const Tensor& t, py::handle other) { return binop(op, t, other, r); }, py::is_operator());
    }
    cls.def("__neg__", [](const Tensor& t) { return unary(UnaryOp::Neg, t); })
        .def("__abs__", [](const Tensor& t) { return unary(UnaryOp::Abs, t); })
        .def("__invert__", [](const Tensor& t) { return unary(UnaryOp::BitwiseNot, t); })
        .def("__matmul__", [](const Tensor& a, py::handle b) -> py::object {
            if (!py::isinstance<TensorImpl>(b)) return not_implemented();
            return py::cast(matmul(a, b.cast<Tensor>()));
        })
        .def("__rmatmul__", [](const Tensor& b, py::handle a) -> py::object {
            if (!py::isinstance<TensorImpl>(a)) return not_implemented();
            return py::cast(matmul(a.cast<Tensor>(), b));
        })
        .def("__hash__", [](py::handle self) { return py::hash(py::int_(reinterpret_cast<uintptr_t>(self.ptr()))); });

    // ---- math methods (the same ops as minitorch.f(x)) ----
    for (UnaryOp op : kAllUnaryOps) cls.def(op_name(op), [op](const Tensor& t) { return unary(op, t); });
    auto def_binary = [&](const char* name, BinaryOp op) {
        if (op == BinaryOp::Add || op == BinaryOp::Sub) {  // x.add(y, alpha=2): x + 2 * y
            cls.def(name, [op, name](const Tensor& t, py::handle other, py::handle alpha) {
                MT_PROFILE_OP(op_name(op), t, tensor_or_null(other));
                return binary(op, t, times_alpha(operand_or_throw(other, Device{}, name, "other"), alpha, name));
            }, py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
            return;
        }
        cls.def(name, [op, name](const Tensor& t, py::handle other) {
            MT_PROFILE_OP(op_name(op), t, tensor_or_null(other));
            return binary(op, t, operand_or_throw(other, Device{}, name, "other"));  // a number stays on the host
        }, py::arg("other"));
    };
    for (BinaryOp op : kAllBinaryOps) def_binary(op_name(op), op);
    for (const auto& [alias, op] : kBinaryAliases) def_binary(alias, op);
    cls.def("clamp",
            [](const Tensor& t, py::handle lo, py::handle hi) {
                MT_PROFILE_OP("clamp", t, tensor_or_null(lo), tensor_or_null(hi));
                std::optional<Tensor> l, h;
                // (numbers stay on the host: see host_number in ops/elementwise.cpp)
                if (!lo.is_none()) l = operand_or_throw(lo, Device{}, "clamp", "min");
                if (!hi.is_none()) h = operand_or_throw(hi, Device{}, "clamp", "max");
                return clamp(t, l ? &*l : nullptr, h ? &*h : nullptr);
            },
            py::arg("min") = py::none(), py::arg("max") = py::none())
        .def("matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, not_none(b, "matmul", "other")); },
             py::arg("other"))
        .def("index_select",
             [](const Tensor& t, py::handle dim, const Tensor& index) {
                 return index_select(t, int_arg(dim, "index_select", "dim"), not_none(index, "index_select", "index"));
             },
             py::arg("dim"), py::arg("index"))
        .def("sum",
             [](const Tensor& t, py::object dim, bool keepdim, py::handle dtype, const py::kwargs& kw) {
                 numpy_names("sum", dim, &keepdim, kw);
                 return sum(t, dims_arg(dim, "sum"), keepdim, optional_dtype_arg(dtype));
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none())
        .def("mean",
             [](const Tensor& t, py::object dim, bool keepdim, py::handle dtype, const py::kwargs& kw) {
                 numpy_names("mean", dim, &keepdim, kw);
                 return mean(t, dims_arg(dim, "mean"), keepdim, optional_dtype_arg(dtype));
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none())
        .def("max",
             [](const Tensor& t, py::object dim, bool keepdim, const py::kwargs& kw) {
                 numpy_names("max", dim, &keepdim, kw);
                 return max_or_min(true, t, dim, keepdim);
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false)
        .def("min",
             [](const Tensor& t, py::object dim, bool keepdim, const py::kwargs& kw) {
                 numpy_names("min", dim, &keepdim, kw);
                 return max_or_min(false, t, dim, keepdim);
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false)
        .def("argmax",
             [](const Tensor& t, py::object dim, bool keepdim, const py::kwargs& kw) {
                 numpy_names("argmax", dim, &keepdim, kw);
                 return argmax(t, optional_dim(dim, "argmax"), keepdim);
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false)
        .def("argmin",
             [](const Tensor& t, py::object dim, bool keepdim, const py::kwargs& kw) {
                 numpy_names("argmin", dim, &keepdim, kw);
                 return argmin(t, optional_dim(dim, "argmin"), keepdim);
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false);
}

}  // namespace minitorch::python
