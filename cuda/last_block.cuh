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
#include <algorithm>
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

// ---- how a reduction is cut into slices (reduce.cu, batch_norm.cu, group_norm.cu) ----

constexpr int64_t kFillBlocks = 1024;         // about a full wave on an H100: 132 SMs x 8 blocks
constexpr int64_t kMaxSlices = 65535;         // the gridDim.y limit
constexpr int64_t kMinSlice = 16 * kThreads;  // values per slice of a block's reduction: 16 per thread

// `slices` (a launch's gridDim.y) of `chunk` values, the last maybe shorter, none empty.
struct Split {
    int64_t slices = 1, chunk = 1;
};

// How to cut a launch of `blocks` blocks, each reducing `len` values: a launch of at most
// kFillBlocks / 2 blocks gets slices, as many as bring it to about kFillBlocks blocks while
// each slice keeps at least min_chunk values; and no slice holds more than max_chunk values.
inline Split split_to_fill(int64_t blocks, int64_t len, int64_t min_chunk, int64_t max_chunk = INT64_MAX)
{
    int64_t s = 1;
    if (2 * blocks <= kFillBlocks) s = std::min(kFillBlocks / std::max<int64_t>(blocks, 1), len / min_chunk);
    const int64_t at_least = len > max_chunk ? (len - 1) / max_chunk + 1 : 1;  // slices of <= max_chunk
    s = std::clamp(std::max(s, at_least), int64_t(1), kMaxSlices);
    const int64_t chunk = std::max<int64_t>((len + s - 1) / s, 1);
    return {std::max<int64_t>((len + chunk - 1) / chunk, 1), chunk};  // no empty slice
}

// A thread's share of the partial pairs of reduction `item`, partial[item, slice, 0..1] for
// the gridDim.y slices: slices threadIdx.x, threadIdx.x + blockDim.x, ... added in slice
// order into (a, b), so the block's sum of the shares does not depend on which block came last.
__device__ inline void add_slice_partials(double& a, double& b, const double* partial, int64_t item)
{
    a = 0, b = 0;
    for (int64_t y = threadIdx.x; y < gridDim.y; y += blockDim.x)
        a += partial[2 * (item * gridDim.y + y)], b += partial[2 * (item * gridDim.y + y) + 1];
}

}  // namespace minitorch::cuda
