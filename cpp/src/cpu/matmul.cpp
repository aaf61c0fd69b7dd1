// matmul.cpp — CPU kernel for batched matmul: BLAS GEMM for floats, a plain
// i-k-j loop for int64. Batch dims are walked here; each batch is one GEMM.
#include <climits>
#include <cstring>
#include <vector>

#include "blas.h"
#include "kernels_cpu.h"
#include "minitorch/matrix_layout.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

// Offsets (in elements) of each batch's matrix in a, b; batch dims walked row-major.
void batch_offsets(const TensorImpl& t, int64_t batch_dims, std::vector<int64_t>& offs)
{
    offs.assign(1, 0);
    for (int64_t d = 0; d < batch_dims; ++d) {
        std::vector<int64_t> next;
        next.reserve(offs.size() * t.shape[d]);
        for (int64_t o : offs)
            for (int64_t i = 0; i < t.shape[d]; ++i) next.push_back(o + i * t.strides[d]);
        offs.swap(next);
    }
}

// The lectures' three CPU matmuls, for comparison (minitorch.backends.cpu.matmul):
//   naive   — the textbook i-j-k triple loop: the inner loop walks B down a column,
//             a cache miss per step for large N;
//   blocked — i-k-j order over kTile x kTile tiles: each tile of B is reused from cache
//             while a tile of A streams through, and the inner loop is contiguous;
//   blas    — OpenBLAS (the default): packing, SIMD micro-kernels, threads.
// All take one (M, K) @ (K, N) product with row strides lda / ldb and write C (M, N),
// or add to it when `add`.
template <class T>
void matmul_naive(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda_r, int64_t lda_c, const T* B,
                  int64_t ldb_r, int64_t ldb_c, T* C, bool add)
{
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            T acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += A[i * lda_r + k * lda_c] * B[k * ldb_r + j * ldb_c];
            C[i * N + j] = add ? C[i * N + j] + acc : acc;
        }
}

constexpr int64_t kTile = 64;

template <class T>
void matmul_blocked(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda_r, int64_t lda_c, const T* B,
                    int64_t ldb_r, int64_t ldb_c, T* C, bool add)
{
    if (!add)
        for (int64_t i = 0; i < M * N; ++i) C[i] = 0;
    // Rows of C are independent: threads split the row tiles.
    parallel_for((M + kTile - 1) / kTile, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t i0 = t0 * kTile; i0 < std::min(M, t1 * kTile); i0 += kTile)
            for (int64_t k0 = 0; k0 < K; k0 += kTile)
                for (int64_t j0 = 0; j0 < N; j0 += kTile) {
                    const int64_t i1 = std::min(M, i0 + kTile), k1 = std::min(K, k0 + kTile), j1 = std::min(N, j0 + kTile);
                    for (int64_t i = i0; i < i1; ++i)
                        for (int64_t k = k0; k < k1; ++k) {
                            const T a = A[i * lda_r + k * lda_c];
                            const T* b = B + k * ldb_r;
                            T* c = C + i * N;
                            if (ldb_c == 1)
                                for (int64_t j = j0; j < j1; ++j) c[j] += a * b[j];
                            else
                                for (int64_t j = j0; j < j1; ++j) c[j] += a * b[j * ldb_c];
                        }
                }
    });
}

}  // namespace

namespace {
MatmulAlgo g_matmul_algo = MatmulAlgo::Blas;
}

void set_matmul_algo(MatmulAlgo algo) { g_matmul_algo = algo; }
MatmulAlgo matmul_algo() { return g_matmul_algo; }

namespace {

// out = a @ b; sum_batches: out += the sum over batches; add: each batch's product is added
// into its own matrix of out (which holds the bias rows: matmul_bias).
void multiply(const Tensor& out, const Tensor& a_in, const Tensor& b_in, bool sum_batches, bool add)
{
    add = add || sum_batches;
    const int64_t nd = a_in->dim();
    const int64_t M = a_in->shape[nd - 2], N = b_in->shape[nd - 1], K = a_in->shape[nd - 1];
    const int64_t batch = a_in->numel() / (M * K);
    // Batch p's product lands at C + c_off(p): its own matrix, or (sum_batches) all on one.
    auto c_off = [&](int64_t p) { return sum_batches ? 0 : p * M * N; };

    Tensor a = a_in, b = b_in;
    std::vector<int64_t> a_offs, b_offs;
    batch_offsets(*a, nd - 2, a_offs);
    batch_offsets(*b, nd - 2, b_offs);

    if (out->dtype == DType::Int64) {
        const int64_t *A = a->data_as<int64_t>(), *B = b->data_as<int64_t>();
        int64_t* C = out->data_as<int64_t>();
        const int64_t am = a->strides[nd - 2], ak = a->strides[nd - 1];
        const int64_t bk = b->strides[nd - 2], bn = b->strides[nd - 1];
        for (int64_t p = 0; p < batch; ++p) {
            int64_t* c = C + c_off(p);
            if (!add)
                for (int64_t i = 0; i < M * N; ++i) c[i] = 0;
            for (int64_t i = 0; i < M; ++i)
                for (int64_t k = 0; k < K; ++k) {
                    const int64_t av = A[a_offs[p] + i * am + k * ak];
                    for (int64_t j = 0; j < N; ++j) c[i * N + j] += av * B[b_offs[p] + k * bk + j * bn];
                }
        }
        return;
    }

    if (g_matmul_algo != MatmulAlgo::Blas) {
        const int64_t ar = a->strides[nd - 2], ac = a->strides[nd - 1], br = b->strides[nd - 2], bc = b->strides[nd - 1];
        dispatch_floating(out->dtype, "matmul", [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T *A = a->data_as<T>(), *B = b->data_as<T>();
            T* C = out->data_as<T>();
            for (int64_t p = 0; p < batch; ++p) {
                if (g_matmul_algo == MatmulAlgo::Naive)
                    matmul_naive(M, N, K, A + a_offs[p], ar, ac, B + b_offs[p], br, bc, C + c_off(p), add);
                else
                    matmul_blocked(M, N, K, A + a_offs[p], ar, ac, B + b_offs[p], br, bc, C + c_off(p), add);
            }
        });
        return;
    }
    MT_CHECK_RUNTIME(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX, "matmul: sizes (", M, ", ", K, ") @ (", K, ", ",
                     N, ") are too large for 32-bit BLAS");
    // A layout BLAS cannot read (e.g. a strided slice in both dims): copy once.
    BlasLayout la = blas_layout(M, K, a->strides[nd - 2], a->strides[nd - 1]);
    if (!la.ok) {
        a = packed(a, copy);
        batch_offsets(*a, nd - 2, a_offs);
        la = blas_layout(M, K, a->strides[nd - 2], a->strides[nd - 1]);
    }
    BlasLayout lb = blas_layout(K, N, b->strides[nd - 2], b->strides[nd - 1]);
    if (!lb.ok) {
        b = packed(b, copy);
        batch_offsets(*b, nd - 2, b_offs);
        lb = blas_layout(K, N, b->strides[nd - 2], b->strides[nd - 1]);
    }
    const CBLAS_TRANSPOSE ta = la.transposed ? CblasTrans : CblasNoTrans, tb = lb.transposed ? CblasTrans : CblasNoTrans;
    const int64_t lda = la.ld, ldb = lb.ld;
    MT_CHECK_RUNTIME(lda <= INT_MAX && ldb <= INT_MAX, "matmul: strides too large for 32-bit BLAS");

    dispatch_floating(out->dtype, "matmul", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T *A = a->data_as<T>(), *B = b->data_as<T>();
        T* C = out->data_as<T>();
        set_blas_threads_for(2.0 * double(M) * double(N) * double(K) * double(batch), get_num_threads());
        for (int64_t p = 0; p < batch; ++p)
            gemm(ta, tb, int(M), int(N), int(K), A + a_offs[p], int(lda), B + b_offs[p], int(ldb), C + c_off(p), int(N),
                 add);
    });
}

}  // namespace

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_batches)
{
    multiply(out, a, b, sum_batches, false);
}

// Linear's forward: every row of out starts as the bias, then the GEMM adds a @ b into it
// (BLAS's beta = 1): the bias costs one write of out instead of a second pass over it.
void matmul_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias)
{
    const int64_t row_bytes = out->size(-1) * int64_t(itemsize(out->dtype)), rows = out->numel() / out->size(-1);
    char* data = out->data();
    for (int64_t i = 0; i < rows; ++i) std::memcpy(data + i * row_bytes, bias->data(), size_t(row_bytes));
    multiply(out, a, b, false, /*add=*/true);  // each batch's product added into its rows
}

}  // namespace minitorch::cpu
