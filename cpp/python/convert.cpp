// convert.cpp — Python argument conversion (see convert.h).
#include "convert.h"

#include <climits>
#include <cstring>

namespace minitorch::python {

namespace {
std::optional<DType> dtype_from_name(const std::string& s)
{
    if (s == "float32" || s == "float") return DType::Float32;
    if (s == "float64" || s == "double") return DType::Float64;
    if (s == "int64" || s == "long") return DType::Int64;
    if (s == "bool") return DType::Bool;
    if (s == "float16" || s == "half") return DType::Float16;
    if (s == "bfloat16") return DType::BFloat16;
    if (s == "uint8" || s == "byte") return DType::UInt8;
    if (s == "int8" || s == "char") return DType::Int8;
    if (s == "int16" || s == "short") return DType::Int16;
    if (s == "int32" || s == "int") return DType::Int32;
    return std::nullopt;
}
}  // namespace

DType dtype_arg(py::handle h, DType fallback)
{
    if (h.is_none()) return fallback;
    if (py::isinstance<DType>(h)) return h.cast<DType>();
    if (h.ptr() == (PyObject*)&PyFloat_Type) return DType::Float64;
    if (h.ptr() == (PyObject*)&PyLong_Type) return DType::Int64;
    if (h.ptr() == (PyObject*)&PyBool_Type) return DType::Bool;
    std::string name;
    if (py::isinstance<py::str>(h)) {
        name = h.cast<std::string>();
    } else {
        try {  // NumPy dtypes and scalar types (np.float32, np.dtype("int64"))
            name = py::str(py::dtype::from_args(py::reinterpret_borrow<py::object>(h)).attr("name"));
        } catch (py::error_already_set&) {
            throw TypeError(detail::str("invalid dtype ", std::string(py::repr(h)),
                                        "; expected one of minitorch.float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64, bool"));
        }
    }
    auto t = dtype_from_name(name);
    MT_CHECK_TYPE(t.has_value(), "unsupported dtype '", name,
                  "': minitorch supports float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64 and bool");
    return *t;
}

std::optional<DType> optional_dtype_arg(py::handle h)
{
    if (h.is_none()) return std::nullopt;
    return dtype_arg(h);
}

Device device_arg(py::handle h)
{
    if (h.is_none()) return Device{};
    if (py::isinstance<Device>(h)) return h.cast<Device>();
    MT_CHECK_TYPE(py::isinstance<py::str>(h), "invalid device ", std::string(py::repr(h)),
                  "; expected 'cpu', 'cuda' or a minitorch.device");
    std::string s = h.cast<std::string>();
    if (s == "cpu") return Device{};
    if (s.rfind("cuda", 0) == 0) {
        Device d{DeviceType::CUDA, 0};
        if (s.size() > 4) {
            MT_CHECK(s[4] == ':' && s.size() > 5 && s.find_first_not_of("0123456789", 5) == std::string::npos,
                     "invalid device string '", s, "'");
            d.index = std::stoi(s.substr(5));
        }
        return d;
    }
    throw ValueError(detail::str("invalid device string '", s, "'; expected 'cpu', 'cuda' or 'cuda:N'"));
}

int64_t int_arg(py::handle h, const char* op, const char* what)
{
    // bool is an int in Python, but PyTorch rejects it as a size or dim.
    MT_CHECK_TYPE(!PyBool_Check(h.ptr()) && (PyLong_Check(h.ptr()) || PyIndex_Check(h.ptr())), op, ": ", what,
                  " must be an int, but got ", type_name(h));
    int overflow = 0;
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    if (!idx) throw py::error_already_set();
    long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
    MT_CHECK(!overflow, op, ": ", what, " ", std::string(py::str(h)), " does not fit in 64 bits");
    return v;
}

Shape shape_seq(py::handle seq, const char* op)
{
    MT_CHECK_TYPE(py::isinstance<py::tuple>(seq) || py::isinstance<py::list>(seq), op,
                  ": size must be a tuple of ints, but got ", type_name(seq));
    Shape s;
    for (py::handle item : seq) s.push_back(int_arg(item, op, "size"));
    return s;
}

Shape shape_arg(const py::args& args, const char* op)
{
    if (args.size() == 1 && (py::isinstance<py::tuple>(args[0]) || py::isinstance<py::list>(args[0])))
        return shape_seq(args[0], op);
    Shape s;
    for (py::handle item : args) s.push_back(int_arg(item, op, "size"));
    return s;
}

std::vector<int64_t> dims_arg(py::handle h, const char* op)
{
    if (h.is_none()) return {};
    if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
        std::vector<int64_t> dims;
        for (py::handle item : h) dims.push_back(int_arg(item, op, "dim"));
        return dims;
    }
    return {int_arg(h, op, "dim")};
}

std::optional<Scalar> scalar_arg(py::handle h)
{
    PyObject* o = h.ptr();
    if (PyBool_Check(o)) return Scalar(o == Py_True);
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        MT_CHECK_RUNTIME(!overflow, "value ", std::string(py::str(h)), " does not fit in int64");
        return Scalar(int64_t(v));
    }
    if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
    // NumPy scalars (np.float32(2), np.int64(3), np.bool_(True)): unwrap with .item().
    if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && py::hasattr(h, "ndim") && h.attr("ndim").cast<int>() == 0 &&
        !py::isinstance<TensorImpl>(h)) {
        py::object v = h.attr("item")();
        if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return scalar_arg(v);
    }
    return std::nullopt;
}

std::optional<Tensor> operand(py::handle h, Device device)
{
    if (py::isinstance<TensorImpl>(h)) return h.cast<Tensor>();
    if (auto s = scalar_arg(h)) return scalar_tensor(*s, device);
    return std::nullopt;
}

namespace {

// The 0-dim tensor for the number in `x * 2.0`, `1 - x`, `x / n`: on the CPU whatever x's
// device (a GPU kernel takes the number's value as an argument: see host_number in
// ops/elementwise.cpp). Kept in a small per-thread cache of the last few numbers used (by
// value and dtype), so a loop doing the same arithmetic allocates nothing for its numbers.
// Safe to share: these tensors never reach Python, and ops only read their operands
// (autograd may save one; nothing writes it).
Tensor number_tensor(const Scalar& s, std::optional<DType> dtype)
{
    const Device device{};
    const DType dt = dtype ? *dtype : s.dtype;
    struct Entry {
        DType dt, kind;
        double d;
        int64_t i;
        Tensor t;
    };
    constexpr int kEntries = 8;
    thread_local Entry cache[kEntries];
    thread_local int next = 0;
    for (Entry& e : cache)  // bit-equal values only: 0.0 and -0.0, or two NaNs, stay apart
        if (e.t && e.dt == dt && e.kind == s.dtype && e.i == s.i && std::memcmp(&e.d, &s.d, sizeof(double)) == 0)
            return e.t;
    Entry& e = cache[next];
    next = (next + 1) % kEntries;
    e = Entry{dt, s.dtype, s.d, s.i, scalar_tensor(s, device, dt)};
    return e.t;
}

}  // namespace

std::optional<Tensor> operand_like(py::handle h, const Tensor& like)
{
    if (py::isinstance<TensorImpl>(h)) return h.cast<Tensor>();
    auto s = scalar_arg(h);
    if (!s) return std::nullopt;
    // A number of a category no higher than the tensor's never decides the result dtype.
    // (A number meeting a 16-bit tensor is kept as float32: see operand_dtype in ops/elementwise.cpp.)
    if (category(s->dtype) <= category(like->dtype))
        return number_tensor(*s, is_16bit(like->dtype) ? DType::Float32 : like->dtype);
    return number_tensor(*s, std::nullopt);
}

Tensor tensor_or_null(py::handle h) { return py::isinstance<TensorImpl>(h) ? h.cast<Tensor>() : nullptr; }

void refuse_quantized(py::handle h, const char* op)
{
    if (!py::hasattr(h, "__minitorch_quantized__")) return;
    const bool cuda = py::hasattr(h, "is_cuda") && h.attr("is_cuda").cast<bool>();
    const std::string msg = detail::str("Could not run 'aten::", op, "' with arguments from the '",
                                        cuda ? "QuantizedCUDA" : "QuantizedCPU",
                                        "' backend: minitorch's quantized tensors support dequantize, int_repr, "
                                        "relu, pooling, reshape/view and the minitorch.ops.quantized kernels; call "
                                        ".dequantize() first to compute on floats.");
    PyErr_SetString(PyExc_NotImplementedError, msg.c_str());
    throw py::error_already_set();
}

Tensor operand_or_throw(py::handle h, Device device, const char* op, const char* what)
{
    if (auto t = operand(h, device)) return *t;
    refuse_quantized(h, op);
    throw TypeError(detail::str(op, ": ", what, " must be a Tensor or a number, but got ",
                                type_name(h)));
}

Tensor times_alpha(const Tensor& other, py::handle alpha, const char* op)
{
    if (alpha.is_none()) return other;
    auto s = scalar_arg(alpha);
    MT_CHECK_TYPE(s.has_value(), op, ": alpha must be a number, but got ", type_name(alpha));
    // PyTorch: an integer tensor takes no float alpha (it would be rounded away silently)
    MT_CHECK_TYPE(is_floating(other->dtype) || s->dtype != DType::Float64, op,
                  ": for integral input tensors, argument alpha must not be a floating point number");
    // alpha = 1 changes nothing: no multiply (one launch less), and a bool other stays bool,
    // so sub(bool, bool, alpha=1) is refused as bool - bool is
    if (s->d == 1.0) return other;
    Tensor scaled = binary(BinaryOp::Mul, other, scalar_tensor(*s, Device{}));  // a number stays on the host
    // add(x, 2, alpha=3) is x + 6, with 6 still a Python number for dtype promotion
    if (other->wrapped_number) scaled->wrapped_number = true;
    return scaled;
}

py::dtype numpy_dtype(DType t)
{
    switch (t) {
        case DType::Bool: return py::dtype("bool");
        case DType::Int64: return py::dtype("int64");
        case DType::Float32: return py::dtype("float32");
        case DType::Float64: return py::dtype("float64");
        case DType::Float16: return py::dtype("float16");
        case DType::UInt8: return py::dtype("uint8");
        case DType::Int8: return py::dtype("int8");
        case DType::Int16: return py::dtype("int16");
        case DType::Int32: return py::dtype("int32");
        case DType::BFloat16: {
            // NumPy has no bfloat16; the ml_dtypes package (JAX's) adds one.
            py::object bf16;
            try {
                bf16 = py::module_::import("ml_dtypes").attr("bfloat16");
            } catch (py::error_already_set&) {
                throw TypeError("bfloat16 has no NumPy dtype without the ml_dtypes package: pip install ml_dtypes, "
                                "or convert with .float() first");
            }
            return py::dtype::from_args(bf16);
        }
    }
    return py::dtype("float32");
}

}  // namespace minitorch::python
