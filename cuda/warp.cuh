// warp.cuh — the warp-level helpers of the reduction kernels (reduce.cu, softmax.cu,
// layer_norm.cu), and the reductions of a row held by a warp or by a block. A warp is 32
// threads that execute together; __shfl_*_sync lets a lane read a register of another lane
// of its warp, so 32 partial results combine in 5 steps without shared memory or
// __syncthreads(). All 32 lanes must call these.
#pragma once
#include "emu/cuda_compat.h"

namespace minitorch::cuda {

constexpr unsigned kFullMask = 0xffffffffu;  // every lane of the warp takes part
constexpr int kWarp = 32;

// Every lane ends with the combination of all 32 lanes' states: a butterfly, where at each
// step lane i exchanges with lane i ^ lane_mask (16, 8, ..., 1). shfl(s, lane_mask) returns
// the partner's state and merge(a, b) combines two; with a commutative merge both lanes of a
// pair compute the same bits, so all 32 agree exactly.
template <class S, class Shfl, class Merge>
__device__ S warp_all_reduce(S s, Shfl shfl, Merge merge)
{
    for (int lane_mask = kWarp / 2; lane_mask > 0; lane_mask >>= 1) s = merge(s, shfl(s, lane_mask));
    return s;
}

// Lane 0 ends with the combination of all 32 lanes' states: a tree, where at each step lane
// i takes lane i + offset's state (offset 16, 8, ..., 1); the other lanes end with partials.
template <class S, class ShflDown, class Merge>
__device__ S warp_reduce(S s, ShflDown shfl_down, Merge merge)
{
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) s = merge(s, shfl_down(s, offset));
    return s;
}

// The largest v of the 32 lanes, in every lane (max(): fmax for floats, a NaN is passed over).
template <class A>
__device__ A warp_max(A v)
{
    return warp_all_reduce(
        v, [](A x, int lane_mask) { return __shfl_xor_sync(kFullMask, x, lane_mask); },
        [](A a, A b) { return max(a, b); });
}

// The sum of v over the 32 lanes, in every lane.
template <class A>
__device__ A warp_sum(A v)
{
    return warp_all_reduce(
        v, [](A x, int lane_mask) { return __shfl_xor_sync(kFullMask, x, lane_mask); },
        [](A a, A b) { return a + b; });
}

// The reductions over the threads that hold one row of a row kernel (softmax.cu, layer_norm.cu),
// every thread getting the result: a warp (WarpRow: shuffles only) or a whole block (BlockRow).
struct WarpRow {
    template <class A>
    __device__ A row_max(A v) const { return warp_max(v); }
    template <class A>
    __device__ A row_sum(A v) const { return warp_sum(v); }
};

// A block of kWarps warps: each warp combines its lanes, then every thread combines the warps'
// results from shared memory (`part`, kWarps slots) in warp order, so all threads get the same
// bits. Every thread of the block must call them.
template <class A, int kWarps>
struct BlockRow {
    A* part;
    template <class Combine>
    __device__ A all(A v, Combine combine) const
    {
        if (threadIdx.x % kWarp == 0) part[threadIdx.x / kWarp] = v;
        __syncthreads();  // every warp's value is in part
        A r = part[0];
        for (int w = 1; w < kWarps; ++w) r = combine(r, part[w]);
        __syncthreads();  // every thread has read part before it is written again
        return r;
    }
    __device__ A row_max(A v) const { return all(warp_max(v), [](A a, A b) { return max(a, b); }); }
    __device__ A row_sum(A v) const { return all(warp_sum(v), [](A a, A b) { return a + b; }); }
};

}  // namespace minitorch::cuda
