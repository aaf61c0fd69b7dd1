// cuda_compat.h — the only place that knows which build this is (provisional: nvcc only).
#pragma once
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define MT_LAUNCH(grid, block, smem, stream, ...) __VA_ARGS__<<<grid, block, smem, stream>>>
#define MT_CUDA_EMULATED 0
#else
#include "cuda_emu.h"
#define MT_LAUNCH(grid, block, smem, stream, ...) ::emu::make_launch(grid, block, smem, stream, __VA_ARGS__)
#define MT_CUDA_EMULATED 1
#endif
