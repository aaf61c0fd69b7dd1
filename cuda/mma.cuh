// mma.cuh — the tensor cores' warp matrix functions (nvcuda::wmma) in both builds: CUDA's
// <mma.h> with nvcc, the emulator's wmma_emu.h otherwise; and MmaType<T>, the element type
// wmma takes for minitorch's 16-bit types (same bits: a staged Half is read as a __half).
#pragma once
#include <type_traits>

#include "emu/cuda_compat.h"
#include "minitorch/half.h"

#if MT_CUDA_EMULATED
#include "emu/wmma_emu.h"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif

namespace minitorch::cuda {

// The wmma element types of float16 and bfloat16.
#if MT_CUDA_EMULATED
using MmaHalf = Half;
using MmaBFloat16 = BFloat16;
#else
using MmaHalf = __half;
using MmaBFloat16 = __nv_bfloat16;
#endif
template <class T>
using MmaType = std::conditional_t<std::is_same_v<T, Half>, MmaHalf, MmaBFloat16>;

// bfloat16 MMA needs sm_80: the sm_75 build compiles the bfloat16 kernels without it (the host
// never launches them on such a device, see compute_capability()).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr bool kBf16Mma = false;
#else
constexpr bool kBf16Mma = true;
#endif

}  // namespace minitorch::cuda
