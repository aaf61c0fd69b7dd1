// module.cpp — the _C extension: error mapping, dtype/device types, and the module.
#include "bindings.h"
#include "minitorch/parallel.h"

namespace minitorch::python {

void bind_errors(py::module_& m)
{
    // Created once and kept for the life of the interpreter.
    static PyObject* input_error = PyErr_NewExceptionWithDoc(
        "minitorch.InputError",
        "Bad shapes or values. Both a ValueError and a RuntimeError (what PyTorch raises).",
        py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError)).release().ptr(), nullptr);
    static PyObject* dtype_error = PyErr_NewExceptionWithDoc(
        "minitorch.DTypeError", "Unsupported dtype or argument type. Both a TypeError and a RuntimeError.",
        py::make_tuple(py::handle(PyExc_TypeError), py::handle(PyExc_RuntimeError)).release().ptr(), nullptr);
    static PyObject* cuda_oom = PyErr_NewExceptionWithDoc(
        "minitorch.OutOfMemoryError",
        "A device (the GPU, or the CPU under set_per_process_memory_fraction) ran out of memory. Both a "
        "RuntimeError and a MemoryError; minitorch.cuda.OutOfMemoryError is the same class.",
        py::make_tuple(py::handle(PyExc_RuntimeError), py::handle(PyExc_MemoryError)).release().ptr(), nullptr);
    m.attr("CudaOutOfMemoryError") = py::handle(cuda_oom);
    m.attr("OutOfMemoryError") = py::handle(cuda_oom);
    m.attr("InputError") = py::handle(input_error);
    m.attr("DTypeError") = py::handle(dtype_error);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const ValueError& e) {
            PyErr_SetString(input_error, e.what());
        } catch (const TypeError& e) {
            PyErr_SetString(dtype_error, e.what());
        } catch (const IndexError& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        } catch (const OutOfMemoryError& e) {
            PyErr_SetString(cuda_oom, e.what());
        } catch (const CudaOutOfMemoryError& e) {
            PyErr_SetString(cuda_oom, e.what());
        }
    });
}

namespace {
constexpr int kCachedCudaDevices = 16;
PyObject* g_dtype_objects[kDTypes] = {};
PyObject* g_cpu_object = nullptr;
PyObject* g_cuda_objects[kCachedCudaDevices] = {};
}  // namespace

py::object dtype_object(DType t)
{
    PyObject* o = g_dtype_objects[int(t)];
    return o ? py::reinterpret_borrow<py::object>(o) : py::cast(t);
}

py::object device_object(const Device& d)
{
    PyObject* o = nullptr;
    if (d.is_cpu() && d.index == 0) o = g_cpu_object;
    if (d.type == DeviceType::CUDA && d.index >= 0 && d.index < kCachedCudaDevices) o = g_cuda_objects[d.index];
    return o ? py::reinterpret_borrow<py::object>(o) : py::cast(d);
}

void bind_types(py::module_& m)
{
    py::enum_<DType> dtype_enum(m, "dtype");
    dtype_enum.value("bool", DType::Bool)
        .value("int64", DType::Int64)
        .value("float32", DType::Float32)
        .value("float64", DType::Float64)
        .value("float16", DType::Float16)
        .value("bfloat16", DType::BFloat16)
        .value("uint8", DType::UInt8)
        .value("int8", DType::Int8)
        .value("int16", DType::Int16)
        .value("int32", DType::Int32)
        .def("__repr__", [](DType t) { return std::string("minitorch.") + dtype_name(t); })
        .def("__str__", [](DType t) { return std::string("minitorch.") + dtype_name(t); })
        .def_property_readonly("is_floating_point", [](DType t) { return is_floating(t); })
        .def_property_readonly("itemsize", [](DType t) { return itemsize(t); })
        .def_property_readonly("is_signed", [](DType t) { return t != DType::Bool && t != DType::UInt8; });

    py::class_<Device>(m, "device")
        .def(py::init([](py::handle spec, py::object index) {
                 Device d = device_arg(spec);
                 if (!index.is_none()) d.index = int(int_arg(index, "device", "index"));
                 return d;
             }),
             py::arg("type"), py::arg("index") = py::none())
        .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
        .def_property_readonly("index", [](const Device& d) -> py::object {
            return d.is_cpu() ? py::none() : py::object(py::int_(d.index));
        })
        .def("__eq__", [](const Device& d, py::handle o) {
            if (py::isinstance<Device>(o) || py::isinstance<py::str>(o)) {
                Device e = device_arg(o);
                if (!d.is_cpu() && py::isinstance<py::str>(o) && o.cast<std::string>() == "cuda") return !e.is_cpu();
                return d == e;
            }
            return false;
        })
        .def("__hash__", [](const Device& d) { return int(d.type) * 1000 + d.index; })
        .def("__str__", &Device::str)
        .def("__repr__", [](const Device& d) {
            return d.is_cpu() ? std::string("device(type='cpu')")
                              : "device(type='cuda', index=" + std::to_string(d.index) + ")";
        });

    // The shared objects (released: they live as long as the process, past the module).
    // Each dtype's object is the enum's own (minitorch.float32), so `x.dtype is minitorch.float32`
    // holds, as in PyTorch.
    for (int t = 0; t < kDTypes; ++t)
        g_dtype_objects[t] = py::object(dtype_enum.attr(dtype_name(DType(t)))).release().ptr();
    g_cpu_object = py::cast(Device{}).release().ptr();
    for (int i = 0; i < kCachedCudaDevices; ++i)
        g_cuda_objects[i] = py::cast(Device{DeviceType::CUDA, i}).release().ptr();
}

}  // namespace minitorch::python

PYBIND11_MODULE(_C, m)
{
    using namespace minitorch::python;
    m.doc() = "minitorch's C++ core: tensors, kernels and ops";
    bind_errors(m);
    bind_types(m);
    bind_tensor(m);
    bind_autograd(m);
    bind_functions(m);
    bind_numpy(m);
    bind_dlpack(m);
    bind_cuda(m);
    bind_memory(m);
    bind_profiler(m);
    bind_linalg(m);
    bind_quantized(m);
}
