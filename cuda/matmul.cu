// matmul.cu — batched matmul on the GPU, three ways (minitorch.backends.cuda.matmul):
//   naive — one thread per C element, a K-long dot product straight from global memory;
//   tiled — 16x16 tiles of A and B staged in shared memory, so each global value is
//           read once per tile instead of once per output element;
//   cublas (default on a real GPU) — NVIDIA's tuned GEMM. The emulated build has no
//           cuBLAS and uses the tiled kernel instead.
// Inputs are made contiguous per batch first: A (B, M, K), B (B, K, N), C (B, M, N).
#include "common.cuh"

#if !MT_CUDA_EMULATED
#include <cublas_v2.h>
#endif

namespace minitorch::cuda {

namespace {

constexpr int kTile = 16;

// Thread mapping: thread (x, y) of block (bx, by, batch) computes C[batch, by*16+y, bx*16+x].
template <class T>
__global__ void matmul_naive_kernel(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K)
{
    const int64_t b = blockIdx.z, row = int64_t(blockIdx.y) * blockDim.y + threadIdx.y,
                  col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    const T* a = A + b * M * K;
    const T* bb = B + b * K * N;
    T acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += a[row * K + k] * bb[k * N + col];
    C[b * M * N + row * N + col] = acc;
}

// Same mapping; the block walks K in steps of 16, each thread loading one element of
// the A tile and one of the B tile into shared memory.
template <class T>
__global__ void matmul_tiled_kernel(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K)
{
    __shared__ T As[kTile][kTile];
    __shared__ T Bs[kTile][kTile];
    const int64_t b = blockIdx.z, row = int64_t(blockIdx.y) * kTile + threadIdx.y,
                  col = int64_t(blockIdx.x) * kTile + threadIdx.x;
    const T* a = A + b * M * K;
    const T* bb = B + b * K * N;
    T acc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += kTile) {
        As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? a[row * K + k0 + threadIdx.x] : T(0);
        Bs[threadIdx.y][threadIdx.x] = (col < N && k0 + threadIdx.y < K) ? bb[(k0 + threadIdx.y) * N + col] : T(0);
        __syncthreads();  // both tiles fully loaded before anyone multiplies
        for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();  // everyone done with these tiles before the next load overwrites them
    }
    if (row < M && col < N) C[b * M * N + row * N + col] = acc;
}

MatmulImpl g_impl = MT_CUDA_EMULATED ? MatmulImpl::Tiled : MatmulImpl::Cublas;

#if !MT_CUDA_EMULATED
cublasHandle_t cublas_handle()
{
    static cublasHandle_t handle = [] {
        cublasHandle_t h;
        cublasStatus_t st = cublasCreate(&h);
        MT_CHECK_RUNTIME(st == CUBLAS_STATUS_SUCCESS, "cuBLAS: cublasCreate failed (status ", int(st), ")");
        return h;
    }();
    return handle;
}

#define MT_CUBLAS_CHECK(call)                                                                              \
    do {                                                                                                   \
        cublasStatus_t st_ = (call);                                                                       \
        MT_CHECK_RUNTIME(st_ == CUBLAS_STATUS_SUCCESS, "cuBLAS error ", int(st_), " in ", #call);          \
    } while (0)

// Row-major C = A @ B is column-major C^T = B^T @ A^T: hand cuBLAS B first.
void gemm_cublas(const Tensor& a, const Tensor& b, const Tensor& out, int64_t batch, int64_t M, int64_t N, int64_t K)
{
    MT_CHECK_RUNTIME(M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX && batch <= INT32_MAX,
                     "matmul: sizes too large for cuBLAS");
    if (out->dtype == DType::Float32) {
        const float alpha = 1.0f, beta = 0.0f;
        ProfiledLaunch profiled("cublasSgemmStridedBatched", dim3(0, 0, 0), dim3(0, 0, 0), 0);  // one entry per call
        MT_CUBLAS_CHECK(cublasSgemmStridedBatched(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K), &alpha,
                                                  b->data_as<float>(), int(N), K * N, a->data_as<float>(), int(K), M * K,
                                                  &beta, out->data_as<float>(), int(N), M * N, int(batch)));
    } else {
        const double alpha = 1.0, beta = 0.0;
        ProfiledLaunch profiled("cublasDgemmStridedBatched", dim3(0, 0, 0), dim3(0, 0, 0), 0);
        MT_CUBLAS_CHECK(cublasDgemmStridedBatched(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K), &alpha,
                                                  b->data_as<double>(), int(N), K * N, a->data_as<double>(), int(K),
                                                  M * K, &beta, out->data_as<double>(), int(N), M * N, int(batch)));
    }
}
#endif

}  // namespace

void set_matmul_impl(MatmulImpl impl)
{
    MT_CHECK(!(MT_CUDA_EMULATED && impl == MatmulImpl::Cublas),
             "backends.cuda.matmul: cuBLAS is not available in the emulated CUDA build");
    g_impl = impl;
}
MatmulImpl matmul_impl() { return g_impl; }

void matmul(const Tensor& out, const Tensor& a_in, const Tensor& b_in)
{
    const int64_t nd = out->dim();
    const int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a_in->shape[nd - 1];
    const int64_t batch = out->numel() / (M * N);
    Tensor a = packed(a_in, copy), b = packed(b_in, copy);  // materialises broadcast batch dims too
#if !MT_CUDA_EMULATED
    if (g_impl == MatmulImpl::Cublas && is_floating(out->dtype)) {
        gemm_cublas(a, b, out, batch, M, N, K);
        return;
    }
#endif
    MT_CHECK_RUNTIME(batch <= 65535, "matmul: at most 65535 batches per launch on CUDA, got ", batch);
    dim3 block(kTile, kTile), grid(unsigned((N + kTile - 1) / kTile), unsigned((M + kTile - 1) / kTile), unsigned(batch));
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
            if (g_impl == MatmulImpl::Naive)
                MT_LAUNCH(grid, block, 0, 0, matmul_naive_kernel<T>)(a->data_as<T>(), b->data_as<T>(), out->data_as<T>(), M, N, K);
            else
                MT_LAUNCH(grid, block, 0, 0, matmul_tiled_kernel<T>)(a->data_as<T>(), b->data_as<T>(), out->data_as<T>(), M, N, K);
        }
    });
    MT_CUDA_CHECK_LAUNCH("matmul");
}

}  // namespace minitorch::cuda
