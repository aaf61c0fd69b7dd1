// kernels_under_test.cu — small kernels in the style of minitorch's cuda/*.cu, run by
// test_emulator.cpp under the CUDA emulator (cuda/emu) and checked against CPU
// references. Written only against cuda_compat.h, so nvcc builds this file too.
//
// Each host function launches one kernel and returns the launch's error.
#include <cstdint>

#include "cuda_compat.h"

namespace emu_test {

namespace {

// Each thread adds elements i, i + stride, ... where stride is the whole grid, so
// any n is covered by however many blocks the launch has.
// out, a, b: contiguous float32, n elements.
__global__ void add_kernel(float* __restrict__ out, const float* __restrict__ a, const float* __restrict__ b,
                           int64_t n)
{
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = __ldg(a + i) + __ldg(b + i);
}

constexpr int kSumThreads = 256;

// Row sums of x (rows, cols, contiguous) into row_sums[rows], and their total added
// into *total with atomicAdd.
// Thread mapping: one block of 256 threads per row, grid-stride over rows (block b
// does rows b, b + gridDim.x, ...). Thread t adds columns t, t + 256, ... ; the block
// folds its 256 partials in shared memory down to 64, and warp 0 finishes with
// shuffles.
// kPlantMissingSync = true leaves out the last barrier, so the next row may overwrite
// partials before warp 0 has read them: a deliberately broken copy.
template <bool kPlantMissingSync>
__global__ void row_sum_kernel(const float* x, float* row_sums, float* total, int rows, int cols)
{
    __shared__ float partial[kSumThreads];
    const int tid = threadIdx.x;
    for (int row = blockIdx.x; row < rows; row += gridDim.x) {
        float acc = 0.f;
        for (int c = tid; c < cols; c += kSumThreads) acc += x[int64_t(row) * cols + c];
        partial[tid] = acc;
        __syncthreads();  // every partial stored before any thread reads another's
        for (int s = kSumThreads / 2; s > 32; s >>= 1) {
            if (tid < s) partial[tid] += partial[tid + s];
            __syncthreads();  // this level done before the next one reads it
        }
        if (tid < 32) {  // one warp: shuffles need no barrier
            float v = partial[tid] + partial[tid + 32];
            for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
            if (tid == 0) {
                row_sums[row] = v;
                atomicAdd(total, v);
            }
        }
        if constexpr (!kPlantMissingSync)
            __syncthreads();  // warp 0 has read partial[0..63] before the next row overwrites it
    }
}

constexpr int kTile = 16;

// C = A @ B with A (M, K), B (K, N), C (M, N), all contiguous float32.
// Thread mapping: thread (x, y) of block (bx, by) computes C[by*16 + y, bx*16 + x].
// The block walks K in 16-wide steps; each thread loads one element of the 16x16 A
// tile and one of the B tile into shared memory, so each global value is read once
// per tile instead of once per output.
__global__ void matmul_tiled_kernel(float* C, const float* A, const float* B, int M, int N, int K)
{
    __shared__ float As[kTile][kTile];
    __shared__ float Bs[kTile][kTile];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[int64_t(row) * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[int64_t(k0 + ty) * N + col] : 0.f;
        __syncthreads();  // both tiles loaded before anyone multiplies
        for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();  // everyone done with these tiles before the next load
    }
    if (row < M && col < N) C[int64_t(row) * N + col] = acc;
}

// Reverses each blockDim.x-long chunk of in (the last chunk may be shorter) into out.
// Thread mapping: thread t of block b loads element b*blockDim.x + t into dynamic
// shared memory (blockDim.x floats) and writes the mirrored one.
__global__ void block_reverse_kernel(float* out, const float* in, int n)
{
    MT_DYNAMIC_SHARED(float, chunk);
    const int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    const int len = min(int(blockDim.x), n - base);
    if (t < len) chunk[t] = in[base + t];
    __syncthreads();  // the whole chunk loaded before threads read each other's element
    if (t < len) out[base + t] = chunk[len - 1 - t];
}

// One result per thread per warp function, so their semantics can be compared with
// a CPU model: out[k * blockDim.x + t] for k = 0..7, out_xor[t].
__global__ void warp_intrinsics_kernel(int* out, double* out_xor)
{
    const unsigned full = 0xffffffffu;
    const int t = threadIdx.x, lane = t % 32, n = blockDim.x;
    out[0 * n + t] = __shfl_sync(full, lane * 10, 3);
    out[1 * n + t] = __shfl_up_sync(full, lane, 2);
    out[2 * n + t] = __shfl_down_sync(full, lane, 1, 8);  // segments of 8 lanes
    out[3 * n + t] = __shfl_xor_sync(full, lane, 4, 16);
    out[4 * n + t] = int(__ballot_sync(full, lane % 3 == 0));
    out[5 * n + t] = __any_sync(full, t == 40);
    out[6 * n + t] = __all_sync(full, lane < 31);
    out[7 * n + t] = int(__activemask());
    out_xor[t] = __shfl_xor_sync(full, lane + 0.25, 1);  // 8-byte values move whole
}

// Each thread g (global index) updates shared counters with every atomic minitorch
// might use: ints[0..8) histogram of g % 8, ints[8] max of g, ints[9] set by
// whichever thread's atomicCAS wins, ints[10] number of winners; *sum of g; *min_neg
// min of -g; *halves 0.5 per thread. All start zeroed.
__global__ void atomics_kernel(int* ints, unsigned long long* sum, long long* min_neg, double* halves)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(ints + g % 8, 1);
    atomicMax(ints + 8, g);
    const int old = atomicCAS(ints + 9, 0, g + 1);
    atomicAdd(ints + 10, old == 0 ? 1 : 0);
    atomicAdd(sum, (unsigned long long)g);
    atomicMin(min_neg, -(long long)g);
    atomicAdd(halves, 0.5);
}

}  // namespace

cudaError_t add(float* out, const float* a, const float* b, int64_t n, unsigned blocks)
{
    MT_LAUNCH(blocks, 256, 0, 0, add_kernel)(out, a, b, n);
    return cudaGetLastError();
}

cudaError_t row_sums(const float* x, float* sums, float* total, int rows, int cols, unsigned blocks,
                     bool plant_missing_sync)
{
    if (plant_missing_sync)
        MT_LAUNCH(blocks, kSumThreads, 0, 0, row_sum_kernel<true>)(x, sums, total, rows, cols);
    else
        MT_LAUNCH(blocks, kSumThreads, 0, 0, row_sum_kernel<false>)(x, sums, total, rows, cols);
    return cudaGetLastError();
}

cudaError_t matmul_tiled(float* C, const float* A, const float* B, int M, int N, int K)
{
    const dim3 block(kTile, kTile), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
    MT_LAUNCH(grid, block, 0, 0, matmul_tiled_kernel)(C, A, B, M, N, K);
    return cudaGetLastError();
}

cudaError_t block_reverse(float* out, const float* in, int n, int threads)
{
    MT_LAUNCH((n + threads - 1) / threads, threads, threads * sizeof(float), 0, block_reverse_kernel)(out, in, n);
    return cudaGetLastError();
}

cudaError_t warp_intrinsics(int* out, double* out_xor, int threads)
{
    MT_LAUNCH(1, threads, 0, 0, warp_intrinsics_kernel)(out, out_xor);
    return cudaGetLastError();
}

cudaError_t atomics(int* ints, unsigned long long* sum, long long* min_neg, double* halves, unsigned blocks)
{
    MT_LAUNCH(blocks, 256, 0, 0, atomics_kernel)(ints, sum, min_neg, halves);
    return cudaGetLastError();
}

}  // namespace emu_test
