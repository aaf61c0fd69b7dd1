"""Every public op of minitorch, declared once: its name, the forms it has (``minitorch.<name>``,
``Tensor.<name>``, the in-place ``Tensor.<name>_``, aliases, operators), how it is
implemented, its autocast policy and whether it is differentiable.

The methods and functions of the ops written in Python (``python=``: their module in
minitorch/ops), the in-place forms, the aliases and autocast's op lists are made from this
table (``ops/registry.py``); ``tests/test_op_declarations.py`` fails when a public name of
``minitorch``, ``Tensor`` or ``nn.functional`` has no entry here, or when an entry
declares a form that does not exist; ``docs/ops.md`` is generated from it
(``python docs/gen_ops.py``). PyTorch keeps the same idea in ``native_functions.yaml``.

Kinds (how an op computes):

- ``ELEMENTWISE``: a row of ``cpp/include/minitorch/op_list.h``; kernels, bindings and
  the gradient formula come from that row.
- ``CPP``: a C++ op in ``cpp/src/ops`` (``source``): it checks its inputs, calls one
  kernel per device, and records its own backward node.
- ``COMPOSITE``: written in Python from other ops; its gradient is theirs.
- ``CREATION``: makes a new tensor (factories, ``new_*``, random fills).
- ``TENSOR``: a property, conversion or bookkeeping method of the Tensor class (``shape``,
  ``to``, ``backward``...), not a computation.
- ``UTILITY``: a library setting or helper (``manual_seed``, ``save``...).
"""
from __future__ import annotations

from dataclasses import dataclass

ELEMENTWISE = "elementwise"
CPP = "cpp"
COMPOSITE = "composite"
CREATION = "creation"
TENSOR = "tensor"
UTILITY = "utility"
KINDS = (ELEMENTWISE, CPP, COMPOSITE, CREATION, TENSOR, UTILITY)

# Autocast policies (PyTorch's lists; amp/autocast_mode.py applies them):
LOWER = "lower"        # runs in the autocast dtype (float16/bfloat16): GEMMs, convolutions, attention
FP32 = "fp32"          # runs in float32 on "cuda" (range or precision matters); untouched on the CPU
FP32_ALL = "fp32_all"  # runs in float32 on every device (the losses)

# In-place forms:
GENERIC = "generic"  # Tensor.<name>_ computes <name> and writes the result back (ops/registry.py)
NATIVE = "native"    # Tensor.<name>_ is written on its own (C++ add_, a fill...; with python=: that
                     # module's <name>_ function, attached by ops/registry.py)

MINITORCH = "minitorch"
FUNCTIONAL = "nn.functional"
LINALG = "linalg"  # minitorch.linalg (python/minitorch/linalg/)

# The dtypes an op takes (its inputs'): tests/opinfo checks its values on each, and a
# TypeError on the others. Names of minitorch dtypes, so that this table imports nothing.
FLOATING = ("float32", "float64", "float16", "bfloat16")
INTEGRAL = ("int64", "int32", "int16", "int8", "uint8")
NUMERIC = FLOATING + INTEGRAL
BOOL_AND_INTEGRAL = INTEGRAL + ("bool",)
ALL = NUMERIC + ("bool",)


@dataclass(frozen=True)
class Op:
    """One public op. ``function``: ``<namespace>.<name>`` exists; ``method``: ``Tensor.<name>``."""

    name: str
    kind: str
    function: bool = True
    method: bool = True
    inplace: str | None = None      # GENERIC, NATIVE or None
    aliases: tuple = ()             # other names of both forms (minitorch.clip is minitorch.clamp)
    method_aliases: tuple = ()      # other names of the method only (Tensor.nelement)
    operators: tuple = ()           # Tensor dunders that are this op (__matmul__ for matmul)
    autocast: str | None = None     # LOWER, FP32, FP32_ALL or None (runs in its inputs' dtype)
    grad: bool = True               # differentiable (for float inputs)
    source: str = ""                # CPP: the file in cpp/src/ops that computes it
    python: str = ""                # the module of minitorch.ops that holds its Python function
    cpp_method: bool = False        # Tensor.<name> is bound in C++: python= holds minitorch.<name> only
    cpp_function: bool = False      # minitorch.<name> is C++ (_C.<name>): python= holds Tensor.<name> only
    namespace: str = MINITORCH
    dtypes: tuple = ALL             # the input dtypes it takes: FLOATING, NUMERIC, ALL...


def _t(name, **kw):
    """A Tensor property or method (no minitorch.<name> function unless said)."""
    return Op(name, TENSOR, function=kw.pop("function", False), grad=kw.pop("grad", False), **kw)


def _u(name, **kw):
    """A minitorch.<name> utility."""
    return Op(name, UTILITY, method=False, grad=False, **kw)


def _new(name, **kw):
    """A creation function (minitorch.<name>, no method unless said)."""
    return Op(name, CREATION, method=kw.pop("method", False), grad=False, **kw)


def _e(name, **kw):
    return Op(name, ELEMENTWISE, **kw)


def _cpp(name, source, **kw):
    return Op(name, CPP, source="cpp/src/ops/" + source, **kw)


def _py(name, **kw):
    return Op(name, COMPOSITE, **kw)


def _f(name, kind=COMPOSITE, **kw):
    """A minitorch.nn.functional function."""
    return Op(name, kind, method=False, namespace=FUNCTIONAL, **kw)


NO_GRAD = dict(grad=False)

OPS: tuple[Op, ...] = (
    # ---- elementwise (cpp/include/minitorch/op_list.h) ----
    _e("neg", inplace=GENERIC, dtypes=NUMERIC, aliases=("negative",), operators=("__neg__",)),
    _e("abs", inplace=GENERIC, aliases=("absolute",), operators=("__abs__",)),
    _e("sign", inplace=GENERIC, aliases=("sgn",)),
    _e("relu", inplace=GENERIC, dtypes=NUMERIC),
    _e("exp", inplace=GENERIC, autocast=FP32),
    _e("expm1", inplace=GENERIC, autocast=FP32),
    _e("log", inplace=GENERIC, autocast=FP32),
    _e("log1p", inplace=GENERIC, autocast=FP32),
    _e("log2", inplace=GENERIC, autocast=FP32),
    _e("sqrt", inplace=GENERIC),
    _e("rsqrt", inplace=GENERIC, autocast=FP32),
    _e("sigmoid", inplace=GENERIC),
    _e("tanh", inplace=GENERIC),
    _e("sin", inplace=GENERIC),
    _e("cos", inplace=GENERIC),
    _e("tan", inplace=GENERIC, autocast=FP32),
    _e("sinh", inplace=GENERIC, autocast=FP32),
    _e("cosh", inplace=GENERIC, autocast=FP32),
    _e("asin", inplace=GENERIC, autocast=FP32, aliases=("arcsin",)),
    _e("acos", inplace=GENERIC, autocast=FP32, aliases=("arccos",)),
    _e("atan", inplace=GENERIC, aliases=("arctan",)),
    _e("asinh", inplace=GENERIC, aliases=("arcsinh",)),
    _e("acosh", inplace=GENERIC, aliases=("arccosh",)),
    _e("atanh", inplace=GENERIC, aliases=("arctanh",)),
    _e("erf", inplace=GENERIC),
    _e("erfc", inplace=GENERIC),
    _e("erfinv", inplace=GENERIC, autocast=FP32),
    _e("log10", inplace=GENERIC, autocast=FP32),
    _e("exp2", inplace=GENERIC),
    _e("lgamma", inplace=GENERIC),
    _e("digamma", inplace=GENERIC),
    _e("floor", inplace=GENERIC, dtypes=NUMERIC),
    _e("ceil", inplace=GENERIC, dtypes=NUMERIC),
    _e("round", inplace=GENERIC, dtypes=NUMERIC),
    _e("trunc", inplace=GENERIC, dtypes=NUMERIC, aliases=("fix",)),
    _e("frac", inplace=GENERIC, dtypes=FLOATING),
    _e("isnan", **NO_GRAD),
    _e("isinf", **NO_GRAD),
    _e("isfinite", **NO_GRAD),
    _e("isposinf", **NO_GRAD),
    _e("isneginf", **NO_GRAD),
    _e("signbit", **NO_GRAD),
    _e("logical_not", inplace=GENERIC, **NO_GRAD),
    _e("bitwise_not", inplace=GENERIC, dtypes=BOOL_AND_INTEGRAL, operators=("__invert__",), **NO_GRAD),
    _e("add", inplace=NATIVE, operators=("__add__", "__radd__", "__iadd__")),
    _e("sub", inplace=NATIVE, dtypes=NUMERIC, aliases=("subtract",), operators=("__sub__", "__rsub__", "__isub__")),
    _e("mul", inplace=NATIVE, aliases=("multiply",), operators=("__mul__", "__rmul__", "__imul__")),
    _e("div", inplace=NATIVE, aliases=("divide", "true_divide"), python="pointwise",
       operators=("__truediv__", "__rtruediv__", "__itruediv__")),
    _e("pow", inplace=GENERIC, operators=("__pow__", "__rpow__"), autocast=FP32),
    _e("remainder", inplace=GENERIC, dtypes=NUMERIC, operators=("__mod__", "__rmod__", "__imod__")),
    _e("fmod", inplace=GENERIC, dtypes=NUMERIC),
    _e("floor_divide", inplace=GENERIC, dtypes=NUMERIC, operators=("__floordiv__", "__rfloordiv__", "__ifloordiv__")),
    _e("atan2", inplace=GENERIC, aliases=("arctan2",)),
    _e("maximum"),
    _e("minimum"),
    _e("eq", inplace=GENERIC, operators=("__eq__",), **NO_GRAD),
    _e("ne", inplace=GENERIC, aliases=("not_equal",), operators=("__ne__",), **NO_GRAD),
    _e("lt", inplace=GENERIC, aliases=("less",), operators=("__lt__",), **NO_GRAD),
    _e("le", inplace=GENERIC, aliases=("less_equal",), operators=("__le__",), **NO_GRAD),
    _e("gt", inplace=GENERIC, aliases=("greater",), operators=("__gt__",), **NO_GRAD),
    _e("ge", inplace=GENERIC, aliases=("greater_equal",), operators=("__ge__",), **NO_GRAD),
    _e("logical_and", inplace=GENERIC, **NO_GRAD),
    _e("logical_or", inplace=GENERIC, **NO_GRAD),
    _e("logical_xor", inplace=GENERIC, **NO_GRAD),
    _e("bitwise_and", inplace=GENERIC, dtypes=BOOL_AND_INTEGRAL, operators=("__and__", "__rand__", "__iand__"),
       **NO_GRAD),
    _e("bitwise_or", inplace=GENERIC, dtypes=BOOL_AND_INTEGRAL, operators=("__or__", "__ror__", "__ior__"),
       **NO_GRAD),
    _e("bitwise_xor", inplace=GENERIC, dtypes=BOOL_AND_INTEGRAL, operators=("__xor__", "__rxor__", "__ixor__"),
       **NO_GRAD),

    # ---- C++ ops with their own kernels and backward nodes (cpp/src/ops) ----
    _cpp("clamp", "elementwise.cpp", python="pointwise", cpp_method=True, inplace=NATIVE, dtypes=NUMERIC, aliases=("clip",)),
    # Tensor.where(condition, y) is where(condition, self, y) (ops/pointwise.py); the function is C++
    _cpp("where", "elementwise.cpp", python="pointwise", cpp_function=True),
    _cpp("sum", "reduce.cpp", python="reduction", cpp_method=True, autocast=FP32),
    _cpp("mean", "reduce.cpp", python="reduction", cpp_method=True, dtypes=FLOATING),
    _cpp("max", "reduce.cpp", python="reduction", cpp_method=True),
    _cpp("min", "reduce.cpp", python="reduction", cpp_method=True),
    # argmax/argmin/topk take bool (the first True): PyTorch does with dim= but not without,
    # an inconsistency its issue #35529 asks to remove; minitorch takes bool in every form.
    _cpp("argmax", "reduce.cpp", python="reduction", cpp_method=True, dtypes=ALL, **NO_GRAD),
    _cpp("argmin", "reduce.cpp", python="reduction", cpp_method=True, dtypes=ALL, **NO_GRAD),
    _cpp("cumsum", "scan.cpp", python="reduction", inplace=NATIVE, autocast=FP32),
    _cpp("cumprod", "scan.cpp", python="reduction", inplace=NATIVE, autocast=FP32),
    _cpp("logcumsumexp", "scan.cpp", python="reduction", dtypes=FLOATING),
    _cpp("sort", "sort.cpp", python="sorting"),
    _cpp("softmax", "nn.cpp", python="softmax", dtypes=FLOATING, autocast=FP32),
    _cpp("log_softmax", "nn.cpp", python="softmax", dtypes=FLOATING, autocast=FP32),
    _cpp("matmul", "matmul.cpp", dtypes=NUMERIC, operators=("__matmul__", "__rmatmul__"), autocast=LOWER),
    _cpp("index_select", "index_select.cpp"),
    _cpp("permute", "views.cpp"),
    _cpp("reshape", "views.cpp"),
    _cpp("flatten", "views.cpp"),
    _cpp("squeeze", "views.cpp"),
    _cpp("unsqueeze", "views.cpp"),
    _cpp("transpose", "views.cpp", aliases=("swapaxes", "swapdims")),
    _cpp("t", "views.cpp"),

    # ---- composites (Python, from the ops above) ----
    _py("square", python="pointwise", inplace=GENERIC),
    _py("reciprocal", python="pointwise", inplace=GENERIC, autocast=FP32),
    _py("clamp_min", python="pointwise", inplace=NATIVE, dtypes=NUMERIC),
    _py("clamp_max", python="pointwise", inplace=NATIVE, dtypes=NUMERIC),
    _py("all", python="comparison", **NO_GRAD),
    _py("any", python="comparison", **NO_GRAD),
    _py("isclose", python="comparison", **NO_GRAD),
    _py("allclose", python="comparison", **NO_GRAD),
    _py("equal", python="comparison", **NO_GRAD),
    _py("is_nonzero", python="comparison", **NO_GRAD),
    _py("amax", python="reduction"),
    _py("amin", python="reduction"),
    _cpp("var", "reduce.cpp", python="reduction", dtypes=FLOATING),
    _cpp("std", "reduce.cpp", python="reduction", dtypes=FLOATING),
    _cpp("var_mean", "reduce.cpp", python="reduction", method=False, dtypes=FLOATING),
    _cpp("std_mean", "reduce.cpp", python="reduction", method=False, dtypes=FLOATING),
    _cpp("logsumexp", "reduce.cpp", python="reduction", autocast=FP32),
    _cpp("norm", "reduce.cpp", python="reduction", autocast=FP32, dtypes=FLOATING),
    _py("argsort", python="sorting", **NO_GRAD),
    _cpp("topk", "sort.cpp", python="sorting", dtypes=ALL),
    _py("mm", python="linalg", autocast=LOWER, dtypes=NUMERIC),
    _py("mv", python="linalg", autocast=LOWER, dtypes=NUMERIC),
    _py("dot", python="linalg", dtypes=NUMERIC),
    _py("bmm", python="linalg", autocast=LOWER, dtypes=NUMERIC),
    _py("baddbmm", python="linalg", autocast=LOWER, dtypes=NUMERIC),
    _py("addmm", python="linalg", inplace=GENERIC, autocast=LOWER, dtypes=NUMERIC),
    _py("outer", python="linalg"),
    _py("ger", python="linalg", method=False),
    _py("inner", python="linalg", dtypes=NUMERIC),
    _py("vdot", python="linalg", dtypes=NUMERIC),
    _py("chain_matmul", python="linalg", method=False, autocast=LOWER, dtypes=NUMERIC),
    _py("einsum", python="linalg", method=False, autocast=LOWER, dtypes=NUMERIC),
    _py("movedim", python="shape", aliases=("moveaxis",)),
    _py("unflatten", python="shape"),
    _py("narrow", python="join"),
    _py("narrow_copy", python="join"),
    _py("select", python="join"),
    _py("split", python="join"),
    _py("split_with_sizes", python="join", function=False),
    _py("chunk", python="join"),
    _py("unbind", python="join"),
    _cpp("cat", "join.cpp", python="join", method=False, aliases=("concat", "concatenate")),
    _cpp("stack", "join.cpp", python="join", method=False),
    _py("hstack", python="join", method=False),
    _py("vstack", python="join", method=False, aliases=("row_stack",)),
    _py("dstack", python="join", method=False),
    _py("column_stack", python="join", method=False),
    _cpp("flip", "shape.cpp", python="shape"),
    _cpp("roll", "shape.cpp", python="shape"),
    _cpp("repeat", "shape.cpp", python="shape", function=False),
    _cpp("unfold", "views.cpp", python="shape", function=False),
    _cpp("tril", "shape.cpp", python="shape", inplace=GENERIC),
    _cpp("triu", "shape.cpp", python="shape", inplace=GENERIC),
    _cpp("constant_pad_nd", "shape.cpp", python="shape", method=False),
    _cpp("masked_fill", "indexing.cpp", python="indexing", inplace=NATIVE),
    _cpp("masked_select", "indexing.cpp", python="indexing"),
    _cpp("gather", "indexing.cpp", python="indexing"),
    _cpp("scatter", "indexing.cpp", python="indexing", inplace=GENERIC),
    _cpp("scatter_add", "indexing.cpp", python="indexing", inplace=GENERIC),
    _cpp("scatter_reduce", "indexing.cpp", python="indexing", inplace=GENERIC),
    _cpp("index_reduce", "indexing.cpp", python="indexing", inplace=GENERIC),
    _cpp("index_add", "index_select.cpp", python="indexing", inplace=GENERIC),
    _cpp("index_copy", "index_select.cpp", python="indexing", inplace=GENERIC),
    _cpp("index_fill", "index_select.cpp", python="indexing", inplace=GENERIC),
    _cpp("index_put", "indexing.cpp", python="indexing", inplace=NATIVE),
    _cpp("nonzero", "indexing.cpp", python="indexing", **NO_GRAD),
    _py("argwhere", python="indexing", **NO_GRAD),
    # everyday math and linear algebra, compositions of the ops above
    _cpp("lerp", "ternary.cpp", python="pointwise_math", inplace=NATIVE, dtypes=FLOATING),
    _cpp("addcmul", "ternary.cpp", python="pointwise_math", inplace=NATIVE, dtypes=NUMERIC),
    _cpp("addcdiv", "ternary.cpp", python="pointwise_math", inplace=NATIVE, dtypes=FLOATING),
    _py("logaddexp", python="pointwise_math", dtypes=FLOATING),
    _py("logaddexp2", python="pointwise_math", dtypes=FLOATING),
    _py("hypot", python="pointwise_math", inplace=GENERIC, dtypes=FLOATING),
    _py("xlogy", python="pointwise_math", inplace=GENERIC),
    _py("nan_to_num", python="pointwise_math", inplace=GENERIC),
    _py("deg2rad", python="pointwise_math", inplace=GENERIC),
    _py("rad2deg", python="pointwise_math", inplace=GENERIC),
    _py("logit", python="pointwise_math", inplace=GENERIC, dtypes=FLOATING),
    _py("fmax", python="pointwise_math", dtypes=NUMERIC),
    _py("fmin", python="pointwise_math", dtypes=NUMERIC),
    _py("heaviside", python="pointwise_math", inplace=GENERIC, **NO_GRAD),
    _py("copysign", python="pointwise_math", inplace=GENERIC),
    _py("sinc", python="pointwise_math", inplace=GENERIC),
    _py("float_power", python="pointwise_math", inplace=NATIVE),
    _py("frexp", python="pointwise_math", dtypes=FLOATING),
    _py("ldexp", python="pointwise_math", inplace=GENERIC),
    # integers only (ops/integer_math.py): Euclid's algorithm, shifts by powers of two
    _py("gcd", python="integer_math", inplace=GENERIC, dtypes=INTEGRAL, **NO_GRAD),
    _py("lcm", python="integer_math", inplace=GENERIC, dtypes=INTEGRAL, **NO_GRAD),
    _py("bitwise_left_shift", python="integer_math", inplace=GENERIC, dtypes=INTEGRAL,
        operators=("__lshift__", "__rlshift__", "__ilshift__"), **NO_GRAD),
    _py("bitwise_right_shift", python="integer_math", inplace=GENERIC, dtypes=INTEGRAL,
        operators=("__rshift__", "__rrshift__", "__irshift__"), **NO_GRAD),
    # the trapezoidal rule (ops/integrate.py)
    _py("trapezoid", python="integrate", method=False, aliases=("trapz",), dtypes=NUMERIC),
    _py("cumulative_trapezoid", python="integrate", method=False, dtypes=NUMERIC),
    _py("aminmax", python="reduction"),
    _py("cov", python="reduction", dtypes=NUMERIC),
    _py("corrcoef", python="reduction", dtypes=NUMERIC),
    _py("count_nonzero", python="reduction", **NO_GRAD),
    _py("nansum", python="reduction", dtypes=NUMERIC),
    _py("nanmean", python="reduction", dtypes=FLOATING),
    _py("trace", python="reduction", dtypes=NUMERIC),
    _py("diff", python="join"),
    _py("addmv", python="linalg", inplace=GENERIC, autocast=LOWER, dtypes=NUMERIC),
    _py("addr", python="linalg", inplace=GENERIC, autocast=LOWER, dtypes=NUMERIC),
    _py("addbmm", python="linalg", inplace=GENERIC, autocast=LOWER, dtypes=NUMERIC),
    _py("kron", python="linalg"),
    _py("tensordot", python="linalg", method=False, dtypes=NUMERIC),
    _py("cdist", python="linalg", method=False, autocast=FP32_ALL, dtypes=FLOATING),
    _py("pdist", python="linalg", method=False, autocast=FP32, dtypes=FLOATING),
    _py("renorm", python="linalg", inplace=GENERIC, autocast=FP32, dtypes=FLOATING),
    _py("cross", python="linalg", dtypes=NUMERIC),
    # more shape, join, indexing and creation compositions (PyTorch's names and arguments)
    *(_py(name, python="shape") for name in ("tile", "rot90", "broadcast_to", "diag", "diag_embed", "diagonal")),
    *(_py(name, python="shape") for name in ("diagflat", "fliplr", "flipud")),
    *(_py(name, python="shape", method=False) for name in ("atleast_1d", "atleast_2d", "atleast_3d")),
    *(_py(name, python="join") for name in ("tensor_split", "hsplit", "vsplit", "dsplit")),
    *(_py(name, python="join", method=False) for name in ("broadcast_tensors", "meshgrid", "cartesian_prod",
                                                          "block_diag")),
    _py("combinations", python="join", method=False),
    _py("take_along_dim", python="indexing"),
    # flat positions (the tensor read as 1-D, row-major)
    _py("take", python="indexing"),
    _py("put", python="indexing", inplace=GENERIC),
    _py("masked_scatter", python="indexing", inplace=GENERIC),
    _py("unravel_index", python="indexing", method=False, dtypes=INTEGRAL, **NO_GRAD),
    _py("repeat_interleave", python="indexing"),
    _py("vander", python="creation", method=False),
    _new("tril_indices", python="creation"), _new("triu_indices", python="creation"),
    _new("scalar_tensor", python="creation"), _new("asarray", python="creation"),
    _new("empty_strided", python="creation"),
    _u("is_inference_mode_enabled"),

    # ---- creation (ops/creation.py; as_tensor and from_dlpack: _dlpack.py; from_numpy: C++) ----
    _new("tensor", python="creation"), _new("as_tensor"), _new("from_numpy"), _new("from_dlpack"),
    *(_new(name, python="creation") for name in ("empty", "zeros", "ones", "full", "eye", "arange", "linspace")),
    *(_new(name, python="creation") for name in ("empty_like", "zeros_like", "ones_like", "full_like")),
    *(_new(name, python="creation") for name in ("rand", "randn", "randint", "rand_like", "randn_like")),
    *(_new(name, function=False, method=True, python="creation")
      for name in ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "new_empty_strided")),
    _new("normal_", function=False, method=True, python="inplace"),
    _new("uniform_", function=False, method=True, python="inplace"),

    # ---- the Tensor's own properties, conversions and bookkeeping ----
    _t("shape"), _t("size"), _t("dim", method_aliases=("ndimension",)), _t("ndim"),
    _t("numel", function=True, method_aliases=("nelement",)),
    _t("dtype"), _t("device"), _t("is_cpu"), _t("is_cuda"), _t("is_quantized"), _t("get_device"),
    _t("is_floating_point", function=True), _t("element_size"), _t("itemsize"), _t("nbytes"),
    _t("stride"), _t("storage_offset"), _t("is_contiguous"), _t("data_ptr"), _t("is_pinned", python="memory"),
    _t("pin_memory", python="memory"),
    _t("T", grad=True), _t("mT", grad=True), _t("view", grad=True), _t("view_as", grad=True),
    _t("reshape_as", grad=True), _t("expand", grad=True), _t("expand_as", grad=True),
    _t("contiguous", grad=True), _t("clone", function=True, grad=True),
    _t("to", grad=True), _t("cpu", grad=True), _t("cuda", grad=True), _t("type", grad=True), _t("type_as", grad=True),
    _t("float", grad=True), _t("double", grad=True), _t("half", grad=True), _t("bfloat16", grad=True),
    _t("long"), _t("int"), _t("short"), _t("char"), _t("byte"), _t("bool"),
    _t("item"), _t("tolist"), _t("numpy"),
    _t("fill_"), _t("zero_"), _t("copy_"),
    _t("requires_grad"), _t("requires_grad_"), _t("grad"), _t("grad_fn"), _t("is_leaf"), _t("data"),
    _t("detach"), _t("detach_"), _t("backward"), _t("retain_grad"), _t("retains_grad"),
    _t("register_hook"), _t("register_post_accumulate_grad_hook"),

    # ---- utilities ----
    _u("manual_seed"), _u("get_num_threads"), _u("set_num_threads"), _u("get_default_dtype", python="creation"),
    _u("set_default_dtype", python="creation"), _u("is_tensor"), _u("is_grad_enabled"), _u("result_type"), _u("promote_types"), _u("broadcast_shapes"),
    _u("live_tensor_count"), _u("save"), _u("load"), _u("get_autocast_dtype"), _u("is_autocast_enabled"),
    _u("get_float32_matmul_precision"), _u("set_float32_matmul_precision"),
    # the global generator's seed and state (minitorch/random.py)
    _u("seed"), _u("initial_seed"), _u("get_rng_state"), _u("set_rng_state"),
    # recorded settings (backends.py, _tensor_str.py), dtype rules (_finfo.py), and compile (_compile.py:
    # no compiler, the model is returned as it is)
    _u("use_deterministic_algorithms"), _u("are_deterministic_algorithms_enabled"),
    _u("is_deterministic_algorithms_warn_only_enabled"), _u("set_printoptions"), _u("can_cast"), _u("compile"),

    # ---- minitorch.nn.functional ----
    _f("linear", CPP, source="cpp/src/ops/nn.cpp", autocast=LOWER),
    _f("conv1d", autocast=LOWER, dtypes=FLOATING),
    _f("conv2d", CPP, source="cpp/src/ops/conv.cpp", autocast=LOWER, dtypes=FLOATING),
    _f("conv3d", autocast=LOWER, dtypes=FLOATING),  # im2col in depth + one conv2d (nn/functional.py)
    _f("scaled_dot_product_attention", autocast=LOWER),
    _f("relu"), _f("sigmoid"), _f("tanh"), _f("elu"), _f("leaky_relu"),
    # fused: one kernel each way, rows of op_list.h computed by elementwise.cpp's unary()
    _f("gelu", CPP, source="cpp/src/ops/elementwise.cpp"), _f("silu", CPP, source="cpp/src/ops/elementwise.cpp"),
    _f("softplus", autocast=FP32),
    _f("softmax", autocast=FP32), _f("log_softmax", autocast=FP32),
    # the other activations (nn/_activation_functional.py)
    *(_f(n, dtypes=FLOATING) for n in (
        "logsigmoid", "softsign", "tanhshrink",
        "threshold", "softshrink", "hardshrink", "selu", "celu", "glu")),
    *(_f(n, CPP, source="cpp/src/ops/elementwise.cpp", dtypes=FLOATING) for n in ("hardsigmoid", "hardswish", "mish",
                                                                                          "hardtanh", "relu6")),
    _f("prelu", dtypes=FLOATING, autocast=LOWER), _f("softmin", dtypes=FLOATING, autocast=FP32),
    _f("rrelu", dtypes=FLOATING), _f("rrelu_", dtypes=FLOATING),  # random slopes while training
    _f("layer_norm", CPP, source="cpp/src/ops/nn.cpp", autocast=FP32),
    _f("group_norm", CPP, source="cpp/src/ops/group_norm.cpp", autocast=FP32), _f("normalize"),
    _f("rms_norm", CPP, source="cpp/src/ops/nn.cpp", dtypes=FLOATING),  # 16-bit input computes in float32 inside
    _f("batch_norm", CPP, source="cpp/src/ops/batch_norm.cpp"),
    _f("cosine_similarity", autocast=FP32),
    _f("cross_entropy", CPP, source="cpp/src/ops/nn.cpp", autocast=FP32_ALL),
    _f("nll_loss", CPP, source="cpp/src/ops/nn.cpp", autocast=FP32_ALL),
    _f("mse_loss", autocast=FP32_ALL), _f("l1_loss", autocast=FP32_ALL),
    _f("binary_cross_entropy", autocast=FP32_ALL), _f("binary_cross_entropy_with_logits", autocast=FP32_ALL),
    _f("max_pool2d", CPP, source="cpp/src/ops/conv.cpp"), _f("avg_pool2d", CPP, source="cpp/src/ops/conv.cpp"),
    _f("adaptive_avg_pool2d", dtypes=FLOATING),
    _f("max_pool3d", dtypes=FLOATING), _f("avg_pool3d", dtypes=FLOATING),  # from 2-D pooling (_pooling_functional.py)
    _f("dropout", CPP, source="cpp/src/ops/nn.cpp"), _f("dropout1d"), _f("dropout2d"),
    _f("alpha_dropout", dtypes=FLOATING), _f("feature_alpha_dropout", dtypes=FLOATING),  # nn/_dropout_functional.py
    _f("embedding"), _f("one_hot", grad=False), _f("pad"), _f("flatten"),
    # losses, distances and bilinear (nn/_loss_functional.py, nn/_distance_functional.py)
    *(_f(name, autocast=FP32_ALL, dtypes=FLOATING) for name in (
        "kl_div", "smooth_l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss",
        "cosine_embedding_loss", "poisson_nll_loss", "multilabel_soft_margin_loss", "hinge_embedding_loss")),
    _f("gaussian_nll_loss", dtypes=FLOATING), _f("pairwise_distance", dtypes=FLOATING),
    _f("multi_margin_loss", autocast=FP32_ALL, dtypes=FLOATING), _f("multilabel_margin_loss", autocast=FP32_ALL,
                                                                     dtypes=FLOATING),
    _f("triplet_margin_with_distance_loss", dtypes=FLOATING),  # (no autocast of its own, as PyTorch's)
    _f("bilinear", dtypes=FLOATING),

    # ---- reductions, order statistics, sets and bins (issue: the missing reductions) ----
    _cpp("prod", "reduce.cpp", python="reduction", autocast=FP32),
    _cpp("cummax", "scan.cpp", python="reduction"),
    _cpp("cummin", "scan.cpp", python="reduction"),
    _py("median", python="sorting", dtypes=NUMERIC),
    _py("nanmedian", python="sorting", dtypes=NUMERIC),
    _py("kthvalue", python="sorting", dtypes=NUMERIC),
    _py("mode", python="sorting"),
    _py("msort", python="sorting"),
    _py("quantile", python="sorting", dtypes=("float32", "float64")),
    _py("nanquantile", python="sorting", dtypes=("float32", "float64")),
    _py("unique", python="sets", **NO_GRAD),
    _py("unique_consecutive", python="sets", **NO_GRAD),
    _py("bincount", python="sets", dtypes=INTEGRAL, **NO_GRAD),
    _py("histc", python="sets", dtypes=FLOATING, **NO_GRAD),
    _py("histogram", python="sets", dtypes=("float32", "float64"), **NO_GRAD),
    _cpp("searchsorted", "search.cpp", python="sets", method=False, dtypes=NUMERIC, **NO_GRAD),
    _py("bucketize", python="sets", method=False, dtypes=NUMERIC, **NO_GRAD),
    # resampling, more pooling, pixel shuffle, instance/local response norm, grid_sample, embedding_bag,
    # gumbel_softmax (nn/_sampling_functional.py, _pooling_functional.py, _shuffle_functional.py...)
    _f("interpolate", dtypes=FLOATING, autocast=FP32),
    *(_f(n, dtypes=FLOATING) for n in ("upsample", "upsample_nearest", "upsample_bilinear")),
    *(_f(n, dtypes=FLOATING) for n in (
        "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d", "max_pool1d", "avg_pool1d",
        "max_unpool1d", "max_unpool2d", "adaptive_avg_pool3d", "adaptive_max_pool3d")),
    _f("pixel_shuffle"), _f("pixel_unshuffle"),
    _f("channel_shuffle"), _f("lp_pool1d", dtypes=FLOATING), _f("lp_pool2d", dtypes=FLOATING),
    _f("instance_norm", dtypes=FLOATING), _f("local_response_norm", dtypes=FLOATING),
    _f("grid_sample", dtypes=FLOATING), _f("affine_grid", dtypes=FLOATING),
    _f("embedding_bag", dtypes=FLOATING), _f("gumbel_softmax", dtypes=FLOATING),
    # PyTorch's other spellings: in-place activations, pools that always return indices,
    # 3-D channel dropout, pdist (nn/functional.py)
    *(_f(n, dtypes=FLOATING) for n in ("relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_")),
    *(_f(n, dtypes=FLOATING) for n in (
        "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
        "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices")),
    _f("dropout3d"), _f("pdist", dtypes=FLOATING),
    _f("ctc_loss", autocast=FP32_ALL, dtypes=FLOATING),  # nn/_ctc_functional.py
    # ---- minitorch.linalg (python/minitorch/linalg/: LAPACK / cuSOLVER; gradients in _functions.py) ----
    # the norms take float16/bfloat16 too, as PyTorch's do (but not through an SVD: 'nuc', 2, -2)
    *(Op(name, COMPOSITE, method=False, namespace=LINALG, dtypes=FLOATING) for name in (
        "norm", "vector_norm", "matrix_norm")),
    *(Op(name, COMPOSITE, method=False, namespace=LINALG, dtypes=("float32", "float64")) for name in (
        "solve", "solve_triangular", "inv", "inv_ex", "det", "slogdet", "cholesky", "cholesky_ex",
        "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq")),
    Op("matrix_rank", COMPOSITE, method=False, namespace=LINALG, dtypes=("float32", "float64"), grad=False),
    # products and compositions of other ops
    *(Op(name, COMPOSITE, method=False, namespace=LINALG, dtypes=NUMERIC) for name in (
        "matmul", "vecdot", "cross", "multi_dot", "matrix_power")),
    Op("diagonal", COMPOSITE, method=False, namespace=LINALG),
    Op("cond", COMPOSITE, method=False, namespace=LINALG, dtypes=("float32", "float64")),
    # their older top-level forms, minitorch.<name> and Tensor.<name> (ops/linalg_forms.py)
    *(_py(name, python="linalg_forms", dtypes=("float32", "float64")) for name in (
        "det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse", "cholesky_solve",
        "cholesky_inverse")),
    _py("matrix_power", python="linalg_forms", dtypes=NUMERIC),
    # convolution features: transposed convolutions, fold/unfold (cpp/src/ops/conv.cpp)
    _f("conv_transpose1d", autocast=LOWER, dtypes=FLOATING),
    _f("conv_transpose2d", CPP, source="cpp/src/ops/conv.cpp", autocast=LOWER, dtypes=FLOATING),
    _f("conv_transpose3d", autocast=LOWER, dtypes=FLOATING),  # conv_transpose2d per depth tap (nn/functional.py)
    _f("unfold", CPP, source="cpp/src/ops/conv.cpp", dtypes=FLOATING),
    _f("fold", CPP, source="cpp/src/ops/conv.cpp", dtypes=FLOATING),
    # gaps classic programs hit: random draws from categorical distributions (ops/sampling.py;
    # random, so tested by hand in tests/test_multinomial.py rather than by the OpInfo battery)
    _new("multinomial", python="sampling", method=True, dtypes=FLOATING),
    _new("randperm", python="sampling"),
    _new("normal", python="sampling"),
    _new("bernoulli", python="sampling", method=True, inplace=NATIVE, dtypes=FLOATING),
    # quantized tensors (python/minitorch/_quantized.py; their kernels are minitorch.ops.quantized,
    # tested in tests/quantization rather than by the OpInfo battery: they take quantized tensors)
    _new("quantize_per_tensor", dtypes=FLOATING), _new("quantize_per_channel", dtypes=FLOATING),
    _new("quantize_per_tensor_dynamic", dtypes=FLOATING), _u("dequantize"),
    # ---- quantization workflows (minitorch.ao.quantization): fake quantize-dequantize for QAT, with
    # the straight-through gradient (ops/fake_quantize.py)
    _py("fake_quantize_per_tensor_affine", python="fake_quantize", method=False, dtypes=FLOATING),
    _py("fake_quantize_per_channel_affine", python="fake_quantize", method=False, dtypes=FLOATING),

    # ---- more of torch's names, from the ops above ----
    _py("ravel", python="shape"),
    _py("fill_diagonal_", python="shape", function=False),
    _py("isin", python="sets", method=False, dtypes=NUMERIC, **NO_GRAD),
    _py("dist", python="linalg", autocast=FP32, dtypes=FLOATING),
    _py("sum_to_size", python="reduction", function=False),
    _py("positive", python="pointwise", dtypes=NUMERIC),
    _py("rsub", python="pointwise", method=False, dtypes=NUMERIC),
    _new("logspace", python="creation"), _new("randint_like", python="creation"), _new("range", python="creation"),
    # spectral windows (ops/windows.py)
    *(_new(name, python="windows") for name in (
        "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")),
    # random fills drawn in place (ops/inplace.py, as normal_ / uniform_)
    *(_new(name, function=False, method=True, python="inplace") for name in (
        "random_", "exponential_", "geometric_", "cauchy_", "log_normal_")),
    # questions about a tensor (ops/comparison.py): minitorch has no complex dtypes and no
    # inference tensors, so is_complex and is_inference are always False
    *(_t(name, function=True, python="comparison") for name in ("is_signed", "is_complex", "is_same_size",
                                                                "is_inference")),
    # torch.<name> forms of nn.functional ops, with torch's own arguments (ops/nn_forms.py; autocast
    # applies through the F.<name> each calls)
    *(_py(name, python="nn_forms", method=False, dtypes=FLOATING) for name in (
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
        "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "embedding",
        "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "cosine_similarity", "pairwise_distance", "bilinear",
        "selu", "celu", "threshold", "rrelu", "selu_", "celu_", "threshold_", "rrelu_",
        "kl_div", "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "cosine_embedding_loss",
        "poisson_nll_loss", "binary_cross_entropy_with_logits", "ctc_loss",
        "adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "max_pool1d", "max_pool2d", "max_pool3d",
        "max_pool1d_with_indices")),
    *(_py(name, python="nn_forms", method=False, dtypes=FLOATING) for name in (
        "dropout", "alpha_dropout", "feature_alpha_dropout", "feature_dropout",
        "dropout_", "alpha_dropout_", "feature_alpha_dropout_", "feature_dropout_")),
    _py("prelu", python="nn_forms", dtypes=FLOATING),
    _py("hardshrink", python="nn_forms", dtypes=FLOATING),
)

# PyTorch's in-place functions on torch itself: ``minitorch.exp_(x)`` is ``x.exp_()`` (ops/registry.py
# makes each from the Tensor method of that name). The names are torch's, where minitorch has the method.
INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
    "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_",
    "frac_", "gcd_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_",
    "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
)

# Public names of nn.functional that are not ops: re-exported classes and context managers.
FUNCTIONAL_NON_OPS = frozenset({"Function", "no_grad"})


def by_name(namespace: str = MINITORCH) -> dict[str, Op]:
    """The entries of one namespace, by name."""
    return {op.name: op for op in OPS if op.namespace == namespace}
