// lapack.cpp — minitorch.linalg's factorizations on the CPU: LAPACK from the OpenBLAS we
// link (blas.h says which), one call per matrix of the batch. No factorization is written
// here; this file only lays matrices out for LAPACK and reads its results back.
//
// Layout: LAPACK is Fortran, column-major; our matrices are row-major, so LAPACK would read
// each one as its transpose. Every kernel copies a matrix into a column-major work buffer
// (to_colmajor), calls LAPACK on it, and copies the results back (from_colmajor). The copies
// cost O(m n) against the factorization's O(m n min(m, n)).
#include <algorithm>
#include <cstring>
#include <vector>

#include "minitorch/error.h"
#include "minitorch/linalg.h"

// LAPACK's Fortran symbols: the scipy-openblas32 wheel prefixes every one with scipy_.
#ifdef MINITORCH_SCIPY_OPENBLAS
#define MT_LAPACK(name) scipy_##name##_
#else
#define MT_LAPACK(name) name##_
#endif

// Fortran passes everything by pointer; a CHARACTER argument also has a hidden length,
// passed by value after all the others (gfortran's convention, size_t).
extern "C" {
using lapack_int = int;  // scipy-openblas32: 32-bit LAPACK integers
#define MT_DECLARE_LAPACK(T, p)                                                                                     \
    void MT_LAPACK(p##getrf)(const lapack_int* m, const lapack_int* n, T* a, const lapack_int* lda, lapack_int* ipiv, \
                             lapack_int* info);                                                                   \
    void MT_LAPACK(p##gesv)(const lapack_int* n, const lapack_int* nrhs, T* a, const lapack_int* lda,               \
                            lapack_int* ipiv, T* b, const lapack_int* ldb, lapack_int* info);                      \
    void MT_LAPACK(p##potrf)(const char* uplo, const lapack_int* n, T* a, const lapack_int* lda, lapack_int* info,  \
                             size_t);                                                                             \
    void MT_LAPACK(p##geqrf)(const lapack_int* m, const lapack_int* n, T* a, const lapack_int* lda, T* tau, T* work, \
                             const lapack_int* lwork, lapack_int* info);                                          \
    void MT_LAPACK(p##orgqr)(const lapack_int* m, const lapack_int* n, const lapack_int* k, T* a,                   \
                             const lapack_int* lda, const T* tau, T* work, const lapack_int* lwork,               \
                             lapack_int* info);                                                                   \
    void MT_LAPACK(p##syevd)(const char* jobz, const char* uplo, const lapack_int* n, T* a, const lapack_int* lda,   \
                             T* w, T* work, const lapack_int* lwork, lapack_int* iwork, const lapack_int* liwork, \
                             lapack_int* info, size_t, size_t);                                                   \
    void MT_LAPACK(p##gesdd)(const char* jobz, const lapack_int* m, const lapack_int* n, T* a, const lapack_int* lda, \
                             T* s, T* u, const lapack_int* ldu, T* vt, const lapack_int* ldvt, T* work,           \
                             const lapack_int* lwork, lapack_int* iwork, lapack_int* info, size_t);
MT_DECLARE_LAPACK(float, s)
MT_DECLARE_LAPACK(double, d)
#undef MT_DECLARE_LAPACK
}

namespace minitorch::linalg {

namespace {

// One overload per type, so the kernels below are templates over float/double.
#define MT_LAPACK_OVERLOADS(T, p)                                                                                  \
    void getrf(lapack_int m, lapack_int n, T* a, lapack_int* ipiv, lapack_int* info)                              \
    {                                                                                                             \
        MT_LAPACK(p##getrf)(&m, &n, a, &m, ipiv, info);                                                           \
    }                                                                                                             \
    void gesv(lapack_int n, lapack_int k, T* a, lapack_int* ipiv, T* b, lapack_int* info)                         \
    {                                                                                                             \
        MT_LAPACK(p##gesv)(&n, &k, a, &n, ipiv, b, &n, info);                                                     \
    }                                                                                                             \
    void potrf(lapack_int n, T* a, lapack_int* info) { MT_LAPACK(p##potrf)("L", &n, a, &n, info, 1); }            \
    void geqrf(lapack_int m, lapack_int n, T* a, T* tau, T* work, lapack_int lwork, lapack_int* info)             \
    {                                                                                                             \
        MT_LAPACK(p##geqrf)(&m, &n, a, &m, tau, work, &lwork, info);                                              \
    }                                                                                                             \
    void orgqr(lapack_int m, lapack_int n, lapack_int k, T* a, const T* tau, T* work, lapack_int lwork,           \
               lapack_int* info)                                                                                  \
    {                                                                                                             \
        MT_LAPACK(p##orgqr)(&m, &n, &k, a, &m, tau, work, &lwork, info);                                          \
    }                                                                                                             \
    void syevd(char jobz, char uplo, lapack_int n, T* a, T* w, T* work, lapack_int lwork, lapack_int* iwork,      \
               lapack_int liwork, lapack_int* info)                                                               \
    {                                                                                                             \
        MT_LAPACK(p##syevd)(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);                \
    }                                                                                                             \
    void gesdd(char jobz, lapack_int m, lapack_int n, T* a, T* s, T* u, lapack_int ldu, T* vt, lapack_int ldvt,   \
               T* work, lapack_int lwork, lapack_int* iwork, lapack_int* info)                                    \
    {                                                                                                             \
        MT_LAPACK(p##gesdd)(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);           \
    }
MT_LAPACK_OVERLOADS(float, s)
MT_LAPACK_OVERLOADS(double, d)
#undef MT_LAPACK_OVERLOADS

// Row-major (rows, cols) src -> column-major dst with leading dimension ld >= rows.
template <class T>
void to_colmajor(T* dst, const T* src, int64_t rows, int64_t cols, int64_t ld)
{
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) dst[j * ld + i] = src[i * cols + j];
}

// Column-major (leading dimension ld) src -> row-major (rows, cols) dst.
template <class T>
void from_colmajor(T* dst, const T* src, int64_t rows, int64_t cols, int64_t ld)
{
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[j * ld + i];
}

// LAPACK's optimal workspace size, which a query call (lwork = -1) writes as a float.
template <class T>
lapack_int lwork_of(T query) { return std::max<lapack_int>(1, static_cast<lapack_int>(query) + 1); }

void check_input(const Tensor& t, const char* op)
{
    MT_CHECK(t->device().is_cpu() && t->dim() == 3 && t->is_contiguous() &&
                 (t->dtype == DType::Float32 || t->dtype == DType::Float64),
             op, ": internal error: expected a contiguous float32/float64 (batch, m, n) CPU tensor");
    MT_CHECK(t->shape[1] < (int64_t(1) << 31) && t->shape[2] < (int64_t(1) << 31),
             op, ": matrices of shape ", t->shape, " are too large for 32-bit LAPACK");
}

// Calls f.template operator()<T>() with T the float type of dtype.
template <class F>
auto by_dtype(DType dtype, F&& f)
{
    return dtype == DType::Float32 ? f(float{}) : f(double{});
}

Tensor info_tensor(int64_t batch) { return empty({batch}, DType::Int64, Device{}); }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_factor_cpu(const Tensor& a)
{
    check_input(a, "lu_factor");
    const int64_t batch = a->shape[0], n = a->shape[1];
    Tensor lu = empty(a->shape, a->dtype, Device{}), piv = empty({batch, n}, DType::Int64, Device{});
    Tensor info = info_tensor(batch);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        std::vector<T> work(n * n);
        std::vector<lapack_int> ipiv(n);
        for (int64_t p = 0; p < batch; ++p) {
            to_colmajor(work.data(), a->data_as<T>() + p * n * n, n, n, n);
            lapack_int inf = 0;
            if (n > 0) getrf(lapack_int(n), lapack_int(n), work.data(), ipiv.data(), &inf);
            from_colmajor(lu->data_as<T>() + p * n * n, work.data(), n, n, n);
            for (int64_t i = 0; i < n; ++i) piv->data_as<int64_t>()[p * n + i] = ipiv[i];
            info->data_as<int64_t>()[p] = inf;
        }
        return 0;
    });
    return {lu, piv, info};
}

std::tuple<Tensor, Tensor> solve_cpu(const Tensor& a, const Tensor& b)
{
    check_input(a, "solve");
    check_input(b, "solve");
    const int64_t batch = a->shape[0], n = a->shape[1], k = b->shape[2];
    Tensor x = empty(b->shape, b->dtype, Device{}), info = info_tensor(batch);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        std::vector<T> wa(n * n), wb(std::max<int64_t>(1, n * k));
        std::vector<lapack_int> ipiv(n);
        for (int64_t p = 0; p < batch; ++p) {
            to_colmajor(wa.data(), a->data_as<T>() + p * n * n, n, n, n);
            to_colmajor(wb.data(), b->data_as<T>() + p * n * k, n, k, n);
            lapack_int inf = 0;
            if (n > 0) gesv(lapack_int(n), lapack_int(k), wa.data(), ipiv.data(), wb.data(), &inf);
            from_colmajor(x->data_as<T>() + p * n * k, wb.data(), n, k, n);
            info->data_as<int64_t>()[p] = inf;
        }
        return 0;
    });
    return {x, info};
}

std::tuple<Tensor, Tensor> cholesky_cpu(const Tensor& a)
{
    check_input(a, "cholesky");
    const int64_t batch = a->shape[0], n = a->shape[1];
    Tensor l = empty(a->shape, a->dtype, Device{}), info = info_tensor(batch);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        std::vector<T> work(n * n);
        for (int64_t p = 0; p < batch; ++p) {
            to_colmajor(work.data(), a->data_as<T>() + p * n * n, n, n, n);
            lapack_int inf = 0;
            if (n > 0) potrf(lapack_int(n), work.data(), &inf);
            // potrf leaves the upper triangle as it found it: clear it.
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < j; ++i) work[j * n + i] = T(0);
            from_colmajor(l->data_as<T>() + p * n * n, work.data(), n, n, n);
            info->data_as<int64_t>()[p] = inf;
        }
        return 0;
    });
    return {l, info};
}

std::tuple<Tensor, Tensor> qr_cpu(const Tensor& a, bool complete)
{
    check_input(a, "qr");
    const int64_t batch = a->shape[0], m = a->shape[1], n = a->shape[2], k = std::min(m, n);
    const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
    Tensor q = empty({batch, m, qcols}, a->dtype, Device{}), r = empty({batch, rrows, n}, a->dtype, Device{});
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        // m x max(n, qcols), column-major: A's columns, then (complete, m > n) room for the
        // extra columns of Q that orgqr builds.
        const int64_t wcols = std::max(n, qcols);
        std::vector<T> work(std::max<int64_t>(1, m * wcols), T(0)), tau(std::max<int64_t>(1, k));
        lapack_int inf = 0;
        T query = 0;
        lapack_int lw = 1;
        if (k > 0) {  // LAPACK refuses empty matrices (lda must be >= 1)
            geqrf(lapack_int(m), lapack_int(n), work.data(), tau.data(), &query, -1, &inf);
            lw = lwork_of(query);
            orgqr(lapack_int(m), lapack_int(qcols), lapack_int(k), work.data(), tau.data(), &query, -1, &inf);
            lw = std::max(lw, lwork_of(query));
        }
        std::vector<T> lwork(lw);
        for (int64_t p = 0; p < batch; ++p) {
            std::fill(work.begin(), work.end(), T(0));
            to_colmajor(work.data(), a->data_as<T>() + p * m * n, m, n, m);
            if (k > 0) geqrf(lapack_int(m), lapack_int(n), work.data(), tau.data(), lwork.data(), lw, &inf);
            MT_CHECK_RUNTIME(inf == 0, "qr: geqrf failed (info ", inf, ")");
            // R: the upper triangle of the first rrows rows.
            T* rp = r->data_as<T>() + p * rrows * n;
            for (int64_t i = 0; i < rrows; ++i)
                for (int64_t j = 0; j < n; ++j) rp[i * n + j] = (j >= i && i < m) ? work[j * m + i] : T(0);
            // Q from the Householder reflectors below the diagonal.
            if (qcols > 0 && m > 0) {
                if (k == 0) {  // no reflectors: Q is the identity
                    std::fill(work.begin(), work.end(), T(0));
                    for (int64_t i = 0; i < std::min(m, qcols); ++i) work[i * m + i] = T(1);
                } else {
                    orgqr(lapack_int(m), lapack_int(qcols), lapack_int(k), work.data(), tau.data(), lwork.data(), lw,
                          &inf);
                    MT_CHECK_RUNTIME(inf == 0, "qr: orgqr failed (info ", inf, ")");
                }
            }
            from_colmajor(q->data_as<T>() + p * m * qcols, work.data(), m, qcols, m);
        }
        return 0;
    });
    return {q, r};
}

std::tuple<Tensor, Tensor, Tensor> eigh_cpu(const Tensor& a, bool upper, bool compute_v)
{
    check_input(a, "eigh");
    const int64_t batch = a->shape[0], n = a->shape[1];
    Tensor w = empty({batch, n}, a->dtype, Device{});
    Tensor v = empty(compute_v ? a->shape : Shape{0}, a->dtype, Device{}), info = info_tensor(batch);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        const char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
        std::vector<T> work(std::max<int64_t>(1, n * n));
        lapack_int inf = 0, iquery = 0;
        T query = 0;
        if (n > 0) syevd(jobz, uplo, lapack_int(n), work.data(), w->data_as<T>(), &query, -1, &iquery, -1, &inf);
        const lapack_int lw = lwork_of(query), liw = std::max<lapack_int>(1, iquery);
        std::vector<T> lwork(lw);
        std::vector<lapack_int> iwork(liw);
        for (int64_t p = 0; p < batch; ++p) {
            to_colmajor(work.data(), a->data_as<T>() + p * n * n, n, n, n);
            inf = 0;
            if (n > 0)
                syevd(jobz, uplo, lapack_int(n), work.data(), w->data_as<T>() + p * n, lwork.data(), lw, iwork.data(),
                      liw, &inf);
            if (compute_v) from_colmajor(v->data_as<T>() + p * n * n, work.data(), n, n, n);
            info->data_as<int64_t>()[p] = inf;
        }
        return 0;
    });
    return {w, v, info};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> svd_cpu(const Tensor& a, bool full, bool compute_uv)
{
    check_input(a, "svd");
    const int64_t batch = a->shape[0], m = a->shape[1], n = a->shape[2], k = std::min(m, n);
    const int64_t ucols = full ? m : k, vrows = full ? n : k;
    Tensor s = empty({batch, k}, a->dtype, Device{}), info = info_tensor(batch);
    Tensor u = empty(compute_uv ? Shape{batch, m, ucols} : Shape{0}, a->dtype, Device{});
    Tensor vh = empty(compute_uv ? Shape{batch, vrows, n} : Shape{0}, a->dtype, Device{});
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        const char jobz = !compute_uv ? 'N' : full ? 'A' : 'S';
        const lapack_int ldu = lapack_int(std::max<int64_t>(1, m)), ldvt = lapack_int(std::max<int64_t>(1, vrows));
        std::vector<T> work(std::max<int64_t>(1, m * n)), wu(std::max<int64_t>(1, m * ucols)),
            wvt(std::max<int64_t>(1, vrows * n));
        std::vector<lapack_int> iwork(std::max<int64_t>(1, 8 * k));
        lapack_int inf = 0;
        T query = 0;
        if (k > 0)
            gesdd(jobz, lapack_int(m), lapack_int(n), work.data(), s->data_as<T>(), wu.data(), ldu, wvt.data(), ldvt,
                  &query, -1, iwork.data(), &inf);
        const lapack_int lw = lwork_of(query);
        std::vector<T> lwork(lw);
        for (int64_t p = 0; p < batch; ++p) {
            inf = 0;
            if (k > 0) {
                to_colmajor(work.data(), a->data_as<T>() + p * m * n, m, n, m);
                gesdd(jobz, lapack_int(m), lapack_int(n), work.data(), s->data_as<T>() + p * k, wu.data(), ldu,
                      wvt.data(), ldvt, lwork.data(), lw, iwork.data(), &inf);
            } else if (compute_uv) {  // an empty matrix: U and Vh are identities
                std::fill(wu.begin(), wu.end(), T(0));
                std::fill(wvt.begin(), wvt.end(), T(0));
                for (int64_t i = 0; i < std::min(m, ucols); ++i) wu[i * m + i] = T(1);
                for (int64_t i = 0; i < std::min(vrows, n); ++i) wvt[i * vrows + i] = T(1);
            }
            if (compute_uv) {
                from_colmajor(u->data_as<T>() + p * m * ucols, wu.data(), m, ucols, m);
                from_colmajor(vh->data_as<T>() + p * vrows * n, wvt.data(), vrows, n, vrows);
            }
            info->data_as<int64_t>()[p] = inf;
        }
        return 0;
    });
    return {u, s, vh, info};
}

}  // namespace minitorch::linalg
