// dlpack.cpp — zero-copy exchange with other array libraries (NumPy, PyTorch, CuPy, JAX)
// through DLPack, and wrapping memory that someone else owns (__cuda_array_interface__).
//
// DLPack is a C struct that describes an array (data pointer, device, dtype, shape,
// strides in elements) plus a deleter that the consumer calls when it no longer needs the
// memory. It travels inside a PyCapsule named "dltensor" (the versioned 1.x struct:
// "dltensor_versioned"); the consumer renames the capsule "used_..." when it takes it over,
// so the memory is released exactly once. The structs are written out here from the DLPack
// specification (dlpack.h v1.0); their layout is the ABI every library shares.
#include <Python.h>

#include "bindings.h"

#include "../../cuda/backend.h"

namespace minitorch::python {

namespace {

// A "cuda" tensor here lives in GPU memory: the GPU backend serves "cuda" (the emulator's
// tensors live in host memory).
bool cuda_on_gpu()
{
    const CudaBackend* b = active_cuda_backend();
    return b && !b->is_emulated();
}

// ---- the DLPack ABI ----
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

struct DLDevice {
    int32_t device_type;
    int32_t device_id;
};
struct DLDataType {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
};
struct DLTensor {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;  // in elements; may be null for a compact row-major array
    uint64_t byte_offset;
};
struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
    uint32_t major;
    uint32_t minor;
};
struct DLManagedTensorVersioned {
    DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(DLManagedTensorVersioned* self);
    uint64_t flags;  // bit 0: read only; bit 1: is a copy
    DLTensor dl_tensor;
};

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

// ---- export: a minitorch tensor as DLPack ----

// What a DLPack struct we hand out owns: the tensor's storage (kept alive) and the shape
// and strides arrays its DLTensor points at.
template <class Managed>
struct Export {
    Managed managed{};
    std::shared_ptr<Storage> storage;
    std::vector<int64_t> shape, strides;
};

DLDataType dl_dtype(DType dt)
{
    switch (dt) {
    case DType::Float32: return {kDLFloat, 32, 1};
    case DType::Float64: return {kDLFloat, 64, 1};
    case DType::Int64: return {kDLInt, 64, 1};
    case DType::Bool: return {kDLBool, 8, 1};
    case DType::Float16: return {kDLFloat, 16, 1};
    case DType::BFloat16: return {kDLBfloat, 16, 1};
    case DType::UInt8: return {kDLUInt, 8, 1};
    case DType::Int8: return {kDLInt, 8, 1};
    case DType::Int16: return {kDLInt, 16, 1};
    case DType::Int32: return {kDLInt, 32, 1};
    }
    throw TypeError("to_dlpack: unsupported dtype");
}

template <class Managed>
Managed* make_export(const Tensor& t)
{
    auto* e = new Export<Managed>;
    e->storage = t->storage;
    e->shape.assign(t->shape.begin(), t->shape.end());
    e->strides.assign(t->strides.begin(), t->strides.end());
    DLTensor& dl = e->managed.dl_tensor;
    // Emulated "cuda" memory is host memory: it is exported as CPU memory, which is what it is.
    const bool gpu = !t->device().is_cpu() && cuda_on_gpu();
    dl.data = t->storage->data;
    dl.byte_offset = uint64_t(t->offset) * itemsize(t->dtype);
    dl.device = {gpu ? kDLCUDA : kDLCPU, gpu ? int32_t(t->device().index) : 0};
    dl.ndim = int32_t(t->dim());
    dl.dtype = dl_dtype(t->dtype);
    dl.shape = e->shape.data();
    dl.strides = e->strides.data();
    e->managed.manager_ctx = e;
    e->managed.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
    return &e->managed;
}

// A capsule nobody consumed still owns its struct: free it with the capsule.
template <class Managed>
void free_unused_capsule(PyObject* capsule, const char* name)
{
    if (!PyCapsule_IsValid(capsule, name)) return;  // renamed "used_...": the consumer owns it
    auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
    if (m && m->deleter) m->deleter(m);
}

py::capsule to_dlpack(const Tensor& t, bool versioned)
{
    MT_CHECK_RUNTIME(!t->requires_grad,
                     "to_dlpack: can't export a tensor that requires grad; use tensor.detach() first");
    // minitorch runs on the legacy default stream; finish its work before another library
    // (on a stream of its own) reads the memory.
    if (!t->device().is_cpu() && cuda_on_gpu()) active_cuda_backend()->synchronize();
    PyObject* cap;
    if (versioned) {
        DLManagedTensorVersioned* m = make_export<DLManagedTensorVersioned>(t);
        m->version = {1, 0};
        cap = PyCapsule_New(m, kVersionedName, [](PyObject* c) {
            free_unused_capsule<DLManagedTensorVersioned>(c, kVersionedName);
        });
        if (!cap) m->deleter(m);
    } else {
        DLManagedTensor* m = make_export<DLManagedTensor>(t);
        cap = PyCapsule_New(m, kLegacyName, [](PyObject* c) { free_unused_capsule<DLManagedTensor>(c, kLegacyName); });
        if (!cap) m->deleter(m);
    }
    if (!cap) throw py::error_already_set();
    return py::reinterpret_steal<py::capsule>(cap);
}

// ---- import: memory described by DLPack as a minitorch tensor ----

DType dtype_from_dl(DLDataType d)
{
    MT_CHECK_TYPE(d.lanes == 1, "from_dlpack: vector dtypes (lanes = ", d.lanes, ") are not supported");
    if (d.code == kDLFloat && d.bits == 32) return DType::Float32;
    if (d.code == kDLFloat && d.bits == 64) return DType::Float64;
    if (d.code == kDLInt && d.bits == 64) return DType::Int64;
    if (d.code == kDLBool && d.bits == 8) return DType::Bool;
    if (d.code == kDLFloat && d.bits == 16) return DType::Float16;
    if (d.code == kDLBfloat && d.bits == 16) return DType::BFloat16;
    if (d.code == kDLUInt && d.bits == 8) return DType::UInt8;
    if (d.code == kDLInt && d.bits == 8) return DType::Int8;
    if (d.code == kDLInt && d.bits == 16) return DType::Int16;
    if (d.code == kDLInt && d.bits == 32) return DType::Int32;
    const char* kind = d.code == kDLInt ? "int" : d.code == kDLUInt ? "uint" : d.code == kDLFloat ? "float"
                     : d.code == kDLBool ? "bool" : "code ";
    throw TypeError(detail::str("from_dlpack: minitorch has no dtype for DLPack ", kind,
                                d.code > kDLFloat && d.code != kDLBool ? std::to_string(d.code) : "", int(d.bits),
                                "; supported: float32, float64, float16, bfloat16, uint8, int8, int16, int32, int64, bool (convert in the other library first)"));
}

// A tensor over memory someone else owns; `release` runs when the last view of it dies.
Tensor wrap_memory(void* base, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, DType dt,
                   Device device, std::function<void(void*)> release, const char* op)
{
    const int64_t item = int64_t(itemsize(dt));
    int64_t extent = 1;  // elements from the first to the last, inclusive
    bool empty_tensor = false;
    for (size_t d = 0; d < shape.size(); ++d) {
        MT_CHECK(shape[d] >= 0, op, ": negative size ", shape[d], " in dim ", d);
        MT_CHECK(strides[d] >= 0, op, ": negative strides are not supported (stride ", strides[d], " in dim ", d,
                 "); copy the array first");
        if (shape[d] == 0) empty_tensor = true;
        else extent += (shape[d] - 1) * strides[d];
    }
    auto t = std::make_shared<TensorImpl>();
    t->storage = Storage::wrap(base, empty_tensor ? 0 : size_t(extent * item), device, std::move(release));
    t->dtype = dt;
    t->shape = Shape(shape.begin(), shape.end());
    t->strides = Strides(strides.begin(), strides.end());
    return t;
}

Device device_from_dl(DLDevice d)
{
    if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return Device{};
    if (d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged) {
        MT_CHECK_RUNTIME(cuda_on_gpu(),
                         "from_dlpack: the array is in GPU memory, but this minitorch has no GPU backend "
                         "(it is the CPU or the emulated build); copy it to the host in the other library first");
        return Device{DeviceType::CUDA, int(d.device_id)};
    }
    throw std::runtime_error(detail::str("from_dlpack: unsupported DLPack device type ", d.device_type,
                                   " (minitorch takes CPU and CUDA memory)"));
}

template <class Managed>
Tensor import_managed(Managed* m)
{
    const DLTensor& dl = m->dl_tensor;
    const DType dt = dtype_from_dl(dl.dtype);
    const Device device = device_from_dl(dl.device);
    MT_CHECK(dl.ndim >= 0, "from_dlpack: negative ndim ", dl.ndim);
    std::vector<int64_t> shape(dl.shape, dl.shape + dl.ndim), strides(dl.ndim);
    int64_t s = 1;
    for (int d = dl.ndim - 1; d >= 0; --d) {  // strides may be null: row-major
        strides[d] = dl.strides ? dl.strides[d] : s;
        s *= std::max<int64_t>(shape[d], 1);
    }
    char* base = static_cast<char*>(dl.data) + dl.byte_offset;
    return wrap_memory(base, shape, strides, dt, device, [m](void*) { if (m->deleter) m->deleter(m); },
                       "from_dlpack");
}

Tensor from_dlpack_capsule(py::capsule cap)
{
    PyObject* c = cap.ptr();
    if (PyCapsule_IsValid(c, kVersionedName)) {
        auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
        if (m->flags & 1) {  // DLPACK_FLAG_BITMASK_READ_ONLY: minitorch tensors are always writable
            PyErr_SetString(PyExc_BufferError, "from_dlpack: the array is read-only and minitorch tensors are "
                                               "writable; copy it first (e.g. np.array(a) or minitorch.tensor(a))");
            throw py::error_already_set();
        }
        MT_CHECK_RUNTIME(m->version.major == 1, "from_dlpack: DLPack version ", m->version.major, ".",
                         m->version.minor, " is not supported (minitorch reads 1.x)");
        Tensor t = import_managed(m);
        PyCapsule_SetName(c, "used_dltensor_versioned");
        return t;
    }
    if (PyCapsule_IsValid(c, kLegacyName)) {
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
        Tensor t = import_managed(m);
        PyCapsule_SetName(c, "used_dltensor");
        return t;
    }
    const char* name = PyCapsule_GetName(c);
    throw ValueError(detail::str("from_dlpack: expected a capsule named 'dltensor' or 'dltensor_versioned', got '",
                                 name ? name : "", "' (a DLPack capsule can be consumed only once)"));
}

}  // namespace

void bind_dlpack(py::module_& m)
{
    m.def("_to_dlpack", &to_dlpack, py::arg("tensor"), py::arg("versioned") = false);
    m.def("_from_dlpack_capsule", &from_dlpack_capsule, py::arg("capsule"));
    // A tensor over memory at `ptr` that `owner` keeps alive (shape and strides in
    // elements): how objects with __cuda_array_interface__ / __array_interface__ come in.
    m.def("_from_blob", [](uintptr_t ptr, std::vector<int64_t> shape, std::vector<int64_t> strides,
                           py::handle dtype, py::handle device, py::object owner) {
        MT_CHECK(shape.size() == strides.size(), "as_tensor: shape ", shape.size(), " and strides ", strides.size(),
                 " differ in length");
        // The owner is handed to the storage only once wrap_memory has accepted the memory.
        auto keep = std::make_shared<py::object>(std::move(owner));
        Tensor t = wrap_memory(reinterpret_cast<void*>(ptr), shape, strides, dtype_arg(dtype), device_arg(device),
                               [keep](void*) {
                                   py::gil_scoped_acquire gil;
                                   *keep = py::object();
                               },
                               "as_tensor");
        return t;
    });
}

}  // namespace minitorch::python
