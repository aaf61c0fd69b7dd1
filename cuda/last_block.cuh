// last_block.cuh — a grid that finishes its own two-level reduction in one launch.
//
// A reduction too long for one block is cut into slices: blocks (x, y) for y = 0 .. gridDim.y-1
// each reduce slice y of the outputs that blockIdx.x owns and write a partial result. The
// partials then need adding up. A second launch could do that, but the grid can do it
// itself: each block counts itself in, and the last of the gridDim.y blocks of a blockIdx.x
// to arrive -- blocks run in any order, so "last" is whichever counts last -- adds up their
// partials. It reads them in slice order, so the result does not depend on which block
// came last: the same bits run to run, as with the second launch.
//
// Why it is safe: every thread makes its partials visible to the whole GPU (__threadfence)
// before thread 0 counts the block in with an atomic, and the last block fences again
// before it reads the others' partials (the "last block" pattern of the CUDA programming
// guide's memory fence section). The last block sets its counter back to 0, ready for the
// next launch; every minitorch kernel runs on one stream, so launches never overlap on the
// counters.
#pragma once
#include <cstdint>
#include <vector>

#include "common.cuh"

namespace minitorch::cuda {

// Counters per device: a launch may use the first gridDim.x (at most this many).
constexpr int64_t kArrivalCounters = 65536;

// The current device's counters (host side), allocated and zeroed on first use.
inline unsigned* arrival_counters()
{
    static std::vector<unsigned*> per_device;
    int device = 0;
    MT_CUDA_CHECK(cudaGetDevice(&device));
    if (int(per_device.size()) <= device) per_device.resize(device + 1, nullptr);
    if (!per_device[device]) {
        MT_CUDA_CHECK(cudaMalloc(&per_device[device], kArrivalCounters * sizeof(unsigned)));
        MT_CUDA_CHECK(cudaMemset(per_device[device], 0, kArrivalCounters * sizeof(unsigned)));
    }
    return per_device[device];
}

// Called by every thread of the block once it has written its partials (it passes two
// barriers). True, in every thread, for the last of the gridDim.y blocks with this
// blockIdx.x to arrive; that block then reads all their partials.
__device__ inline bool last_to_arrive(unsigned* arrivals)
{
    __shared__ bool last;
    __threadfence();  // this thread's partials are visible to every block...
    __syncthreads();  // ...for every thread of the block, before thread 0 counts it in
    if (threadIdx.x == 0) {
        last = atomicAdd(&arrivals[blockIdx.x], 1u) == gridDim.y - 1;
        if (last) arrivals[blockIdx.x] = 0;  // every block of this column has counted: reset
    }
    __syncthreads();  // thread 0 has written `last` before anyone reads it
    const bool mine = last;
    if (mine) __threadfence();  // the others' partials are read only after their counts
    return mine;
}

}  // namespace minitorch::cuda
