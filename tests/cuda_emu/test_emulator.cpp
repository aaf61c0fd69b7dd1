// test_emulator.cpp — runs the kernels of kernels_under_test.cu and compares each
// result with a CPU reference, then (emulated build only) checks that the emulator
// reports misuse: invalid launches, divergent barriers, deadlocks, bad shuffles.
//
// Output: one "PASS name" or "FAIL name" line per check; exit status 1 if any failed.
// Also one "PLANTED row_sum_missing_sync WRONG|correct" line: whether the broken
// reduction went wrong under this MINITORCH_EMU_SCHEDULE (not a failure either way).
// `test_emulator --bench` times one tiled 256x256x256 matmul instead;
// `test_emulator --plant-out-of-bounds heap|stack` runs an off-by-one kernel, for
// checking that an AddressSanitizer build reports it.
//
// Build: g++ -std=c++20 -O1 -I cuda/emu -x c++ kernels_under_test.cu test_emulator.cpp
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_compat.h"

#if MT_CUDA_EMULATED
#include <unistd.h>
#endif

namespace emu_test {  // kernels_under_test.cu
cudaError_t add(float* out, const float* a, const float* b, int64_t n, unsigned blocks);
cudaError_t row_sums(const float* x, float* sums, float* total, int rows, int cols, unsigned blocks,
                     bool plant_missing_sync);
cudaError_t matmul_tiled(float* C, const float* A, const float* B, int M, int N, int K);
cudaError_t block_reverse(float* out, const float* in, int n, int threads);
cudaError_t warp_intrinsics(int* out, double* out_xor, int threads);
cudaError_t atomics(int* ints, unsigned long long* sum, long long* min_neg, double* halves, unsigned blocks);
}  // namespace emu_test

namespace {

int g_passed = 0, g_failed = 0;

void expect(bool ok, const char* name, const std::string& detail = "")
{
    std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail.empty() ? "" : "  ", detail.c_str());
    ++(ok ? g_passed : g_failed);
}

// Every runtime call is checked; a failing one is a failed check of its own.
void check_call(cudaError_t e, const char* what)
{
    if (e != cudaSuccess) expect(false, what, cudaGetErrorString(e));
}

// Largest |got - want| / (1 + |want|); NaN anywhere makes it infinite.
template <class T, class U>
double worst_error(const std::vector<T>& got, const std::vector<U>& want)
{
    if (got.size() != want.size()) return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double e = std::fabs(double(got[i]) - double(want[i])) / (1.0 + std::fabs(double(want[i])));
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
    }
    return worst;
}

template <class T, class U>
void expect_close(const char* name, const std::vector<T>& got, const std::vector<U>& want, double tol)
{
    const double err = worst_error(got, want);
    char detail[64];
    std::snprintf(detail, sizeof detail, "max rel err %.3g (tol %.3g)", err, tol);
    expect(err <= tol, name, detail);
}

template <class T>
class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t n) : n_(n) { check_call(cudaMalloc(&ptr_, n * sizeof(T)), "cudaMalloc"); }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size())
    {
        check_call(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    }
    ~DeviceBuffer() { cudaFree(ptr_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    T* get() const { return ptr_; }
    std::vector<T> to_host() const
    {
        std::vector<T> host(n_);
        check_call(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        check_call(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
        return host;
    }

private:
    T* ptr_ = nullptr;
    size_t n_;
};

std::vector<float> random_floats(size_t n, std::mt19937& rng)
{
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

std::vector<double> matmul_reference(const std::vector<float>& A, const std::vector<float>& B, int M, int N, int K)
{
    std::vector<double> C(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < N; ++j) C[size_t(i) * N + j] += double(A[size_t(i) * K + k]) * B[size_t(k) * N + j];
    return C;
}

// Row sums of x (rows, cols) and their total, through the reduction kernel.
struct RowSums {
    std::vector<float> sums;
    float total;
};
RowSums run_row_sums(const std::vector<float>& x, int rows, int cols, bool plant_missing_sync)
{
    DeviceBuffer<float> dx(x), dsums(rows), dtotal(1);
    check_call(cudaMemset(dtotal.get(), 0, sizeof(float)), "cudaMemset");
    check_call(emu_test::row_sums(dx.get(), dsums.get(), dtotal.get(), rows, cols, 8, plant_missing_sync),
               "row_sums launch");
    return {dsums.to_host(), dtotal.to_host()[0]};
}

void test_kernels()
{
    std::mt19937 rng(7);
    {
        const int64_t n = 10007;  // 8 blocks of 256 threads: each thread loops about 5 times
        const auto a = random_floats(n, rng), b = random_floats(n, rng);
        std::vector<float> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
        DeviceBuffer<float> da(a), db(b), dout(n);
        check_call(emu_test::add(dout.get(), da.get(), db.get(), n, 8), "add launch");
        expect_close("add", dout.to_host(), want, 0.0);
    }
    {
        const int rows = 37, cols = 1000;  // 8 blocks: each reduces 4 or 5 rows
        const auto x = random_floats(size_t(rows) * cols, rng);
        std::vector<double> want(rows, 0.0);
        double total = 0;
        for (int r = 0; r < rows; ++r) {
            for (int c = 0; c < cols; ++c) want[r] += x[size_t(r) * cols + c];
            total += want[r];
        }
        const RowSums got = run_row_sums(x, rows, cols, false);
        expect_close("row_sum", got.sums, want, 1e-5);
        expect_close("row_sum_total", std::vector<float>{got.total}, std::vector<double>{total}, 1e-5);

        const RowSums planted = run_row_sums(x, rows, cols, true);
        const bool wrong = worst_error(planted.sums, want) > 1e-5;
        std::printf("PLANTED row_sum_missing_sync %s  max rel err %.3g\n", wrong ? "WRONG" : "correct",
                    worst_error(planted.sums, want));
    }
    {
        const int M = 67, N = 45, K = 83;  // not multiples of the 16x16 tile
        const auto A = random_floats(size_t(M) * K, rng), B = random_floats(size_t(K) * N, rng);
        DeviceBuffer<float> dA(A), dB(B), dC(size_t(M) * N);
        check_call(emu_test::matmul_tiled(dC.get(), dA.get(), dB.get(), M, N, K), "matmul launch");
        expect_close("matmul_tiled", dC.to_host(), matmul_reference(A, B, M, N, K), 1e-5);
    }
    {
        const int n = 1000, threads = 96;  // 3 warps per block; the last chunk is 40 long
        const auto in = random_floats(n, rng);
        std::vector<float> want(n);
        for (int base = 0; base < n; base += threads) {
            const int len = std::min(threads, n - base);
            for (int t = 0; t < len; ++t) want[base + t] = in[base + len - 1 - t];
        }
        DeviceBuffer<float> din(in), dout(n);
        check_call(emu_test::block_reverse(dout.get(), din.get(), n, threads), "block_reverse launch");
        expect_close("block_reverse_dynamic_shared", dout.to_host(), want, 0.0);
    }
    {
        const int n = 64;  // two warps
        std::vector<int> want(8 * n);
        std::vector<double> want_xor(n);
        unsigned ballot = 0;
        for (int j = 0; j < 32; ++j)
            if (j % 3 == 0) ballot |= 1u << j;
        for (int t = 0; t < n; ++t) {
            const int lane = t % 32;
            want[0 * n + t] = 30;
            want[1 * n + t] = lane >= 2 ? lane - 2 : lane;
            want[2 * n + t] = lane % 8 + 1 < 8 ? lane + 1 : lane;
            want[3 * n + t] = lane ^ 4;
            want[4 * n + t] = int(ballot);
            want[5 * n + t] = t / 32 == 1;  // thread 40 is in warp 1
            want[6 * n + t] = 0;
            want[7 * n + t] = int(0xffffffffu);
            want_xor[t] = (lane ^ 1) + 0.25;
        }
        DeviceBuffer<int> dout(8 * n);
        DeviceBuffer<double> dxor(n);
        check_call(emu_test::warp_intrinsics(dout.get(), dxor.get(), n), "warp_intrinsics launch");
        expect_close("warp_intrinsics", dout.to_host(), want, 0.0);
        expect_close("warp_shuffle_double", dxor.to_host(), want_xor, 0.0);
    }
    {
        const unsigned blocks = 4;  // 1024 threads
        DeviceBuffer<int> ints(std::vector<int>(11, 0));
        DeviceBuffer<unsigned long long> sum(std::vector<unsigned long long>{0});
        DeviceBuffer<long long> min_neg(std::vector<long long>{0});
        DeviceBuffer<double> halves(std::vector<double>{0});
        check_call(emu_test::atomics(ints.get(), sum.get(), min_neg.get(), halves.get(), blocks), "atomics launch");
        std::vector<int> want(11, 128);  // 1024 / 8 per histogram bin
        want[8] = 1023;
        const int winner = ints.to_host()[9];  // any thread may win, but only one
        want[9] = winner >= 1 && winner <= 1024 ? winner : -1;
        want[10] = 1;
        const bool scalars = sum.to_host()[0] == 1023ull * 1024 / 2 && min_neg.to_host()[0] == -1023 &&
                             halves.to_host()[0] == 512.0;
        expect(scalars && worst_error(ints.to_host(), want) == 0, "atomics");
    }
}

#if MT_CUDA_EMULATED
// ---- emulator-only: kernels that are wrong on purpose (on a GPU some would hang) ----

__global__ void mark_kernel(int* out) { out[threadIdx.x] = 1; }

__global__ void divergent_barrier_kernel(int* out)
{
    if (threadIdx.x < 32)
        __syncthreads();
    else
        __syncthreads();  // a different barrier
    out[threadIdx.x] = 1;
}

__global__ void exit_before_barrier_kernel(int* out)
{
    if (threadIdx.x >= 16) return;
    __syncthreads();
    out[threadIdx.x] = 1;
}

// Lanes 0-15 wait at the barrier; lanes 16-31 in a shuffle that waits for lanes 0-15.
__global__ void deadlock_kernel(int* out)
{
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        __syncthreads();
    else
        v = __shfl_down_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}

// 48 threads: warp 1 has lanes 0-15 only, so its lanes 8-15 shuffle from lanes that
// do not exist.
__global__ void shuffle_inactive_kernel(float* out) { out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1.0f, 8); }

// Lane 5 syncs with a mask that names only lane 0.
__global__ void mask_without_caller_kernel(int* out)
{
    if (threadIdx.x == 5) __syncwarp(0x1u);
    out[threadIdx.x] = 1;
}

// For the AddressSanitizer build: each touches one element past the end, after a
// barrier, i.e. on a fiber that has been switched away from and back.
__global__ void heap_overflow_kernel(float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    __syncthreads();
    if (i <= n) out[i] = 1.f;  // should be i < n
}

__global__ void stack_overflow_kernel(int* out, int k)
{
    int local[8];
    for (int i = 0; i < 8; ++i) local[i] = out[i];
    __syncthreads();
    out[threadIdx.x] = local[k];  // k == 8
}

int plant_out_of_bounds(const char* kind)
{
    DeviceBuffer<float> f(100);
    DeviceBuffer<int> d(64);
    check_call(cudaMemset(d.get(), 0, 64 * sizeof(int)), "cudaMemset");
    if (!std::strcmp(kind, "heap"))
        MT_LAUNCH(4, 32, 0, 0, heap_overflow_kernel)(f.get(), 100);
    else
        MT_LAUNCH(1, 32, 0, 0, stack_overflow_kernel)(d.get(), 8);
    std::printf("out-of-bounds kernel (%s) ran without a sanitizer report\n", kind);
    return 0;
}

template <class F>
long diagnostics_during(F&& f)
{
    const long before = emu::diagnostic_count();
    f();
    return emu::diagnostic_count() - before;
}

void test_emulator_checks()
{
    static_assert(emu::is_emulated());
    {
        DeviceBuffer<int> out(64);
        check_call(cudaMemset(out.get(), 0, 64 * sizeof(int)), "cudaMemset");
        bool all_refused = true;
        const dim3 bad_blocks[] = {dim3(2048), dim3(0), dim3(32, 32, 2), dim3(1, 1, 65)};
        for (dim3 block : bad_blocks) {
            MT_LAUNCH(1, block, 0, 0, mark_kernel)(out.get());
            all_refused &= cudaGetLastError() == cudaErrorInvalidConfiguration;
        }
        MT_LAUNCH(dim3(1, 0), 32, 0, 0, mark_kernel)(out.get());
        all_refused &= cudaGetLastError() == cudaErrorInvalidConfiguration;
        const auto host = out.to_host();
        const bool none_ran = std::all_of(host.begin(), host.end(), [](int v) { return v == 0; });
        expect(all_refused && none_ran && cudaGetLastError() == cudaSuccess, "invalid_configuration");
    }
    {
        void* p = reinterpret_cast<void*>(1);
        const cudaError_t e = cudaMalloc(&p, SIZE_MAX / 2);
        const bool sticky_once = cudaGetLastError() == cudaErrorMemoryAllocation && cudaGetLastError() == cudaSuccess;
        expect(e == cudaErrorMemoryAllocation && p == nullptr && sticky_once, "out_of_memory");
    }
    {
        int count = 0;
        size_t free_b = 0, total_b = 0;
        check_call(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
        check_call(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        const size_t ram = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE));
        const bool devices =
            count == 1 && cudaSetDevice(0) == cudaSuccess && cudaSetDevice(1) == cudaErrorInvalidDevice;
        cudaGetLastError();
        expect(devices && total_b == ram && free_b > 0 && free_b <= total_b, "device_api");
    }
    {
        DeviceBuffer<int> out(64);
        const long n = diagnostics_during([&] { MT_LAUNCH(1, 64, 0, 0, divergent_barrier_kernel)(out.get()); });
        const auto host = out.to_host();
        expect(n == 1 && cudaGetLastError() == cudaSuccess && host[0] == 1 && host[63] == 1,
               "reports_divergent_barrier", std::to_string(n) + " reports");
    }
    {
        DeviceBuffer<int> out(64);
        const long n = diagnostics_during([&] { MT_LAUNCH(1, 64, 0, 0, exit_before_barrier_kernel)(out.get()); });
        expect(n == 1 && cudaGetLastError() == cudaSuccess && out.to_host()[15] == 1, "reports_exit_before_barrier",
               std::to_string(n) + " reports");
    }
    {
        DeviceBuffer<int> out(32);
        const long n = diagnostics_during([&] { MT_LAUNCH(2, 32, 0, 0, deadlock_kernel)(out.get()); });
        const bool failed = cudaGetLastError() == cudaErrorLaunchFailure;
        // The emulator stays usable after abandoning the deadlocked launch.
        MT_LAUNCH(1, 32, 0, 0, mark_kernel)(out.get());
        const bool recovered = cudaGetLastError() == cudaSuccess && out.to_host()[31] == 1;
        expect(n == 1 && failed && recovered, "reports_deadlock", std::to_string(n) + " reports");
    }
    {
        DeviceBuffer<float> out(48);
        const long n = diagnostics_during([&] { MT_LAUNCH(1, 48, 0, 0, shuffle_inactive_kernel)(out.get()); });
        const auto host = out.to_host();
        const bool values = host[0] == 1.f && host[32 + 7] == 1.f && std::isnan(host[32 + 8]) && std::isnan(host[47]);
        expect(n == 8 && values, "reports_shuffle_from_inactive_lane", std::to_string(n) + " reports");
    }
    {
        DeviceBuffer<int> out(32);
        const long n = diagnostics_during([&] { MT_LAUNCH(1, 32, 0, 0, mask_without_caller_kernel)(out.get()); });
        expect(n == 1 && out.to_host()[5] == 1, "reports_mask_without_caller", std::to_string(n) + " reports");
    }
}
#endif

int bench()
{
    const int n = 256;
    std::mt19937 rng(1);
    const auto A = random_floats(size_t(n) * n, rng), B = random_floats(size_t(n) * n, rng);
    DeviceBuffer<float> dA(A), dB(B), dC(size_t(n) * n);
    const auto start = std::chrono::steady_clock::now();
    check_call(emu_test::matmul_tiled(dC.get(), dA.get(), dB.get(), n, n, n), "matmul launch");
    check_call(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("BENCH matmul_tiled %dx%dx%d: %.3f s\n", n, n, n, seconds);
    expect_close("matmul_tiled_256", dC.to_host(), matmul_reference(A, B, n, n, n), 1e-5);
    return g_failed != 0;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && !std::strcmp(argv[1], "--bench")) return bench();
#if MT_CUDA_EMULATED
    if (argc > 2 && !std::strcmp(argv[1], "--plant-out-of-bounds")) return plant_out_of_bounds(argv[2]);
#endif
    test_kernels();
#if MT_CUDA_EMULATED
    // The correct kernels above must not have caused a single report.
    expect(emu::diagnostic_count() == 0, "no_reports_for_correct_kernels",
           std::to_string(emu::diagnostic_count()) + " reports");
    test_emulator_checks();
#endif
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed != 0;
}
