// linalg_bindings.cpp — the factorizations of minitorch/linalg.h as _C._linalg_<name>
// (CPU, LAPACK) and _C._cusolver_<name> (a real GPU, cuSOLVER; absent without nvcc).
// python/minitorch/linalg/ calls them on contiguous (batch, m, n) tensors and does the rest.
#include "bindings.h"
#include "minitorch/linalg.h"

namespace minitorch::python {

void bind_linalg(py::module_& m)
{
    using namespace minitorch::linalg;
    m.def("_linalg_lu_factor", &lu_factor_cpu);
    m.def("_linalg_solve", &solve_cpu);
    m.def("_linalg_cholesky", &cholesky_cpu);
    m.def("_linalg_qr", &qr_cpu);
    m.def("_linalg_eigh", &eigh_cpu);
    m.def("_linalg_svd", &svd_cpu);
#if MINITORCH_WITH_CUDA
    m.def("_cusolver_lu_factor", &lu_factor_cuda);
    m.def("_cusolver_solve", &solve_cuda);
    m.def("_cusolver_cholesky", &cholesky_cuda);
    m.def("_cusolver_qr", &qr_cuda);
    m.def("_cusolver_eigh", &eigh_cuda);
    m.def("_cusolver_svd", &svd_cuda);
#endif
}

}  // namespace minitorch::python
