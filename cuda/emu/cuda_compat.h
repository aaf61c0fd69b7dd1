// cuda_compat.h — the one place that knows which build this is: nvcc for a real GPU,
// or the host C++ compiler with cuda_emu.h, where kernels run on the CPU.
//
// Kernel sources include this header (not <cuda_runtime.h>) and write
//   MT_LAUNCH(grid, block, shared_bytes, stream, kernel)(args...);
//       instead of kernel<<<grid, block, shared_bytes, stream>>>(args...);
//   MT_DYNAMIC_SHARED(T, name);
//       instead of extern __shared__ T name[]; (name is a T* in both builds)
// and test MT_CUDA_EMULATED (1 emulated, 0 with nvcc) where the builds differ, e.g.
// cuBLAS, which only the real build has.
//
// MT_KERNEL_LAUNCH is the plain launch and MT_LAUNCH names it here; minitorch's
// cuda/common.cuh redefines MT_LAUNCH to also record each launch for minitorch.profiler
// (cuda/launch_profiler.cuh), so this header stays usable on its own.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#define MT_CUDA_EMULATED 0
// The kernel comes last and may contain commas (a template with several arguments).
#define MT_KERNEL_LAUNCH(grid, block, shared_bytes, stream, ...) __VA_ARGS__<<<(grid), (block), (shared_bytes), (stream)>>>
// Every kernel's dynamic shared memory starts at the same address; declaring it as
// bytes lets kernels templated on T use it without conflicting declarations.
#define MT_DYNAMIC_SHARED(T, name)                                    \
    extern __shared__ __align__(16) unsigned char mt_dynamic_shared_[]; \
    T* name = reinterpret_cast<T*>(mt_dynamic_shared_)

#else

#include "cuda_emu.h"

#define MT_CUDA_EMULATED 1
#define MT_KERNEL_LAUNCH(grid, block, shared_bytes, stream, ...) \
    ::emu::launch(grid, block, shared_bytes, stream, __VA_ARGS__)
#define MT_DYNAMIC_SHARED(T, name) T* name = ::emu::dynamic_shared<T>()

#endif

#define MT_LAUNCH MT_KERNEL_LAUNCH
