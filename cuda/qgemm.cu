// qgemm.cu — the quantized GEMM on the GPU (cpu/qgemm.cpp is the CPU's): uint8 activations a
// (M, K) x int8 weights b (N, K) -> int32 sums acc = sum_k (a - a_zp)(b - b_zp[n]), with the
// output's epilogue (int32, requantized uint8 or float32; minitorch/qgemm_math.h).
//
//   readable kernel (the emulator's, and any real GPU's fallback): one thread per output,
//     a K-long dot product from global memory, the epilogue fused in the same thread;
//   cuBLAS (real GPUs): cublasGemmEx with int8 inputs and int32 sums (CUDA_R_8I x CUDA_R_8I ->
//     CUDA_R_32I, tensor cores on sm_75+), then one epilogue kernel. cuBLAS multiplies signed
//     int8 only, so a is shifted first (a - 128 is a ^ 0x80 as int8) and the zero points enter
//     as fbgemm's correction terms: with a' = a - 128 and a_zp' = a_zp - 128,
//        acc = sum a'b - a_zp' * colsum(b)[n] - b_zp[n] * rowsum(a')[m] + K * a_zp' * b_zp[n].
#include "common.cuh"
#include "minitorch/qgemm_math.h"

#if !MT_CUDA_EMULATED
#include <cublas_v2.h>
#endif

namespace minitorch::cuda {

namespace {

struct Epi {
    int kind;  // 0 int32, 1 uint8, 2 float32
    const float* bias;
    const float* atw;
    float out_scale;
    int32_t out_zp;
    bool relu;

    // Writes output i from its int32 sum (column n).
    __device__ void write(void* out, int64_t i, int64_t n, int32_t acc) const
    {
        if (kind == 0) {
            static_cast<int32_t*>(out)[i] = acc;
        } else if (kind == 1) {
            const float b = bias ? bias[n] / atw[n] : 0.f;
            static_cast<uint8_t*>(out)[i] = requantize_u8(acc, b, atw[n] / out_scale, out_zp, relu);
        } else {
            static_cast<float*>(out)[i] = dequantize_acc(acc, atw[n], bias ? bias[n] : 0.f, relu);
        }
    }
};

// Thread mapping: one thread per output element i = m * N + n (grid-stride), reading row m
// of a and row n of b (both K-contiguous) and applying the epilogue itself.
__global__ void qgemm_kernel(void* out, const uint8_t* a, const int8_t* b, const int32_t* b_zp, int32_t a_zp,
                             int64_t M, int64_t N, int64_t K, Epi epi)
{
    MT_GRID_STRIDE(i, M * N) {
        const int64_t m = i / N, n = i % N;
        const int32_t bz = b_zp[n];
        int32_t acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += (int32_t(a[m * K + k]) - a_zp) * (int32_t(b[n * K + k]) - bz);
        epi.write(out, i, n, acc);
    }
}

#if !MT_CUDA_EMULATED
// Thread mapping: one thread per byte of a: a' = a - 128 as int8.
__global__ void shift_u8_kernel(int8_t* out, const uint8_t* a, int64_t n)
{
    MT_GRID_STRIDE(i, n) { out[i] = int8_t(a[i] ^ 0x80); }
}

// Thread mapping: one thread per row r of x (rows, K): sums[r] = sum_k x[r][k].
template <class T>
__global__ void row_sums_kernel(int32_t* sums, const T* x, int64_t rows, int64_t K)
{
    MT_GRID_STRIDE(r, rows) {
        int32_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += int32_t(x[r * K + k]);
        sums[r] = s;
    }
}

// Thread mapping: one thread per output element; adds the zero-point terms to cuBLAS's sums.
__global__ void qgemm_epilogue_kernel(void* out, const int32_t* raw, const int32_t* a_rows, const int32_t* b_rows,
                                      const int32_t* b_zp, int32_t a_zp_shifted, int64_t M, int64_t N, int64_t K,
                                      Epi epi)
{
    MT_GRID_STRIDE(i, M * N) {
        const int64_t m = i / N, n = i % N;
        const int32_t acc = raw[i] - a_zp_shifted * b_rows[n] - b_zp[n] * a_rows[m] + int32_t(K) * a_zp_shifted * b_zp[n];
        epi.write(out, i, n, acc);
    }
}

cublasHandle_t qgemm_cublas_handle()
{
    static cublasHandle_t handle = [] {
        cublasHandle_t h;
        cublasStatus_t st = cublasCreate(&h);
        MT_CHECK_RUNTIME(st == CUBLAS_STATUS_SUCCESS, "cuBLAS: cublasCreate failed (status ", int(st), ")");
        return h;
    }();
    return handle;
}

// Row-major out (M, N) = a' (M, K) @ b (N, K)^T is column-major out^T (N, M) = b @ a'^T: b's
// rows are column-major (K, N) read with op T, a' column-major (K, M) with op N ("TN", the
// layout cuBLAS's int8 GEMM asks for). False when cuBLAS refuses (the caller falls back).
bool gemm_int8_cublas(const Tensor& raw, const Tensor& a_shifted, const Tensor& b, int64_t M, int64_t N, int64_t K)
{
    const int32_t alpha = 1, beta = 0;
    ProfiledLaunch profiled("cublasGemmEx(int8)", dim3(0, 0, 0), dim3(0, 0, 0), 0);
    const cublasStatus_t st = cublasGemmEx(qgemm_cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K),
                                           &alpha, b->data(), CUDA_R_8I, int(K), a_shifted->data(), CUDA_R_8I, int(K),
                                           &beta, raw->data(), CUDA_R_32I, int(N), CUBLAS_COMPUTE_32I,
                                           CUBLAS_GEMM_DEFAULT);
    return st == CUBLAS_STATUS_SUCCESS;
}
#endif

}  // namespace

void qgemm(const Tensor& out, const Tensor& a, const Tensor& b, const QGemm& q)
{
    const int64_t M = a->size(0), K = a->size(1), N = b->size(0);
    if (M == 0 || N == 0) return;
    const Epi epi{out->dtype == DType::Int32 ? 0 : out->dtype == DType::UInt8 ? 1 : 2,
                  q.bias ? q.bias->data_as<float>() : nullptr,
                  q.act_times_w ? q.act_times_w->data_as<float>() : nullptr, q.out_scale, q.out_zp, q.relu};
#if !MT_CUDA_EMULATED
    // cuBLAS's int8 GEMM wants K and the leading dimensions multiples of 4.
    if (K % 4 == 0 && N % 4 == 0 && M * N >= 4096) {
        Tensor a_shifted = empty(a->shape, DType::Int8, a->device());
        Tensor raw = empty({M, N}, DType::Int32, a->device());
        Tensor a_rows = empty({M}, DType::Int32, a->device()), b_rows = empty({N}, DType::Int32, a->device());
        MT_LAUNCH(blocks_for(M * K), kThreads, 0, 0, shift_u8_kernel)(a_shifted->data_as<int8_t>(),
                                                                        a->data_as<uint8_t>(), M * K);
        MT_CUDA_CHECK_LAUNCH("qgemm");
        if (gemm_int8_cublas(raw, a_shifted, b, M, N, K)) {
            MT_LAUNCH(blocks_for(M), kThreads, 0, 0, row_sums_kernel<int8_t>)(a_rows->data_as<int32_t>(),
                                                                                a_shifted->data_as<int8_t>(), M, K);
            MT_LAUNCH(blocks_for(N), kThreads, 0, 0, row_sums_kernel<int8_t>)(b_rows->data_as<int32_t>(),
                                                                                b->data_as<int8_t>(), N, K);
            MT_LAUNCH(blocks_for(M * N), kThreads, 0, 0, qgemm_epilogue_kernel)(
                out->data(), raw->data_as<int32_t>(), a_rows->data_as<int32_t>(), b_rows->data_as<int32_t>(),
                q.b_zp->data_as<int32_t>(), q.a_zp - 128, M, N, K, epi);
            MT_CUDA_CHECK_LAUNCH("qgemm");
            return;
        }
    }
#endif
    MT_LAUNCH(blocks_for(M * N), kThreads, 0, 0, qgemm_kernel)(out->data(), a->data_as<uint8_t>(),
                                                                 b->data_as<int8_t>(), q.b_zp->data_as<int32_t>(),
                                                                 q.a_zp, M, N, K, epi);
    MT_CUDA_CHECK_LAUNCH("qgemm");
}

}  // namespace minitorch::cuda
