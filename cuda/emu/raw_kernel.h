// raw_kernel.h — the glue between minitorch.cuda.RawKernel (Python) and a student's
// CUDA source, in the emulator.
//
// python/minitorch/cuda_kernels.py compiles, with the host C++ compiler,
//     -include raw_kernel.h
//     <the student's source>
//     MT_RAW_KERNEL(0, saxpy)      one line per kernel Python will launch
// into a shared library and calls these C functions in it through ctypes:
//   const char* mt_params_<i>()   the kernel's parameters, one line each:
//                                 "kind size pointee_kind pointee_size C type"
//   int mt_launch_<i>(dims, shared_bytes, args, message, message_size)
//                                 dims = grid x y z, block x y z; args[k] points at
//                                 the value of parameter k; returns the cudaError_t
//   int mt_set_schedule(spec)     1 if spec was understood
//   long mt_diagnostic_count()    the emulator's reports so far
//   mt_count_begin, mt_count_totals   only in the counting build (below, and counters.h)
// Kinds: p pointer, i signed integer, u unsigned integer, f floating point, b bool,
// o anything else; a pointee of kind v is bytes (void, char), which any dtype may fill.
//
// The library is built with -fvisibility=hidden, so it has its own copy of the
// emulator (its own schedule, report count, and one launch at a time); only the
// functions above are exported.
#pragma once

#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_compat.h"

#define MT_RAW_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef __align__  // nvcc's spelling; GCC and clang accept the attribute among the specifiers
#define __align__(n) __attribute__((aligned(n)))
#endif

// `extern __shared__ T name[];` is rewritten (on the same line) to
// `constexpr ::mt_raw::DynamicShared<T> name{};`: usable at file or function scope, it
// reads as a T* to the launch's dynamic shared memory (name[i], name + i, (U*)name).
namespace mt_raw {

template <class T>
struct DynamicShared {
    operator T*() const { return ::emu::dynamic_shared<T>(); }
    template <class U>
    explicit operator U*() const
    {
        return ::emu::dynamic_shared<U>();
    }
    T& operator[](std::size_t i) const { return ::emu::dynamic_shared<T>()[i]; }
};

template <class T>
constexpr char kind_of()
{
    if constexpr (std::is_pointer_v<T>) return 'p';
    else if constexpr (std::is_same_v<T, bool>) return 'b';
    else if constexpr (std::is_floating_point_v<T>) return 'f';
    else if constexpr (std::is_integral_v<T>) return std::is_signed_v<T> ? 'i' : 'u';
    else return 'o';
}

template <class T>
constexpr char pointee_kind()
{
    using P = std::remove_cv_t<std::remove_pointer_t<T>>;
    if constexpr (std::is_void_v<P> || std::is_same_v<P, char> || std::is_same_v<P, unsigned char> ||
                  std::is_same_v<P, signed char>)
        return 'v';
    else return kind_of<P>();
}

template <class T>
constexpr std::size_t pointee_size()
{
    using P = std::remove_pointer_t<T>;
    if constexpr (std::is_void_v<P>) return 0;
    else return sizeof(P);
}

// The compiler's own spelling of T, for error messages ("const float*"). GCC writes
// "... [with T = const float*; ...]", clang "... [T = const float *]".
template <class T>
std::string type_name()
{
    const std::string s = __PRETTY_FUNCTION__;
    const std::size_t begin = s.find("T = ") + 4, end = s.find_first_of(";]", begin);
    return s.substr(begin, end - begin);
}

template <class... P>
const char* describe(void (*)(P...))
{
    static const std::string text = [] {
        std::string t;
        auto line = [&t]<class T>() {
            t += kind_of<T>();
            t += ' ' + std::to_string(sizeof(T)) + ' ';
            if constexpr (std::is_pointer_v<T>)
                t += pointee_kind<T>() + (' ' + std::to_string(pointee_size<T>()));
            else
                t += "- 0";
            t += ' ' + type_name<T>() + '\n';
        };
        (line.template operator()<P>(), ...);
        return t;
    }();
    return text.c_str();
}

// Sends the emulator's reports (it writes them to stderr) into a buffer for the length
// of a launch, then passes them on to the real stderr. Launches are serialised by the
// Python side, so nothing else swaps stderr meanwhile.
class CaptureStderr {
public:
    CaptureStderr() : saved_(stderr), memory_(open_memstream(&text_, &size_))
    {
        if (memory_) stderr = memory_;
    }
    ~CaptureStderr() { finish(); }
    std::string finish()
    {
        std::string out;
        if (memory_) {
            stderr = saved_;
            std::fclose(memory_);  // sets text_ and size_
            memory_ = nullptr;
            out.assign(text_, size_);
            std::free(text_);
            std::fputs(out.c_str(), stderr);
        }
        return out;
    }

private:
    FILE* saved_;
    char* text_ = nullptr;
    std::size_t size_ = 0;
    FILE* memory_;
};

// Like cudaLaunchKernel: args[k] points at parameter k's value, whose type the
// kernel's own signature says.
template <class... P>
int launch(void (*kernel)(P...), const unsigned* dims, std::size_t shared_bytes, void** args, char* message,
           std::size_t message_size)
{
    CaptureStderr capture;
    cudaGetLastError();  // start clean
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        ::emu::launch(dim3(dims[0], dims[1], dims[2]), dim3(dims[3], dims[4], dims[5]), shared_bytes, nullptr,
                      kernel)(*static_cast<std::remove_cv_t<P>*>(args[K])...);
    }(std::index_sequence_for<P...>{});
    const cudaError_t error = cudaGetLastError();
    const std::string reports = capture.finish();
    if (error != cudaSuccess)
        std::snprintf(message, message_size, "%s\n%s", cudaGetErrorString(error), reports.c_str());
    else
        std::snprintf(message, message_size, "%s", reports.c_str());
    return int(error);
}

}  // namespace mt_raw

MT_RAW_EXPORT int mt_set_schedule(const char* spec) { return ::emu::set_schedule(spec) ? 1 : 0; }
MT_RAW_EXPORT long mt_diagnostic_count() { return ::emu::diagnostic_count(); }

// The counting build (-DMT_EMU_COUNTERS=1, see counters.h) also exports
//   void mt_count_begin(ranges, n)    counts the launches that follow; ranges = begin,
//                                     bytes of each of the n tensor arguments (global memory)
//   void mt_count_totals(out, n)      the counts since mt_count_begin (n uint64 values, in
//                                     the order of counters_runtime.h's Totals)
#if MT_EMU_COUNTERS
#include "counters.h"
MT_RAW_EXPORT void mt_count_begin(const uint64_t* ranges, unsigned n) { ::mt_cnt::start(ranges, n); }
MT_RAW_EXPORT void mt_count_totals(uint64_t* out, unsigned n) { mt_cnt_totals(out, n); }
#endif

// The launcher and description of kernel number `index`. The kernel is named as the
// source names it (extern "C" or not, or a template's instance such as scale<float>).
#define MT_RAW_KERNEL(index, ...)                                                                        \
    MT_RAW_EXPORT const char* mt_params_##index() { return ::mt_raw::describe(&__VA_ARGS__); }            \
    MT_RAW_EXPORT int mt_launch_##index(const unsigned* dims, std::size_t shared_bytes, void** args,     \
                                        char* message, std::size_t message_size)                         \
    {                                                                                                    \
        return ::mt_raw::launch(&__VA_ARGS__, dims, shared_bytes, args, message, message_size);           \
    }
