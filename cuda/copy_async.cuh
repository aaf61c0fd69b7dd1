// copy_async.cuh — copies from global to shared memory that do not pass through registers
// (PTX cp.async, sm_80 on), for kernels that stage tiles.
//
// A staging loop of ordinary loads and stores (x = src[i]; tile[i] = x) holds each value in a
// register between the two, and a thread waits for every load before its store: a thread that
// moves 8 pieces either waits on memory 8 times or holds all 8 in registers at once. cp.async
// starts a 16-byte copy straight into shared memory and returns: a thread starts all of its
// copies, keeps no register for them, and waits once (copy_async_wait) before the block's
// barrier. On older GPUs and in the emulator the copy is an ordinary one, done when it returns.
#pragma once
#include <cstdint>

#include "common.cuh"

namespace minitorch::cuda {

// 16 bytes, moved as one access (the addresses are 16-byte aligned).
struct alignas(16) Bytes16 {
    uint32_t w[4];
};

// Starts copying the 16 bytes at src (global memory) to dst (shared memory); both 16-byte
// aligned. dst is not to be read, by this thread or another, before copy_async_wait() and then a
// __syncthreads().
__device__ __forceinline__ void copy_async_16(void* dst, const void* src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !MT_CUDA_EMULATED
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src));
#else
    *static_cast<Bytes16*>(dst) = *static_cast<const Bytes16*>(src);
#endif
}

// Waits until every copy this thread started with copy_async_16 has landed in shared memory.
__device__ __forceinline__ void copy_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !MT_CUDA_EMULATED
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#endif
}

}  // namespace minitorch::cuda
