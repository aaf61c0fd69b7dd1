// blas.h — the one place that knows which BLAS we link: the scipy-openblas32 wheel
// (every symbol carries a scipy_ prefix) or a system CBLAS.
#pragma once

#ifdef MINITORCH_SCIPY_OPENBLAS
#include <cblas.h>  // from scipy_openblas32/include
#define MT_CBLAS_SGEMM scipy_cblas_sgemm
#define MT_CBLAS_DGEMM scipy_cblas_dgemm
#define MT_BLAS_SET_THREADS scipy_openblas_set_num_threads
#else
#include <cblas.h>
#define MT_CBLAS_SGEMM cblas_sgemm
#define MT_CBLAS_DGEMM cblas_dgemm
#define MT_BLAS_SET_THREADS(n) ((void)(n))
#endif

namespace minitorch::cpu {

// BLAS threads for one call: GEMMs below 1e8 flops (about 1 ms on one core) run on one
// thread (waking OpenBLAS's pool costs more than it saves, and its spinning workers fight
// our OpenMP threads — the oversubscription DESIGN.md measured; at 1e7 the MLP step's
// 784 x 128 GEMMs went to two threads and the step got slower on two threads than on
// one); big ones get the whole budget.
inline void set_blas_threads_for(double flops, int budget)
{
    static int current = -1;
    int want = flops < 1e8 ? 1 : budget;
    if (want != current) {
        MT_BLAS_SET_THREADS(want);
        current = want;
    }
}

// C = A @ B (or C += A @ B when add), A (M, K) and B (K, N) with BLAS layouts already chosen.
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a, int lda,
                 const float* b, int ldb, float* c, int ldc, bool add = false)
{
    MT_CBLAS_SGEMM(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, add ? 1.0f : 0.0f, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a, int lda,
                 const double* b, int ldb, double* c, int ldc, bool add = false)
{
    MT_CBLAS_DGEMM(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, add ? 1.0 : 0.0, c, ldc);
}

}  // namespace minitorch::cpu
