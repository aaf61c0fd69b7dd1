// bindings.h — the pieces of the _C module, one file each.
#pragma once
#include <cstring>

#include "convert.h"

namespace minitorch::python {

void bind_errors(py::module_& m);
void bind_types(py::module_& m);     // dtype, device
// One Python object per dtype, and per device for the CPU and the first 16 GPUs, made by
// bind_types and kept for the life of the process: Tensor.dtype / .device return these
// instead of a new object per read (Python code reads them around nearly every op).
py::object dtype_object(DType t);
py::object device_object(const Device& d);
void bind_tensor(py::module_& m);    // the Tensor class and its methods
void bind_functions(py::module_& m); // creation, math, threads, seeds
void bind_numpy(py::module_& m);
void bind_dlpack(py::module_& m);  // DLPack capsules, memory owned by others
void bind_cuda(py::module_& m);
void bind_memory(py::module_& m);  // allocator counters, device properties (memory_bindings.cpp)
}  // namespace minitorch::python
namespace minitorch {
struct CudaBackend;
}
namespace minitorch::python {
// The CUDA backend "cuda" runs on now (the GPU's or the emulator's; cuda_stub.cpp), or null.
const CudaBackend* active_cuda_backend();
void bind_autograd(py::module_& m);  // after bind_tensor
void bind_profiler(py::module_& m);  // minitorch.profiler's recorder
void bind_linalg(py::module_& m);    // minitorch.linalg's factorizations (linalg_bindings.cpp)
void bind_quantized(py::module_& m); // the quantized GEMM (quantized_bindings.cpp)
// Raises PyTorch's NotImplementedError ("Could not run 'aten::<op>' with arguments from the
// 'QuantizedCPU' backend") when h is a quantized tensor (python/minitorch/_quantized.py).
void refuse_quantized(py::handle h, const char* op);

// Every op of op_list.h, by its Python name (methods and minitorch.<name> functions):
// for (UnaryOp op : kAllUnaryOps) ... op_name(op).
#define MT_OP_VALUE_U(Enum, ...) UnaryOp::Enum,
#define MT_OP_VALUE_B(Enum, ...) BinaryOp::Enum,
inline constexpr UnaryOp kAllUnaryOps[] = {MT_UNARY_OPS(MT_OP_VALUE_U)};
inline constexpr BinaryOp kAllBinaryOps[] = {MT_BINARY_OPS(MT_OP_VALUE_B)};
#undef MT_OP_VALUE_U
#undef MT_OP_VALUE_B
// Other names PyTorch gives the same ops.
inline constexpr std::pair<const char*, BinaryOp> kBinaryAliases[] = {{"arctan2", BinaryOp::Atan2}};

Tensor from_numpy(py::handle arr);
py::array to_numpy(const Tensor& t, bool force);
Tensor index(const Tensor& t, py::handle idx);
void index_put(const Tensor& t, py::handle idx, py::handle value);

}  // namespace minitorch::python
