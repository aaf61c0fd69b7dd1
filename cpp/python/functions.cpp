// functions.cpp — module-level functions: creation, math (minitorch.exp(x), ...),
// threads and seeds. Python wrappers in python/minitorch add the varargs forms.
#include "bindings.h"
#include "minitorch/autograd.h"
#include "minitorch/host_allocator.h"
#include "minitorch/parallel.h"
#include "minitorch/vector_math.h"

namespace minitorch::python {

namespace {

Tensor tensor_arg(py::handle h, const char* op, const char* what = "input")
{
    if (!py::isinstance<TensorImpl>(h)) refuse_quantized(h, op);
    MT_CHECK_TYPE(py::isinstance<TensorImpl>(h), op, ": argument '", what, "' must be a Tensor, not ",
                  type_name(h));
    return h.cast<Tensor>();
}

double number_arg(py::handle h, const char* op, const char* what)
{
    auto s = scalar_arg(h);
    MT_CHECK_TYPE(s.has_value(), op, ": ", what, " must be a number, not ",
                  type_name(h));
    return s->d;
}

}  // namespace

void bind_functions(py::module_& m)
{
    // ---- creation (size already parsed into a tuple by the Python wrapper) ----
    m.def("_empty", [](py::handle size, py::handle dtype, py::handle device) {
        return empty(shape_seq(size, "empty"), dtype_arg(dtype), device_arg(device));
    });
    m.def("_full", [](py::handle size, py::handle value, py::handle dtype, py::handle device) {
        auto s = scalar_arg(value);
        MT_CHECK_TYPE(s.has_value(), "full: fill_value must be a number, not ",
                      type_name(value));
        // Without dtype=: bool -> bool, int -> int64, float -> float32 (PyTorch's inference).
        DType inferred = s->dtype == DType::Float64 ? default_float() : s->dtype;
        return full(shape_seq(size, "full"), *s, dtype_arg(dtype, inferred), device_arg(device));
    });
    m.def("_arange", [](py::handle start, py::handle end, py::handle step, py::handle dtype, py::handle device) {
        bool any_float = false;
        for (py::handle h : {start, end, step}) {
            auto s = scalar_arg(h);
            MT_CHECK_TYPE(s.has_value(), "arange: start, end and step must be numbers, got ",
                          type_name(h));
            any_float = any_float || s->dtype == DType::Float64;
        }
        DType dt = dtype_arg(dtype, any_float ? default_float() : DType::Int64);
        return arange(number_arg(start, "arange", "start"), number_arg(end, "arange", "end"),
                      number_arg(step, "arange", "step"), dt, device_arg(device));
    });
    m.def("_linspace", [](py::handle start, py::handle end, py::handle steps, py::handle dtype, py::handle device) {
        return linspace(number_arg(start, "linspace", "start"), number_arg(end, "linspace", "end"),
                        int_arg(steps, "linspace", "steps"), dtype_arg(dtype), device_arg(device));
    });
    m.def("_eye", [](py::handle n, py::handle mm, py::handle dtype, py::handle device) {
        int64_t rows = int_arg(n, "eye", "n");
        int64_t cols = mm.is_none() ? rows : int_arg(mm, "eye", "m");
        return eye(rows, cols, dtype_arg(dtype), device_arg(device));
    });
    m.def("_rand", [](py::handle size, py::handle dtype, py::handle device) {
        return rand(shape_seq(size, "rand"), dtype_arg(dtype), device_arg(device));
    });
    m.def("_randn", [](py::handle size, py::handle dtype, py::handle device) {
        return randn(shape_seq(size, "randn"), dtype_arg(dtype), device_arg(device));
    });
    m.def("_randint", [](py::handle low, py::handle high, py::handle size, py::handle dtype, py::handle device) {
        return randint(int_arg(low, "randint", "low"), int_arg(high, "randint", "high"), shape_seq(size, "randint"),
                       dtype_arg(dtype, DType::Int64), device_arg(device));
    });
    m.def("manual_seed", [](py::handle seed) {
        manual_seed(static_cast<uint64_t>(int_arg(seed, "manual_seed", "seed")));
    }, py::arg("seed"), "Seeds the random number generator (rand, randn, randint, ...).");

    // The CPU generator's state (utils.checkpoint replays a forward's random numbers).
    m.def("_cpu_rng_state", [] { return py::bytes(cpu::rng_state()); });
    m.def("_set_cpu_rng_state", [](const py::bytes& s) { cpu::set_rng_state(std::string(s)); });

    // ---- threads ----
    m.def("set_num_threads", &set_num_threads, py::arg("n"),
          "Sets the number of threads used by minitorch's kernels and BLAS.");
    m.def("get_num_threads", &get_num_threads);
    m.def("_set_cpu_matmul", [](const std::string& name) {
        if (name == "naive") cpu::set_matmul_algo(cpu::MatmulAlgo::Naive);
        else if (name == "blocked") cpu::set_matmul_algo(cpu::MatmulAlgo::Blocked);
        else if (name == "blas") cpu::set_matmul_algo(cpu::MatmulAlgo::Blas);
        else throw ValueError("backends.cpu.matmul: expected 'naive', 'blocked' or 'blas', got '" + name + "'");
    });
    m.def("_get_cpu_matmul", [] {
        auto a = cpu::matmul_algo();
        return a == cpu::MatmulAlgo::Naive ? "naive" : a == cpu::MatmulAlgo::Blocked ? "blocked" : "blas";
    });
    m.def("_set_cpu_conv_algorithm", [](const std::string& name) {
        if (name == "auto") cpu::set_conv_algo(cpu::ConvAlgo::Auto);
        else if (name == "direct") cpu::set_conv_algo(cpu::ConvAlgo::Direct);
        else if (name == "im2col") cpu::set_conv_algo(cpu::ConvAlgo::Im2col);
        else throw ValueError("backends.cpu.conv_algorithm: expected 'auto', 'direct' or 'im2col', got '" + name + "'");
    });
    m.def("_get_cpu_conv_algorithm", [] {
        auto a = cpu::conv_algo();
        return a == cpu::ConvAlgo::Auto ? "auto" : a == cpu::ConvAlgo::Direct ? "direct" : "im2col";
    });
    m.def("live_tensor_count", &live_tensor_count, "Number of tensor objects alive (for leak checks).");
    // The CPU caching allocator (cpu/allocator.cpp), for minitorch.cpu.
    m.def("_cpu_empty_cache", &cpu::empty_cache);
    m.def("_cpu_memory_allocated", &cpu::memory_allocated);
    m.def("_cpu_max_memory_allocated", &cpu::max_memory_allocated);
    m.def("_cpu_memory_cached", &cpu::memory_cached);
    m.def("_cpu_reset_peak_memory_stats", &cpu::reset_peak_memory_stats);
    m.def("_cpu_caching_enabled", &cpu::caching_enabled);
    m.def("_cpu_capability", [] { return std::string(cpu::cpu_capability()); });
    m.def("_get_default_dtype", [] { return default_float(); });
    m.def("_set_default_dtype", [](DType t) { set_default_float(t); });

    // ---- math ----
    py::list elementwise;  // minitorch/__init__.py exports these as minitorch.<name>
    for (UnaryOp op : kAllUnaryOps) {
        const char* name = op_name(op);
        m.def(name, [op, name](py::handle x) { return unary(op, tensor_arg(x, name)); }, py::arg("input"));
        if (name[0] != '_') elementwise.append(name);  // '_' names are internal (op_list.h)
    }
    // x.relu_(), x.exp_() ... (ops/inplace.py): op(x) written into x by one kernel.
    py::list unary_names;
    for (UnaryOp op : kAllUnaryOps) unary_names.append(op_name(op));
    m.attr("_unary_op_names") = py::tuple(unary_names);
    m.def("_unary_", [](const Tensor& t, const std::string& name) {
        for (UnaryOp op : kAllUnaryOps)
            if (name == op_name(op)) {
                unary_(op, t);
                return t;
            }
        throw ValueError("_unary_: no unary op named " + name);
    }, py::arg("self"), py::arg("name"));
    // self.<name>_(other) of any binary op (F.leaky_relu(x, 0.2, inplace=True) is
    // _binary_(x, "_leaky_relu", 0.2)): one kernel into self, as x += y.
    m.def("_binary_", [](const Tensor& t, const std::string& name, py::handle other) {
        for (BinaryOp op : kAllBinaryOps)
            if (name == op_name(op)) {
                binary_(op, t, operand_or_throw(other, Device{}, op_name(op), "other"));  // a number stays on the host
                return t;
            }
        throw ValueError("_binary_: no binary op named " + name);
    }, py::arg("self"), py::arg("name"), py::arg("other"));
    // F.hardtanh / relu6: one clamp kernel, PyTorch's gradient (0 at the bounds); the
    // in-place form writes into input, recorded inside a graph too.
    m.def("_hardtanh", [](py::handle x, double lo, double hi) { return hardtanh(tensor_arg(x, "hardtanh"), lo, hi); },
          py::arg("input"), py::arg("min_val"), py::arg("max_val"));
    m.def("_hardtanh_", [](const Tensor& x, double lo, double hi) {
        hardtanh_(x, lo, hi);
        return x;
    }, py::arg("input"), py::arg("min_val"), py::arg("max_val"));
    auto def_binary = [&](const char* name, BinaryOp op) {
        static auto call = [](BinaryOp op, const char* name, py::handle x, py::handle y, py::handle alpha) {
            MT_PROFILE_OP(op_name(op), tensor_or_null(x), tensor_or_null(y));  // numbers' conversion included
            // One side may be a number (minitorch.pow(2, x)); at least one must be a tensor. A
            // number stays on the host, whatever the tensor's device (see host_number in ops/elementwise.cpp).
            if (!py::isinstance<TensorImpl>(x)) tensor_arg(y, name, "other");
            Tensor b = times_alpha(operand_or_throw(y, Device{}, name, "other"), alpha, name);
            return binary(op, operand_or_throw(x, Device{}, name, "input"), b);
        };
        if (op == BinaryOp::Add || op == BinaryOp::Sub)  // add(x, y, alpha=2): x + 2 * y
            m.def(name, [op, name](py::handle x, py::handle y, py::handle alpha) { return call(op, name, x, y, alpha); },
                  py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
        else
            m.def(name, [op, name](py::handle x, py::handle y) { return call(op, name, x, y, py::none()); },
                  py::arg("input"), py::arg("other"));
        if (name[0] != '_') elementwise.append(name);  // '_' names are internal (op_list.h)
    };
    for (BinaryOp op : kAllBinaryOps) def_binary(op_name(op), op);
    for (const auto& [alias, op] : kBinaryAliases) def_binary(alias, op);
    m.attr("_elementwise_ops") = py::tuple(elementwise);
    m.def("where", [](py::handle cond, py::handle x, py::handle y) {
        Tensor c = tensor_arg(cond, "where", "condition");
        MT_PROFILE_OP("where", c, tensor_or_null(x), tensor_or_null(y));
        // (numbers stay on the host: see where() in ops/elementwise.cpp)
        return where(c, operand_or_throw(x, Device{}, "where", "input"), operand_or_throw(y, Device{}, "where", "other"));
    }, py::arg("condition"), py::arg("input"), py::arg("other"));
    // lerp / addcmul / addcdiv (ops/ternary.cpp: one kernel each) and their in-place forms;
    // python/minitorch/ops/pointwise_math.py checks the Python-level arguments first. c may be
    // a number (lerp's weight): it stays on the host, as a binary op's.
    static auto ternary_op = [](const std::string& name) {
        if (name == "lerp") return TernaryOp::Lerp;
        if (name == "addcmul") return TernaryOp::Addcmul;
        if (name == "addcdiv") return TernaryOp::Addcdiv;
        throw ValueError("_ternary: no ternary op named " + name);
    };
    static auto value_arg = [](py::handle h, const std::string& name) {
        auto s = scalar_arg(h);
        MT_CHECK_TYPE(s.has_value(), name, "(): argument 'value' must be a number, not ", type_name(h));
        return *s;
    };
    // (a number c is made in a's dtype, or float32 beside a 16-bit a, from a small cache: no
    // conversion or allocation per call of p.lerp_(q, 0.1))
    static auto weight_arg = [](py::handle c, const Tensor& a, const std::string& name) {
        auto t = operand_like(c, a);
        MT_CHECK_TYPE(t.has_value(), name, "(): argument 'weight' must be a number or a Tensor, not ", type_name(c));
        return *t;
    };
    m.def("_ternary", [](const std::string& name, const Tensor& a, const Tensor& b, py::handle c, py::handle value) {
        return ternary(ternary_op(name), a, b, weight_arg(c, a, name), value_arg(value, name));
    });
    m.def("_ternary_", [](const std::string& name, const Tensor& a, const Tensor& b, py::handle c, py::handle value) {
        ternary_(ternary_op(name), a, b, weight_arg(c, a, name), value_arg(value, name));
        return a;
    });
    m.def("matmul", [](py::handle a, py::handle b) {
        return matmul(tensor_arg(a, "matmul"), tensor_arg(b, "matmul", "other"));
    }, py::arg("input"), py::arg("other"));
    m.def("index_select", [](py::handle x, py::handle dim, py::handle index) {
        return index_select(tensor_arg(x, "index_select"), int_arg(dim, "index_select", "dim"),
                            tensor_arg(index, "index_select", "index"));
    }, py::arg("input"), py::arg("dim"), py::arg("index"));
    m.def("_embedding_rows", &embedding_rows, py::arg("weight"), py::arg("indices"),
          py::arg("padding_idx") = py::none());

    // ---- joining, scans, sorting, writes by index (python/minitorch/ops/join.py, sorting.py,
    // reduction.py and indexing.py give them PyTorch's signatures) ----
    m.def("_cat", [](const std::vector<py::handle>& tensors, int64_t dim) {
        std::vector<Tensor> ts;
        for (size_t k = 0; k < tensors.size(); ++k) ts.push_back(tensor_arg(tensors[k], "cat", "tensors"));
        return cat(ts, dim);
    });
    m.def("_split_with_sizes", [](const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim) {
        return split_with_sizes(t, sizes, dim);
    });
    m.def("_cumsum", [](const Tensor& t, int64_t dim, py::handle dtype) { return cumsum(t, dim, optional_dtype_arg(dtype)); });
    m.def("_cumprod", [](const Tensor& t, int64_t dim, py::handle dtype) { return cumprod(t, dim, optional_dtype_arg(dtype)); });
    m.def("_logcumsumexp", [](const Tensor& t, int64_t dim) { return logcumsumexp(t, dim); });
    m.def("_sort", [](const Tensor& t, int64_t dim, bool descending) { return sort(t, dim, descending); });
    m.def("_index_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, double alpha) {
        return index_add(t, dim, index, source, alpha);
    });
    m.def("_index_copy", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
        return index_copy(t, dim, index, source);
    });
    // ops/indexing.cpp and stack (python/minitorch/ops/indexing.py and ops/join.py check the
    // Python-level arguments and call these)
    m.def("_index_fill", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& value) {
        return index_fill(t, dim, index, value);
    });
    m.def("_gather", [](const Tensor& t, int64_t dim, const Tensor& index) { return gather(t, dim, index); });
    m.def("_scatter", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, bool add) {
        return scatter(t, dim, index, src, add);
    });
    m.def("_scatter_reduce", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                                const std::string& reduce, bool include_self) {
        return scatter_reduce(t, dim, index, src, scatter_reduction(reduce), include_self);
    });
    m.def("_index_put", [](const Tensor& t, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
        return index_put(t, indices, values, accumulate);
    });
    m.def("_index_put_", [](const Tensor& t, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
        minitorch::index_put_(t, indices, values, accumulate);
        return t;
    });
    m.def("_index", [](const Tensor& t, const std::vector<Tensor>& indices) { return minitorch::index(t, indices); });
    m.def("_masked_fill", [](const Tensor& t, const Tensor& mask, const Tensor& value) { return masked_fill(t, mask, value); });
    // t.uniform_(lo, hi) / t.normal_(mean, std) on a contiguous float32 / float64 t outside a
    // graph: the generator's kernel draws straight into t (ops/inplace.py checks the rest).
    m.def("_random_", [](const Tensor& t, const std::string& kind, double lo, double hi) {
        MT_CHECK(kind == "uniform" || kind == "normal", "_random_: kind must be 'uniform' or 'normal'");
        MT_PROFILE_OP(profiler::inplace(kind.c_str()), t);
        MT_CHECK(t->is_contiguous() && (t->dtype == DType::Float32 || t->dtype == DType::Float64),
                 kind, "_: the direct draw takes a contiguous float32 or float64 tensor");
        if (t->numel()) kernels(t->device()).random(kind == "uniform" ? RandomOp::Uniform : RandomOp::Normal, t, lo, hi);
        autograd::bump_version(t);
    });
    m.def("_clamp_", [](const Tensor& t, py::handle lo, py::handle hi, const std::string& name) {
        std::optional<Tensor> l, h;  // numbers stay on the host, as clamp's
        if (!lo.is_none()) l = operand_or_throw(lo, Device{}, name.c_str(), "min");
        if (!hi.is_none()) h = operand_or_throw(hi, Device{}, name.c_str(), "max");
        clamp_(t, l ? &*l : nullptr, h ? &*h : nullptr, name.c_str());
    });
    m.def("_masked_fill_", [](const Tensor& t, const Tensor& mask, const Tensor& value) { masked_fill_(t, mask, value); });
    m.def("_masked_select", [](const Tensor& t, const Tensor& mask) { return masked_select(t, mask); });
    m.def("_nonzero", [](const Tensor& t) { return nonzero(t); });
    m.def("_stack", [](const std::vector<Tensor>& tensors, int64_t dim) { return stack(tensors, dim); });

    // ---- fused nn ops (minitorch.nn.functional wraps these) ----
    m.def("_linear", [](py::handle x, py::handle w, py::handle b) {
        return linear(tensor_arg(x, "linear"), tensor_arg(w, "linear", "weight"),
                      b.is_none() ? nullptr : tensor_arg(b, "linear", "bias"));
    });
    m.def("_log_softmax", [](py::handle x, py::handle dim) {
        return log_softmax(tensor_arg(x, "log_softmax"), int_arg(dim, "log_softmax", "dim"));
    });
    m.def("_softmax", [](py::handle x, py::handle dim) {
        return softmax(tensor_arg(x, "softmax"), int_arg(dim, "softmax", "dim"));
    });
    m.def("_layer_norm", [](py::handle x, int64_t D, py::handle w, py::handle b, double eps) {
        return layer_norm(tensor_arg(x, "layer_norm"), D, w.is_none() ? nullptr : tensor_arg(w, "layer_norm", "weight"),
                          b.is_none() ? nullptr : tensor_arg(b, "layer_norm", "bias"), eps);
    });
    m.def("_rms_norm", [](py::handle x, int64_t D, py::handle w, double eps) {
        return rms_norm(tensor_arg(x, "rms_norm"), D, w.is_none() ? nullptr : tensor_arg(w, "rms_norm", "weight"), eps);
    });
    m.def("_group_norm", [](py::handle x, int64_t num_groups, py::handle w, py::handle b, double eps) {
        return group_norm(tensor_arg(x, "group_norm"), num_groups,
                          w.is_none() ? nullptr : tensor_arg(w, "group_norm", "weight"),
                          b.is_none() ? nullptr : tensor_arg(b, "group_norm", "bias"), eps);
    });
    m.def("_dropout", [](py::handle x, double p) { return dropout(tensor_arg(x, "dropout"), p); });
    m.def(
        "_batch_norm",
        [](py::handle x, py::handle rm, py::handle rv, py::handle w, py::handle b, bool training, double momentum,
           double eps, py::handle nbt) {
            auto opt = [](py::handle t, const char* name) {
                return t.is_none() ? nullptr : tensor_arg(t, "batch_norm", name);
            };
            return batch_norm(tensor_arg(x, "batch_norm"), opt(rm, "running_mean"), opt(rv, "running_var"),
                              opt(w, "weight"), opt(b, "bias"), training, momentum, eps,
                              opt(nbt, "num_batches_tracked"));
        },
        py::arg("x"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight"), py::arg("bias"),
        py::arg("training"), py::arg("momentum"), py::arg("eps"), py::arg("num_batches_tracked") = py::none());
    m.def(
        "_scaled_dot_product_attention",
        [](py::handle q, py::handle k, py::handle v, py::handle mask, bool is_causal, double scale, double dropout_p,
           uint64_t seed, uint64_t offset) {
            const char* op = "scaled_dot_product_attention";
            return scaled_dot_product_attention(tensor_arg(q, op, "query"), tensor_arg(k, op, "key"),
                                                tensor_arg(v, op, "value"),
                                                mask.is_none() ? nullptr : tensor_arg(mask, op, "attn_mask"), is_causal,
                                                scale, dropout_p, seed, offset);
        },
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask"), py::arg("is_causal"),
        py::arg("scale"), py::arg("dropout_p") = 0.0, py::arg("seed") = 0, py::arg("offset") = 0);
    // The keep mask (B, L, S) bool that the fused attention's dropout with these arguments applies
    // (attention_math.h's AttentionDropout): the tests' reference.
    m.def("_attention_dropout_mask", &attention_dropout_mask, py::arg("seed"), py::arg("offset"), py::arg("B"),
          py::arg("L"), py::arg("S"), py::arg("p"));
    m.def("_lstm_cell", [](py::handle gates, py::handle c) {
        return lstm_cell(tensor_arg(gates, "lstm_cell", "gates"), tensor_arg(c, "lstm_cell", "c"));
    });
    m.def(
        "_lstm_layer",
        [](py::handle xw, py::handle h0, py::handle c0, py::handle w_hh, bool reverse) {
            return lstm_layer(tensor_arg(xw, "lstm_layer", "xw"), tensor_arg(h0, "lstm_layer", "h0"),
                              tensor_arg(c0, "lstm_layer", "c0"), tensor_arg(w_hh, "lstm_layer", "w_hh"), reverse);
        },
        py::arg("xw"), py::arg("h0"), py::arg("c0"), py::arg("w_hh"), py::arg("reverse") = false);
    m.def(
        "_gru_layer",
        [](py::handle xw, py::handle h0, py::handle w_hh, py::handle b_hh, bool reverse) {
            return gru_layer(tensor_arg(xw, "gru_layer", "xw"), tensor_arg(h0, "gru_layer", "h0"),
                             tensor_arg(w_hh, "gru_layer", "w_hh"),
                             b_hh.is_none() ? Tensor() : tensor_arg(b_hh, "gru_layer", "b_hh"), reverse);
        },
        py::arg("xw"), py::arg("h0"), py::arg("w_hh"), py::arg("b_hh") = py::none(), py::arg("reverse") = false);
    m.def(
        "_rnn_layer",
        [](py::handle xw, py::handle h0, py::handle w_hh, bool relu, bool reverse) {
            return rnn_layer(tensor_arg(xw, "rnn_layer", "xw"), tensor_arg(h0, "rnn_layer", "h0"),
                             tensor_arg(w_hh, "rnn_layer", "w_hh"), relu, reverse);
        },
        py::arg("xw"), py::arg("h0"), py::arg("w_hh"), py::arg("relu") = false, py::arg("reverse") = false);
    // One recurrent layer on cuDNN (ops/rnn.cpp's cudnn_rnn_layer): None where the device has
    // no RNN library or it declines the case; nn.LSTM / GRU / RNN then run their own kernels.
    m.def(
        "_cudnn_rnn_layer",
        [](py::handle x, py::handle hx, py::handle cx, py::sequence weights, const std::string& mode,
           bool bidirectional) -> py::object {
            const char* op = "cudnn_rnn_layer";
            RnnMode m;
            if (mode == "LSTM") m = RnnMode::Lstm;
            else if (mode == "GRU") m = RnnMode::Gru;
            else if (mode == "RNN_TANH") m = RnnMode::RnnTanh;
            else if (mode == "RNN_RELU") m = RnnMode::RnnRelu;
            else throw ValueError("cudnn_rnn_layer: expected mode 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU', got '" +
                                  mode + "'");
            std::vector<Tensor> ws;
            for (py::handle w : weights) ws.push_back(tensor_arg(w, op, "weights"));
            auto out = cudnn_rnn_layer(tensor_arg(x, op, "input"), tensor_arg(hx, op, "hx"),
                                       cx.is_none() ? Tensor() : tensor_arg(cx, op, "cx"), ws, m, bidirectional);
            if (!out) return py::none();
            return py::cast(*out);
        },
        py::arg("input"), py::arg("hx"), py::arg("cx"), py::arg("weights"), py::arg("mode"),
        py::arg("bidirectional") = false);
    m.def("_has_rnn_library", [](py::handle device) { return rnn_library(device_arg(device)) != nullptr; });
    // Tests: the reference RnnLibrary on the CPU (on) or no library there (off, the default).
    m.def("_set_reference_rnn_library", [](bool on) {
        register_rnn_library(DeviceType::CPU, on ? reference_rnn_library() : nullptr);
    });
    m.def(
        "_cross_entropy",
        [](py::handle x, py::handle t, int reduction, int64_t ignore_index, py::handle w, double label_smoothing) {
            return cross_entropy(tensor_arg(x, "cross_entropy"), tensor_arg(t, "cross_entropy", "target"), reduction,
                                 ignore_index, w.is_none() ? nullptr : tensor_arg(w, "cross_entropy", "weight"),
                                 label_smoothing);
        },
        py::arg("input"), py::arg("target"), py::arg("reduction"), py::arg("ignore_index"), py::arg("weight") = py::none(),
        py::arg("label_smoothing") = 0.0);
    m.def(
        "_nll_loss",
        [](py::handle x, py::handle t, int reduction, int64_t ignore_index, py::handle w) {
            return nll_loss(tensor_arg(x, "nll_loss"), tensor_arg(t, "nll_loss", "target"), reduction, ignore_index,
                            w.is_none() ? nullptr : tensor_arg(w, "nll_loss", "weight"));
        },
        py::arg("input"), py::arg("target"), py::arg("reduction"), py::arg("ignore_index"), py::arg("weight") = py::none());
    // ---- rearranging, statistics and top k (python/minitorch/ops/shape.py, reduction.py and
    // sorting.py parse PyTorch's argument forms: dims as lists, correction from unbiased,
    // p from 'fro') ----
    m.def("_flip", [](const Tensor& t, const std::vector<int64_t>& dims) { return flip(t, dims); });
    m.def("_constant_pad_nd", [](const Tensor& t, const std::vector<int64_t>& pad, py::handle value) {
        auto s = scalar_arg(value);
        MT_CHECK_TYPE(s.has_value(), "constant_pad_nd: value must be a number, not ", type_name(value));
        return constant_pad_nd(t, pad, *s);
    });
    m.def("_roll", [](const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
        return roll(t, shifts, dims);
    });
    m.def("_tril", [](const Tensor& t, int64_t diagonal) { return tril(t, diagonal); });
    m.def("_triu", [](const Tensor& t, int64_t diagonal) { return triu(t, diagonal); });
    m.def("_repeat", [](const Tensor& t, const std::vector<int64_t>& repeats) { return repeat(t, repeats); });
    m.def("_unfold", [](const Tensor& t, int64_t dim, int64_t size, int64_t step) { return unfold(t, dim, size, step); });
    m.def("_var", [](const Tensor& t, const std::vector<int64_t>& dims, double correction, bool keepdim) {
        return var(t, dims, correction, keepdim);
    });
    m.def("_std", [](const Tensor& t, const std::vector<int64_t>& dims, double correction, bool keepdim) {
        return std_dev(t, dims, correction, keepdim);
    });
    m.def("_var_mean", [](const Tensor& t, const std::vector<int64_t>& dims, double correction, bool keepdim) {
        return var_mean(t, dims, correction, keepdim);
    });
    m.def("_std_mean", [](const Tensor& t, const std::vector<int64_t>& dims, double correction, bool keepdim) {
        return std_mean(t, dims, correction, keepdim);
    });
    m.def("_logsumexp", [](const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
        return logsumexp(t, dims, keepdim);
    });
    m.def("_norm", [](const Tensor& t, double p, const std::vector<int64_t>& dims, bool keepdim) {
        return norm(t, p, dims, keepdim);
    });
    m.def("_topk", [](const Tensor& t, int64_t k, int64_t dim, bool largest) { return topk(t, k, dim, largest); });
    // reductions, scans and searches over sorted lines (ops/reduction.py, ops/sets.py parse the arguments)
    m.def("_prod", [](const Tensor& t, const std::vector<int64_t>& dims, bool keepdim, py::handle dtype) {
        return prod(t, dims, keepdim, optional_dtype_arg(dtype));
    });
    m.def("_cummax", [](const Tensor& t, int64_t dim) { return cummax(t, dim); });
    m.def("_cummin", [](const Tensor& t, int64_t dim) { return cummin(t, dim); });
    m.def("_searchsorted", [](const Tensor& sorted, const Tensor& values, bool right) {
        return searchsorted(sorted, values, right);
    });

    // ---- convolution and pooling: (h, w) pairs already expanded by nn.functional ----
    m.def("_conv2d", [](py::handle x, py::handle w, py::handle b, std::array<int64_t, 2> stride,
                        std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, int64_t groups) {
        return conv2d(tensor_arg(x, "conv2d"), tensor_arg(w, "conv2d", "weight"),
                      b.is_none() ? nullptr : tensor_arg(b, "conv2d", "bias"), stride, padding, dilation, groups);
    }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"), py::arg("dilation"),
       py::arg("groups") = 1);
    m.def("_conv_transpose2d", [](py::handle x, py::handle w, py::handle b, std::array<int64_t, 2> stride,
                                  std::array<int64_t, 2> padding, std::array<int64_t, 2> output_padding,
                                  int64_t groups, std::array<int64_t, 2> dilation) {
        return conv_transpose2d(tensor_arg(x, "conv_transpose2d"), tensor_arg(w, "conv_transpose2d", "weight"),
                                b.is_none() ? nullptr : tensor_arg(b, "conv_transpose2d", "bias"), stride, padding,
                                output_padding, groups, dilation);
    });
    m.def("_im2col", [](py::handle x, std::array<int64_t, 2> k, std::array<int64_t, 2> dilation,
                        std::array<int64_t, 2> padding, std::array<int64_t, 2> stride) {
        return im2col(tensor_arg(x, "unfold"), k, dilation, padding, stride);
    });
    m.def("_col2im", [](py::handle x, std::array<int64_t, 2> output_size, std::array<int64_t, 2> k,
                        std::array<int64_t, 2> dilation, std::array<int64_t, 2> padding, std::array<int64_t, 2> stride) {
        return col2im(tensor_arg(x, "fold"), output_size, k, dilation, padding, stride);
    });
    m.def("_max_pool2d", [](py::handle x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                            std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation, bool ceil_mode) {
        return max_pool2d(tensor_arg(x, "max_pool2d"), k, stride, padding, dilation, ceil_mode);
    });
    m.def("_avg_pool2d", [](py::handle x, std::array<int64_t, 2> k, std::array<int64_t, 2> stride,
                            std::array<int64_t, 2> padding, bool ceil_mode) {
        return avg_pool2d(tensor_arg(x, "avg_pool2d"), k, stride, padding, ceil_mode);
    });
    m.def("_upsample2d", [](py::handle x, std::array<int64_t, 2> size, const std::string& mode, bool align_corners,
                            std::array<double, 2> scales) {
        return upsample2d(tensor_arg(x, "interpolate"), size, mode, align_corners, scales);
    });
    // ---- fused optimizer steps (minitorch.optim's SGD, Adam and AdamW call these) ----
    m.def("_sgd_step", [](py::handle param, py::handle grad, py::handle momentum_buffer, double lr, double momentum,
                          double dampening, double weight_decay, bool nesterov) {
        return sgd_step(tensor_arg(param, "sgd_step", "param"), tensor_arg(grad, "sgd_step", "grad"),
                        momentum_buffer.is_none() ? nullptr : tensor_arg(momentum_buffer, "sgd_step", "momentum_buffer"),
                        SgdStep{lr, momentum, dampening, weight_decay, nesterov});
    }, py::arg("param"), py::arg("grad"), py::arg("momentum_buffer"), py::kw_only(), py::arg("lr"), py::arg("momentum"),
       py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"),
       "One SGD step on param in place; returns the momentum buffer (new on the first momentum step).");
    m.def("_adam_step", [](py::handle param, py::handle grad, py::handle exp_avg, py::handle exp_avg_sq, double lr,
                           double beta1, double beta2, double eps, double weight_decay, bool decoupled, int64_t step) {
        const char* op = decoupled ? "adamw_step" : "adam_step";
        adam_step(tensor_arg(param, op, "param"), tensor_arg(grad, op, "grad"), tensor_arg(exp_avg, op, "exp_avg"),
                  tensor_arg(exp_avg_sq, op, "exp_avg_sq"),
                  AdamStep{lr, beta1, beta2, eps, weight_decay, decoupled, step});
    }, py::arg("param"), py::arg("grad"), py::arg("exp_avg"), py::arg("exp_avg_sq"), py::kw_only(), py::arg("lr"),
       py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"), py::arg("decoupled"),
       py::arg("step"), "One Adam (decoupled: AdamW) step on param and its moments in place; step counts from 1.");
    // The foreach forms: lists of params, grads and state, one device and dtype.
    auto tensor_list = [](py::handle seq, const char* op, const char* what, bool none_ok) {
        std::vector<Tensor> out;
        for (py::handle t : py::reinterpret_borrow<py::sequence>(seq))
            out.push_back(none_ok && t.is_none() ? nullptr : tensor_arg(t, op, what));
        return out;
    };
    m.def("_sgd_step_foreach", [tensor_list](py::sequence params, py::sequence grads, py::sequence momentum_buffers,
                                             double lr, double momentum, double dampening, double weight_decay,
                                             bool nesterov) {
        const char* op = "sgd_step_foreach";
        return sgd_step_foreach(tensor_list(params, op, "params", false), tensor_list(grads, op, "grads", false),
                                tensor_list(momentum_buffers, op, "momentum_buffers", true),
                                SgdStep{lr, momentum, dampening, weight_decay, nesterov});
    }, py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::kw_only(), py::arg("lr"),
       py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"),
       "One SGD step on every param in place (a few launches); returns the momentum buffers (None without momentum).");
    m.def("_adam_step_foreach", [tensor_list](py::sequence params, py::sequence grads, py::sequence exp_avgs,
                                              py::sequence exp_avg_sqs, double lr, double beta1, double beta2,
                                              double eps, double weight_decay, bool decoupled, int64_t step,
                                              py::sequence max_exp_avg_sqs, bool amsgrad, bool maximize) {
        const char* op = decoupled ? "adamw_step_foreach" : "adam_step_foreach";
        adam_step_foreach(tensor_list(params, op, "params", false), tensor_list(grads, op, "grads", false),
                          tensor_list(exp_avgs, op, "exp_avgs", false),
                          tensor_list(exp_avg_sqs, op, "exp_avg_sqs", false),
                          tensor_list(max_exp_avg_sqs, op, "max_exp_avg_sqs", true),
                          AdamStep{lr, beta1, beta2, eps, weight_decay, decoupled, step, amsgrad, maximize});
    }, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::kw_only(), py::arg("lr"),
       py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"), py::arg("decoupled"),
       py::arg("step"), py::arg("max_exp_avg_sqs") = py::list(), py::arg("amsgrad") = false,
       py::arg("maximize") = false,
       "One Adam (decoupled: AdamW) step on every param and its moments in place; step from 1. amsgrad also "
       "reads and writes max_exp_avg_sqs.");
    m.def("_rmsprop_step_foreach", [tensor_list](py::sequence params, py::sequence grads, py::sequence square_avgs,
                                                 py::sequence momentum_buffers, py::sequence grad_avgs, double lr,
                                                 double alpha, double eps, double weight_decay, double momentum,
                                                 bool centered, bool maximize) {
        const char* op = "rmsprop_step_foreach";
        rmsprop_step_foreach(tensor_list(params, op, "params", false), tensor_list(grads, op, "grads", false),
                             tensor_list(square_avgs, op, "square_avgs", false),
                             tensor_list(momentum_buffers, op, "momentum_buffers", true),
                             tensor_list(grad_avgs, op, "grad_avgs", true),
                             RmspropStep{lr, alpha, eps, weight_decay, momentum, centered, maximize});
    }, py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("momentum_buffers"), py::arg("grad_avgs"),
       py::kw_only(), py::arg("lr"), py::arg("alpha"), py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"),
       py::arg("centered"), py::arg("maximize"),
       "One RMSprop step on every param and its state in place (momentum_buffers / grad_avgs: [] when unused).");
    m.def("_clip_grad_norm_foreach", [tensor_list](py::sequence grads, double max_norm, double norm_type) {
        return clip_grad_norm_foreach(tensor_list(grads, "clip_grad_norm_", "grads", false), max_norm, norm_type);
    }, py::arg("grads"), py::arg("max_norm"), py::arg("norm_type") = 2.0,
       "clip_grad_norm_'s foreach path: returns the total norm (2 or inf) of all grads and scales them in place "
       "by min(1, max_norm / (total + 1e-6)), in three launches on CUDA.");
    // How SGD/Adam split a group for the multi-tensor step, in one call: a Python loop that
    // read each parameter's grad, device, dtype and layout cost ~4 us a parameter.
    m.def("_multi_tensor_groups", [](py::sequence params) {
        struct Group {
            Device device;
            DType dtype;
            py::list params, grads;
        };
        std::vector<Group> groups;
        py::list reference;
        for (py::handle h : params) {
            const Tensor& p = tensor_arg(h, "multi_tensor_groups", "params");
            if (!p->grad) continue;
            if (!is_floating(p->dtype) || !p->is_contiguous()) {
                reference.append(h);
                continue;
            }
            auto same = [&](const Group& g) { return g.device == p->device() && g.dtype == p->dtype; };
            auto it = std::find_if(groups.begin(), groups.end(), same);
            if (it == groups.end()) it = groups.insert(groups.end(), Group{p->device(), p->dtype, py::list(), py::list()});
            it->params.append(h);
            it->grads.append(py::cast(p->grad));
        }
        py::list out;
        for (Group& g : groups) out.append(py::make_tuple(g.params, g.grads));
        return py::make_tuple(out, reference);
    }, py::arg("params"),
       "([(params, grads)] one pair per device and dtype, in first-seen order; [params for the reference step: "
       "not floating or not contiguous]), leaving out the params without a grad.");
    m.def("_amp_foreach_non_finite_check_and_unscale_", [](py::sequence grads, py::handle found_inf,
                                                           py::handle inv_scale) {
        const char* op = "_amp_foreach_non_finite_check_and_unscale_";
        std::vector<Tensor> gs;
        for (py::handle g : grads) gs.push_back(tensor_arg(g, op, "grads"));
        amp_foreach_non_finite_check_and_unscale_(gs, tensor_arg(found_inf, op, "found_inf"),
                                                  tensor_arg(inv_scale, op, "inv_scale"));
    }, py::arg("grads"), py::arg("found_inf"), py::arg("inv_scale"),
       "GradScaler's unscale: each grad *= inv_scale in place; found_inf = 1 where one held inf or NaN.");
    // TF32 switches (minitorch.backends): "matmul" (backends.cuda.matmul.allow_tf32) or
    // "conv" (backends.cudnn.allow_tf32).
    auto tf32_switch = [](const std::string& which) -> bool& {
        if (which == "matmul") return tf32_switches().matmul;
        if (which == "conv") return tf32_switches().conv;
        throw ValueError("_tf32: expected 'matmul' or 'conv', got '" + which + "'");
    };
    m.def("_get_allow_tf32", [tf32_switch](const std::string& which) { return tf32_switch(which); });
    m.def("_set_allow_tf32", [tf32_switch](const std::string& which, bool allow) { tf32_switch(which) = allow; });
    // minitorch.backends.cudnn's other switches: "enabled", "benchmark", "deterministic".
    auto cudnn_switch = [](const std::string& which) -> bool& {
        if (which == "enabled") return cudnn_switches().enabled;
        if (which == "benchmark") return cudnn_switches().benchmark;
        if (which == "deterministic") return cudnn_switches().deterministic;
        throw ValueError("_cudnn_switch: expected 'enabled', 'benchmark' or 'deterministic', got '" + which + "'");
    };
    m.def("_get_cudnn_switch", [cudnn_switch](const std::string& which) { return cudnn_switch(which); });
    m.def("_set_cudnn_switch", [cudnn_switch](const std::string& which, bool on) { cudnn_switch(which) = on; });
    m.def("promote_types", [](DType a, DType b) { return promote(a, b); }, py::arg("type1"), py::arg("type2"));
    m.def("result_type", [](py::handle a, py::handle b) {
        return result_type(operand_or_throw(a, Device{}, "result_type", "tensor1"),
                           operand_or_throw(b, Device{}, "result_type", "tensor2"));
    });
    m.def("broadcast_shapes", [](py::args shapes) {
        Shape out;
        for (py::handle s : shapes) out = broadcast_shapes(out, shape_seq(s, "broadcast_shapes"), "broadcast_shapes");
        return py::tuple(py::cast(out));
    });
}

}  // namespace minitorch::python
