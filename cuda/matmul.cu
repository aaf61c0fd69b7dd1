// matmul.cu — batched matmul on the GPU, three ways (minitorch.backends.cuda.matmul):
//   naive — one thread per C element, a K-long dot product straight from global memory;
//   tiled — 16x16 tiles of A and B staged in shared memory, so each global value is
//           read once per tile instead of once per output element;
//   cublas (default on a real GPU) — NVIDIA's tuned GEMM. The emulated build has no
//           cuBLAS and uses the tiled kernel instead.
// C (batch, M, N) is contiguous. A (batch, M, K) and B (batch, K, N) are read where they
// lie: any row/column strides for the teaching kernels, and for cuBLAS either contiguous
// rows or contiguous columns (a transposed view such as W^T is passed with a transpose
// flag, not copied). Batch dims must collapse to one stride (contiguous batches, or a
// broadcast operand with stride 0); anything else is copied once first. float16 and
// bfloat16 GEMMs run on cuBLAS in their own type (tensor cores, float32 sums); the teaching
// kernels read them in place too, summing in float32 (Compute<T>) and rounding once.
// matmul_bias (Linear's forward) adds a bias to every row in the same launch: the teaching
// kernels add it as they store, cuBLAS as its bias epilogue (cuBLASLt, as PyTorch's addmm).
#include <array>
#include <map>
#include <mutex>

#include "common.cuh"
#include "minitorch/matrix_layout.h"

#if !MT_CUDA_EMULATED
#include <cublasLt.h>
#include <cublas_v2.h>
#endif

namespace minitorch::cuda {

namespace {

constexpr int kTile = 16;

// One operand as the teaching kernels read it: element (batch p, row i, col j) lies at
// data[p * batch + i * row + j * col] (strides in elements).
template <class T>
struct MatrixArg {
    const T* data;
    int64_t batch, row, col;
    __device__ __forceinline__ T at(int64_t p, int64_t i, int64_t j) const { return data[p * batch + i * row + j * col]; }
};

// Which batches a block multiplies and where its sum goes: batch blockIdx.z into its own
// C matrix, or (sum_of, the weight gradient of conv) every batch, added into one C.
struct BatchPlan {
    int64_t sum_of = 0;  // 0: one batch per blockIdx.z; n: all n batches, C += their sum
    __device__ __forceinline__ int64_t first() const { return sum_of ? 0 : blockIdx.z; }
    __device__ __forceinline__ int64_t end() const { return sum_of ? sum_of : blockIdx.z + 1; }
};
// bias: null, or N values, one added to each column of every row (matmul_bias).
template <class T>
__device__ __forceinline__ void store(T* C, BatchPlan plan, int64_t M, int64_t N, int64_t row, int64_t col,
                                      Compute<T> acc, const T* bias)
{
    if (bias) acc += Compute<T>(bias[col]);
    if (plan.sum_of)
        C[row * N + col] = T(Compute<T>(C[row * N + col]) + acc);
    else
        C[plan.first() * M * N + row * N + col] = T(acc);
}

// Thread mapping: thread (x, y) of block (bx, by, batch) computes C[batch, by*16+y, bx*16+x].
template <class T>
__global__ void matmul_naive_kernel(MatrixArg<T> A, MatrixArg<T> B, T* C, int64_t M, int64_t N, int64_t K,
                                    BatchPlan plan, const T* bias)
{
    const int64_t row = int64_t(blockIdx.y) * blockDim.y + threadIdx.y,
                  col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    using Acc = Compute<T>;
    Acc acc = 0;
    for (int64_t p = plan.first(); p < plan.end(); ++p)
        for (int64_t k = 0; k < K; ++k) acc += Acc(A.at(p, row, k)) * Acc(B.at(p, k, col));
    store(C, plan, M, N, row, col, acc, bias);
}

// Same mapping; the block walks K in steps of 16, each thread loading one element of
// the A tile and one of the B tile into shared memory.
template <class T>
__global__ void matmul_tiled_kernel(MatrixArg<T> A, MatrixArg<T> B, T* C, int64_t M, int64_t N, int64_t K,
                                    BatchPlan plan, const T* bias)
{
    using Acc = Compute<T>;  // 16-bit values are held in float32 from the load on
    __shared__ Acc As[kTile][kTile];
    __shared__ Acc Bs[kTile][kTile];
    const int64_t row = int64_t(blockIdx.y) * kTile + threadIdx.y, col = int64_t(blockIdx.x) * kTile + threadIdx.x;
    Acc acc = 0;
    for (int64_t p = plan.first(); p < plan.end(); ++p) {
        for (int64_t k0 = 0; k0 < K; k0 += kTile) {
            As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? Acc(A.at(p, row, k0 + threadIdx.x)) : Acc(0);
            Bs[threadIdx.y][threadIdx.x] = (col < N && k0 + threadIdx.y < K) ? Acc(B.at(p, k0 + threadIdx.y, col)) : Acc(0);
            __syncthreads();  // both tiles fully loaded before anyone multiplies
            for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
            __syncthreads();  // everyone done with these tiles before the next load overwrites them
        }
    }
    if (row < M && col < N) store(C, plan, M, N, row, col, acc, bias);
}

// Thread mapping: one thread per element i of C (M * N of them): C[i] += the sum over p of
// parts[p, i] -- the cuBLAS path of sum_batches, after one batched GEMM into parts. For a
// 16-bit C the parts are float32 (cuBLAS wrote its float32 sums unrounded), added in float32
// and rounded once.
template <class T>
__global__ void add_batches_kernel(const Compute<T>* parts, T* C, int64_t batch, int64_t size)
{
    MT_GRID_STRIDE(i, size) {
        Compute<T> acc = 0;
        for (int64_t p = 0; p < batch; ++p) acc += parts[p * size + i];
        C[i] = T(Compute<T>(C[i]) + acc);
    }
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

// Row-major C = A @ B is column-major C^T = B^T @ A^T: hand cuBLAS B first. A row-major
// operand with contiguous rows is, read column-major, already its transpose (op N); one
// with contiguous columns (a transposed view) needs op T. la/lb: A's and B's layouts,
// sa/sb their batch strides (0 for a broadcast operand).
// accumulate: out += A @ B (cuBLAS's beta = 1) instead of out = A @ B.
void gemm_cublas(const Tensor& a, const Tensor& b, const Tensor& out, int64_t batch, int64_t M, int64_t N, int64_t K,
                 BlasLayout la, BlasLayout lb, int64_t sa, int64_t sb, bool accumulate)
{
    MT_CHECK_RUNTIME(M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX && batch <= INT32_MAX && la.ld <= INT32_MAX &&
                         lb.ld <= INT32_MAX,
                     "matmul: sizes too large for cuBLAS");
    const cublasOperation_t opb = lb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, opa = la.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (a->dtype == DType::Float32 && tf32_allowed_now()) {
        // TF32: the inputs are rounded to 10 mantissa bits inside the tensor cores, the sums
        // stay float32 (backends.cuda.matmul.allow_tf32 / backends.cudnn.allow_tf32).
        const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
        ProfiledLaunch profiled("cublasGemmStridedBatchedEx(tf32)", dim3(0, 0, 0), dim3(0, 0, 0), 0);
        MT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas_handle(), opb, opa, int(N), int(M), int(K), &alpha,
                                                   b->data_as<float>(), CUDA_R_32F, int(lb.ld), sb, a->data_as<float>(),
                                                   CUDA_R_32F, int(la.ld), sa, &beta, out->data_as<float>(), CUDA_R_32F,
                                                   int(N), M * N, int(batch), CUBLAS_COMPUTE_32F_FAST_TF32,
                                                   CUBLAS_GEMM_DEFAULT));
    } else if (is_16bit(a->dtype)) {
        // float16 / bfloat16 in, float32 sums: cuBLAS runs it on the tensor cores. out is of the
        // same type, or float32 (the scratch parts of sum_batches: the sums kept unrounded).
        const bool fp16 = a->dtype == DType::Float16;
        const cudaDataType_t type = fp16 ? CUDA_R_16F : CUDA_R_16BF;
        const cudaDataType_t out_type = out->dtype == DType::Float32 ? CUDA_R_32F : type;
        const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
        ProfiledLaunch profiled(fp16 ? "cublasGemmStridedBatchedEx(fp16)" : "cublasGemmStridedBatchedEx(bf16)",
                                dim3(0, 0, 0), dim3(0, 0, 0), 0);
        MT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas_handle(), opb, opa, int(N), int(M), int(K), &alpha, b->data(),
                                                   type, int(lb.ld), sb, a->data(), type, int(la.ld), sa, &beta,
                                                   out->data(), out_type, int(N), M * N, int(batch),
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if (out->dtype == DType::Float32) {
        const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
        ProfiledLaunch profiled("cublasSgemmStridedBatched", dim3(0, 0, 0), dim3(0, 0, 0), 0);  // one entry per call
        MT_CUBLAS_CHECK(cublasSgemmStridedBatched(cublas_handle(), opb, opa, int(N), int(M), int(K), &alpha,
                                                  b->data_as<float>(), int(lb.ld), sb, a->data_as<float>(), int(la.ld),
                                                  sa, &beta, out->data_as<float>(), int(N), M * N, int(batch)));
    } else {
        const double alpha = 1.0, beta = accumulate ? 1.0 : 0.0;
        ProfiledLaunch profiled("cublasDgemmStridedBatched", dim3(0, 0, 0), dim3(0, 0, 0), 0);
        MT_CUBLAS_CHECK(cublasDgemmStridedBatched(cublas_handle(), opb, opa, int(N), int(M), int(K), &alpha,
                                                  b->data_as<double>(), int(lb.ld), sb, a->data_as<double>(), int(la.ld),
                                                  sa, &beta, out->data_as<double>(), int(N), M * N, int(batch)));
    }
}

// ---- Linear's GEMM with its bias added in cuBLASLt's epilogue: one launch ------------------
// (PyTorch's addmm takes the same road.) cuBLASLt's heuristic picks an algorithm for a problem:
// types, sizes, layouts and how aligned each pointer is (a kernel may assume 16-byte loads).
// A training step meets the same few problems each time, so the choice is kept per problem;
// one cuBLASLt cannot take is kept too, and goes the two-step way (rows = bias, GEMM adds).
// MINITORCH_CUBLASLT=0 turns this path off (two steps always), for comparison; read at every call.
cublasLtHandle_t lt_handle()
{
    static cublasLtHandle_t handle = [] {
        cublasLtHandle_t h;
        const cublasStatus_t st = cublasLtCreate(&h);
        MT_CHECK_RUNTIME(st == CUBLAS_STATUS_SUCCESS, "cuBLASLt: cublasLtCreate failed (status ", int(st), ")");
        return h;
    }();
    return handle;
}

// The descriptors of one call, destroyed on every way out.
struct LtCall {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t w = nullptr, x = nullptr, y = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~LtCall()
    {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (y) cublasLtMatrixLayoutDestroy(y);
        if (x) cublasLtMatrixLayoutDestroy(x);
        if (w) cublasLtMatrixLayoutDestroy(w);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

struct LtChoice {
    bool ok = false;  // false: cuBLASLt has no algorithm for this problem
    cublasLtMatmulAlgo_t algo{};
    size_t workspace = 0;
};
constexpr uint64_t kLtMaxWorkspace = uint64_t(8) << 20;

// out (M, N) = a @ b + bias in one cublasLtMatmul; false where cuBLASLt cannot take it (out
// untouched). Column-major, as gemm_cublas: out^T (N x M) = b^T (N x K) @ a^T (K x M), so
// cuBLASLt's A is our b, its B our a, and the bias (N values) runs down D's rows, as the
// epilogue wants it.
bool gemm_bias_lt(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias, int64_t M, int64_t N,
                  int64_t K, BlasLayout la, BlasLayout lb)
{
    // A dimension of 1 (one row of x: Linear on a vector; one column or row of W^T): PyTorch
    // leaves those to the plain GEMM too (cuBLASLt's heuristic has refused some).
    if (env_is("MINITORCH_CUBLASLT", "0") || M < 2 || K < 2 || N < 2) return false;
    const DType dt = out->dtype;
    const bool tf32 = dt == DType::Float32 && tf32_allowed_now();
    cudaDataType_t type = CUDA_R_32F, scale = CUDA_R_32F;
    cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (dt == DType::Float64) type = scale = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F;
    else if (dt == DType::Float16) type = CUDA_R_16F;
    else if (dt == DType::BFloat16) type = CUDA_R_16BF;
    else if (dt != DType::Float32) return false;

    LtCall call;
    const cublasOperation_t opw = lb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, opx = la.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const void* bias_ptr = bias->data();
    auto ok = [](cublasStatus_t st) { return st == CUBLAS_STATUS_SUCCESS; };
    // Each stored as cuBLASLt reads it, column-major: rows x cols before its op.
    if (!ok(cublasLtMatmulDescCreate(&call.op, compute, scale)) ||
        !ok(cublasLtMatmulDescSetAttribute(call.op, CUBLASLT_MATMUL_DESC_TRANSA, &opw, sizeof(opw))) ||
        !ok(cublasLtMatmulDescSetAttribute(call.op, CUBLASLT_MATMUL_DESC_TRANSB, &opx, sizeof(opx))) ||
        !ok(cublasLtMatmulDescSetAttribute(call.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue))) ||
        !ok(cublasLtMatmulDescSetAttribute(call.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof(bias_ptr))) ||
        !ok(cublasLtMatrixLayoutCreate(&call.w, type, lb.transposed ? K : N, lb.transposed ? N : K, lb.ld)) ||
        !ok(cublasLtMatrixLayoutCreate(&call.x, type, la.transposed ? M : K, la.transposed ? K : M, la.ld)) ||
        !ok(cublasLtMatrixLayoutCreate(&call.y, type, N, M, N)))
        return false;

    // Alignments up to 256 bytes, cuBLASLt's default assumption.
    const std::array<int64_t, 14> key{int64_t(dt), tf32, M, N, K, la.transposed, la.ld, lb.transposed, lb.ld,
                                      alignment_of(a->data(), 256), alignment_of(b->data(), 256),
                                      alignment_of(out->data(), 256), alignment_of(bias_ptr, 256),
                                      out->device().index};
    static std::mutex mutex;
    static std::map<std::array<int64_t, 14>, LtChoice> choices;
    LtChoice choice;
    bool known = false;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = choices.find(key);
        if (it != choices.end()) choice = it->second, known = true;
    }
    if (!known) {
        // The preference tells the heuristic the workspace it may use and the true alignments.
        const uint32_t align_x = uint32_t(key[9]), align_w = uint32_t(key[10]), align_y = uint32_t(key[11]);
        cublasLtMatmulHeuristicResult_t result{};
        int found = 0;
        const bool asked =
            ok(cublasLtMatmulPreferenceCreate(&call.pref)) &&
            ok(cublasLtMatmulPreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &kLtMaxWorkspace, sizeof(kLtMaxWorkspace))) &&
            ok(cublasLtMatmulPreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_w,
                                                    sizeof(align_w))) &&
            ok(cublasLtMatmulPreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_x,
                                                    sizeof(align_x))) &&
            ok(cublasLtMatmulPreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_y,
                                                    sizeof(align_y))) &&
            ok(cublasLtMatmulPreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_y,
                                                    sizeof(align_y))) &&
            ok(cublasLtMatmulAlgoGetHeuristic(lt_handle(), call.op, call.w, call.x, call.y, call.y, call.pref, 1,
                                              &result, &found));
        if (asked && found > 0 && ok(result.state))
            choice.ok = true, choice.algo = result.algo, choice.workspace = result.workspaceSize;
        if (asked) {  // an answer, yes or no (a failure to ask, out of host memory, is not kept)
            std::lock_guard<std::mutex> lock(mutex);
            choices[key] = choice;
        }
    }
    if (!choice.ok) return false;

    Tensor workspace = choice.workspace ? empty({int64_t(choice.workspace)}, DType::UInt8, out->device()) : Tensor();
    const float alpha32 = 1.0f, beta32 = 0.0f;
    const double alpha64 = 1.0, beta64 = 0.0;
    const bool f64 = dt == DType::Float64;
    ProfiledLaunch profiled("cublasLtMatmul(bias)", dim3(0, 0, 0), dim3(0, 0, 0), 0);
    const cublasStatus_t st =
        cublasLtMatmul(lt_handle(), call.op, f64 ? static_cast<const void*>(&alpha64) : &alpha32, b->data(), call.w,
                       a->data(), call.x, f64 ? static_cast<const void*>(&beta64) : &beta32, out->data(), call.y,
                       out->data(), call.y, &choice.algo, workspace ? static_cast<void*>(workspace->data()) : nullptr,
                       choice.workspace, 0);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE || st == CUBLAS_STATUS_ARCH_MISMATCH) {
        std::lock_guard<std::mutex> lock(mutex);  // refused before launching: not again for this problem
        choices[key].ok = false;
        return false;
    }
    MT_CHECK_RUNTIME(st == CUBLAS_STATUS_SUCCESS, "cuBLASLt error ", int(st), " in cublasLtMatmul (linear, ", M, "x",
                     K, " @ ", K, "x", N, ")");
    return true;
}
#endif

}  // namespace

void set_matmul_impl(MatmulImpl impl)
{
    MT_CHECK(!(MT_CUDA_EMULATED && impl == MatmulImpl::Cublas),
             "backends.cuda.matmul: the CUDA emulator has no cuBLAS (it runs 'naive' or 'tiled')");
    g_impl = impl;
}
MatmulImpl matmul_impl() { return g_impl; }

namespace {

// out = a @ b (sum_batches: out += the sum over batches), plus bias (null, or N values added
// to every row: matmul_bias).
void multiply(const Tensor& out, const Tensor& a_in, const Tensor& b_in, bool sum_batches, const Tensor& bias)
{
    const int64_t nd = a_in->dim();
    int64_t M = a_in->shape[nd - 2];
    const int64_t N = b_in->shape[nd - 1], K = a_in->shape[nd - 1];
    int64_t batch = a_in->numel() / (M * K);
    // An operand is copied only when its batch dims are not one stride, or (for cuBLAS)
    // neither its rows nor its columns are contiguous.
    const bool use_cublas = !MT_CUDA_EMULATED && g_impl == MatmulImpl::Cublas && is_floating(out->dtype);
    auto readable = [&](const Tensor& t, int64_t rows, int64_t cols, int64_t& batch_stride) {
        if (!uniform_batch_stride(*t, batch_stride)) return false;
        return !use_cublas || blas_layout(rows, cols, t->strides[nd - 2], t->strides[nd - 1]).ok;
    };
    int64_t sa = 0, sb = 0;
    Tensor a = a_in, b = b_in;
    if (!readable(a, M, K, sa)) a = packed(a_in, copy), uniform_batch_stride(*a, sa);
    if (!readable(b, K, N, sb)) b = packed(b_in, copy), uniform_batch_stride(*b, sb);
    // (batch, M, K) @ a broadcast (K, N), as Linear on a (B, T, in) input: when A's
    // batches follow one another row by row, it is one GEMM of batch * M rows.
    // (cuBLAS also needs the rows not to overlap: a view made with as_strided may.)
    if (!sum_batches && batch > 1 && sb == 0 && a->strides[nd - 1] == 1 && sa == M * a->strides[nd - 2] &&
        (!use_cublas || blas_layout(M * batch, K, a->strides[nd - 2], 1).ok))
        M *= batch, batch = 1;
#if !MT_CUDA_EMULATED
    if (use_cublas) {
        // sum_batches: one product is added by the GEMM itself (beta = 1; the RNN layers' steps);
        // more go as one batched GEMM into scratch matrices, then one kernel adds them up.
        const bool scratch = sum_batches && batch > 1;
        const DType parts = is_16bit(out->dtype) ? DType::Float32 : out->dtype;  // sums unrounded
        Tensor c = scratch ? empty({batch, M, N}, parts, out->device()) : out;
        const BlasLayout la = blas_layout(M, K, a->strides[nd - 2], a->strides[nd - 1]),
                         lb = blas_layout(K, N, b->strides[nd - 2], b->strides[nd - 1]);
        bool add_into_out = sum_batches && !scratch;
        if (bias) {
            if (batch == 1 && gemm_bias_lt(a, b, out, bias, M, N, K, la, lb)) return;
            // Where cuBLASLt cannot: the rows start as the bias and the GEMM adds into them.
            Strides across_rows(out->shape.size(), 0);
            across_rows.back() = 1;
            copy(out, make_view(bias, out->shape, across_rows, bias->offset));
            add_into_out = true;
        }
        gemm_cublas(a, b, c, batch, M, N, K, la, lb, sa, sb, add_into_out);
        if (scratch) {
            dispatch_floating16(out->dtype, "matmul", [&](auto tag) {
                using T = typename decltype(tag)::type;
                MT_LAUNCH(blocks_for(M * N), kThreads, 0, 0, add_batches_kernel<T>)(c->data_as<Compute<T>>(),
                                                                                  out->data_as<T>(), batch, M * N);
            });
            MT_CUDA_CHECK_LAUNCH("matmul");
        }
        return;
    }
#endif
    MT_CHECK_RUNTIME(sum_batches || batch <= 65535, "matmul: at most 65535 batches per launch on CUDA, got ", batch);
    const BatchPlan plan{sum_batches ? batch : 0};
    dim3 block(kTile, kTile),
        grid(unsigned((N + kTile - 1) / kTile), unsigned((M + kTile - 1) / kTile), unsigned(sum_batches ? 1 : batch));
    dispatch_with16(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
            const MatrixArg<T> A{a->data_as<T>(), sa, a->strides[nd - 2], a->strides[nd - 1]};
            const MatrixArg<T> B{b->data_as<T>(), sb, b->strides[nd - 2], b->strides[nd - 1]};
            const T* bias_values = bias ? bias->data_as<T>() : nullptr;
            if (g_impl == MatmulImpl::Naive)
                MT_LAUNCH(grid, block, 0, 0, matmul_naive_kernel<T>)(A, B, out->data_as<T>(), M, N, K, plan,
                                                                     bias_values);
            else
                MT_LAUNCH(grid, block, 0, 0, matmul_tiled_kernel<T>)(A, B, out->data_as<T>(), M, N, K, plan,
                                                                     bias_values);
        }
    });
    MT_CUDA_CHECK_LAUNCH("matmul");
}

}  // namespace

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_batches)
{
    multiply(out, a, b, sum_batches, nullptr);
}

// Linear's forward: one dtype, the bias contiguous.
void matmul_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias)
{
    multiply(out, a, b, false, bias);
}

// The table's matmul_bias entry: the types the kernels compute in (float16 / bfloat16 read in
// place) go straight in; the narrow integer types through Widen (int64 stand-ins), as matmul.
void matmul_bias_native(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias)
{
    const DType t = out->dtype;
    if (is_16bit(t) || t == DType::Float32 || t == DType::Float64 || t == DType::Int64)
        return matmul_bias(out, a, b, bias);
    using MatmulBias = void(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
    detail::Widen<MatmulBias>::call<&matmul_bias, &copy>(out, a, b, bias);
}

// float16 / bfloat16 operands of a plain GEMM are read as they are: by cuBLAS, or by the
// teaching kernels (the emulated build's), which sum in float32; so is one product added
// into out (sum_batches of two matrices), and so are the sums over batches (the weight
// gradient of a convolution): the teaching kernels sum every batch in float32 registers of
// one block, cuBLAS writes each batch's float32 sums to scratch and one kernel adds them;
// either rounds once. Mixed dtypes compute in float32 through Widen, as every other kernel does.
void matmul_native16(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_batches)
{
    const bool native = is_16bit(out->dtype) && a->dtype == out->dtype && b->dtype == out->dtype;
    if (native) return matmul(out, a, b, sum_batches);
    using Matmul = void(const Tensor&, const Tensor&, const Tensor&, bool);
    detail::Widen<Matmul>::call<&matmul, &copy>(out, a, b, sum_batches);
}

}  // namespace minitorch::cuda
