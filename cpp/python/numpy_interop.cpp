// numpy_interop.cpp — sharing memory with NumPy both ways.
#include "bindings.h"

namespace minitorch::python {

Tensor from_numpy(py::handle obj)
{
    MT_CHECK_TYPE(py::isinstance<py::array>(obj), "from_numpy: expected np.ndarray, but got ",
                  type_name(obj));
    py::array arr = py::reinterpret_borrow<py::array>(obj);
    std::string name = py::str(arr.dtype().attr("name"));
    DType dt;
    if (name == "float32") dt = DType::Float32;
    else if (name == "float64") dt = DType::Float64;
    else if (name == "int64") dt = DType::Int64;
    else if (name == "bool") dt = DType::Bool;
    else if (name == "float16") dt = DType::Float16;
    else if (name == "bfloat16") dt = DType::BFloat16;  // ml_dtypes' type
    else if (name == "uint8") dt = DType::UInt8;
    else if (name == "int8") dt = DType::Int8;
    else if (name == "int16") dt = DType::Int16;
    else if (name == "int32") dt = DType::Int32;
    else
        throw TypeError(detail::str("from_numpy: can't convert np.ndarray of type ", name,
                                    "; the only supported types are float64, float32, float16, bfloat16, int64, "
                                    "int32, int16, int8, uint8, and bool"));
    MT_CHECK(arr.dtype().attr("isnative").cast<bool>(), "from_numpy: given numpy array has byte order different from the native byte order");
    const int64_t item = int64_t(itemsize(dt));
    Shape shape(arr.shape(), arr.shape() + arr.ndim());
    Strides strides(arr.ndim());
    int64_t extent = 1;  // elements from the first one to the last one, inclusive
    bool empty_array = arr.size() == 0;
    for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
        int64_t s = arr.strides()[d];
        MT_CHECK(s >= 0, "from_numpy: at least one stride in the given numpy array is negative (", s,
                 " bytes); copy the array first with arr.copy()");
        MT_CHECK(s % item == 0, "from_numpy: given numpy array strides are not a multiple of the element size (",
                 s, " bytes for ", item, "-byte elements)");
        strides[d] = s / item;
        if (shape[d] > 0) extent += (shape[d] - 1) * strides[d];
    }
    // The storage keeps the array alive; dropping it needs the GIL.
    auto* keep = new py::object(arr);
    auto release = [keep](void*) {
        py::gil_scoped_acquire gil;
        delete keep;
    };
    auto t = std::make_shared<TensorImpl>();
    t->storage = Storage::wrap(arr.mutable_data(), empty_array ? 0 : size_t(extent * item), Device{}, release);
    t->dtype = dt;
    t->shape = shape;
    t->strides = strides;
    return t;
}

// A NumPy array over the tensor's memory (no copy); it keeps the storage alive.
py::array to_numpy(const Tensor& t, bool force)
{
    MT_CHECK_TYPE(t->device().is_cpu(), "numpy: can't convert ", t->device(),
                  " device type tensor to numpy; use Tensor.cpu() to copy the tensor to host memory first");
    MT_CHECK_RUNTIME(force || !t->requires_grad,
                     "numpy: can't call numpy() on a Tensor that requires grad; use tensor.detach().numpy() instead");
    std::vector<py::ssize_t> shape(t->shape.begin(), t->shape.end()), strides;
    for (int64_t s : t->strides) strides.push_back(s * int64_t(itemsize(t->dtype)));
    auto* keep = new std::shared_ptr<Storage>(t->storage);
    py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
    void* data = t->storage->data ? static_cast<void*>(t->data()) : nullptr;
    return py::array(numpy_dtype(t->dtype), shape, strides, data, owner);
}

// A copy of a NumPy array (any strides) in a new tensor of dtype `dt`.
Tensor from_numpy_copy(py::handle obj, DType dt, Device device)
{
    // 16-bit: through float32, then rounded by minitorch's conversion (double -> float ->
    // 16 bits, as PyTorch converts Python numbers), so no ml_dtypes is needed.
    if (is_16bit(dt)) return to_dtype(from_numpy_copy(obj, DType::Float32, device), dt);
    py::module_ np = py::module_::import("numpy");
    // np.array(order="C") keeps 0-dim arrays 0-dim (ascontiguousarray would make them 1-D).
    py::array arr = np.attr("array")(obj, py::arg("dtype") = numpy_dtype(dt), py::arg("order") = "C");
    Tensor t = empty(Shape(arr.shape(), arr.shape() + arr.ndim()), dt, Device{});
    if (t->numel()) std::memcpy(t->storage->data, arr.data(), size_t(t->numel()) * itemsize(dt));
    return device.is_cpu() ? t : to_device(t, device);
}

// The bits of a 16-bit CPU tensor as a NumPy uint16 array (shared memory), and a new
// 16-bit tensor from such bits: how bfloat16, which NumPy has no type for, is pickled
// and saved without ml_dtypes.
py::array numpy_bits(const Tensor& t)
{
    MT_CHECK_TYPE(is_16bit(t->dtype) && t->device().is_cpu(), "_numpy_bits: expected a 16-bit CPU tensor, got ",
                  t->dtype, " on ", t->device());
    std::vector<py::ssize_t> shape(t->shape.begin(), t->shape.end()), strides;
    for (int64_t s : t->strides) strides.push_back(s * 2);
    auto* keep = new std::shared_ptr<Storage>(t->storage);
    py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
    void* data = t->storage->data ? static_cast<void*>(t->data()) : nullptr;
    return py::array(py::dtype("uint16"), shape, strides, data, owner);
}

Tensor from_numpy_bits(py::handle obj, DType dt)
{
    MT_CHECK_TYPE(is_16bit(dt), "_from_numpy_bits: expected float16 or bfloat16, got ", dt);
    py::array arr = py::module_::import("numpy").attr("array")(obj, py::arg("dtype") = "uint16", py::arg("order") = "C");
    Tensor t = empty(Shape(arr.shape(), arr.shape() + arr.ndim()), dt, Device{});
    if (t->numel()) std::memcpy(t->storage->data, arr.data(), size_t(t->numel()) * 2);
    return t;
}

void bind_numpy(py::module_& m)
{
    m.def("_numpy_bits", &numpy_bits);
    m.def("_from_numpy_bits", [](py::handle a, py::handle dtype) { return from_numpy_bits(a, dtype_arg(dtype)); });
    m.def("from_numpy", &from_numpy, py::arg("ndarray"),
          "A tensor sharing memory with a NumPy array (floats, integers or bool).");
    m.def("_from_numpy_copy", [](py::handle a, py::handle dtype, py::handle device) {
        return from_numpy_copy(a, dtype_arg(dtype), device_arg(device));
    });
}

}  // namespace minitorch::python
