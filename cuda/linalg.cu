// linalg.cu — minitorch.linalg's factorizations on a real GPU: cuSOLVER's dense routines
// (getrf/getrs, potrf, geqrf/orgqr, syevd, gesvdj), one call per matrix of the batch.
// No factorization is written here: this file lays matrices out for cuSOLVER and back.
//
// The emulator has no cuSOLVER (it runs our own kernels on the CPU, and cuSOLVER is not
// ours): in its build this file compiles to nothing, and python/minitorch/linalg/_kernels.py
// runs the CPU's LAPACK kernels (cpu/lapack.cpp) on a host copy instead. Python also keeps
// empty inputs (no matrices, or 0 rows/columns) on that path, so here batch, m, n >= 1.
//
// Layout: cuSOLVER is column-major like LAPACK. A row-major (rows, cols) matrix, read
// column-major, is its transpose; transpose_kernel makes the column-major copies and turns
// results back. Inputs: contiguous (batch, m, n) tensors on the GPU (linalg.h).
#include "common.cuh"

#if !MT_CUDA_EMULATED
#include <cusolverDn.h>

#include <algorithm>
#include <vector>

#include "minitorch/linalg.h"
#include "minitorch/ops.h"

namespace minitorch::cuda {

namespace {

// Each thread copies one element; a grid-stride loop covers batch * rows * cols of them.
// in: (batch, rows, cols) row-major; out: element (i, j) of matrix p goes to
// out[p * out_batch + j * rows + i], i.e. (batch, cols, rows) row-major = column-major
// (rows, cols) with leading dimension rows. out_batch >= rows * cols leaves room after
// each matrix (orgqr's extra columns of Q).
template <class T>
__global__ void transpose_kernel(T* out, const T* in, int64_t batch, int64_t rows, int64_t cols, int64_t out_batch)
{
    MT_GRID_STRIDE(e, batch * rows * cols) {
        const int64_t p = e / (rows * cols), i = (e / cols) % rows, j = e % cols;
        out[p * out_batch + j * rows + i] = in[e];
    }
}

// Each thread writes one element of out (batch, rows, cols): in's element where j >= i
// (on and above the diagonal; `upper`) or j <= i (lower), else 0. in: (batch, in_rows,
// cols) row-major with in_rows >= rows (QR's R is the top rows of the factored matrix;
// rows past in_rows are zero).
template <class T>
__global__ void triangle_kernel(T* out, const T* in, int64_t batch, int64_t rows, int64_t cols, int64_t in_rows,
                                bool upper)
{
    MT_GRID_STRIDE(e, batch * rows * cols) {
        const int64_t p = e / (rows * cols), i = (e / cols) % rows, j = e % cols;
        const bool keep = i < in_rows && (upper ? j >= i : j <= i);
        out[e] = keep ? in[(p * in_rows + i) * cols + j] : T(0);
    }
}

template <class T>
void transpose(T* out, const T* in, int64_t batch, int64_t rows, int64_t cols, int64_t out_batch)
{
    const int64_t n = batch * rows * cols;
    MT_LAUNCH(blocks_for(n), kThreads, 0, 0, transpose_kernel<T>)(out, in, batch, rows, cols, out_batch);
    MT_CUDA_CHECK_LAUNCH("transpose_kernel");
}

template <class T>
void triangle(T* out, const T* in, int64_t batch, int64_t rows, int64_t cols, int64_t in_rows, bool upper)
{
    const int64_t n = batch * rows * cols;
    MT_LAUNCH(blocks_for(n), kThreads, 0, 0, triangle_kernel<T>)(out, in, batch, rows, cols, in_rows, upper);
    MT_CUDA_CHECK_LAUNCH("triangle_kernel");
}

#define MT_CUSOLVER_CHECK(call)                                                                          \
    do {                                                                                                 \
        cusolverStatus_t st_ = (call);                                                                   \
        MT_CHECK_RUNTIME(st_ == CUSOLVER_STATUS_SUCCESS, "cuSOLVER error ", int(st_), " in ", #call);    \
    } while (0)

// One handle for the process, on the default stream minitorch's kernels run on.
cusolverDnHandle_t handle()
{
    static cusolverDnHandle_t h = [] {
        cusolverDnHandle_t made;
        MT_CUSOLVER_CHECK(cusolverDnCreate(&made));
        return made;
    }();
    return h;
}

// cuSOLVER's S/D routines as overloads, so the code below is a template over float/double.
#define MT_CUSOLVER_OVERLOADS(T, P)                                                                          \
    cusolverStatus_t getrf_size(int m, int n, T* a, int* lw)                                                 \
    {                                                                                                        \
        return cusolverDn##P##getrf_bufferSize(handle(), m, n, a, m, lw);                                    \
    }                                                                                                        \
    cusolverStatus_t getrf(int m, int n, T* a, T* w, int* piv, int* info)                                    \
    {                                                                                                        \
        return cusolverDn##P##getrf(handle(), m, n, a, m, w, piv, info);                                     \
    }                                                                                                        \
    cusolverStatus_t getrs(int n, int k, const T* a, const int* piv, T* b, int* info)                        \
    {                                                                                                        \
        return cusolverDn##P##getrs(handle(), CUBLAS_OP_N, n, k, a, n, piv, b, n, info);                      \
    }                                                                                                        \
    cusolverStatus_t potrf_size(int n, T* a, int* lw)                                                        \
    {                                                                                                        \
        return cusolverDn##P##potrf_bufferSize(handle(), CUBLAS_FILL_MODE_LOWER, n, a, n, lw);               \
    }                                                                                                        \
    cusolverStatus_t potrf(int n, T* a, T* w, int lw, int* info)                                             \
    {                                                                                                        \
        return cusolverDn##P##potrf(handle(), CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info);                 \
    }                                                                                                        \
    cusolverStatus_t geqrf_size(int m, int n, T* a, int* lw)                                                 \
    {                                                                                                        \
        return cusolverDn##P##geqrf_bufferSize(handle(), m, n, a, m, lw);                                    \
    }                                                                                                        \
    cusolverStatus_t geqrf(int m, int n, T* a, T* tau, T* w, int lw, int* info)                              \
    {                                                                                                        \
        return cusolverDn##P##geqrf(handle(), m, n, a, m, tau, w, lw, info);                                 \
    }                                                                                                        \
    cusolverStatus_t orgqr_size(int m, int n, int k, const T* a, const T* tau, int* lw)                      \
    {                                                                                                        \
        return cusolverDn##P##orgqr_bufferSize(handle(), m, n, k, a, m, tau, lw);                            \
    }                                                                                                        \
    cusolverStatus_t orgqr(int m, int n, int k, T* a, const T* tau, T* w, int lw, int* info)                 \
    {                                                                                                        \
        return cusolverDn##P##orgqr(handle(), m, n, k, a, m, tau, w, lw, info);                              \
    }                                                                                                        \
    cusolverStatus_t syevd_size(cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const T* a, const T* w, \
                                int* lw)                                                                     \
    {                                                                                                        \
        return cusolverDn##P##syevd_bufferSize(handle(), jobz, uplo, n, a, n, w, lw);                        \
    }                                                                                                        \
    cusolverStatus_t syevd(cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T* a, T* w, T* work, int lw, \
                           int* info)                                                                        \
    {                                                                                                        \
        return cusolverDn##P##syevd(handle(), jobz, uplo, n, a, n, w, work, lw, info);                       \
    }                                                                                                        \
    cusolverStatus_t gesvdj_size(cusolverEigMode_t jobz, int econ, int m, int n, const T* a, const T* s,     \
                                 const T* u, int ldu, const T* v, int ldv, int* lw, gesvdjInfo_t params)     \
    {                                                                                                        \
        return cusolverDn##P##gesvdj_bufferSize(handle(), jobz, econ, m, n, a, m, s, u, ldu, v, ldv, lw,     \
                                                params);                                                     \
    }                                                                                                        \
    cusolverStatus_t gesvdj(cusolverEigMode_t jobz, int econ, int m, int n, T* a, T* s, T* u, int ldu, T* v, \
                            int ldv, T* w, int lw, int* info, gesvdjInfo_t params)                           \
    {                                                                                                        \
        return cusolverDn##P##gesvdj(handle(), jobz, econ, m, n, a, m, s, u, ldu, v, ldv, w, lw, info,       \
                                     params);                                                                \
    }
MT_CUSOLVER_OVERLOADS(float, S)
MT_CUSOLVER_OVERLOADS(double, D)
#undef MT_CUSOLVER_OVERLOADS

// Device scratch as a tensor (freed with it): `count` values of dtype.
Tensor scratch(int64_t count, DType dtype, Device dev) { return empty({std::max<int64_t>(count, 1)}, dtype, dev); }

// cuSOLVER's int32 INFO (and pivots) live in an Int64 tensor's bytes (minitorch has no
// int32 dtype): room for `count` ints.
Tensor int_scratch(int64_t count, Device dev) { return empty({(count + 1) / 2 + 1}, DType::Int64, dev); }

std::vector<int> ints_to_host(const Tensor& t, int64_t count)
{
    std::vector<int> out(count);
    if (count) MT_CUDA_CHECK(cudaMemcpy(out.data(), t->data(), count * sizeof(int), cudaMemcpyDeviceToHost));
    return out;
}

// LAPACK's INFO list as the CPU int64 tensor linalg.h promises.
Tensor info_tensor(const std::vector<int>& info)
{
    Tensor t = empty({int64_t(info.size())}, DType::Int64, Device{});
    for (size_t i = 0; i < info.size(); ++i) t->data_as<int64_t>()[i] = info[i];
    return t;
}

template <class F>
auto by_dtype(DType dtype, F&& f)
{
    return dtype == DType::Float32 ? f(float{}) : f(double{});
}

}  // namespace

}  // namespace minitorch::cuda

namespace minitorch::linalg {

using cuda::by_dtype;
using cuda::info_tensor;
using cuda::int_scratch;
using cuda::ints_to_host;
using cuda::scratch;

std::tuple<Tensor, Tensor, Tensor> lu_factor_cuda(const Tensor& a)
{
    const int64_t batch = a->shape[0], n = a->shape[1];
    const Device dev = a->device();
    Tensor lu = empty(a->shape, a->dtype, dev), work_a = empty(a->shape, a->dtype, dev);
    Tensor piv_d = int_scratch(batch * n, dev), info_d = int_scratch(batch, dev);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        T* w = work_a->data_as<T>();
        cuda::transpose(w, a->data_as<T>(), batch, n, n, n * n);
        int lw = 0;
        MT_CUSOLVER_CHECK(cuda::getrf_size(int(n), int(n), w, &lw));
        Tensor ws = scratch(lw, a->dtype, dev);
        int* piv = static_cast<int*>(static_cast<void*>(piv_d->data()));
        int* info = static_cast<int*>(static_cast<void*>(info_d->data()));
        for (int64_t p = 0; p < batch; ++p)
            MT_CUSOLVER_CHECK(cuda::getrf(int(n), int(n), w + p * n * n, ws->data_as<T>(), piv + p * n, info + p));
        cuda::transpose(lu->data_as<T>(), w, batch, n, n, n * n);
        return 0;
    });
    // Pivots to int64 (1-based, as LAPACK's): through the host, then back to the GPU.
    std::vector<int> piv = ints_to_host(piv_d, batch * n);
    Tensor piv_h = empty({batch, n}, DType::Int64, Device{});
    for (int64_t i = 0; i < batch * n; ++i) piv_h->data_as<int64_t>()[i] = piv[i];
    return {lu, to_device(piv_h, dev), info_tensor(ints_to_host(info_d, batch))};
}

std::tuple<Tensor, Tensor> solve_cuda(const Tensor& a, const Tensor& b)
{
    const int64_t batch = a->shape[0], n = a->shape[1], k = b->shape[2];
    const Device dev = a->device();
    Tensor wa = empty(a->shape, a->dtype, dev), wb = empty(b->shape, b->dtype, dev), x = empty(b->shape, b->dtype, dev);
    Tensor piv_d = int_scratch(batch * n, dev), info_d = int_scratch(batch, dev), rs_info = int_scratch(1, dev);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        T *pa = wa->data_as<T>(), *pb = wb->data_as<T>();
        cuda::transpose(pa, a->data_as<T>(), batch, n, n, n * n);
        cuda::transpose(pb, b->data_as<T>(), batch, n, k, n * k);
        int lw = 0;
        MT_CUSOLVER_CHECK(cuda::getrf_size(int(n), int(n), pa, &lw));
        Tensor ws = scratch(lw, a->dtype, dev);
        int* piv = static_cast<int*>(static_cast<void*>(piv_d->data()));
        int* info = static_cast<int*>(static_cast<void*>(info_d->data()));
        int* info_rs = static_cast<int*>(static_cast<void*>(rs_info->data()));
        for (int64_t p = 0; p < batch; ++p) {
            MT_CUSOLVER_CHECK(cuda::getrf(int(n), int(n), pa + p * n * n, ws->data_as<T>(), piv + p * n, info + p));
            // A singular U gives infinities here; Python raises from getrf's INFO.
            MT_CUSOLVER_CHECK(cuda::getrs(int(n), int(k), pa + p * n * n, piv + p * n, pb + p * n * k, info_rs));
        }
        // pb holds column-major (n, k) matrices: (batch, k, n) row-major, transposed back.
        cuda::transpose(x->data_as<T>(), pb, batch, k, n, n * k);
        return 0;
    });
    return {x, info_tensor(ints_to_host(info_d, batch))};
}

std::tuple<Tensor, Tensor> cholesky_cuda(const Tensor& a)
{
    const int64_t batch = a->shape[0], n = a->shape[1];
    const Device dev = a->device();
    Tensor w = empty(a->shape, a->dtype, dev), t = empty(a->shape, a->dtype, dev), l = empty(a->shape, a->dtype, dev);
    Tensor info_d = int_scratch(batch, dev);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        T* pw = w->data_as<T>();
        cuda::transpose(pw, a->data_as<T>(), batch, n, n, n * n);
        int lw = 0;
        MT_CUSOLVER_CHECK(cuda::potrf_size(int(n), pw, &lw));
        Tensor ws = scratch(lw, a->dtype, dev);
        int* info = static_cast<int*>(static_cast<void*>(info_d->data()));
        for (int64_t p = 0; p < batch; ++p)
            MT_CUSOLVER_CHECK(cuda::potrf(int(n), pw + p * n * n, ws->data_as<T>(), lw, info + p));
        cuda::transpose(t->data_as<T>(), pw, batch, n, n, n * n);
        cuda::triangle(l->data_as<T>(), t->data_as<T>(), batch, n, n, n, false);  // potrf leaves the upper part
        return 0;
    });
    return {l, info_tensor(ints_to_host(info_d, batch))};
}

std::tuple<Tensor, Tensor> qr_cuda(const Tensor& a, bool complete)
{
    const int64_t batch = a->shape[0], m = a->shape[1], n = a->shape[2], k = std::min(m, n);
    const int64_t qcols = complete ? m : k, rrows = complete ? m : k, wcols = std::max(n, qcols);
    const Device dev = a->device();
    Tensor w = empty({batch, wcols, m}, a->dtype, dev), fact = empty({batch, m, n}, a->dtype, dev);
    Tensor q = empty({batch, m, qcols}, a->dtype, dev), r = empty({batch, rrows, n}, a->dtype, dev);
    Tensor tau = empty({batch, k}, a->dtype, dev), info_d = int_scratch(batch, dev);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        T* pw = w->data_as<T>();
        cuda::transpose(pw, a->data_as<T>(), batch, m, n, wcols * m);
        int lw1 = 0, lw2 = 0;
        MT_CUSOLVER_CHECK(cuda::geqrf_size(int(m), int(n), pw, &lw1));
        MT_CUSOLVER_CHECK(cuda::orgqr_size(int(m), int(qcols), int(k), pw, tau->data_as<T>(), &lw2));
        const int lw = std::max(lw1, lw2);
        Tensor ws = scratch(lw, a->dtype, dev);
        int* info = static_cast<int*>(static_cast<void*>(info_d->data()));
        for (int64_t p = 0; p < batch; ++p)
            MT_CUSOLVER_CHECK(cuda::geqrf(int(m), int(n), pw + p * wcols * m, tau->data_as<T>() + p * k,
                                          ws->data_as<T>(), lw, info + p));
        // R: the upper triangle of the factored matrix's top rows (read before orgqr overwrites it).
        for (int64_t p = 0; p < batch; ++p)
            cuda::transpose(fact->data_as<T>() + p * m * n, pw + p * wcols * m, 1, n, m, m * n);
        cuda::triangle(r->data_as<T>(), fact->data_as<T>(), batch, rrows, n, m, true);
        for (int64_t p = 0; p < batch; ++p)
            MT_CUSOLVER_CHECK(cuda::orgqr(int(m), int(qcols), int(k), pw + p * wcols * m, tau->data_as<T>() + p * k,
                                          ws->data_as<T>(), lw, info + p));
        for (int64_t p = 0; p < batch; ++p)
            cuda::transpose(q->data_as<T>() + p * m * qcols, pw + p * wcols * m, 1, qcols, m, m * qcols);
        return 0;
    });
    for (int v : ints_to_host(info_d, batch))
        MT_CHECK_RUNTIME(v == 0, "qr: cuSOLVER geqrf/orgqr failed (info ", v, ")");
    return {q, r};
}

std::tuple<Tensor, Tensor, Tensor> eigh_cuda(const Tensor& a, bool upper, bool compute_v)
{
    const int64_t batch = a->shape[0], n = a->shape[1];
    const Device dev = a->device();
    Tensor work = empty(a->shape, a->dtype, dev), wv = empty({batch, n}, a->dtype, dev);
    Tensor v = compute_v ? empty(a->shape, a->dtype, dev) : empty({0}, a->dtype, dev);
    Tensor info_d = int_scratch(batch, dev);
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        T* pw = work->data_as<T>();
        cuda::transpose(pw, a->data_as<T>(), batch, n, n, n * n);
        const cusolverEigMode_t jobz = compute_v ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        int lw = 0;
        MT_CUSOLVER_CHECK(cuda::syevd_size(jobz, uplo, int(n), pw, wv->data_as<T>(), &lw));
        Tensor ws = scratch(lw, a->dtype, dev);
        int* info = static_cast<int*>(static_cast<void*>(info_d->data()));
        for (int64_t p = 0; p < batch; ++p)
            MT_CUSOLVER_CHECK(cuda::syevd(jobz, uplo, int(n), pw + p * n * n, wv->data_as<T>() + p * n,
                                          ws->data_as<T>(), lw, info + p));
        if (compute_v) cuda::transpose(v->data_as<T>(), pw, batch, n, n, n * n);  // eigenvectors: columns
        return 0;
    });
    return {wv, v, info_tensor(ints_to_host(info_d, batch))};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> svd_cuda(const Tensor& a, bool full, bool compute_uv)
{
    const int64_t batch = a->shape[0], m = a->shape[1], n = a->shape[2], k = std::min(m, n);
    const int64_t ucols = full ? m : k, vrows = full ? n : k;
    const Device dev = a->device();
    Tensor work = empty({batch, n, m}, a->dtype, dev), s = empty({batch, k}, a->dtype, dev);
    Tensor ucol = empty({batch, ucols, m}, a->dtype, dev);   // U, column-major
    Tensor vh = compute_uv ? empty({batch, vrows, n}, a->dtype, dev) : empty({0}, a->dtype, dev);
    Tensor u = compute_uv ? empty({batch, m, ucols}, a->dtype, dev) : empty({0}, a->dtype, dev);
    Tensor vbuf = compute_uv ? vh : empty({n * n}, a->dtype, dev);
    Tensor info_d = int_scratch(batch, dev);
    gesvdjInfo_t params = nullptr;
    MT_CUSOLVER_CHECK(cusolverDnCreateGesvdjInfo(&params));
    struct Destroy {
        gesvdjInfo_t p;
        ~Destroy() { cusolverDnDestroyGesvdjInfo(p); }
    } destroy{params};
    by_dtype(a->dtype, [&](auto zero) {
        using T = decltype(zero);
        T* pw = work->data_as<T>();
        cuda::transpose(pw, a->data_as<T>(), batch, m, n, m * n);
        const cusolverEigMode_t jobz = compute_uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        const int econ = full ? 0 : 1, ldu = int(m), ldv = int(n);
        int lw = 0;
        MT_CUSOLVER_CHECK(cuda::gesvdj_size(jobz, econ, int(m), int(n), pw, s->data_as<T>(), ucol->data_as<T>(), ldu,
                                            vbuf->data_as<T>(), ldv, &lw, params));
        Tensor ws = scratch(lw, a->dtype, dev);
        int* info = static_cast<int*>(static_cast<void*>(info_d->data()));
        for (int64_t p = 0; p < batch; ++p) {
            // V comes column-major (n, vrows): read row-major, that is Vh (vrows, n) already.
            T* vp = compute_uv ? vbuf->data_as<T>() + p * vrows * n : vbuf->data_as<T>();
            MT_CUSOLVER_CHECK(cuda::gesvdj(jobz, econ, int(m), int(n), pw + p * m * n, s->data_as<T>() + p * k,
                                           ucol->data_as<T>() + p * m * ucols, ldu, vp, ldv, ws->data_as<T>(), lw,
                                           info + p, params));
        }
        if (compute_uv) cuda::transpose(u->data_as<T>(), ucol->data_as<T>(), batch, ucols, m, m * ucols);
        return 0;
    });
    return {u, s, vh, info_tensor(ints_to_host(info_d, batch))};
}

}  // namespace minitorch::linalg

#endif  // !MT_CUDA_EMULATED
