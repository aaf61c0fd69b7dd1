// cuda_stub.cpp — minitorch._C.cuda_* when the CUDA backend is (or is not) compiled in.
#include "bindings.h"

#ifdef MINITORCH_WITH_CUDA
namespace minitorch::cuda {
int device_count();  // cuda/runtime.cu: 0 when there is no usable driver or GPU
}
#endif

namespace minitorch::python {

void bind_cuda(py::module_& m)
{
#ifdef MINITORCH_WITH_CUDA
    m.attr("_cuda_compiled") = true;
    m.def("_cuda_device_count", [] { return minitorch::cuda::device_count(); });
#else
    m.attr("_cuda_compiled") = false;
    m.def("_cuda_device_count", [] { return 0; });
#endif
}

}  // namespace minitorch::python
