// linalg.h — the factorizations minitorch.linalg is built from, one function each, per device:
// cpu/lapack.cpp (LAPACK from OpenBLAS) and cuda/linalg.cu (cuSOLVER, real GPU builds only).
//
// Every input is a contiguous float32/float64 tensor of stacked row-major matrices
// (batch, m, n) on the function's device; outputs are new contiguous tensors of that dtype
// and device. `info` is a CPU int64 tensor (batch,): LAPACK's INFO of each matrix (0: done;
// > 0: which pivot / minor / eigenvalue failed), so Python can raise with the batch index.
// The Python side (python/minitorch/linalg/) checks shapes, broadcasts batches, raises
// errors and owns every gradient formula.
#pragma once
#include <tuple>

#include "minitorch/tensor.h"

namespace minitorch::linalg {

// P A = L U (getrf). lu: L below the diagonal (unit diagonal implied), U on and above;
// pivots (batch, n) int64, 1-based as LAPACK and torch.linalg.lu_factor give them.
std::tuple<Tensor, Tensor, Tensor> lu_factor_cpu(const Tensor& a);
// X with A X = B (gesv): a (batch, n, n), b (batch, n, k) -> x (batch, n, k), info.
std::tuple<Tensor, Tensor> solve_cpu(const Tensor& a, const Tensor& b);
// A = L L^T (potrf): the lower factor, zeros above the diagonal; info = k when the leading
// minor of order k is not positive-definite.
std::tuple<Tensor, Tensor> cholesky_cpu(const Tensor& a);
// A = Q R (geqrf + orgqr): complete -> Q (m, m), R (m, n); else Q (m, k), R (k, n), k = min(m, n).
std::tuple<Tensor, Tensor> qr_cpu(const Tensor& a, bool complete);
// Symmetric A = V diag(w) V^T (syevd), w ascending (batch, n), V (batch, n, n) (empty when
// !compute_v); reads the lower triangle, or the upper one when `upper`.
std::tuple<Tensor, Tensor, Tensor> eigh_cpu(const Tensor& a, bool upper, bool compute_v);
// A = U diag(S) Vh (gesdd): S descending (batch, k); full -> U (m, m), Vh (n, n), else
// U (m, k), Vh (k, n); U and Vh empty when !compute_uv.
std::tuple<Tensor, Tensor, Tensor, Tensor> svd_cpu(const Tensor& a, bool full, bool compute_uv);

#if MINITORCH_WITH_CUDA
// The same on a real GPU with cuSOLVER (cuda/linalg.cu); inputs and outputs on "cuda",
// info on the CPU. The emulator has no cuSOLVER: Python runs those on a host copy.
std::tuple<Tensor, Tensor, Tensor> lu_factor_cuda(const Tensor& a);
std::tuple<Tensor, Tensor> solve_cuda(const Tensor& a, const Tensor& b);
std::tuple<Tensor, Tensor> cholesky_cuda(const Tensor& a);
std::tuple<Tensor, Tensor> qr_cuda(const Tensor& a, bool complete);
std::tuple<Tensor, Tensor, Tensor> eigh_cuda(const Tensor& a, bool upper, bool compute_v);
std::tuple<Tensor, Tensor, Tensor, Tensor> svd_cuda(const Tensor& a, bool full, bool compute_uv);
#endif

}  // namespace minitorch::linalg
