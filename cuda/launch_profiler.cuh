// launch_profiler.cuh — every MT_LAUNCH in cuda/*.cu, recorded for minitorch.profiler.
//
// Included by common.cuh after emu/cuda_compat.h, it redefines
//     MT_LAUNCH(grid, block, shared_bytes, stream, kernel)(args...);
// as
//     for (ProfiledLaunch mt_launch_("kernel", grid, block, stream, shared_bytes); mt_launch_.first();)
//         MT_KERNEL_LAUNCH(mt_launch_.grid(), mt_launch_.block(), shared_bytes, stream, kernel)(args...);
// one statement that the caller's (args...); completes, so `if (c) MT_LAUNCH(...)(a); else
// MT_LAUNCH(...)(b);` keeps its else with its if (an `if` prefix would capture it). The
// loop body runs once; grid and block are evaluated once. While no profile records the
// CUDA activity, ProfiledLaunch only copies grid and block and tests one flag.
#pragma once
#include <cstdint>

#include "emu/cuda_compat.h"
#include "minitorch/profiler.h"

namespace minitorch::cuda {

// Records one launch (or library call, such as a cuBLAS GEMM) in the running profile.
// On a GPU it brackets the launch with a pair of CUDA events: the start is recorded on
// construction, the end by the destructor (so a launch that throws is closed too), and
// the profiler reads the time between them when the profile stops.
class ProfiledLaunch {
public:
    ProfiledLaunch(const char* kernel, dim3 grid, dim3 block, cudaStream_t stream, size_t shared_bytes = 0)
        : grid_(grid), block_(block), stream_(stream)
    {
        if (profiler::kernels_enabled()) begin(kernel, shared_bytes);
    }
    ~ProfiledLaunch()
    {
        if (timer_slot_ >= 0) end();
    }
    ProfiledLaunch(const ProfiledLaunch&) = delete;
    ProfiledLaunch& operator=(const ProfiledLaunch&) = delete;

    // True the first time only: the for loop of MT_LAUNCH runs its body once.
    bool first()
    {
        const bool was_first = !launched_;
        launched_ = true;
        return was_first;
    }
    dim3 grid() const { return grid_; }
    dim3 block() const { return block_; }

private:
    void begin(const char* kernel, size_t shared_bytes);
    void end();

    dim3 grid_, block_;
    cudaStream_t stream_;
    int64_t timer_slot_ = -1;  // its CUDA event pair (real GPU, while profiling)
    bool launched_ = false;
};

}  // namespace minitorch::cuda

#undef MT_LAUNCH
// (The parameters are not called grid and block: those would replace mt_launch_.grid().)
#define MT_LAUNCH(grid_dims, block_dims, shared_bytes, stream, ...)                                      \
    for (::minitorch::cuda::ProfiledLaunch mt_launch_(#__VA_ARGS__, grid_dims, block_dims, stream, shared_bytes); \
         mt_launch_.first();)                                                                             \
    MT_KERNEL_LAUNCH(mt_launch_.grid(), mt_launch_.block(), shared_bytes, stream, __VA_ARGS__)
