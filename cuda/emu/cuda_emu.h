// cuda_emu.h — runs minitorch's CUDA kernels on the CPU, so a machine without a GPU
// (CI, a student's laptop) still executes every kernel's logic.
//
// cuda_compat.h includes this header when a .cu file is compiled by the host C++
// compiler (g++ -std=c++20 -x c++) instead of nvcc. It provides:
//   * the CUDA keywords (__global__, __device__, __shared__, ...), dim3, and
//     threadIdx / blockIdx / blockDim / gridDim as thread-local variables;
//   * the part of the runtime API minitorch calls (cudaMalloc, cudaMemcpy, ...), on
//     host memory;
//   * device intrinsics: a little math, atomics, __syncthreads() and warp functions;
//   * emu::launch, which MT_LAUNCH(...) becomes.
//
// How a launch runs
//   The blocks of the grid run one after another on the calling thread. The threads
//   of a block are fibers (ucontext; Boost.Context if EMU_BOOST_CONTEXT is defined)
//   that take turns: a thread runs until it reaches __syncthreads() or a warp
//   function, or returns. Once every thread has stopped, the scheduler releases the
//   barrier or completes the warp operations, and the next round begins.
//   MINITORCH_EMU_SCHEDULE=forward|reverse|random:SEED (read at the first launch; later
//   emu::set_schedule()) is the order of the threads within a round. A kernel that
//   lacks a barrier depends on that order, so running it under several schedules makes
//   the missing barrier show.
//   Under those, warps advance in step (one round per warp operation), so a warp that
//   reads shared memory another warp wrote before a shared warp operation (__syncwarp,
//   a shuffle, wmma) always sees the write, barrier or not. MINITORCH_EMU_SCHEDULE=warps
//   (or warps-reverse) runs one warp at a time instead, in increasing (decreasing) warp
//   order: a warp runs, lanes in order, completing its own warp operations, until all
//   its threads wait at __syncthreads() or have returned; then the next warp; then the
//   barrier is released. So a warp reading another warp's writes with no
//   __syncthreads() between runs wholly before the writer under one of the two
//   (warps-reverse when the writer is the lower warp), and reads stale values.
//   Since no two blocks overlap, `__shared__` is simply a function-local `static`.
//
// What it reports (stderr; counted by emu::diagnostic_count())
//   threads of a block waiting at different __syncthreads() calls; a __syncthreads()
//   that some threads exited before; deadlocks (the launch then fails with
//   cudaErrorLaunchFailure); shuffles that read a lane not taking part; warp
//   functions whose mask leaves out the caller. A launch with an invalid
//   configuration does not run and sets cudaErrorInvalidConfiguration.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define MT_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MT_EMU_ASAN 1
#endif
#endif
#ifndef MT_EMU_ASAN
#define MT_EMU_ASAN 0
#endif

// Boost.Context switches fibers without a system call (ucontext's swapcontext makes
// one to save the signal mask): over ten times faster. Under AddressSanitizer we
// stay with ucontext, which ASan knows how to follow.
#if (defined(EMU_BOOST_CONTEXT) || defined(MINITORCH_EMU_BOOST_CONTEXT)) && !MT_EMU_ASAN
#define MT_EMU_BOOST 1
#include <boost/context/fiber.hpp>
#else
#define MT_EMU_BOOST 0
#include <ucontext.h>
#endif

#if MT_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// ---------------------------------------------------------------- counters
// MT_EMU_COUNTERS=1 only in the counting build of a students' RawKernel library
// (counters.h, counters_runtime.h): there the hooks below feed the memory and branch
// counters. Everywhere else (minitorch's own kernels, ordinary RawKernel builds) they are
// empty, so counting costs nothing when it is off.
#ifndef MT_EMU_COUNTERS
#define MT_EMU_COUNTERS 0
#endif
#if MT_EMU_COUNTERS
extern "C" {
void mt_cnt_block_begin(unsigned threads, uintptr_t dynamic_lo, uintptr_t dynamic_hi);
void mt_cnt_block_end();
void mt_cnt_barrier();
void mt_cnt_thread_start(unsigned t);
}
#define MT_EMU_COUNT_BLOCK_BEGIN(threads, shared, bytes) \
    mt_cnt_block_begin(threads, uintptr_t(shared), uintptr_t(shared) + (bytes))
#define MT_EMU_COUNT_BLOCK_END() mt_cnt_block_end()
#define MT_EMU_COUNT_BARRIER() mt_cnt_barrier()
#define MT_EMU_COUNT_THREAD_START(t) mt_cnt_thread_start(t)
// In an atomic function (not inlined in the counting build, which is -O0): its caller's
// address tells one atomic instruction of the kernel from another.
#define MT_EMU_COUNT_ATOMIC(p) ::emu::detail::count_atomic((const void*)(p), __builtin_return_address(0))
namespace emu::detail {
void count_atomic(const void* p, const void* pc);
}
#else
#define MT_EMU_COUNT_BLOCK_BEGIN(threads, shared, bytes) ((void)0)
#define MT_EMU_COUNT_BLOCK_END() ((void)0)
#define MT_EMU_COUNT_BARRIER() ((void)0)
#define MT_EMU_COUNT_THREAD_START(t) ((void)0)
#define MT_EMU_COUNT_ATOMIC(p) ((void)0)
#endif

// ---------------------------------------------------------------- the language
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __constant__
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static  // one copy, used by one block at a time
#ifndef __restrict__
#define __restrict__ __restrict  // g++ knows both spellings; kept for readers
#endif

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

// Set by the scheduler before it switches to a thread; fibers run on the launching
// OS thread, so thread-local is right for them and for several host threads.
inline thread_local dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim, gridDim;
constexpr int warpSize = 32;

// ---------------------------------------------------------------- runtime API
enum cudaError_t {  // the numbers are CUDA's
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorLaunchFailure = 719,
};
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};
struct CUstream_st;  // never defined: there is one stream, and it is synchronous
using cudaStream_t = CUstream_st*;

namespace emu {

constexpr bool is_emulated() { return true; }

namespace detail {

inline thread_local cudaError_t last_error = cudaSuccess;  // per host thread, as in CUDA

inline cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

inline size_t physical_memory(bool available_only)
{
    const long pages = sysconf(available_only ? _SC_AVPHYS_PAGES : _SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
}

}  // namespace detail
}  // namespace emu

inline cudaError_t cudaGetLastError()
{
    const cudaError_t e = emu::detail::last_error;
    emu::detail::last_error = cudaSuccess;
    return e;
}
inline cudaError_t cudaPeekAtLastError() { return emu::detail::last_error; }

inline const char* cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unknown error";
}

inline cudaError_t cudaGetDeviceCount(int* count)
{
    if (!count) return emu::detail::fail(cudaErrorInvalidValue);
    *count = 1;  // the CPU
    return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : emu::detail::fail(cudaErrorInvalidDevice);
}
inline cudaError_t cudaGetDevice(int* device)
{
    if (!device) return emu::detail::fail(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

// "Device memory" is host memory: free = what the OS reports free now, total = RAM.
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes)
{
    if (!free_bytes || !total_bytes) return emu::detail::fail(cudaErrorInvalidValue);
    *free_bytes = emu::detail::physical_memory(true);
    *total_bytes = emu::detail::physical_memory(false);
    return cudaSuccess;
}

// Exactly `bytes` long (not rounded up), so AddressSanitizer flags the first byte past
// the end, as compute-sanitizer would on a GPU. 256-byte aligned like cudaMalloc.
inline cudaError_t cudaMalloc(void** ptr, size_t bytes)
{
    if (!ptr) return emu::detail::fail(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (bytes == 0) return cudaSuccess;
    if (bytes > emu::detail::physical_memory(false)) return emu::detail::fail(cudaErrorMemoryAllocation);
    void* p = nullptr;
    if (posix_memalign(&p, 256, bytes) != 0) return emu::detail::fail(cudaErrorMemoryAllocation);
    *ptr = p;
    return cudaSuccess;
}
template <class T>
cudaError_t cudaMalloc(T** ptr, size_t bytes)
{
    return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
inline cudaError_t cudaFree(void* ptr)
{
    std::free(ptr);
    return cudaSuccess;
}

// Kernels have finished when their launch returns, so every copy is synchronous.
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind)
{
    if (unsigned(kind) > unsigned(cudaMemcpyDefault)) return emu::detail::fail(cudaErrorInvalidMemcpyDirection);
    if (bytes == 0) return cudaSuccess;
    if (!dst || !src) return emu::detail::fail(cudaErrorInvalidValue);
    std::memcpy(dst, src, bytes);  // overlapping ranges are undefined in CUDA too; ASan says so
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t = nullptr)
{
    return cudaMemcpy(dst, src, bytes, kind);
}
inline cudaError_t cudaMemset(void* dst, int value, size_t bytes)
{
    if (bytes == 0) return cudaSuccess;
    if (!dst) return emu::detail::fail(cudaErrorInvalidValue);
    std::memset(dst, value, bytes);
    return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t = nullptr)
{
    return cudaMemset(dst, value, bytes);
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

// Streams and events. Every launch and copy has finished when it returns, so a stream is
// only a handle (never busy), and an event records the host's clock when it is recorded:
// the time between two events is the time the host spent on the work between them.
constexpr unsigned cudaStreamDefault = 0, cudaStreamNonBlocking = 1;
constexpr unsigned cudaEventDefault = 0, cudaEventBlockingSync = 1, cudaEventDisableTiming = 2;
constexpr unsigned cudaHostAllocDefault = 0;
struct CUevent_st {
    bool timing = true;
    bool recorded = false;
    std::chrono::steady_clock::time_point at;
};
using cudaEvent_t = CUevent_st*;

inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned, int)
{
    if (!stream) return emu::detail::fail(cudaErrorInvalidValue);
    *stream = reinterpret_cast<cudaStream_t>(new char);  // a distinct handle; nothing behind it
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    delete reinterpret_cast<char*>(stream);
    return cudaSuccess;
}
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned = 0)
{
    return event ? cudaSuccess : emu::detail::fail(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags)
{
    if (!event) return emu::detail::fail(cudaErrorInvalidValue);
    *event = new CUevent_st;
    (*event)->timing = !(flags & cudaEventDisableTiming);
    return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
inline cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t = nullptr)
{
    if (!event) return emu::detail::fail(cudaErrorInvalidResourceHandle);
    event->recorded = true;
    event->at = std::chrono::steady_clock::now();
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return event ? cudaSuccess : emu::detail::fail(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return event ? cudaSuccess : emu::detail::fail(cudaErrorInvalidResourceHandle);
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms || !start || !end) return emu::detail::fail(cudaErrorInvalidValue);
    if (!start->timing || !end->timing || !start->recorded || !end->recorded)
        return emu::detail::fail(cudaErrorInvalidResourceHandle);
    *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
    return cudaSuccess;
}

// "Pinned" host memory is ordinary host memory here: there is no DMA engine to lock it for.
inline cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned)
{
    if (!ptr) return emu::detail::fail(cudaErrorInvalidValue);
    *ptr = bytes ? std::malloc(bytes) : nullptr;
    return bytes && !*ptr ? emu::detail::fail(cudaErrorMemoryAllocation) : cudaSuccess;
}
inline cudaError_t cudaFreeHost(void* ptr)
{
    std::free(ptr);
    return cudaSuccess;
}

// ---------------------------------------------------------- device intrinsics
// CUDA's min/max accept mixed arithmetic types; the constraint keeps them out of the
// way of std::min/std::max on anything else. For floats they are fminf/fmaxf: a NaN
// argument gives the other one, whichever side it is on (a comparison alone would return
// the NaN from one side only, and the lanes of a warp_max would then disagree).
template <class A, class B>
    requires std::is_arithmetic_v<A> && std::is_arithmetic_v<B>
inline std::common_type_t<A, B> min(A a, B b)
{
    using C = std::common_type_t<A, B>;
    if constexpr (std::is_floating_point_v<C>) {
        if (C(a) != C(a)) return C(b);
        if (C(b) != C(b)) return C(a);
    }
    return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B>
    requires std::is_arithmetic_v<A> && std::is_arithmetic_v<B>
inline std::common_type_t<A, B> max(A a, B b)
{
    using C = std::common_type_t<A, B>;
    if constexpr (std::is_floating_point_v<C>) {
        if (C(a) != C(a)) return C(b);
        if (C(b) != C(b)) return C(a);
    }
    return C(a) < C(b) ? C(b) : C(a);
}

namespace emu::detail {
inline float fast_expf(float x) { return std::exp(x); }  // the GPU's are approximate; ours are exact
inline float fast_logf(float x) { return std::log(x); }
inline float fast_divide(float a, float b) { return a / b; }
}  // namespace emu::detail
// glibc declares C functions named __expf/__logf, so these are macros, not definitions
// (a definition would become an exported C symbol of that name).
#define __expf ::emu::detail::fast_expf
#define __logf ::emu::detail::fast_logf
#define __fdividef ::emu::detail::fast_divide
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
template <class T>
inline T __ldg(const T* p)
{
    return *p;
}

// Atomics: exactly the overloads nvcc has (checked against CUDA 13), so what compiles
// here compiles there. There is, for example, no atomicAdd on long long (use unsigned
// long long) and no atomicMax on float. One OS thread runs a whole launch, but
// std::atomic_ref keeps them atomic should host threads share the memory.
namespace emu::detail {
template <class T>
T fetch_add(T* p, T v)
{
    return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T>
T fetch_sub(T* p, T v)
{
    return std::atomic_ref<T>(*p).fetch_sub(v);
}
template <class T>
T exchange(T* p, T v)
{
    return std::atomic_ref<T>(*p).exchange(v);
}
template <class T>
T fetch_max(T* p, T v)
{
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (old < v && !a.compare_exchange_weak(old, v)) {}
    return old;
}
template <class T>
T fetch_min(T* p, T v)
{
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (v < old && !a.compare_exchange_weak(old, v)) {}
    return old;
}
template <class T>
T compare_and_swap(T* p, T expected, T desired)
{
    std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
    return expected;  // the old value, whether or not it was replaced
}
}  // namespace emu::detail

inline int atomicAdd(int* p, int v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_add(p, v);
}
inline unsigned atomicAdd(unsigned* p, unsigned v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_add(p, v);
}
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_add(p, v);
}
inline float atomicAdd(float* p, float v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_add(p, v);
}
inline double atomicAdd(double* p, double v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_add(p, v);
}
inline int atomicSub(int* p, int v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_sub(p, v);
}
inline unsigned atomicSub(unsigned* p, unsigned v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_sub(p, v);
}
inline int atomicExch(int* p, int v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::exchange(p, v);
}
inline unsigned atomicExch(unsigned* p, unsigned v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::exchange(p, v);
}
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::exchange(p, v);
}
inline float atomicExch(float* p, float v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::exchange(p, v);
}
inline int atomicMax(int* p, int v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_max(p, v);
}
inline unsigned atomicMax(unsigned* p, unsigned v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_max(p, v);
}
inline long long atomicMax(long long* p, long long v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_max(p, v);
}
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_max(p, v);
}
inline int atomicMin(int* p, int v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_min(p, v);
}
inline unsigned atomicMin(unsigned* p, unsigned v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_min(p, v);
}
inline long long atomicMin(long long* p, long long v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_min(p, v);
}
inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::fetch_min(p, v);
}
inline int atomicCAS(int* p, int expected, int desired)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::compare_and_swap(p, expected, desired);
}
inline unsigned atomicCAS(unsigned* p, unsigned expected, unsigned desired)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::compare_and_swap(p, expected, desired);
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected, unsigned long long desired)
{
    MT_EMU_COUNT_ATOMIC(p);
    return emu::detail::compare_and_swap(p, expected, desired);
}

// Says nothing about the GPU's memory model: one OS thread runs the whole launch.
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// ------------------------------------------------------------------ scheduler
namespace emu {
namespace detail {

constexpr unsigned kMaxThreads = 1024;  // per block, as on every current GPU
// Each fiber's stack. Kernels keep little on the stack; ASan's red zones and error
// reports (which run on the fiber's stack) need more. -DMT_EMU_STACK_KIB=n to change.
#ifndef MT_EMU_STACK_KIB
#define MT_EMU_STACK_KIB (MT_EMU_ASAN ? 128 : 64)
#endif
constexpr size_t kStackBytes = size_t(MT_EMU_STACK_KIB) * 1024;
constexpr int kReportsPerLaunch = 10;  // then only counted

inline std::atomic<long> diagnostics{0};
inline thread_local int reports_this_launch = -1;  // -1: not inside a launch

__attribute__((format(printf, 1, 2))) inline void report(const char* format, ...)
{
    ++diagnostics;
    if (reports_this_launch >= 0 && reports_this_launch++ >= kReportsPerLaunch) return;
    std::va_list args;
    va_start(args, format);
    std::fputs("cuda_emu: ", stderr);
    std::vfprintf(stderr, format, args);
    std::fputc('\n', stderr);
    va_end(args);
}

struct Schedule {
    // Warps and WarpsReverse run one warp at a time (see run_block_by_warps).
    enum Kind { Forward, Reverse, Random, Warps, WarpsReverse } kind = Forward;
    uint64_t seed = 1;
};

// Reads "forward", "reverse", "random:SEED", "warps" or "warps-reverse" into s; false
// (s unchanged) for anything else.
inline bool parse_schedule(const char* text, Schedule& s)
{
    if (!std::strcmp(text, "forward")) {
        s = Schedule{};
        return true;
    }
    if (!std::strcmp(text, "reverse")) {
        s = Schedule{Schedule::Reverse, 1};
        return true;
    }
    if (!std::strcmp(text, "warps")) {
        s = Schedule{Schedule::Warps, 1};
        return true;
    }
    if (!std::strcmp(text, "warps-reverse")) {
        s = Schedule{Schedule::WarpsReverse, 1};
        return true;
    }
    if (!std::strncmp(text, "random:", 7) && text[7] >= '0' && text[7] <= '9') {
        char* end = nullptr;
        const uint64_t seed = std::strtoull(text + 7, &end, 10);
        if (*end == '\0') {
            s = Schedule{Schedule::Random, seed};
            return true;
        }
    }
    return false;
}

// The schedule of every launch: MINITORCH_EMU_SCHEDULE when the first launch runs, then
// whatever emu::set_schedule() says (minitorch.cuda.emulator_schedule in Python).
inline Schedule& schedule()
{
    static Schedule s = [] {
        Schedule parsed;
        const char* text = std::getenv("MINITORCH_EMU_SCHEDULE");
        if (text && *text && !parse_schedule(text, parsed))
            report("MINITORCH_EMU_SCHEDULE=%s not understood (want forward, reverse, random:SEED, warps or "
                   "warps-reverse); using forward",
                   text);
        return parsed;
    }();
    return s;
}

enum class State : uint8_t { Ready, AtBarrier, AtWarpOp, Exited };
enum class WarpOp : uint8_t { Sync, Shfl, ShflUp, ShflDown, ShflXor, Ballot, Any, All };

// A fiber stack from mmap, with an inaccessible page below it: a kernel that overflows
// its stack gets a segfault rather than quietly corrupting a neighbour's.
class Stack {
public:
    Stack()
    {
        guard_ = size_t(sysconf(_SC_PAGESIZE));
        void* m = mmap(nullptr, guard_ + kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                       -1, 0);
        if (m == MAP_FAILED) {
            std::perror("cuda_emu: mmap of a fiber stack");
            std::abort();
        }
        mprotect(m, guard_, PROT_NONE);
        map_ = static_cast<char*>(m);
    }
    ~Stack() { munmap(map_, guard_ + kStackBytes); }
    Stack(const Stack&) = delete;
    Stack& operator=(const Stack&) = delete;
    char* bottom() const { return map_ + guard_; }  // lowest usable address
    char* top() const { return bottom() + kStackBytes; }

private:
    char* map_ = nullptr;
    size_t guard_ = 0;
};

#if MT_EMU_BOOST
// Hands Boost.Context our (reused) stack instead of allocating one per fiber.
struct BorrowedStack {
    Stack* stack;
    boost::context::stack_context allocate()
    {
        boost::context::stack_context sc;
        sc.sp = stack->top();
        sc.size = kStackBytes;
        return sc;
    }
    void deallocate(boost::context::stack_context&) noexcept {}
};
#endif

// One CUDA thread of the block being run.
struct Fiber {
    std::unique_ptr<Stack> stack;  // first member, so destroyed last
#if MT_EMU_BOOST
    boost::context::fiber self;       // resume() runs this thread
    boost::context::fiber scheduler;  // inside the thread: resume() goes back
#else
    ucontext_t context{};
#endif
    dim3 index;
    unsigned lane = 0, warp = 0;
    State state = State::Exited;
    const char* barrier_file = nullptr;  // where it waits, for reports
    int barrier_line = 0;
    WarpOp op = WarpOp::Sync;  // the warp operation it waits in, and its operands
    unsigned mask = 0;
    int arg = 0, width = 32;
    uint64_t value = 0, result = 0;
#if MT_EMU_ASAN
    void* fake_stack = nullptr;
#endif
};

inline thread_local Fiber* current = nullptr;  // the CUDA thread running now, if any
inline thread_local unsigned char* dynamic_shared = nullptr;

#if MT_EMU_COUNTERS
extern "C" void mt_cnt_atomic(unsigned t, uintptr_t pc, uintptr_t addr);
inline void count_atomic(const void* p, const void* pc)
{
    if (current) mt_cnt_atomic(current->warp * 32 + current->lane, uintptr_t(pc), uintptr_t(p));
}
#endif

// Runs launches, one at a time (static __shared__ arrays exist once).
struct Runner {
    std::mutex mutex;
    std::unique_ptr<Fiber[]> fibers{new Fiber[kMaxThreads]};  // never moved: a ucontext points into itself
    unsigned count = 0;                                         // threads per block in this launch
    std::vector<unsigned> order;                                // the schedule of one round
    void (*body)(const void*) = nullptr;                        // runs the kernel with its arguments
    const void* args = nullptr;
    bool kernel_threw = false;
#if !MT_EMU_BOOST
    ucontext_t scheduler{};
#endif
#if MT_EMU_ASAN
    const void* scheduler_stack = nullptr;
    size_t scheduler_stack_size = 0;
#endif
};

inline Runner& runner()
{
    static Runner r;
    return r;
}

// ---- switching between the scheduler and a thread ----
// The ASan calls tell it which stack we are on, so it checks the right red zones.

inline void run_thread_body(Fiber& f)
{
    Runner& r = runner();
    try {
        r.body(r.args);
    }
#if MT_EMU_BOOST
    catch (const boost::context::detail::forced_unwind&) {
        throw;  // Boost unwinding a thread that never finished (after a deadlock)
    }
#endif
    catch (...) {
        report("block (%u,%u,%u) thread (%u,%u,%u): the kernel threw a C++ exception", blockIdx.x, blockIdx.y,
               blockIdx.z, f.index.x, f.index.y, f.index.z);
        r.kernel_threw = true;
    }
    f.state = State::Exited;
}

#if !MT_EMU_BOOST
inline void fiber_main()
{
    Runner& r = runner();
    Fiber& f = *current;
#if MT_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &r.scheduler_stack, &r.scheduler_stack_size);
#endif
    run_thread_body(f);
#if MT_EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, r.scheduler_stack, r.scheduler_stack_size);  // this stack is done
#endif
    swapcontext(&f.context, &r.scheduler);
}
#endif

// Prepares f to start the kernel from the top on its own stack.
inline void start(Fiber& f)
{
    f.state = State::Ready;
    MT_EMU_COUNT_THREAD_START(f.warp * 32 + f.lane);
#if MT_EMU_BOOST
    f.self = boost::context::fiber(std::allocator_arg, BorrowedStack{f.stack.get()},
                                   [&f](boost::context::fiber&& scheduler) {
                                       f.scheduler = std::move(scheduler);
                                       run_thread_body(f);
                                       return std::move(f.scheduler);
                                   });
#else
    f.context.uc_stack.ss_sp = f.stack->bottom();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = nullptr;
    makecontext(&f.context, fiber_main, 0);
#if MT_EMU_ASAN
    // ASan's swapcontext wipes the shadow of the stack named in uc_stack on every
    // switch, which would erase the red zones around the thread's locals. makecontext
    // has used uc_stack already, so forget it, and start from a clean shadow instead.
    f.context.uc_stack.ss_sp = nullptr;
    f.context.uc_stack.ss_size = 0;
    __asan_unpoison_memory_region(f.stack->bottom(), kStackBytes);
#endif
#endif
}

// Scheduler -> thread f, until f stops again.
inline void resume(Fiber& f)
{
    current = &f;
    threadIdx = f.index;
#if MT_EMU_ASAN
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, f.stack->bottom(), kStackBytes);
#endif
#if MT_EMU_BOOST
    f.self = std::move(f.self).resume();
#else
    swapcontext(&runner().scheduler, &f.context);
#endif
#if MT_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
    current = nullptr;
}

// Thread f -> scheduler; returns when the scheduler resumes f.
inline void yield(Fiber& f)
{
    [[maybe_unused]] Runner& r = runner();
#if MT_EMU_ASAN
    __sanitizer_start_switch_fiber(&f.fake_stack, r.scheduler_stack, r.scheduler_stack_size);
#endif
#if MT_EMU_BOOST
    f.scheduler = std::move(f.scheduler).resume();
#else
    swapcontext(&f.context, &r.scheduler);
#endif
#if MT_EMU_ASAN
    __sanitizer_finish_switch_fiber(f.fake_stack, &r.scheduler_stack, &r.scheduler_stack_size);
#endif
}

// ---- warp operations ----

// The lane a shuffle reads, with CUDA's rules: `width` splits the warp into segments;
// up/down that would leave the segment read the caller's own value; xor may reach a
// lower segment but not a higher one; an index is taken modulo width.
inline unsigned source_lane(WarpOp op, unsigned lane, int arg, unsigned width)
{
    const unsigned base = lane / width * width, offset = lane % width;
    switch (op) {
    case WarpOp::Shfl: return base + unsigned(arg) % width;
    case WarpOp::ShflUp: return offset >= unsigned(arg) ? lane - unsigned(arg) : lane;
    case WarpOp::ShflDown: return offset + unsigned(arg) < width ? lane + unsigned(arg) : lane;
    case WarpOp::ShflXor: {
        const unsigned src = lane ^ unsigned(arg);
        return src < base + width ? src : lane;
    }
    default: return lane;
    }
}

// Completes each warp operation of the warp starting at thread `first` whose lanes have
// all arrived (lanes of the mask that exited, or that the block does not have, are not
// waited for). True if any completed.
inline bool complete_warp_ops_of(Runner& r, unsigned first)
{
    bool progressed = false;
    Fiber* w = &r.fibers[first];
    const unsigned lanes = std::min(32u, r.count - first);
    for (unsigned i = 0; i < lanes; ++i) {
        if (w[i].state != State::AtWarpOp) continue;
        const WarpOp op = w[i].op;
        const unsigned mask = w[i].mask;
        auto joined = [&](const Fiber& g) { return g.state == State::AtWarpOp && g.op == op && g.mask == mask; };
        bool complete = true;
        for (unsigned j = 0; j < lanes && complete; ++j)
            if ((mask >> j & 1u) && w[j].state != State::Exited && !joined(w[j])) complete = false;
        if (!complete) continue;

        uint32_t ballot = 0, members = 0;
        for (unsigned j = 0; j < lanes; ++j)
            if (joined(w[j])) {
                members |= 1u << j;
                if (w[j].value) ballot |= 1u << j;
            }
        for (unsigned j = 0; j < lanes; ++j) {
            Fiber& g = w[j];
            if (!joined(g)) continue;
            switch (op) {
            case WarpOp::Sync: break;
            case WarpOp::Ballot: g.result = ballot; break;
            case WarpOp::Any: g.result = ballot != 0; break;
            case WarpOp::All: g.result = ballot == members; break;
            default: {
                const unsigned src = source_lane(op, j, g.arg, unsigned(g.width));
                if (src < lanes && (members >> src & 1u)) {
                    g.result = w[src].value;
                } else {
                    g.result = ~uint64_t(0);  // NaN as a float or double, -1 as an integer
                    report("block (%u,%u,%u) warp %u: lane %u shuffles from lane %u, which is not taking part "
                           "(undefined on a GPU)",
                           blockIdx.x, blockIdx.y, blockIdx.z, g.warp, j, src);
                }
            }
            }
        }
        for (unsigned j = 0; j < lanes; ++j)
            if (joined(w[j])) w[j].state = State::Ready;  // after the loop above: it reads `joined`
        progressed = true;
    }
    return progressed;
}

// The same for every warp of the block. True if any operation completed.
inline bool complete_warp_ops(Runner& r)
{
    bool progressed = false;
    for (unsigned first = 0; first < r.count; first += 32)
        if (complete_warp_ops_of(r, first)) progressed = true;
    return progressed;
}

enum class BarrierOutcome { Done, Released, Deadlock };

// Called when no thread of the block can run and no warp operation can complete: every
// thread has exited (Done), or waits at __syncthreads(), which is released (Released,
// after reporting threads at different barriers or exited before it), or some wait in
// warp operations that can never complete (Deadlock, reported).
inline BarrierOutcome release_barrier(Runner& r)
{
    unsigned live = 0, at_barrier = 0;
    const Fiber *first = nullptr, *other = nullptr;  // two different barriers, if any
    for (unsigned t = 0; t < r.count; ++t) {
        const Fiber& f = r.fibers[t];
        if (f.state == State::Exited) continue;
        ++live;
        if (f.state != State::AtBarrier) continue;
        ++at_barrier;
        if (!first)
            first = &f;
        else if (!other && (f.barrier_line != first->barrier_line ||
                             std::strcmp(f.barrier_file, first->barrier_file) != 0))
            other = &f;
    }
    if (live == 0) return BarrierOutcome::Done;
    if (at_barrier == live) {
        if (other)
            report("block (%u,%u,%u): threads wait at different __syncthreads() calls (%s:%d and %s:%d)",
                   blockIdx.x, blockIdx.y, blockIdx.z, first->barrier_file, first->barrier_line,
                   other->barrier_file, other->barrier_line);
        if (live < r.count)
            report("block (%u,%u,%u): %u of %u threads exited before reaching __syncthreads() at %s:%d", blockIdx.x,
                   blockIdx.y, blockIdx.z, r.count - live, r.count, first->barrier_file, first->barrier_line);
        for (unsigned t = 0; t < r.count; ++t)
            if (r.fibers[t].state == State::AtBarrier) r.fibers[t].state = State::Ready;
        MT_EMU_COUNT_BARRIER();
        return BarrierOutcome::Released;
    }
    char where[256] = "";
    if (first) std::snprintf(where, sizeof where, " at %s:%d", first->barrier_file, first->barrier_line);
    report("block (%u,%u,%u): deadlock: %u threads wait at __syncthreads()%s, %u in warp operations that can "
           "never complete; the launch fails",
           blockIdx.x, blockIdx.y, blockIdx.z, at_barrier, where, live - at_barrier);
    return BarrierOutcome::Deadlock;
}

// The "warps" and "warps-reverse" schedules: the warps of the block take turns. The
// current warp's threads run (in lane order) round after round, its warp operations
// completing as soon as its own lanes have arrived, until each of them waits at
// __syncthreads() or has returned; then the next warp runs. Once all have stopped, the
// barrier is released and the next turn starts again from the first warp. So a warp
// reading shared memory another warp writes sees, without a __syncthreads() between,
// either none or all of the writes (on a GPU the warps run side by side, in any
// order); the other schedules keep warps in step, one round per warp operation.
inline bool run_block_by_warps(Runner& r, bool reverse)
{
    const unsigned warps = (r.count + 31) / 32;
    for (;;) {
        for (unsigned k = 0; k < warps; ++k) {
            const unsigned first = (reverse ? warps - 1 - k : k) * 32, lanes = std::min(32u, r.count - first);
            do {
                for (unsigned t = first; t < first + lanes; ++t)
                    if (r.fibers[t].state == State::Ready) resume(r.fibers[t]);
            } while (complete_warp_ops_of(r, first));
        }
        // No thread can run: a warp operation depends only on its own warp's lanes.
        const BarrierOutcome outcome = release_barrier(r);
        if (outcome == BarrierOutcome::Done) return true;
        if (outcome == BarrierOutcome::Deadlock) return false;
    }
}

// Runs every thread of the current block to the end. False after a deadlock.
inline bool run_block(Runner& r, std::mt19937_64& rng)
{
    for (unsigned t = 0; t < r.count; ++t) start(r.fibers[t]);
    if (schedule().kind == Schedule::Warps || schedule().kind == Schedule::WarpsReverse)
        return run_block_by_warps(r, schedule().kind == Schedule::WarpsReverse);
    for (;;) {
        if (schedule().kind == Schedule::Random) std::shuffle(r.order.begin(), r.order.end(), rng);
        for (unsigned t : r.order)
            if (r.fibers[t].state == State::Ready) resume(r.fibers[t]);
        // Every thread has stopped: at a barrier, in a warp operation, or for good.
        if (complete_warp_ops(r)) continue;

        const BarrierOutcome outcome = release_barrier(r);
        if (outcome == BarrierOutcome::Done) return true;
        if (outcome == BarrierOutcome::Deadlock) return false;
    }
}

// The non-template part of a launch.
inline void run_grid(dim3 grid, dim3 block, size_t shared_bytes, void (*body)(const void*), const void* args)
{
    if (current) {
        report("a kernel launched another kernel (dynamic parallelism is not emulated)");
        fail(cudaErrorLaunchFailure);
        return;
    }
    const uint64_t threads = uint64_t(block.x) * block.y * block.z;
    if (threads == 0 || threads > kMaxThreads || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x == 0 ||
        grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    if (shared_bytes > 48 * 1024) {  // more needs cudaFuncSetAttribute on a GPU; not emulated
        fail(cudaErrorInvalidValue);
        return;
    }

    Runner& r = runner();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.count = unsigned(threads);
    r.body = body;
    r.args = args;
    r.kernel_threw = false;
    for (unsigned t = 0; t < r.count; ++t) {
        Fiber& f = r.fibers[t];
        if (!f.stack) {
            f.stack = std::make_unique<Stack>();
#if !MT_EMU_BOOST
            getcontext(&f.context);  // once per fiber; each block only re-makes it
#endif
        }
        f.index = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
        f.lane = t % 32;
        f.warp = t / 32;
    }
    r.order.resize(r.count);
    for (unsigned i = 0; i < r.count; ++i)
        r.order[i] = schedule().kind == Schedule::Reverse ? r.count - 1 - i : i;
    std::mt19937_64 rng(schedule().seed);  // the same sequence in every launch: reproducible

    // Exactly shared_bytes (ASan catches overruns), refilled with 0xff bytes (NaN as
    // floats) for every block: a GPU leaves whatever the last block wrote there.
    struct AlignedFree {
        void operator()(unsigned char* p) const { ::operator delete(p, std::align_val_t(16)); }
    };
    std::unique_ptr<unsigned char, AlignedFree> shared(
        static_cast<unsigned char*>(::operator new(shared_bytes, std::align_val_t(16))));
    struct Restore {  // state of the launching thread, reset even if something throws
        ~Restore()
        {
            dynamic_shared = nullptr;
            reports_this_launch = -1;
        }
    } restore;
    dynamic_shared = shared.get();
    reports_this_launch = 0;
    blockDim = block;
    gridDim = grid;
    bool ok = true;
    for (unsigned z = 0; z < grid.z && ok; ++z)
        for (unsigned y = 0; y < grid.y && ok; ++y)
            for (unsigned x = 0; x < grid.x && ok; ++x) {
                blockIdx = dim3(x, y, z);
                std::memset(shared.get(), 0xff, shared_bytes);
                MT_EMU_COUNT_BLOCK_BEGIN(r.count, shared.get(), shared_bytes);
                ok = run_block(r, rng) && !r.kernel_threw;
                MT_EMU_COUNT_BLOCK_END();
            }
    if (reports_this_launch > kReportsPerLaunch)
        std::fprintf(stderr, "cuda_emu: ... and %d more reports in this launch\n",
                     reports_this_launch - kReportsPerLaunch);
    if (!ok) {
        fail(cudaErrorLaunchFailure);
#if MT_EMU_BOOST
        // Destroying a suspended Boost fiber unwinds its stack (running the kernel's
        // destructors); do it now, while the stacks still hold those threads.
        for (unsigned t = 0; t < r.count; ++t) r.fibers[t].self = boost::context::fiber();
#endif
    }
}

}  // namespace detail

// ---------------------------------------------------------------- public API

// How many reports (see the top of this file) have been made so far.
inline long diagnostic_count() { return detail::diagnostics.load(); }

// Sets the order of the threads in each round of later launches ("forward", "reverse",
// "random:SEED", "warps" or "warps-reverse"); false, with nothing changed, for any other text.
inline bool set_schedule(const char* text) { return text && detail::parse_schedule(text, detail::schedule()); }

// The schedule in effect, written as set_schedule() reads it.
inline std::string schedule_name()
{
    const detail::Schedule& s = detail::schedule();
    switch (s.kind) {
    case detail::Schedule::Random: return "random:" + std::to_string(s.seed);
    case detail::Schedule::Reverse: return "reverse";
    case detail::Schedule::Warps: return "warps";
    case detail::Schedule::WarpsReverse: return "warps-reverse";
    default: return "forward";
    }
}

// MT_DYNAMIC_SHARED(T, name): the launch's dynamic shared memory, seen as T.
template <class T>
T* dynamic_shared()
{
    return reinterpret_cast<T*>(detail::dynamic_shared);
}

// MT_LAUNCH(grid, block, shared_bytes, stream, kernel)(args...) is
// emu::launch(grid, block, shared_bytes, stream, kernel)(args...).
template <class... Params>
class Launch {
public:
    Launch(dim3 grid, dim3 block, size_t shared_bytes, void (*kernel)(Params...))
        : grid_(grid), block_(block), shared_bytes_(shared_bytes), kernel_(kernel)
    {
    }

    template <class... Args>
    void operator()(Args&&... args) const
    {
        static_assert(sizeof...(Args) == sizeof...(Params), "kernel launched with the wrong number of arguments");
        // Arguments are converted to the parameter types and copied once, like CUDA
        // does; every thread then gets its own copy of each.
        struct Bound {
            void (*kernel)(Params...);
            std::tuple<std::decay_t<Params>...> args;
        };
        const Bound bound{kernel_, std::tuple<std::decay_t<Params>...>(std::forward<Args>(args)...)};
        detail::run_grid(
            grid_, block_, shared_bytes_,
            [](const void* p) {
                const Bound& b = *static_cast<const Bound*>(p);
                std::apply(b.kernel, b.args);
            },
            &bound);
    }

private:
    dim3 grid_, block_;
    size_t shared_bytes_;
    void (*kernel_)(Params...);
};

template <class... Params>
Launch<Params...> launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t, void (*kernel)(Params...))
{
    return Launch<Params...>(grid, block, shared_bytes, kernel);
}

namespace detail {

inline void block_barrier(const char* file, int line)
{
    Fiber* f = current;
    if (!f) {
        report("__syncthreads() at %s:%d called outside a kernel", file, line);
        return;
    }
    f->state = State::AtBarrier;
    f->barrier_file = file;
    f->barrier_line = line;
    yield(*f);
}

inline uint64_t warp_op(WarpOp op, unsigned mask, uint64_t value, int arg = 0, int width = warpSize)
{
    Fiber* f = current;
    if (!f) {
        report("a warp function was called outside a kernel");
        return value;
    }
    if (!(mask >> f->lane & 1u))
        report("block (%u,%u,%u) warp %u: lane %u calls a warp function with mask 0x%08x, which leaves it out",
               blockIdx.x, blockIdx.y, blockIdx.z, f->warp, f->lane, mask);
    if (width < 1 || width > warpSize || (width & (width - 1))) {
        report("shuffle width %d is not a power of two in [1, 32]; using 32", width);
        width = warpSize;
    }
    f->state = State::AtWarpOp;
    f->op = op;
    f->mask = mask;
    f->value = value;
    f->arg = arg;
    f->width = width;
    yield(*f);
    return f->result;
}

template <class T>
T shuffle(WarpOp op, unsigned mask, T var, int arg, int width)
{
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "shuffles move at most 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &var, sizeof(T));
    bits = warp_op(op, mask, bits, arg, width);
    std::memcpy(&var, &bits, sizeof(T));
    return var;
}

}  // namespace detail
}  // namespace emu

// ------------------------------------------------- barrier and warp functions
// The call site is recorded so a divergent barrier can be reported by file and line.
#define __syncthreads() ::emu::detail::block_barrier(__FILE__, __LINE__)

inline void __syncwarp(unsigned mask = 0xffffffffu) { emu::detail::warp_op(emu::detail::WarpOp::Sync, mask, 0); }

template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize)
{
    return emu::detail::shuffle(emu::detail::WarpOp::Shfl, mask, var, src_lane, width);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize)
{
    return emu::detail::shuffle(emu::detail::WarpOp::ShflUp, mask, var, int(delta), width);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize)
{
    return emu::detail::shuffle(emu::detail::WarpOp::ShflDown, mask, var, int(delta), width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize)
{
    return emu::detail::shuffle(emu::detail::WarpOp::ShflXor, mask, var, lane_mask, width);
}

inline unsigned __ballot_sync(unsigned mask, int predicate)
{
    return unsigned(emu::detail::warp_op(emu::detail::WarpOp::Ballot, mask, predicate != 0));
}
inline int __any_sync(unsigned mask, int predicate)
{
    return int(emu::detail::warp_op(emu::detail::WarpOp::Any, mask, predicate != 0));
}
inline int __all_sync(unsigned mask, int predicate)
{
    return int(emu::detail::warp_op(emu::detail::WarpOp::All, mask, predicate != 0));
}

// The lanes of the caller's warp that have not exited. (On a GPU, lanes on the other
// side of a branch are inactive too; fibers cannot tell.)
inline unsigned __activemask()
{
    const emu::detail::Fiber* f = emu::detail::current;
    if (!f) return 0;
    emu::detail::Runner& r = emu::detail::runner();
    const unsigned first = f->warp * 32, lanes = std::min(32u, r.count - first);
    unsigned mask = 0;
    for (unsigned j = 0; j < lanes; ++j)
        if (r.fibers[first + j].state != emu::detail::State::Exited) mask |= 1u << j;
    return mask;
}
